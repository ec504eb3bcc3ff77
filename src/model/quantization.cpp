#include "quantization.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

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

// ---- compressed-tensors -------------------------------------------------------------------------
// Layout read from neuralmagic/compressed-tensors: quantization/quant_scheme.py and quant_args.py
// (the config), quantization/lifecycle/initialize.py (scale shapes and dtypes), and the
// compressors in compressors/quantized_compressors/ (pack_quantized.py, naive_quantized.py,
// nvfp4 / fp4 packing) for the stored tensors. docs/parameters.md, "compressed-tensors".

constexpr std::string_view k_ct_formats =
    "pack-quantized, float-quantized, naive-quantized, int-quantized, nvfp4-pack-quantized";

// A regex written against the checkpoint's full names ("model.layers.0...") is matched on names
// with the wrapper prefix dropped, so drop the same prefix from the pattern (literal or escaped).
std::string normalize_regex(std::string pattern) {
  for (const std::string_view prefix :
       {"model.language_model.", "model\\.language_model\\.", "language_model.model.",
        "language_model\\.model\\.", "backbone.", "backbone\\.", "model.", "model\\.",
        "language_model.", "language_model\\."}) {
    if (pattern.starts_with(prefix)) return pattern.substr(prefix.size());
  }
  return pattern;
}

// Sorts one targets / ignore list into exact names and regexes; "Linear" (every nn.Linear) is
// reported through `all_linears`. Other class names cannot be sized and are refused.
void read_module_list(const ConfigReader& q, const std::string& key, const nlohmann::json& list,
                      bool* all_linears, std::vector<std::string>& names,
                      std::vector<std::string>& regexes) {
  if (!list.is_array())
    q.fail(key, "must be a list of module names, \"re:\" patterns or \"Linear\"");
  for (const nlohmann::json& item : list) {
    if (!item.is_string()) q.fail(key, "must hold only strings");
    const std::string entry = item.get<std::string>();
    if (entry.starts_with("re:")) {
      std::string pattern = normalize_regex(entry.substr(3));
      try {
        (void)std::regex(pattern);
      } catch (const std::regex_error&) {
        q.fail(key, fmt::format("holds \"{}\", a pattern trace cannot compile", entry));
      }
      regexes.push_back(std::move(pattern));
    } else if (entry == "Linear" && all_linears != nullptr) {
      *all_linears = true;
    } else if (entry.find('.') == std::string::npos && !entry.empty() && entry[0] >= 'A' &&
               entry[0] <= 'Z') {
      q.fail(key, fmt::format("holds the class name \"{}\"; trace sizes only \"Linear\" targets, "
                              "module names and \"re:\" patterns",
                              entry));
    } else {
      names.push_back(normalize_module(entry));
    }
  }
}

bool is_null_or_absent(const nlohmann::json& object, const char* key) {
  return !object.contains(key) || object.at(key).is_null();
}

// An optional string or boolean inside a nested object: `fallback` when absent or null, refused
// by name when of another type (nlohmann's value() would throw a type error instead).
std::string string_field(const ConfigReader& q, const std::string& at, const nlohmann::json& object,
                         const char* key, const char* fallback) {
  if (is_null_or_absent(object, key)) return fallback;
  if (!object.at(key).is_string()) q.fail(at + "." + key, "must be a string");
  return object.at(key).get<std::string>();
}

bool bool_field(const ConfigReader& q, const std::string& at, const nlohmann::json& object,
                const char* key, bool fallback) {
  if (is_null_or_absent(object, key)) return fallback;
  if (!object.at(key).is_boolean()) q.fail(at + "." + key, "must be true or false");
  return object.at(key).get<bool>();
}

CtStrategy ct_strategy(const ConfigReader& q, const std::string& key, const nlohmann::json& args) {
  const std::string strategy = string_field(q, key, args, "strategy", "tensor");
  if (strategy == "tensor") return CtStrategy::tensor;
  if (strategy == "channel") return CtStrategy::channel;
  if (strategy == "group") return CtStrategy::group;
  if (strategy == "block") return CtStrategy::block;
  if (strategy == "tensor_group") return CtStrategy::tensor_group;
  q.fail(key + ".strategy", fmt::format("= \"{}\" is not a weight strategy trace can size "
                                        "(supported: tensor, channel, group, block, tensor_group)",
                                        strategy));
}

std::int64_t positive_int(const ConfigReader& q, const std::string& key,
                          const nlohmann::json& value) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 1)
    q.fail(key, "must be a positive integer");
  return value.get<std::int64_t>();
}

