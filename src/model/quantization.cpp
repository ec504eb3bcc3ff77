#include "quantization.hpp"

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

}  // namespace

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
  } else {
    q.fail("quant_method",
           fmt::format("= \"{}\" is not supported yet (supported: fp8, mxfp4, gptq, awq, "
                       "bitsandbytes); NVFP4 / ModelOpt checkpoints come with the Nemotron-H work",
                       *method));
  }
  quantization.attention_quantized =
      !(q.has("modules_to_not_convert") &&
        names_module(q.json().at("modules_to_not_convert"), "self_attn"));
  return quantization;
}

}  // namespace trace
