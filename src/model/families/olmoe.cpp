// OLMoE: pre-norm RMSNorm decoder with QK-norm over the full q and k widths (as OLMo 2), and an
// MoE of num_experts SwiGLU experts of intermediate_size, top num_experts_per_tok, bias-free router.
// Tensor list: transformers models/olmoe/modeling_olmoe.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_olmoe(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "OLMoE (MoE decoder, QK-norm, RMSNorm)";
  const Moe moe =
      routed_experts(config, hidden, {"num_experts"}, {"num_experts_per_tok"}, intermediate);
  const bool bias = config.bool_or("attention_bias", false);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    block.attention.rotary_dim = shape.head_dim;
    block.attention.q_norm = rms_norm("q_norm", shape.num_heads * shape.head_dim);
    block.attention.k_norm = rms_norm("k_norm", shape.num_kv_heads * shape.head_dim);
    set_moe(block, moe, hidden);
    block.norms = pre_norm_pair(hidden);
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
