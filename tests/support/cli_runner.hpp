#pragma once
// Runs the real command line in-process and captures its output and exit code.
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "trace/cli/run.hpp"

namespace trace::test {

struct CliResult {
  int exit_code = 0;
  std::string out;
  std::string err;
};

inline CliResult run_cli(std::vector<std::string> args, const HubEnvironment& env = {}) {
  args.insert(args.begin(), "trace");
  std::ostringstream out;
  std::ostringstream err;
  CliResult result;
  result.exit_code = cli::run(args, out, err, env);
  result.out = out.str();
  result.err = err.str();
  return result;
}

/// run_cli with an empty HF cache (a folder that lives as long as the call), so the bundled
/// catalog answers and no test reads the real ~/.cache.
inline CliResult run_cli_offline(const std::vector<std::string>& args) {
  const TempDir dir;
  HubEnvironment env;
  env.hf_hub_cache = dir.make_dir("hub");
  return run_cli(args, env);
}

/// Number of lines in `text` (a trailing newline does not start a new line).
inline int line_count(const std::string& text) {
  int lines = 0;
  for (const char c : text) lines += c == '\n' ? 1 : 0;
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

}  // namespace trace::test
