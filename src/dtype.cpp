#include "trace/dtype.hpp"

#include <array>

#include "trace/checked_math.hpp"

namespace trace {

namespace {
constexpr std::array<DtypeInfo, 6> k_dtypes{{
    {Dtype::fp32, "fp32", 32},
    {Dtype::fp16, "fp16", 16},
    {Dtype::bf16, "bf16", 16},
    {Dtype::fp8, "fp8", 8},
    {Dtype::int8, "int8", 8},
    {Dtype::int4, "int4", 4},
}};

struct DtypeAlias {
  std::string_view alias;
  Dtype dtype;
};
// Spellings seen in config.json's torch_dtype / dtype and in other tools' flags.
constexpr std::array<DtypeAlias, 7> k_aliases{{
    {"float32", Dtype::fp32},
    {"float", Dtype::fp32},
    {"float16", Dtype::fp16},
    {"half", Dtype::fp16},
    {"bfloat16", Dtype::bf16},
    {"float8_e4m3fn", Dtype::fp8},
    {"e4m3", Dtype::fp8},
}};
}  // namespace

std::span<const DtypeInfo> dtype_table() { return k_dtypes; }

const DtypeInfo& dtype_info(Dtype dtype) {
  for (const DtypeInfo& info : k_dtypes) {
    if (info.dtype == dtype) return info;
  }
  return k_dtypes[0];  // unreachable: every enumerator has a row
}

std::optional<Dtype> parse_dtype(std::string_view name) {
  for (const DtypeInfo& info : k_dtypes) {
    if (info.name == name) return info.dtype;
  }
  for (const DtypeAlias& alias : k_aliases) {
    if (alias.alias == name) return alias.dtype;
  }
  return std::nullopt;
}

std::string dtype_names() {
  std::string names;
  for (const DtypeInfo& info : k_dtypes) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

std::int64_t bytes_for(std::int64_t elements, Dtype dtype) {
  const std::int64_t bits = checked_mul(elements, dtype_info(dtype).bits, "a byte count");
  return ceil_div(bits, 8);
}

}  // namespace trace
