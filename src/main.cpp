// trace: a thin main. All logic lives in the libraries; errors become exit codes in cli::run.
#include <cstdlib>
#include <exception>
#include <iostream>

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
    const trace::HubEnvironment hub{env("HF_HUB_CACHE"), env("HF_HOME"), env("HOME")};
    return trace::cli::run(args, std::cout, std::cerr, hub);
  } catch (const std::exception& error) {
    std::cerr << "trace: internal error: " << error.what()
              << "\nThis is a bug; please report it with the command line you ran.\n";
    return 70;
  }
}
