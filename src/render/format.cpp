#include <cstdlib>
#include <fmt/format.h>

#include "trace/estimate/memory.hpp"
#include "trace/render/render.hpp"

namespace trace {

std::string group_digits(std::int64_t value) {
  const bool negative = value < 0;
  std::string digits = fmt::format("{}", value);
  if (negative) digits.erase(0, 1);
  std::string grouped;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return negative ? "-" + grouped : grouped;
}

std::string short_count(std::int64_t value) {
  const double v = static_cast<double>(value);
  if (value >= 1'000'000'000'000) return fmt::format("{:.2f}T", v / 1e12);
  if (value >= 1'000'000'000) return fmt::format("{:.2f}B", v / 1e9);
  if (value >= 1'000'000) return fmt::format("{:.1f}M", v / 1e6);
  if (value >= 1'000) return fmt::format("{:.1f}K", v / 1e3);
  return fmt::format("{}", value);
}

std::string format_bytes(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= 1024 * k_gib) return fmt::format("{:.2f} TiB", b / (1024.0 * static_cast<double>(k_gib)));
  if (bytes >= k_gib) return fmt::format("{:.2f} GiB", b / static_cast<double>(k_gib));
  if (bytes >= k_mib) return fmt::format("{:.1f} MiB", b / static_cast<double>(k_mib));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

std::string render(const Report& report, const RenderOptions& options) {
  switch (options.format) {
    case OutputFormat::json: return render_json(report);
    case OutputFormat::markdown: return render_markdown(report);
    case OutputFormat::table: break;
  }
  return render_table(report);
}

}  // namespace trace
