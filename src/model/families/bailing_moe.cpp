// Bailing MoE (model_type bailing_moe, BailingMoeForCausalLM): inclusionAI/Ling-lite,
// Ling-lite-1.5, Ling-plus, Ling-Coder-lite (remote code). A pre-norm RMSNorm decoder whose
// attention is one fused query_key_value Linear [(heads + 2 kv) x head_dim, H] (bias per
// use_qkv_bias) and an output `dense` (bias per use_bias, which BailingMoeConfig defaults to
// true), RoPE; the first first_k_dense_replace layers hold a dense SwiGLU of intermediate_size,
// the rest a softmax router gate [E, H] (no bias), num_experts SwiGLU experts of
// moe_intermediate_size (top num_experts_per_tok) and num_shared_experts fused into one MLP
// (mlp.shared_experts) of num_shared_experts x moe_intermediate_size. No MLP has a bias.
// norm_head only rescales lm_head's rows at run time: no tensor.
// Checkpoint names: model.word_embeddings, model.layers.N.attention.{query_key_value, dense},
// model.layers.N.mlp.{gate, experts.E, shared_experts}.{gate,up,down}_proj, input_layernorm,
// post_attention_layernorm, model.norm, lm_head.
// BailingMoeV2ForCausalLM (Ling-mini-2.0, Ling-flash-2.0, Ling-1T, Ring-2.0) reuses the
// model_type with another layout (QK-norm, sigmoid router with expert bias, MTP layers): handed to
// build_bailing_moe_v2 (bailing_moe_v2.cpp) by architecture.
// Tensor list: inclusionAI/Ling models/modeling_bailing_moe.py, configuration_bailing_moe.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

BailingFfn read_bailing_ffn(const ConfigReader& config, std::int64_t hidden, std::int64_t layers,
                            std::int64_t first_dense_default, ExpertDefaults experts,
                            const std::string& activation) {
  BailingFfn ffn;
  ffn.first_dense = config.int_or({"first_k_dense_replace"}, first_dense_default, 0, k_max_layers);
  // A null num_experts makes every layer dense (the decoder layer's `is not None` test).
  const bool has_experts = !config.json().contains("num_experts") || config.has("num_experts");
  if (!has_experts || ffn.first_dense > 0) {
    ffn.dense_width = config.require_int({"intermediate_size"}, 1, k_max_width);
  }
  if (!has_experts) return ffn;
  ffn.moe = routed_experts(config, hidden, {"num_experts"}, {"num_experts_per_tok"},
                           config.require_int({"moe_intermediate_size"}, 1, k_max_width), experts);
  ffn.moe->expert.activation = activation;
  if (ffn.first_dense >= layers) {
    config.fail("first_k_dense_replace",
                fmt::format("= {} leaves no MoE layer among {} while num_experts is set",
                            ffn.first_dense, layers));
  }
  return ffn;
}

ModelDescription build_bailing_moe(const ConfigReader& config) {
  if (first_architecture(config) == "BailingMoeV2ForCausalLM") return build_bailing_moe_v2(config);
  ModelDescription model;
  // BailingMoeConfig defaults num_key_value_heads to 0, which builds no attention: require it.
  if (!config.has("num_key_value_heads")) {
    config.fail("num_key_value_heads",
                "is missing; BailingMoeConfig's default (0) builds no key/value heads");
  }
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  model.family = "Bailing MoE / Ling (fused QKV, GQA, MoE with shared experts)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 16384;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  const bool qkv_bias = config.bool_or("use_qkv_bias", false);
  const bool dense_bias = config.bool_or("use_bias", true);
  BailingFfn ffn = read_bailing_ffn(config, hidden, layers, 0, ExpertDefaults{16, 2}, activation);
  if (ffn.moe) set_shared_experts(*ffn.moe, config.int_or({"num_shared_experts"}, 0, 0, 1 << 16));

  DecoderLayout layout;
  layout.fused_qkv = true;
  layout.qkv_bias = qkv_bias;
  layout.o_bias = dense_bias;
  layout.attention_name = "attention";
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, ffn.dense_width, false, false, false};
  layout.rotary_dim = dims.heads.head_dim;
  Stack stack = decoder_stack(hidden, layers, dims.heads, layout);
  if (ffn.moe) {
    for (std::int64_t i = ffn.first_dense; i < layers; ++i) {
      set_moe(stack.blocks[static_cast<std::size_t>(i)], *ffn.moe, hidden);
    }
  }
  model.stacks.push_back(std::move(stack));
  note_defaults(model, config, "BailingMoeConfig",
                {{"use_qkv_bias", "false"},
                 {"use_bias", "true (attention.dense has a bias)"},
                 {"num_experts", "16"},
                 {"num_experts_per_tok", "2"},
                 {"num_shared_experts", "0"},
                 {"first_k_dense_replace", "0"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "16384"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
