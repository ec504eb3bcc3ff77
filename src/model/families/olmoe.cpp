// OLMoE: pre-norm RMSNorm decoder with QK-norm over the full q and k widths (as OLMo 2), and an
// MoE of num_experts SwiGLU experts of intermediate_size, top num_experts_per_tok, bias-free router.
// Tensor list: transformers models/olmoe/modeling_olmoe.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_olmoe(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"});
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = "OLMoE (MoE decoder, QK-norm, RMSNorm)";
  model.position = PositionKind::rope;
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
    block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
    block.moe = moe;
    block.norms = {rms_norm("input_layernorm", hidden), rms_norm("post_attention_layernorm", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
