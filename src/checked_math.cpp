#include "trace/checked_math.hpp"

#include <fmt/format.h>

#include "trace/error.hpp"

namespace trace {

namespace {
[[noreturn]] void overflow(std::string_view what) {
  throw SizeOverflowError(fmt::format(
      "{}: too large to represent (over 9.2e18); check the config and flags for absurd sizes",
      what));
}
}  // namespace

std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) overflow(what);
  return result;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) overflow(what);
  return result;
}

std::int64_t checked_product(std::initializer_list<std::int64_t> factors, std::string_view what) {
  std::int64_t result = 1;
  for (const std::int64_t factor : factors) result = checked_mul(result, factor, what);
  return result;
}

}  // namespace trace
