// Phi-MoE (model_type phimoe): microsoft/Phi-3.5-MoE-instruct (16 x 6400-wide SwiGLU experts,
// top-2) and the SlimMoE prunes of it (Phi-mini-MoE, Phi-tiny-MoE). A Mixtral layout with
// LayerNorms (weight and bias) instead of RMSNorms, q/k/v/o biases when attention_bias, and an
// lm_head bias when lm_head_bias. Checkpoint names: model.layers.N.self_attn.{q,k,v,o}_proj,
// block_sparse_moe.gate (router, no bias), block_sparse_moe.experts.E.{w1,w3,w2} (gate, up,
// down), input_layernorm / post_attention_layernorm, model.norm, lm_head.
// Tensor list: transformers models/phimoe/modeling_phimoe.py (PhimoeAttention is LlamaAttention,
// PhimoeDecoderLayer / PhimoeModel swap in nn.LayerNorm, PhimoeForCausalLM's lm_head bias).
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_phimoe(const ConfigReader& config) {
  ModelDescription model;
  DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  HeadShape& shape = dims.heads;
  // PhimoeConfig's num_key_value_heads defaults to 8 when the key is left out (only an explicit
  // null means one kv head per query head), where read_decoder_dims would take num_heads.
  if (!config.json().contains("num_key_value_heads")) {
    shape.num_kv_heads = 8;
    if (shape.num_heads % shape.num_kv_heads != 0) {
      throw ConfigError(fmt::format(
          "config.json ({}): 'num_attention_heads' = {} is not a multiple of PhimoeConfig's "
          "default num_key_value_heads 8; set 'num_key_value_heads'",
          config.model_type(), shape.num_heads));
    }
    model.notes.push_back("PhimoeConfig default used: num_key_value_heads = 8");
  }
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Phi-MoE (sparse MoE decoder, RoPE, LayerNorm, GQA, attention and head biases)";
  model.lm_head_bias = config.bool_or("lm_head_bias", false);

  // The expert counts have PhimoeConfig defaults (16, top 2), so they are not required keys.
  const Moe moe = routed_experts(config, hidden, {"num_local_experts"}, {"num_experts_per_tok"},
                                 intermediate, ExpertDefaults{16, 2});

  DecoderLayout layout;
  layout.norm_kind = NormKind::layer_norm;
  layout.qkv_bias = layout.o_bias = config.bool_or("attention_bias", false);
  layout.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
  layout.rotary_dim = shape.head_dim;
  // Mixtral's sliding window; Phi-3.5-MoE sets it to its full 131072 context.
  layout.windows = resolve_windows(
      config, dims.layers,
      {config.int_or({"sliding_window"}, 0, 0, k_max_positions), WindowRule::Pattern::all, 0});
  Stack stack = decoder_stack(hidden, dims.layers, shape, layout);
  for (Block& block : stack.blocks) set_moe(block, moe, hidden);
  model.stacks.push_back(std::move(stack));
  note_defaults(model, config, "PhimoeConfig",
                {{"num_local_experts", "16"},
                 {"num_experts_per_tok", "2"},
                 {"attention_bias", "false"},
                 {"lm_head_bias", "false"},
                 {"hidden_act", "silu"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
