#pragma once
/// Numeric storage formats for weights, KV cache and optimizer state: one table drives parsing,
/// help text and byte sizes.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace trace {

enum class Dtype { fp32, fp16, bf16, fp8, int8, int4 };

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;  ///< the CLI and JSON spelling
  std::int64_t bits;      ///< bits per stored element
};

/// The table of every dtype trace knows.
std::span<const DtypeInfo> dtype_table();
/// The row of one dtype.
const DtypeInfo& dtype_info(Dtype dtype);
/// Parses a name ("bf16", "bfloat16", "float16", "fp8", ...); nullopt if unknown.
std::optional<Dtype> parse_dtype(std::string_view name);
/// Names of every dtype, comma-separated, for messages and help.
std::string dtype_names();
/// Bytes to hold `elements` values of `dtype` (rounded up for sub-byte formats). Checked.
std::int64_t bytes_for(std::int64_t elements, Dtype dtype);

}  // namespace trace
