#include "trace/cli/progress_line.hpp"

#include <fmt/format.h>
#include <ostream>

namespace trace::cli {

std::function<void(const HubProgress&)> progress_line(std::ostream& err, bool draw) {
  if (!draw) return {};
  return [&err](const HubProgress& progress) {
    const double mib = static_cast<double>(progress.bytes) / (1024.0 * 1024.0);
    err << fmt::format("\rfetching {}: {}/{} files, {:.1f} MiB", progress.repo,
                       progress.files_done, progress.files_total, mib)
        << (progress.finished ? "\n" : "") << std::flush;
  };
}

}  // namespace trace::cli
