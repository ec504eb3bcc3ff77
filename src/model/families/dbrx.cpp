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

  // DbrxFFNConfig defaults: 4 experts, top 1, width 3584, SiLU. w1 (gate) and v1 (up) read
  // d_model, w2 (down) writes it back; the router is bias-free.
  Moe moe =
      routed_experts(ffn, hidden, {"moe_num_experts"}, {"moe_top_k"},
                     ffn.int_or({"ffn_hidden_size"}, 3584, 1, k_max_width), ExpertDefaults{4, 1});
  if (ffn.has("ffn_act_fn")) {
    const nlohmann::json& act = ffn.json().at("ffn_act_fn");
    if (!act.is_object()) ffn.fail("ffn_act_fn", "must be an object such as {\"name\": \"silu\"}");
    if (act.contains("name") && act.at("name").is_string()) {
      moe.expert.activation = act.at("name").get<std::string>();
    }
  }

  DecoderLayout layout;
  layout.norm_kind = NormKind::layer_norm_no_bias;
  layout.fused_qkv = true;
  layout.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
  layout.rotary_dim = shape.head_dim;
  layout.attention_name = "norm_attn_norm.attn";
  layout.norm_names = {"norm_attn_norm.norm_1", "norm_attn_norm.norm_2"};
  layout.final_norm_name = "norm_f";
  Stack stack = decoder_stack(hidden, layers, shape, layout);
  for (Block& block : stack.blocks) set_moe(block, moe, hidden);
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
