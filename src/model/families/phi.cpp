// Phi-1/1.5/2 (model_type phi): one LayerNorm feeding attention and MLP in parallel, biases
// everywhere, partial RoPE, an untied head with a bias.
// Phi-3/3.5 (model_type phi3): Llama-like with fused qkv_proj and gate_up_proj, no biases.
// Tensor lists: transformers models/phi/modeling_phi.py, models/phi3/modeling_phi3.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_phi(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Phi (decoder-only, parallel attention+MLP, partial RoPE, LayerNorm, biases)";
  model.lm_head_bias = true;
  const bool qk_layernorm = config.bool_or("qk_layernorm", false);
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.attention.rotary_dim = rotary;
    if (qk_layernorm) {
      block.attention.q_norm = layer_norm("q_layernorm", shape.head_dim);
      block.attention.k_norm = layer_norm("k_layernorm", shape.head_dim);
    }
    block.mlp = Mlp{MlpKind::plain, config.optional_string("hidden_act").value_or("gelu_new"),
                    hidden, intermediate, true, true, false};
    block.norms = {layer_norm("input_layernorm", hidden)};
    block.parallel_residual = true;
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("final_layernorm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

ModelDescription build_phi3(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Phi-3 (decoder-only, RoPE, RMSNorm, fused qkv and gate_up, SwiGLU)";
  const std::vector<std::int64_t> windows = resolve_windows(
      config, layers,
      {config.int_or({"sliding_window"}, 0, 0, k_max_positions), WindowRule::Pattern::all, 0});
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, false, false);
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = rotary;
    block.attention.sliding_window = windows[static_cast<std::size_t>(i)];
    block.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"), hidden,
                    intermediate, false, false, true};
    block.norms = pre_norm_pair(hidden);
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
