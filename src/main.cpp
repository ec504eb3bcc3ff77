// trace: a thin main. All logic lives in the libraries; errors become exit codes in cli::run.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <unistd.h>

#include "trace/cli/run.hpp"

namespace {
std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once, at start
  return value ? std::optional<std::string>(value) : std::nullopt;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv, argv + argc);
    trace::HubEnvironment hub;
    hub.hf_hub_cache = env("HF_HUB_CACHE");
    hub.hf_home = env("HF_HOME");
    hub.home = env("HOME");
    hub.hf_endpoint = env("HF_ENDPOINT");
    hub.hf_token = env("HF_TOKEN");
    hub.hf_token_path = env("HF_TOKEN_PATH");
    hub.hf_hub_offline = env("HF_HUB_OFFLINE");
    hub.no_proxy = env("NO_PROXY") ? env("NO_PROXY") : env("no_proxy");
    hub.network = true;
    hub.stderr_is_terminal = isatty(STDERR_FILENO) == 1;
    return trace::cli::run(args, std::cout, std::cerr, hub);
  } catch (const std::exception& error) {
    std::cerr << "trace: internal error: " << error.what()
              << "\nThis is a bug; please report it with the command line you ran.\n";
    return 70;
  }
}
