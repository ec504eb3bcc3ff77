#pragma once
/// What the checkpoint's files hold: stored elements and bytes by dtype, for plain and quantized
/// checkpoints (FP8 block/tensor scales, MXFP4, GPTQ, AWQ, bitsandbytes). Formulas:
/// docs/parameters.md, "Storage".
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace/estimate/parameters.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

struct StorageEstimate {
  std::string format;  ///< "bf16", "fp8_block", "mxfp4", "gptq", ...
  std::int64_t stored_elements = 0;  ///< elements in the safetensors (packed values count once)
  std::int64_t bytes = 0;
  std::int64_t quantized_values = 0;  ///< logical parameters held in the quantized format
  std::int64_t scale_elements = 0;    ///< scales / zeros / indices that are not parameters
  /// Bytes of the backbone's routed experts (with their scales), what expert parallelism splits;
  /// the MTP layers' experts are in mtp_bytes.
  std::int64_t routed_expert_bytes = 0;
  std::int64_t mtp_bytes = 0;  ///< bytes of the multi-token-prediction layers (inside `bytes`)
  /// Tensors in the safetensors files; 0 where trace does not model the tensor layout (it does
  /// for ModelOpt and compressed-tensors checkpoints, whose scale tensors depend on each
  /// module's format).
  std::int64_t tensors = 0;
  std::int64_t nvfp4_modules = 0;  ///< ModelOpt: Linears stored as NVFP4
  std::int64_t fp8_modules = 0;    ///< ModelOpt: Linears stored as FP8
  /// ModelOpt: the count the Hub shows, transformers' num_parameters() over the stored
  /// checkpoint: nn.Parameters only (no scales, no router-bias buffers), a packed NVFP4 byte
  /// counting as one element.
  std::int64_t hub_parameters = 0;
  /// ModelOpt: the other Hub rule (huggingface.js): header elements, 0-d tensors skipped.
  std::int64_t header_elements_without_scalars = 0;
  /// safetensors dtype name ("BF16", "F8_E4M3", "U8", "I32", "F32", ...) -> bytes, by size.
  std::vector<std::pair<std::string, std::int64_t>> by_dtype;
  std::vector<std::string> notes;
};

/// The checkpoint's storage. Unquantized: every parameter at torch_dtype (BF16 when absent).
StorageEstimate estimate_storage(const ModelDescription& model, const ParameterCount& params);

/// The tensors bitsandbytes keeps for `count` 4-bit Linears of `rows` x `cols` weights: U8
/// elements (two values per byte, and the U8 absmax per 64 values when double quantized) and F32
/// elements (the absmax per 64 values, or the nested absmax per 256 blocks and the 256-entry
/// nested code book; the 16-entry nf4/fp4 code book).
struct Bnb4bitElements {
  std::int64_t u8 = 0;
  std::int64_t f32 = 0;
  std::int64_t bytes() const;
};
Bnb4bitElements bnb_4bit_elements(std::int64_t rows, std::int64_t cols, std::int64_t count,
                                  bool double_quant);

}  // namespace trace
