#pragma once
/// Integer arithmetic that refuses to overflow. Counts and bytes are std::int64_t everywhere;
/// absurd configs (10^15 layers, 10^7-wide layers) must end in a clear error, never in a wrapped
/// number.
#include <cstdint>
#include <string_view>

namespace trace {

/// a * b, or throws ConfigError naming `what` when the product does not fit in int64.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what = "a size");
/// a + b, or throws ConfigError naming `what`.
std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what = "a size");
/// The product of several factors, checked.
std::int64_t checked_product(std::initializer_list<std::int64_t> factors,
                             std::string_view what = "a size");
/// ceil(a / b) for a >= 0, b > 0.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace trace
