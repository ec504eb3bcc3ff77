// Mixtral: Mistral's attention with every FFN replaced by num_local_experts SwiGLU experts of
// intermediate_size, top num_experts_per_tok per token, a bias-free router.
// Tensor list: transformers models/mixtral/modeling_mixtral.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_mixtral(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Mixtral (sparse MoE decoder, RoPE, RMSNorm, GQA)";
  const Moe moe = routed_experts(config, hidden, {"num_local_experts"}, {"num_experts_per_tok"},
                                 intermediate);
  const std::vector<std::int64_t> windows = resolve_windows(
      config, layers,
      {config.int_or({"sliding_window"}, 0, 0, k_max_positions), WindowRule::Pattern::all, 0});

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, false, false);
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
