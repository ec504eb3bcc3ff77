// AFMoE (model_type afmoe: Arcee's Trinity Nano / Mini / Large). Every layer holds GQA attention
// with an explicit head_dim (AfmoeConfig's default 128, not hidden / heads), per-head q_norm /
// k_norm RMSNorms and a sigmoid output gate (self_attn.gate_proj [heads x head_dim, H]: the same
// tensor size as a q_proj twice as wide), no biases; four RMSNorms around attention and the FFN
// (input_layernorm, post_attention_layernorm, pre_mlp_layernorm, post_mlp_layernorm). Layers
// slide by layer_types, else every global_attn_every_n_layers-th is global; only sliding layers
// apply RoPE. The first num_dense_layers hold a SwiGLU of intermediate_size, the rest an MoE: a
// sigmoid router (router.gate [E, H]) with expert_bias [E] (an nn.Parameter the checkpoints store
// in F32, counted as DeepSeek-V3's correction bias), num_experts SwiGLU experts of
// moe_intermediate_size (top num_experts_per_tok) and num_shared_experts shared experts of that
// width as one MLP. Untied head by default.
// Tensor list: transformers models/afmoe/modeling_afmoe.py and configuration_afmoe.py; vLLM
// afmoe.py. Derivations: tests/data/configs/SOURCES-afmoe.md.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_afmoe(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, true, 128);
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.position = PositionKind::rope;
  model.family =
      "AFMoE / Trinity (gated GQA, sandwich norms, sliding + NoPE global layers, "
      "sigmoid-routed MoE with shared experts)";

  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  const std::int64_t dense_width = config.int_or({"intermediate_size"}, 6144, 1, k_max_width);
  Moe moe = routed_experts(config, hidden, {"num_experts"}, {"num_experts_per_tok"},
                           config.int_or({"moe_intermediate_size"}, 1408, 1, k_max_width),
                           ExpertDefaults{64, 6});
  moe.expert.activation = activation;
  set_shared_experts(moe, config.int_or({"num_shared_experts"}, 2, 0, 1 << 16));
  // expert_bias steers the top-k choice only, as DeepSeek-V3's correction bias does; stored F32.
  moe.router_correction_bias = true;
  const std::int64_t first_dense = config.int_or({"num_dense_layers"}, 1, 0, k_max_layers);
  if (first_dense > layers) {
    config.fail("num_dense_layers",
                fmt::format("= {} exceeds num_hidden_layers = {}", first_dense, layers));
  }

  const std::int64_t window = sliding_window_with_default(config, 1024);
  const std::int64_t every = config.int_or({"global_attn_every_n_layers"}, 4, 1, k_max_layers);
  DecoderLayout layout;
  layout.norms = DecoderLayout::Norms::sandwich;
  layout.norm_names = {"input_layernorm", "post_attention_layernorm", "pre_mlp_layernorm",
                       "post_mlp_layernorm"};
  layout.qk_norm = DecoderLayout::QkNorm::per_head;
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, dense_width, false, false, false};
  layout.rotary_dim = rotary_dims(config, shape.head_dim);
  layout.windows =
      resolve_windows(config, layers, {window, WindowRule::Pattern::every_nth_global, every});
  std::int64_t global = 0;
  for (const std::int64_t layer_window : layout.windows) {
    layout.rope_layers.push_back(layer_window > 0);  // AfmoeAttention: RoPE on sliding layers only
    if (layer_window == 0) ++global;
  }
  Stack stack = decoder_stack(hidden, layers, shape, layout);
  for (std::int64_t i = 0; i < layers; ++i) {
    Block& block = stack.blocks[static_cast<std::size_t>(i)];
    block.attention.output_gate = true;
    if (i >= first_dense) set_moe(block, moe, hidden);
  }
  model.stacks.push_back(std::move(stack));

  model.notes.push_back(fmt::format(
      "{} of {} layers attend globally without RoPE; the others use a {}-token sliding window",
      global, layers, window));
  note_defaults(model, config, "AfmoeConfig",
                {{"head_dim", "128"},
                 {"num_key_value_heads", "num_attention_heads"},
                 {"intermediate_size", "6144"},
                 {"moe_intermediate_size", "1408"},
                 {"num_experts", "64"},
                 {"num_experts_per_tok", "6"},
                 {"num_shared_experts", "2"},
                 {"num_dense_layers", "1"},
                 {"sliding_window", "1024"},
                 {"tie_word_embeddings", "false"}});
  if (!config.has("layer_types")) {
    note_defaults(model, config, "AfmoeConfig", {{"global_attn_every_n_layers", "4"}});
  }
  return model;
}

}  // namespace trace::family
