#pragma once
/// Serving an unquantized checkpoint quantized (`--quantize`): the layout each scheme stores,
/// as a Quantization that estimate_storage prices the way it prices a checkpoint shipped in that
/// format. Every scheme quantizes the Linear weights inside the layers and leaves embeddings,
/// the head, norms and routers at the checkpoint's dtype, as the engines do
/// (docs/memory.md, "Serving quantized").
#include <optional>
#include <string>
#include <string_view>

#include "trace/dtype.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

struct ServeQuantization {
  std::string name;   ///< the --quantize spelling ("awq", "nvfp4", ...)
  std::string label;  ///< what it stores, for notes and tables
  Quantization scheme;
};

/// The scheme `--quantize name` asks for; nullopt when the name is not one of
/// serve_quantization_names().
std::optional<ServeQuantization> parse_serve_quantization(std::string_view name);

/// The layout a weight dtype below 16 bits names for serving (--dtype fp8, int8, int4: no engine
/// casts embeddings and norms to 8 or 4 bits): fp8, int8, awq. nullopt for fp32 / fp16 / bf16.
std::optional<ServeQuantization> serve_quantization_for(Dtype dtype);

/// "fp8, fp8-block, int8, awq, gptq, nf4, nvfp4"
std::string serve_quantization_names();

/// The serving dtype transformers/vLLM would load: fp16/bf16 as stored, bf16 for fp32 or unknown.
Dtype default_serving_dtype(const ModelDescription& model);

/// An unquantized checkpoint's stored layout served as `wanted` (`--quantize`, `--dtype fp8`,
/// a validated row's 8-bit export): its layers' Linear weights in that format, the rest at
/// default_serving_dtype.
StorageEstimate quantized_serving_storage(const ModelDescription& model,
                                          const ParameterCount& params,
                                          const ServeQuantization& wanted);

}  // namespace trace
