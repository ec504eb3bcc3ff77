// gpt-oss: biased q/k/v/o attention with one learned sink logit per head, alternating sliding
// (window sliding_window) and full layers (layer_types), and an MoE of num_local_experts SwiGLU
// experts whose gate_up and down projections carry biases, routed by a biased Linear router.
// Tensor list: transformers models/gpt_oss/modeling_gpt_oss.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_gpt_oss(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "gpt-oss (MoE decoder, attention sinks, alternating sliding/full attention)";
  Moe moe = routed_experts(config, hidden, {"num_local_experts"},
                           {"num_experts_per_tok", "experts_per_token"}, intermediate);
  moe.expert.up_bias = moe.expert.down_bias = true;
  moe.router_bias = true;
  const bool bias = config.bool_or("attention_bias", true);
  // Without layer_types, transformers' GptOssConfig alternates sliding (even) and full (odd).
  const std::vector<std::int64_t> windows = resolve_windows(
      config, layers,
      {config.int_or({"sliding_window"}, 0, 0, k_max_positions),
       WindowRule::Pattern::alternate_even_sliding, 0});

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    block.attention.sinks = true;
    block.attention.rotary_dim = shape.head_dim;
    block.attention.sliding_window = windows[static_cast<std::size_t>(i)];
    set_moe(block, moe, hidden);
    block.norms = pre_norm_pair(hidden);
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
