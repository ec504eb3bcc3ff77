// dots.llm1 (model_type dots1): rednote-hilab/dots.llm1.base and dots.llm1.inst (142B total,
// 14B active). Qwen3 attention (q/k/v/o, biased per attention_bias, per-head q_norm / k_norm
// RMSNorms, RoPE) in a pre-norm RMSNorm layer; the first first_k_dense_replace layers hold a
// dense SwiGLU of intermediate_size, the rest DeepSeek-V3's MoE: a sigmoid router gate [E, H]
// with its e_score_correction_bias [E] (an F32 buffer the checkpoint stores), n_routed_experts
// SwiGLU experts of moe_intermediate_size (top num_experts_per_tok) and n_shared_experts fused
// into one MLP (mlp.shared_experts) of n_shared_experts x moe_intermediate_size. Untied head.
// Tensor list: transformers models/dots1/modular_dots1.py (Qwen3Attention, DeepseekV3MoE,
// DeepseekV3TopkRouter, DeepseekV3DecoderLayer).
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_dots1(const ConfigReader& config) {
  ModelDescription model;
  DecoderDims dims = read_decoder_dims(config, model, false);
  // Dots1Config's num_key_value_heads defaults to 32, not to num_attention_heads.
  if (!config.json().contains("num_key_value_heads")) {
    dims.heads.num_kv_heads = 32;
    if (dims.heads.num_heads % 32 != 0) {
      config.fail("num_attention_heads",
                  fmt::format("= {} is not a multiple of Dots1Config's default "
                              "num_key_value_heads 32; set num_key_value_heads",
                              dims.heads.num_heads));
    }
  }
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  model.family = "dots.llm1 (QK-norm attention, DeepSeek-V3 MoE with shared experts)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  const std::int64_t dense_width = config.int_or({"intermediate_size"}, 10944, 1, k_max_width);
  const bool bias = config.bool_or("attention_bias", false);

  // Dots1Config leaves n_routed_experts and num_experts_per_tok at None, which the MoE layers
  // cannot be built from: both are required.
  Moe moe = routed_experts(config, hidden, {"n_routed_experts"}, {"num_experts_per_tok"},
                           config.int_or({"moe_intermediate_size"}, 1408, 1, k_max_width));
  moe.expert.activation = activation;
  set_shared_experts(moe, config.int_or({"n_shared_experts"}, 0, 0, 1 << 16));
  // DeepseekV3TopkRouter always registers e_score_correction_bias; the checkpoints store it.
  // trace counts it (docs/parameters.md section 2.1).
  moe.router_correction_bias = true;

  const std::int64_t first_dense = config.int_or({"first_k_dense_replace"}, 0, 0, k_max_layers);
  if (first_dense >= layers) {
    config.fail("first_k_dense_replace",
                fmt::format("= {} leaves no MoE layer among {}; dots1 configs keep it below "
                            "num_hidden_layers",
                            first_dense, layers));
  }

  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = bias;
  layout.qk_norm = DecoderLayout::QkNorm::per_head;
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, dense_width, false, false, false};
  layout.rotary_dim = dims.heads.head_dim;
  // Dots1Config: layer i slides (sliding_window wide) when sliding_window is set and
  // i >= max_window_layers (62 by default, so no layer of the released 62-layer models does),
  // unless layer_types lists each layer's kind.
  const bool window_set = !config.json().contains("sliding_window") || config.has("sliding_window");
  const std::int64_t window =
      window_set ? config.int_or({"sliding_window"}, 4096, 0, k_max_positions) : 0;
  layout.windows = resolve_windows(config, layers,
                                   {window, WindowRule::Pattern::from_layer,
                                    config.int_or({"max_window_layers"}, 62, 0, k_max_layers)});
  Stack stack = decoder_stack(hidden, layers, dims.heads, layout);
  for (std::int64_t i = first_dense; i < layers; ++i) {
    set_moe(stack.blocks[static_cast<std::size_t>(i)], moe, hidden);
  }
  model.stacks.push_back(std::move(stack));
  note_defaults(model, config, "Dots1Config",
                {{"num_key_value_heads", "32"},
                 {"intermediate_size", "10944"},
                 {"moe_intermediate_size", "1408"},
                 {"n_shared_experts", "None (no shared experts)"},
                 {"first_k_dense_replace", "0"},
                 {"attention_bias", "false"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
