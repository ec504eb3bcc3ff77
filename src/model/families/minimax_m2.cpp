// MiniMax-M2: GQA attention with per-layer QK RMSNorm over the full q and k widths
// (qk_norm_type per_layer), partial RoPE (rotary_dim), and an MoE of num_local_experts SwiGLU
// experts with a routing correction bias (use_routing_bias). The released checkpoints hold no MTP
// weights even though use_mtp is set (see docs/parameters.md), so none are counted.
// Tensor list: MiniMaxAI's modeling_minimax_m2.py; transformers models/minimax_m2.
#include "family.hpp"

namespace trace::family {

ModelDescription build_minimax_m2(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "MiniMax-M2 (MoE decoder, QK-norm, partial RoPE, routing bias)";
  Moe moe = routed_experts(config, hidden, {"num_local_experts"}, {"num_experts_per_tok"},
                           intermediate);
  moe.router_correction_bias = config.bool_or("use_routing_bias", false);
  const std::int64_t shared_width = config.int_or({"shared_intermediate_size"}, 0, 0, k_max_width);
  if (shared_width > 0) {
    moe.num_shared_experts = 1;
    moe.shared = Mlp{MlpKind::gated, moe.expert.activation, hidden, shared_width, false, false, false};
  }
  const bool qk_norm = config.bool_or("use_qk_norm", false);
  const std::string qk_norm_type = config.optional_string("qk_norm_type").value_or("per_layer");
  if (qk_norm && qk_norm_type != "per_layer") {
    config.fail("qk_norm_type", "is not \"per_layer\"; only per_layer QK-norm is supported");
  }
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, false, false);
    block.attention.rotary_dim = rotary;
    if (qk_norm) {
      block.attention.q_norm = rms_norm("q_norm", shape.num_heads * shape.head_dim);
      block.attention.k_norm = rms_norm("k_norm", shape.num_kv_heads * shape.head_dim);
    }
    set_moe(block, moe, hidden);
    block.norms = pre_norm_pair(hidden);
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  if (config.bool_or("use_mtp", false)) {
    model.notes.push_back(
        "use_mtp is set, but MiniMax's released checkpoints store no MTP weights; none counted");
  }
  return model;
}

}  // namespace trace::family