CtGroup read_ct_group(const ConfigReader& q, const std::string& name, const nlohmann::json& group,
                      const std::string& default_format) {
  const std::string at = "config_groups." + name;
  if (!group.is_object()) q.fail(at, "must be an object with \"targets\" and \"weights\"");
  CtGroup out;
  out.name = name;
  if (!group.contains("targets"))
    q.fail(at + ".targets", "is missing; nothing says which Linears it quantizes");
  read_module_list(q, at + ".targets", group.at("targets"), &out.all_linears, out.names,
                   out.regexes);
  if (is_null_or_absent(group, "weights")) {
    q.fail(at + ".weights",
           "is null: activation-only schemes do not change the stored weights "
           "and trace does not size them");
  }
  const nlohmann::json& weights = group.at("weights");
  const std::string w = at + ".weights";
  if (!weights.is_object()) q.fail(w, "must be an object");
  const std::string format = group.contains("format") && group.at("format").is_string()
                                 ? group.at("format").get<std::string>()
                                 : default_format;
  const std::string type = string_field(q, w, weights, "type", "int");
  if (type != "int" && type != "float") {
    q.fail(w + ".type", fmt::format("= \"{}\" is not supported (int or float)", type));
  }
  out.num_bits = positive_int(q, w + ".num_bits", weights.value("num_bits", nlohmann::json(8)));
  out.strategy = ct_strategy(q, w, weights);
  out.symmetric = bool_field(q, w, weights, "symmetric", true);
  if (weights.contains("dynamic") && weights.at("dynamic") != false) {
    q.fail(w + ".dynamic", "must be false: dynamically quantized weights are not stored quantized");
  }
  if (!is_null_or_absent(weights, "scale_dtype") || !is_null_or_absent(weights, "zp_dtype")) {
    q.fail(w + ".scale_dtype", "is set; trace sizes scales only at the weight's own dtype (null)");
  }
  if (out.strategy == CtStrategy::group || out.strategy == CtStrategy::tensor_group) {
    out.group_size =
        positive_int(q, w + ".group_size", weights.value("group_size", nlohmann::json()));
  }
  if (out.strategy == CtStrategy::block) {
    const nlohmann::json block = weights.value("block_structure", nlohmann::json());
    if (!block.is_array() || block.size() != 2) {
      q.fail(w + ".block_structure", "must be two positive integers, e.g. [128, 128]");
    }
    out.block_rows = positive_int(q, w + ".block_structure", block[0]);
    out.block_cols = positive_int(q, w + ".block_structure", block[1]);
  }
  const nlohmann::json actorder = weights.value("actorder", nlohmann::json());
  if (actorder == true || actorder == "group") {
    out.g_idx = true;  // only group activation ordering stores weight_g_idx
  } else if (!(actorder.is_null() || actorder == false || actorder == "weight" ||
               actorder == "static")) {
    q.fail(w + ".actorder",
           fmt::format("= {} is not supported (null, group, weight, static)", actorder.dump()));
  }
  const auto refuse = [&](std::string_view why) {
    q.fail(w, fmt::format("(num_bits {}, type {}, format \"{}\") {}", out.num_bits, type, format,
                          why));
  };
  if (format == "pack-quantized") {
    if (type != "int" || out.num_bits > 8)
      refuse("cannot be packed: pack-quantized holds int weights of 1-8 bits");
    if (out.strategy != CtStrategy::group && out.strategy != CtStrategy::channel &&
        out.strategy != CtStrategy::tensor) {
      refuse("has a strategy pack-quantized does not store (tensor, channel, group)");
    }
    if (!out.symmetric && out.strategy == CtStrategy::tensor) {
      refuse("is asymmetric per tensor; trace does not size that zero point");
    }
    out.storage = CtStorage::pack_quantized;
  } else if (format == "float-quantized" || format == "naive-quantized" ||
             format == "int-quantized") {
    if (type == "float") {
      if (out.num_bits != 8 || format == "int-quantized")
        refuse("is not stored by this compressor (float needs 8 bits)");
      if (!out.symmetric) refuse("is an asymmetric float scheme, which trace does not size");
      out.storage = CtStorage::fp8;
    } else {
      if (out.num_bits > 8 || format == "float-quantized")
        refuse("is not stored by this compressor (int needs 1-8 bits)");
      out.storage = CtStorage::int8;
    }
    if (out.strategy == CtStrategy::tensor_group)
      refuse("uses tensor_group, which only NVFP4 stores");
  } else if (format == "nvfp4-pack-quantized") {
    if (type != "float" || out.num_bits != 4 || out.strategy != CtStrategy::tensor_group ||
        !out.symmetric) {
      refuse("is not NVFP4 (float, 4 bits, symmetric, strategy tensor_group)");
    }
    out.storage = CtStorage::nvfp4;
  } else {
    q.fail(group.contains("format") ? at + ".format" : "format",
           fmt::format("= \"{}\" is not a compressed-tensors format trace can size (supported: {})",
                       format, k_ct_formats));
  }
  if (!is_null_or_absent(group, "output_activations")) {
    q.fail(at + ".output_activations", "is set; trace does not size output-activation scales");
  }
  if (!is_null_or_absent(group, "input_activations")) {
    const nlohmann::json& input = group.at("input_activations");
    const std::string i = at + ".input_activations";
    if (!input.is_object()) q.fail(i, "must be an object or null");
    const nlohmann::json dynamic = input.value("dynamic", nlohmann::json(false));
    if (dynamic == true) {
      // Computed at run time: nothing stored.
    } else if (dynamic == "local" && out.storage == CtStorage::nvfp4) {
      out.input_global_scale = true;  // local scales at run time, one F32 global scale stored
    } else if (dynamic == false) {
      if (string_field(q, i, input, "strategy", "tensor") != "tensor" ||
          !bool_field(q, i, input, "symmetric", true)) {
        q.fail(
            i,
            "is static but not symmetric per tensor; trace sizes only one input_scale per Linear");
      }
      out.input_scale = true;
    } else {
      q.fail(i + ".dynamic",
             fmt::format("= {} is not supported (true, false, or \"local\" with NVFP4)",
                         dynamic.dump()));
    }
  }
  return out;
}

