#pragma once
#include <string_view>

namespace trace {
inline constexpr std::string_view k_version = "trace 0.1.0";
}  // namespace trace
