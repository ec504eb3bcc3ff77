// The layouts --quantize stands for. Each is one a serving engine loads or produces; the sizes
// follow from the formats' tensors (docs/parameters.md, "Storage"):
//  fp8        vLLM's online `--quantization fp8`: F8_E4M3 weights, one F32 scale per matrix.
//  fp8-block  DeepSeek-V3 / Qwen3-FP8 style: F8_E4M3 + an F32 scale per 128 x 128 block.
//  int8       8-bit weights with one F32 scale per output row (LLM.int8's SCB; W8A8 per-channel).
//  awq, gptq  4-bit weights in groups of 128 inputs with F16 scales and packed zeros (GPTQ also
//             its g_idx), AutoAWQ's and GPTQModel's defaults.
//  nf4        bitsandbytes nf4 with double quantization (vLLM `--quantization bitsandbytes`).
//  nvfp4      ModelOpt NVFP4: E2M1 pairs per byte, an FP8 scale per 16 inputs, two F32 scalars
//             per Linear; lm_head excluded, as ModelOpt's exports do.
#include "trace/estimate/serve_quantization.hpp"

#include <array>

namespace trace {

namespace {

Quantization simple(QuantFormat format, const char* method) {
  Quantization q;
  q.format = format;
  q.method = method;
  q.ssm_quantized = true;  // the engine quantizes every Linear in the layers
  return q;
}

Quantization fp8_tensor() { return simple(QuantFormat::fp8_tensor, "fp8"); }
Quantization fp8_block() { return simple(QuantFormat::fp8_block, "fp8"); }
Quantization int8() { return simple(QuantFormat::bnb_8bit, "int8"); }

Quantization four_bit(QuantFormat format, const char* method) {
  Quantization q = simple(format, method);
  q.bits = 4;
  q.group_size = 128;
  return q;
}

Quantization awq() { return four_bit(QuantFormat::awq, "awq"); }
Quantization gptq() { return four_bit(QuantFormat::gptq, "gptq"); }

Quantization nf4() {
  Quantization q = simple(QuantFormat::bnb_4bit, "bitsandbytes");
  q.double_quant = true;
  return q;
}

Quantization nvfp4() {
  Quantization q = simple(QuantFormat::modelopt, "modelopt");
  ModeloptScheme scheme;
  scheme.quant_algo = "NVFP4";
  scheme.default_format = ModuleFormat::nvfp4;
  scheme.group_size = 16;
  scheme.exclude = {"lm_head"};
  q.modelopt = std::move(scheme);
  return q;
}

struct Entry {
  std::string_view name;
  std::string_view label;
  Quantization (*scheme)();
};

constexpr std::array<Entry, 7> k_schemes{{
    {"fp8", "FP8 E4M3, one scale per matrix", fp8_tensor},
    {"fp8-block", "FP8 E4M3, a scale per 128x128 block", fp8_block},
    {"int8", "int8, a scale per output row", int8},
    {"awq", "AWQ int4, groups of 128", awq},
    {"gptq", "GPTQ int4, groups of 128", gptq},
    {"nf4", "bitsandbytes nf4, double quantized", nf4},
    {"nvfp4", "NVFP4, an FP8 scale per 16 values", nvfp4},
}};

}  // namespace

std::optional<ServeQuantization> parse_serve_quantization(std::string_view name) {
  for (const Entry& entry : k_schemes) {
    if (entry.name == name) {
      return ServeQuantization{std::string(entry.name), std::string(entry.label), entry.scheme()};
    }
  }
  return std::nullopt;
}

std::optional<ServeQuantization> serve_quantization_for(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp8: return parse_serve_quantization("fp8");
    case Dtype::int8: return parse_serve_quantization("int8");
    case Dtype::int4: return parse_serve_quantization("awq");
    default: return std::nullopt;  // fp32 / fp16 / bf16: a cast, not a layout
  }
}

std::string serve_quantization_names() {
  std::string names;
  for (const Entry& entry : k_schemes) {
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names;
}

Dtype default_serving_dtype(const ModelDescription& model) {
  if (model.torch_dtype == "float16") return Dtype::fp16;
  return Dtype::bf16;
}

StorageEstimate quantized_serving_storage(const ModelDescription& model,
                                          const ParameterCount& params,
                                          const ServeQuantization& wanted) {
  ModelDescription quantized = model;
  quantized.quantization = wanted.scheme;
  quantized.torch_dtype = default_serving_dtype(model) == Dtype::fp16 ? "float16" : "bfloat16";
  return estimate_storage(quantized, params);
}

}  // namespace trace
