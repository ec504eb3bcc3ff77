// Gemma 1/2/3: RMSNorm stored as one weight (applied as 1 + w), GeGLU MLP, explicit head_dim,
// tied embeddings scaled by sqrt(hidden). Gemma 2/3 add pre/post norms around attention and the
// MLP (4 per layer) and interleave sliding-window layers; Gemma 3 adds per-head QK-norm.
// Tensor lists: transformers models/gemma{,2,3}/modeling_gemma*.py.
#include <cmath>

#include "family.hpp"

namespace trace::family {

namespace {

enum class Generation { gemma1, gemma2, gemma3, vault };

ModelDescription build_gemma_like(const ConfigReader& config, Generation generation) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // Gemma's config classes default head_dim to 256, not hidden / heads (gemma-7b: 16 x 256 wide
  // queries on a 3072 residual).
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"},
                                          {"num_key_value_heads"}, true, 256);
  fill_decoder_basics(model, config, vocab, hidden, true);
  if (!config.has("head_dim")) {
    model.notes.push_back("head_dim absent: transformers' Gemma config default 256 used");
  }
  model.position = PositionKind::rope;
  model.embedding_scale = std::sqrt(static_cast<double>(hidden));

  WindowRule rule;
  switch (generation) {
    case Generation::gemma1:
      model.family = "Gemma (decoder-only, RoPE, RMSNorm, GeGLU, tied embeddings)";
      break;
    case Generation::vault:
      model.family = "VaultGemma (Gemma 2 without the post-norms; o_proj biased with q/k/v)";
      rule = {config.int_or({"sliding_window"}, 0, 0, k_max_positions),
              WindowRule::Pattern::alternate_even_sliding, 0};
      break;
    case Generation::gemma2:
      model.family = "Gemma 2 (decoder-only, RoPE, 4 RMSNorms per layer, GeGLU, local/global)";
      rule = {config.int_or({"sliding_window"}, 0, 0, k_max_positions),
              WindowRule::Pattern::alternate_even_sliding, 0};
      break;
    case Generation::gemma3:
      model.family = "Gemma 3 (decoder-only, RoPE, QK-norm, 4 RMSNorms per layer, 5 local : 1 global)";
      rule = {config.int_or({"sliding_window"}, 0, 0, k_max_positions),
              WindowRule::Pattern::every_nth_global,
              config.int_or({"sliding_window_pattern"}, 6, 1, k_max_layers)};
      break;
  }
  const std::vector<std::int64_t> windows = resolve_windows(config, layers, rule);
  const bool bias = config.bool_or("attention_bias", false);
  const std::string activation = config.optional_string("hidden_activation")
                                     .value_or(config.optional_string("hidden_act").value_or(
                                         "gelu_pytorch_tanh"));

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    block.attention.rotary_dim = shape.head_dim;
    block.attention.sliding_window = windows[static_cast<std::size_t>(i)];
    if (generation == Generation::gemma3) {
      block.attention.q_norm = rms_norm("q_norm", shape.head_dim);
      block.attention.k_norm = rms_norm("k_norm", shape.head_dim);
    }
    block.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};
    if (generation == Generation::vault) {
      // VaultGemmaDecoderLayer deletes post_attention_layernorm and post_feedforward_layernorm.
      block.norms = {rms_norm("input_layernorm", hidden),
                     rms_norm("pre_feedforward_layernorm", hidden)};
      stack.blocks.push_back(std::move(block));
      continue;
    }
    block.norms = {rms_norm("input_layernorm", hidden), rms_norm("post_attention_layernorm", hidden)};
    if (generation != Generation::gemma1) {
      block.norms.push_back(rms_norm("pre_feedforward_layernorm", hidden));
      block.norms.push_back(rms_norm("post_feedforward_layernorm", hidden));
    }
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace

ModelDescription build_gemma(const ConfigReader& config) {
  return build_gemma_like(config, Generation::gemma1);
}

// VaultGemma (google/vaultgemma-1b): transformers models/vaultgemma/modular_vaultgemma.py.
ModelDescription build_vaultgemma(const ConfigReader& config) {
  return build_gemma_like(config, Generation::vault);
}

ModelDescription build_gemma2(const ConfigReader& config) {
  return build_gemma_like(config, Generation::gemma2);
}

ModelDescription build_gemma3_text(const ConfigReader& config) {
  return build_gemma_like(config, Generation::gemma3);
}

}  // namespace trace::family
