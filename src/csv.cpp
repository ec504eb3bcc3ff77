#include "trace/csv.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "trace/error.hpp"

namespace trace {

// RFC 4180 records: quoted fields may hold commas, doubled quotes and newlines.
std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  // Spreadsheets save "CSV UTF-8" with a byte-order mark before the first header.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      fields.emplace_back();
      any = true;
    } else if (c == '\n') {
      if (any || !fields.back().empty()) records.push_back(std::move(fields));
      fields.assign(1, std::string());
      any = false;
    } else if (c != '\r') {
      fields.back() += c;
      any = true;
    }
  }
  if (quoted) throw ConfigError("the CSV ends inside a quoted field");
  if (any || !fields.back().empty()) records.push_back(std::move(fields));
  return records;
}

std::optional<double> number_cell(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double value = std::stod(cell, &used);
    if (used != cell.size() || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::int64_t> count_cell(const std::string& cell) {
  const std::optional<double> value = number_cell(cell);
  if (!value || *value < 0 || *value > 1e15 || std::floor(*value) != *value) return std::nullopt;
  return static_cast<std::int64_t>(*value);
}

std::int64_t nearest_rank(std::int64_t count, double q) {
  if (count <= 0) return 0;
  const auto rank = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count)));
  return std::clamp<std::int64_t>(rank, 1, count);
}

double nearest_rank_percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::int64_t rank = nearest_rank(static_cast<std::int64_t>(values.size()), q);
  return values[static_cast<std::size_t>(rank - 1)];
}

}  // namespace trace
