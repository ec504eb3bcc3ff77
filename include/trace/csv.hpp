#pragma once
/// CSV records (RFC 4180): quoted fields may hold commas, doubled quotes and newlines. Used by
/// `trace validate` and the reference check.
#include <string>
#include <string_view>
#include <vector>

namespace trace {

/// Every record, header included; blank lines are skipped. Throws ConfigError when the text
/// ends inside a quoted field.
std::vector<std::vector<std::string>> parse_csv(std::string_view text);

}  // namespace trace
