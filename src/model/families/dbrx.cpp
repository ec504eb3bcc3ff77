// DBRX (model_type dbrx): databricks/dbrx-base and dbrx-instruct (132B total, 36B active).
// Top-level d_model / n_heads / n_layers / max_seq_len; attention settings nested under
// attn_config (kv_n_heads, clip_qkv, rope_theta) and the MoE under ffn_config (ffn_hidden_size,
// moe_num_experts, moe_top_k, ffn_act_fn). Each block: norm_1 -> fused Wqkv (no bias; clip_qkv
// only clamps activations) -> out_proj, norm_2 -> router + GLU experts. Every LayerNorm is
// bias-free, nothing has a bias, and the head is never tied (DbrxConfig refuses it).
// Checkpoint names (not transformers' usual model.layers.*): transformer.wte,
// transformer.blocks.N.norm_attn_norm.{norm_1, attn.Wqkv, attn.out_proj, norm_2},
// transformer.blocks.N.ffn.router.layer, transformer.blocks.N.ffn.experts.mlp.{w1, v1, w2} (each
// one [experts x ffn_hidden_size, d_model] tensor holding every expert), transformer.norm_f,
// lm_head.
// Tensor list: transformers models/dbrx/modeling_dbrx.py (configuration_dbrx.py for defaults).
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

// attn_config / ffn_config may be left out; DbrxConfig then builds them from its defaults.
ConfigReader optional_child(const ConfigReader& config, std::string_view key) {
  static const nlohmann::json k_empty = nlohmann::json::object();
  if (config.has(key)) return config.child(key);
  return ConfigReader(k_empty, config.key_path(key), config.model_type());
}

}  // namespace

ModelDescription build_dbrx(const ConfigReader& config) {
  ModelDescription model;
  const ConfigReader attn = optional_child(config, "attn_config");
  const ConfigReader ffn = optional_child(config, "ffn_config");
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"d_model"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"n_layers"}, 1, k_max_layers);
  fill_decoder_basics(model, config, vocab, hidden, false, {"max_seq_len"});
  if (model.tie_word_embeddings) {
    config.fail("tie_word_embeddings",
                "is true, but DBRX never ties its head (DbrxConfig raises on it); set it to false");
  }
  model.position = PositionKind::rope;
  model.family = "DBRX (fine-grained MoE decoder, fused Wqkv, GQA, bias-free LayerNorm)";

  // DbrxAttention: head_dim = d_model / n_heads, kv_n_heads defaults to 1 (multi-query).
  HeadShape shape;
  shape.num_heads = config.require_int({"n_heads"}, 1, k_max_heads);
  shape.num_kv_heads = attn.int_or({"kv_n_heads"}, 1, 1, k_max_heads);
  if (hidden % shape.num_heads != 0) {
    throw ConfigError(fmt::format(
        "config.json ({}): 'd_model' = {} is not divisible by 'n_heads' = {}; DBRX heads are "
        "d_model / n_heads wide",
        config.model_type(), hidden, shape.num_heads));
  }
  if (shape.num_kv_heads > shape.num_heads || shape.num_heads % shape.num_kv_heads != 0) {
    attn.fail("kv_n_heads",
              fmt::format("= {} must divide 'n_heads' = {}", shape.num_kv_heads, shape.num_heads));
  }
  shape.head_dim = hidden / shape.num_heads;

  // DbrxFFNConfig defaults: 4 experts, top 1, width 3584, SiLU.
  Moe moe;
  moe.num_experts = ffn.int_or({"moe_num_experts"}, 4, 1, 1 << 20);
  moe.top_k = ffn.int_or({"moe_top_k"}, 1, 1, 1 << 20);
  if (moe.top_k > moe.num_experts) {
    ffn.fail("moe_top_k",
             fmt::format("= {} routes each token to more experts than the {} there are", moe.top_k,
                         moe.num_experts));
  }
  const std::int64_t width = ffn.int_or({"ffn_hidden_size"}, 3584, 1, k_max_width);
  std::string activation = "silu";
  if (ffn.has("ffn_act_fn")) {
    const nlohmann::json& act = ffn.json().at("ffn_act_fn");
    if (!act.is_object()) ffn.fail("ffn_act_fn", "must be an object such as {\"name\": \"silu\"}");
    if (act.contains("name") && act.at("name").is_string()) {
      activation = act.at("name").get<std::string>();
    }
  }
  // w1 (gate) and v1 (up) read d_model, w2 (down) writes it back; the router is bias-free.
  moe.expert = Mlp{MlpKind::gated, activation, hidden, width, false, false, false};
  moe.hidden_dim = hidden;

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, false, false);
    block.attention.name = "norm_attn_norm.attn";
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = shape.head_dim;
    set_moe(block, moe, hidden);
    block.norms = {layer_norm("norm_attn_norm.norm_1", hidden, false),
                   layer_norm("norm_attn_norm.norm_2", hidden, false)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("norm_f", hidden, false);
  model.stacks.push_back(std::move(stack));

  if (!config.has("attn_config")) model.notes.push_back("DbrxConfig: attn_config left out");
  if (!config.has("ffn_config")) model.notes.push_back("DbrxConfig: ffn_config left out");
  note_defaults(model, attn, "DbrxAttentionConfig", {{"kv_n_heads", "1"}});
  note_defaults(model, ffn, "DbrxFFNConfig",
                {{"ffn_hidden_size", "3584"},
                 {"moe_num_experts", "4"},
                 {"moe_top_k", "1"},
                 {"ffn_act_fn", "{\"name\": \"silu\"}"}});
  return model;
}

}  // namespace trace::family
