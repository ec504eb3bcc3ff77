// GLM-4.5 / GLM-4.5-Air (glm4_moe): GQA attention with q/k/v biases (attention_bias; o_proj never
// has one), optional per-head QK-norm (use_qk_norm), partial RoPE; the first first_k_dense_replace
// layers dense (intermediate_size), the rest MoE: router with e_score_correction_bias (the
// router subclasses DeepSeek-V3's), n_routed_experts of moe_intermediate_size, shared experts of
// n_shared_experts x moe_intermediate_size. num_nextn_predict_layers MTP layers are stored as in
// DeepSeek-V3, with their own embedding and head copies (GLM-4.5 and -Air; GLM-4.6 ships the same
// config without the copies, which only the safetensors headers reveal).
// Tensor list: transformers models/glm4_moe/modeling_glm4_moe.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_glm4_moe(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t dense_width = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "GLM-4.5 (MoE decoder, shared expert, partial RoPE, MTP)";
  Moe moe = routed_experts(config, hidden, {"n_routed_experts"}, {"num_experts_per_tok"},
                           config.require_int({"moe_intermediate_size"}, 1, k_max_width));
  set_shared_experts(moe, config.int_or({"n_shared_experts"}, 0, 0, 1 << 16));
  moe.router_correction_bias = true;
  const std::int64_t first_dense = config.int_or({"first_k_dense_replace"}, 0, 0, k_max_layers);
  const bool bias = config.bool_or("attention_bias", false);
  const bool qk_norm = config.bool_or("use_qk_norm", false);
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  const auto make_block = [&](std::int64_t index) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, false);
    block.attention.rotary_dim = rotary;
    if (qk_norm) {
      block.attention.q_norm = rms_norm("q_norm", shape.head_dim);
      block.attention.k_norm = rms_norm("k_norm", shape.head_dim);
    }
    if (index >= first_dense) {
      set_moe(block, moe, hidden);
    } else {
      block.mlp = Mlp{MlpKind::gated, moe.expert.activation, hidden, dense_width, false, false, false};
    }
    block.norms = pre_norm_pair(hidden);
    return block;
  };

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) stack.blocks.push_back(make_block(i));
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));

  const std::int64_t mtp_layers = config.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  if (mtp_layers > 0) {
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t i = 0; i < mtp_layers; ++i) {
      mtp.blocks.push_back(make_block(layers + i));
      add_mtp_extras(model, layers + i, dims.vocab, hidden, true);
    }
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
    model.notes.push_back(fmt::format(
        "{} MTP layer(s) counted with embedding and head copies, as GLM-4.5 stores them (GLM-4.6 "
        "does not; check the safetensors headers)",
        mtp_layers));
  }
  return model;
}

}  // namespace trace::family
