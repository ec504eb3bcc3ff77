#pragma once
// Synthetic safetensors headers for the checkpoint tests: tensors laid end to end from offset 0,
// each one's bytes from the test's own dtype table (not the parser's).
#include <cstdint>
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace trace::test {

struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
};

inline std::int64_t spec_bytes(const TensorSpec& spec) {
  std::int64_t bits = 0;
  if (spec.dtype == "BF16" || spec.dtype == "F16") bits = 16;
  if (spec.dtype == "F32" || spec.dtype == "I32") bits = 32;
  if (spec.dtype == "I64") bits = 64;
  if (spec.dtype == "U8" || spec.dtype == "I8" || spec.dtype == "F8_E4M3") bits = 8;
  if (bits == 0) throw std::logic_error("header_builder: add the dtype " + spec.dtype);
  std::int64_t elements = 1;
  for (const std::int64_t dim : spec.shape) elements *= dim;
  return elements * bits / 8;
}

/// The JSON header of `specs`, with `metadata` as __metadata__ when non-empty.
inline std::string header_json(const std::vector<TensorSpec>& specs,
                               const std::string& metadata = R"({"format":"pt"})") {
  std::string out = "{";
  if (!metadata.empty()) out += "\"__metadata__\":" + metadata;
  std::int64_t offset = 0;
  for (const TensorSpec& spec : specs) {
    const std::int64_t bytes = spec_bytes(spec);
    if (out.size() > 1) out += ",";
    out += fmt::format(R"("{}":{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})", spec.name,
                       spec.dtype, fmt::join(spec.shape, ","), offset, offset + bytes);
    offset += bytes;
  }
  return out + "}";
}

}  // namespace trace::test
