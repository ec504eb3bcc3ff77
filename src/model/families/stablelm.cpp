// StableLM (model_type stablelm: StableLM-3B-4E1T, StableLM-2): LayerNorm, partial RoPE, SwiGLU,
// optional q/k/v bias, optional per-head LayerNorm on q and k (one bias-free LayerNorm per head),
// optional parallel residual (then there is no post_attention_layernorm).
// Tensor list: transformers models/stablelm/modeling_stablelm.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_stablelm(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "StableLM (decoder-only, partial RoPE, LayerNorm, SwiGLU)";
  const bool qkv_bias = config.bool_or("use_qkv_bias", false);
  const bool qk_layernorm = config.bool_or("qk_layernorm", false);
  const bool parallel = config.bool_or("use_parallel_residual", false);
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, qkv_bias, false);
    block.attention.rotary_dim = rotary;
    if (qk_layernorm) {
      // StableLmLayerNormPerHead: one bias-free LayerNorm(head_dim) per head.
      block.attention.q_norm =
          layer_norm("q_layernorm", shape.num_heads * shape.head_dim, false);
      block.attention.k_norm =
          layer_norm("k_layernorm", shape.num_kv_heads * shape.head_dim, false);
    }
    block.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"), hidden,
                    intermediate, false, false, false};
    block.norms = {layer_norm("input_layernorm", hidden)};
    if (!parallel) block.norms.push_back(layer_norm("post_attention_layernorm", hidden));
    block.parallel_residual = parallel;
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