Quantization parse_compressed_tensors(const ConfigReader& q) {
  Quantization quantization;
  quantization.format = QuantFormat::compressed_tensors;
  quantization.method = "compressed-tensors";
  CompressedTensorsScheme scheme;
  const nlohmann::json& config = q.json();
  scheme.format = config.contains("format") && config.at("format").is_string()
                      ? config.at("format").get<std::string>()
                      : std::string();
  const std::string status = q.optional_string("quantization_status").value_or("compressed");
  if (status != "compressed") {
    q.fail("quantization_status",
           fmt::format("= \"{}\": only \"compressed\" checkpoints store packed "
                       "weights; trace does not size the others",
                       status));
  }
  for (const char* key : {"sparsity_config", "transform_config"}) {
    if (!is_null_or_absent(config, key) &&
        !(config.at(key).is_object() && config.at(key).empty())) {
      q.fail(key, "is set; trace does not size compressed-tensors sparsity or transforms");
    }
  }
  if (!is_null_or_absent(config, "kv_cache_scheme")) {
    q.fail("kv_cache_scheme", "is set; trace does not size compressed-tensors KV-cache scales yet");
  }
  if (!q.has("config_groups") || !config.at("config_groups").is_object() ||
      config.at("config_groups").empty()) {
    q.fail("config_groups", "is missing or empty; nothing says how the weights are stored");
  }
  for (const auto& [name, group] : config.at("config_groups").items()) {
    scheme.groups.push_back(read_ct_group(q, name, group, scheme.format));
  }
  if (config.contains("ignore") && !config.at("ignore").is_null()) {
    read_module_list(q, "ignore", config.at("ignore"), nullptr, scheme.ignore_names,
                     scheme.ignore_regexes);
  }
  std::sort(scheme.ignore_names.begin(), scheme.ignore_names.end());
  quantization.compressed_tensors = std::move(scheme);
  return quantization;
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
    // Shown, never sized: a field of another type reads as unknown.
    const auto text = [&producer](const char* key) {
      return producer.contains(key) && producer.at(key).is_string()
                 ? producer.at(key).get<std::string>()
                 : std::string("?");
    };
    scheme.producer = fmt::format("{} {}", text("name"), text("version"));
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
    const std::string scheme = q.optional_string("activation_scheme").value_or("dynamic");
    if (scheme != "dynamic" && scheme != "static") {
      q.fail("activation_scheme", fmt::format("= \"{}\" is neither dynamic nor static", scheme));
    }
    quantization.static_activation_scale = scheme == "static";
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
  } else if (*method == "compressed-tensors") {
    return parse_compressed_tensors(q);
  } else {
    q.fail("quant_method",
           fmt::format("= \"{}\" is not supported yet (supported: fp8, mxfp4, gptq, awq, "
                       "bitsandbytes, modelopt, compressed-tensors)",
                       *method));
  }
  quantization.attention_quantized =
      !(q.has("modules_to_not_convert") &&
        names_module(q.json().at("modules_to_not_convert"), "self_attn"));
  return quantization;
}

}  // namespace trace
