#include "quantization.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "trace/error.hpp"

namespace trace {

namespace {

// True when an entry names the whole module (e.g. "model.layers.*.self_attn"), not a part of it
// ("model.layers.3.self_attn.indexers_proj" keeps the rest of attention quantized).
bool names_module(const nlohmann::json& list, std::string_view module) {
  if (!list.is_array()) return false;
  for (const nlohmann::json& item : list) {
    if (!item.is_string()) continue;
    const std::string name = item.get<std::string>();
    if (name.size() >= module.size() &&
        name.compare(name.size() - module.size(), module.size(), module) == 0) {
      return true;
    }
  }
  return false;
}

ModuleFormat module_format(const ConfigReader& q, std::string_view key, const std::string& algo) {
  if (algo == "NVFP4") return ModuleFormat::nvfp4;
  if (algo == "FP8") return ModuleFormat::fp8;
  q.fail(key, fmt::format("= \"{}\" is not a ModelOpt format trace can size yet (supported: "
                          "NVFP4, FP8, MIXED_PRECISION with NVFP4/FP8 modules)",
                          algo));
}

// "backbone.layers.3.mixer.in_proj" and "model.layers.3.mlp.up_proj" name the same place as
// trace's "layers.3...": drop the wrapper prefix once.
std::string normalize_module(std::string name) {
  for (const std::string_view prefix :
       {"backbone.", "model.language_model.", "language_model.model.", "model.", "language_model."}) {
    if (name.starts_with(prefix)) return name.substr(prefix.size());
  }
  return name;
}

std::vector<std::string> module_list(const ConfigReader& q, std::string_view key) {
  std::vector<std::string> names;
  if (!q.has(key)) return names;
  const nlohmann::json& list = q.json().at(std::string(key));
  if (!list.is_array()) q.fail(key, "must be a list of module names");
  for (const nlohmann::json& item : list) {
    if (!item.is_string()) q.fail(key, "must hold only module-name strings");
    names.push_back(normalize_module(item.get<std::string>()));
  }
  return names;
}

}  // namespace

Quantization parse_modelopt(const ConfigReader& q, std::string source) {
  Quantization quantization;
  quantization.format = QuantFormat::modelopt;
  quantization.method = "modelopt";
  ModeloptScheme scheme;
  scheme.source = std::move(source);
  const std::optional<std::string> algo = q.optional_string("quant_algo");
  if (!algo) q.fail("quant_algo", "is missing; ModelOpt names the format there (NVFP4, FP8, MIXED_PRECISION)");
  scheme.quant_algo = *algo;
  if (*algo != "MIXED_PRECISION") scheme.default_format = module_format(q, "quant_algo", *algo);
  scheme.group_size = q.int_or({"group_size"}, 16, 1, k_max_width);
  scheme.exclude = module_list(q, "exclude_modules");
  for (std::string& name : module_list(q, "ignore")) scheme.exclude.push_back(std::move(name));
  if (q.has("quantized_layers")) {
    const nlohmann::json& layers = q.json().at("quantized_layers");
    if (!layers.is_object()) q.fail("quantized_layers", "must map module names to {\"quant_algo\": ...}");
    for (const auto& [name, entry] : layers.items()) {
      const std::string key = fmt::format("quantized_layers.{}", name);
      if (!entry.is_object() || !entry.contains("quant_algo") || !entry["quant_algo"].is_string()) {
        q.fail(key, "must be an object with a \"quant_algo\" string");
      }
      const ModuleFormat format = module_format(q, key, entry["quant_algo"].get<std::string>());
      if (entry.contains("group_size") && entry["group_size"] != scheme.group_size &&
          format == ModuleFormat::nvfp4) {
        if (!entry["group_size"].is_number_integer() || entry["group_size"].get<std::int64_t>() < 1) {
          q.fail(key + ".group_size", "must be a positive integer");
        }
        scheme.group_size = entry["group_size"].get<std::int64_t>();
      }
      std::string module = normalize_module(name);
      (module.find_first_of("*?") == std::string::npos ? scheme.module_formats
                                                       : scheme.module_patterns)
          .emplace_back(std::move(module), format);
    }
    std::sort(scheme.module_formats.begin(), scheme.module_formats.end());
  } else if (*algo == "MIXED_PRECISION") {
    q.fail("quantized_layers", "is missing; a MIXED_PRECISION checkpoint lists each module's format there");
  }
  const std::optional<std::string> kv = q.optional_string("kv_cache_quant_algo");
  if (kv && *kv != "FP8") {
    q.fail("kv_cache_quant_algo", fmt::format("= \"{}\" is not supported (FP8 or null)", *kv));
  }
  scheme.kv_cache_fp8 = kv.has_value();
  // Newer exports (with kv_cache_scheme) also store k_scale / v_scale per attention layer.
  scheme.kv_scales_stored = scheme.kv_cache_fp8 && q.has("kv_cache_scheme");
  if (q.has("producer") && q.json().at("producer").is_object()) {
    const nlohmann::json& producer = q.json().at("producer");
    scheme.producer = fmt::format("{} {}", producer.value("name", std::string("?")),
                                  producer.value("version", std::string("?")));
  }
  quantization.modelopt = std::move(scheme);
  return quantization;
}

std::optional<Quantization> parse_quantization(const ConfigReader& config) {
  if (!config.has("quantization_config")) return std::nullopt;
  const ConfigReader q = config.child("quantization_config");
  const std::optional<std::string> method = q.optional_string("quant_method");
  if (!method) q.fail("quant_method", "is missing; trace cannot tell how the weights are stored");
  Quantization quantization;
  quantization.method = *method;
  if (*method == "fp8") {
    if (q.has("weight_block_size")) {
      const nlohmann::json& block = q.json().at("weight_block_size");
      if (!block.is_array() || block.size() != 2 || !block[0].is_number_integer() ||
          !block[1].is_number_integer() || block[0].get<std::int64_t>() < 1 ||
          block[1].get<std::int64_t>() < 1) {
        q.fail("weight_block_size", "must be two positive integers, e.g. [128, 128]");
      }
      quantization.format = QuantFormat::fp8_block;
      quantization.block_rows = block[0].get<std::int64_t>();
      quantization.block_cols = block[1].get<std::int64_t>();
    } else {
      quantization.format = QuantFormat::fp8_tensor;
    }
  } else if (*method == "mxfp4") {
    quantization.format = QuantFormat::mxfp4;
  } else if (*method == "gptq" || *method == "awq") {
    quantization.format = *method == "gptq" ? QuantFormat::gptq : QuantFormat::awq;
    quantization.bits = q.int_or({"bits", "w_bit"}, 4, 2, 8);
    if (32 % quantization.bits != 0) q.fail("bits", "must divide 32 (2, 4 or 8)");
    quantization.group_size = q.int_or({"group_size", "q_group_size"}, 128, -1, k_max_width);
    if (quantization.group_size == 0) q.fail("group_size", "must be positive or -1");
  } else if (*method == "bitsandbytes") {
    if (q.bool_or("load_in_4bit", false)) {
      quantization.format = QuantFormat::bnb_4bit;
      quantization.bits = 4;
      quantization.double_quant = q.bool_or("bnb_4bit_use_double_quant", false);
    } else if (q.bool_or("load_in_8bit", false)) {
      quantization.format = QuantFormat::bnb_8bit;
      quantization.bits = 8;
    } else {
      q.fail("load_in_4bit", "and load_in_8bit are both false; nothing says how weights are stored");
    }
  } else if (*method == "modelopt") {
    return parse_modelopt(q, "config.json");
  } else {
    q.fail("quant_method",
           fmt::format("= \"{}\" is not supported yet (supported: fp8, mxfp4, gptq, awq, "
                       "bitsandbytes, modelopt)",
                       *method));
  }
  quantization.attention_quantized =
      !(q.has("modules_to_not_convert") &&
        names_module(q.json().at("modules_to_not_convert"), "self_attn"));
  return quantization;
}

}  // namespace trace
