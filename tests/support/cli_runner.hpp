#pragma once
// Runs the real command line in-process and captures its output and exit code.
#include <sstream>
#include <string>
#include <vector>

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

/// Number of lines in `text` (a trailing newline does not start a new line).
inline int line_count(const std::string& text) {
  int lines = 0;
  for (const char c : text) lines += c == '\n' ? 1 : 0;
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

}  // namespace trace::test
