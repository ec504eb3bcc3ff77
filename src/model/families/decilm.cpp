// DeciLM / Nemotron-NAS (model_type nemotron-nas, deci): a Llama whose layers differ one by one.
//  - block_configs (Llama-Nemotron Super/Ultra/Nano, Nemotron-51B): per layer, attention is
//    no_op (no attention, no input_layernorm), replace_with_linear (one bias-free
//    Linear(hidden, hidden)) or GQA with num_heads / n_heads_in_group kv heads (window_length: a
//    sliding window); the FFN is no_op (no MLP, no post_attention_layernorm), replace_with_linear,
//    or SwiGLU of _ffn_mult_to_intermediate_size(ffn_mult) = round-up-to-256(int(2 x ffn_mult x
//    hidden / 3)).
//  - num_key_value_heads_per_layer (DeciLM-7B): a Llama with a kv head count per layer.
// Tensor list: the checkpoints' own modeling_decilm.py (DeciLMDecoderLayer).
#include <cmath>
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

std::int64_t ffn_mult_to_intermediate(double ffn_mult, std::int64_t hidden) {
  // int(2 * ffn_mult * n_embd / 3), then _find_multiple(..., 256)
  const auto base = static_cast<std::int64_t>(2.0 * ffn_mult * static_cast<double>(hidden) / 3.0);
  return ceil_div(base, 256) * 256;
}

bool flag(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

ModelDescription build_decilm(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  const std::int64_t head_dim = config.int_or({"head_dim"}, hidden / heads, 1, k_max_width);
  if (!config.has("head_dim") && hidden % heads != 0) {
    config.fail("num_attention_heads", "does not divide hidden_size; set head_dim");
  }
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = "DeciLM / Nemotron-NAS (Llama with per-layer heterogeneous blocks)";
  model.position = PositionKind::rope;
  const bool attention_bias = config.bool_or("attention_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  const std::string activation = config.optional_string("hidden_act").value_or("silu");

  const bool has_blocks = config.has("block_configs");
  const bool has_kv_list = config.has("num_key_value_heads_per_layer");
  if (!has_blocks && !has_kv_list) {
    throw ConfigError(fmt::format(
        "config.json ({}): neither 'block_configs' nor 'num_key_value_heads_per_layer' is "
        "present; a DeciLM config describes its layers with one of them",
        config.model_type()));
  }
  const nlohmann::json& list =
      config.json().at(has_blocks ? "block_configs" : "num_key_value_heads_per_layer");
  const char* list_key = has_blocks ? "block_configs" : "num_key_value_heads_per_layer";
  if (!list.is_array() || static_cast<std::int64_t>(list.size()) != layers) {
    config.fail(list_key, fmt::format("has {} entries but num_hidden_layers is {}; they must agree",
                                      list.is_array() ? list.size() : 0, layers));
  }

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    const nlohmann::json& entry = list[static_cast<std::size_t>(i)];
    const std::string where = fmt::format("{}[{}]", list_key, i);
    Block block;
    Attention& attention = block.attention;
    attention.input_dim = attention.kv_input_dim = attention.output_dim = hidden;
    attention.num_heads = heads;
    attention.head_dim = head_dim;
    attention.rotary_dim = head_dim;
    bool attention_present = true;
    bool ffn_present = true;
    if (has_kv_list) {
      if (!entry.is_number_integer() || entry.get<std::int64_t>() < 1 ||
          heads % entry.get<std::int64_t>() != 0) {
        config.fail(where, fmt::format("= {} must be a kv head count dividing {}", entry.dump(), heads));
      }
      attention.num_kv_heads = entry.get<std::int64_t>();
      block.mlp = Mlp{MlpKind::gated, activation, hidden,
                      config.require_int({"intermediate_size"}, 1, k_max_width), mlp_bias, mlp_bias,
                      false};
    } else {
      if (!entry.is_object() || !entry.contains("attention") || !entry.contains("ffn") ||
          !entry["attention"].is_object() || !entry["ffn"].is_object()) {
        config.fail(where, "must be an object with 'attention' and 'ffn' objects");
      }
      const nlohmann::json& attn = entry["attention"];
      const nlohmann::json& ffn = entry["ffn"];
      if (flag(attn, "no_op")) {
        attention.kind = AttentionKind::none;
        attention_present = false;
      } else if (flag(attn, "replace_with_linear")) {
        attention.kind = AttentionKind::linear;
      } else {
        const auto group = attn.find("n_heads_in_group");
        if (group == attn.end() || !group->is_number_integer() || group->get<std::int64_t>() < 1 ||
            heads % group->get<std::int64_t>() != 0) {
          config.fail(where + ".attention.n_heads_in_group",
                      fmt::format("must be a positive integer dividing num_attention_heads ({})",
                                  heads));
        }
        attention.num_kv_heads = heads / group->get<std::int64_t>();
        const auto window = attn.find("window_length");
        if (window != attn.end() && window->is_number_integer() && window->get<std::int64_t>() > 0) {
          attention.sliding_window = window->get<std::int64_t>();
        }
      }
      if (flag(ffn, "no_op")) {
        block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
        ffn_present = false;
      } else if (flag(ffn, "replace_with_linear")) {
        block.mlp = Mlp{MlpKind::linear, "", hidden, hidden, false, false, false};
      } else {
        const auto mult = ffn.find("ffn_mult");
        if (mult == ffn.end() || !mult->is_number() || !(mult->get<double>() > 0.0) ||
            !std::isfinite(mult->get<double>()) || mult->get<double>() > 1e4) {
          config.fail(where + ".ffn.ffn_mult", "must be a positive number");
        }
        block.mlp = Mlp{MlpKind::gated, activation, hidden,
                        ffn_mult_to_intermediate(mult->get<double>(), hidden), mlp_bias, mlp_bias,
                        false};
      }
    }
    if (attention.kind == AttentionKind::standard) {
      attention.q_bias = attention.k_bias = attention.v_bias = attention.o_bias = attention_bias;
    }
    if (attention_present) block.norms.push_back(rms_norm("input_layernorm", hidden));
    if (ffn_present) block.norms.push_back(rms_norm("post_attention_layernorm", hidden));
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
