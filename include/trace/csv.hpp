#pragma once
/// CSV records (RFC 4180): quoted fields may hold commas, doubled quotes and newlines. Used by
/// `trace validate`, `trace throughput` and the reference check.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trace {

/// Every record, header included; blank lines are skipped. Throws ConfigError when the text
/// ends inside a quoted field.
std::vector<std::vector<std::string>> parse_csv(std::string_view text);

/// A cell that is one finite number and nothing else ("12.5", "1e9"); nullopt otherwise.
std::optional<double> number_cell(const std::string& cell);
/// A cell that is a whole number in 0..10^15; nullopt otherwise.
std::optional<std::int64_t> count_cell(const std::string& cell);
/// Nearest-rank percentile (no interpolation): the value at rank ceil(q n) of the sorted
/// values; 0 for none. The scoreboards of `trace validate` and `trace throughput` use it.
double nearest_rank_percentile(std::vector<double> values, double q);

/// The 1-based rank the q-th percentile takes among `count` values by the nearest-rank method
/// nearest_rank_percentile uses: ceil(q x count), at least 1 (0 for no values).
std::int64_t nearest_rank(std::int64_t count, double q);

}  // namespace trace
