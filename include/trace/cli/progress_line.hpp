#pragma once
/// The Hub fetch's progress line on stderr: "fetching org/name: 3/7 files, 1.2 MiB", redrawn in
/// place (\r) and ended with a newline when the fetch finishes.
#include <functional>
#include <iosfwd>

#include "trace/io/model_source.hpp"

namespace trace::cli {

/// A progress callback drawing on `err`; empty (no progress) unless `draw`.
std::function<void(const HubProgress&)> progress_line(std::ostream& err, bool draw);

}  // namespace trace::cli
