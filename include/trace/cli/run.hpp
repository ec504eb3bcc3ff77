#pragma once
/// The command line: parses arguments, runs the pipeline, writes the report. The one place where
/// errors become messages and exit codes: 0 ok, 1 "does not fit" (trace check), 2 bad input,
/// 3 network failure.
#include <iosfwd>
#include <string>
#include <vector>

#include "trace/io/model_source.hpp"

namespace trace::cli {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_does_not_fit = 1;
inline constexpr int k_exit_bad_input = 2;
inline constexpr int k_exit_network = 3;

/// Runs trace with `args` (args[0] is the program name).
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const HubEnvironment& env);

}  // namespace trace::cli
