#pragma once
/// Serving an unquantized checkpoint quantized (`--quantize`): the layout each scheme stores,
/// as a Quantization that estimate_storage prices the way it prices a checkpoint shipped in that
/// format. Every scheme quantizes the Linear weights inside the layers and leaves embeddings,
/// the head, norms and routers at the checkpoint's dtype, as the engines do
/// (docs/memory.md, "Serving quantized").
#include <optional>
#include <string>
#include <string_view>

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

/// "fp8, fp8-block, int8, awq, gptq, nf4, nvfp4"
std::string serve_quantization_names();

}  // namespace trace
