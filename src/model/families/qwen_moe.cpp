// Qwen-MoE. qwen2_moe (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2 attention (q/k/v bias), routed experts
// of moe_intermediate_size, one shared expert of shared_expert_intermediate_size behind a sigmoid
// gate Linear(hidden, 1). qwen3_moe (Qwen3-30B-A3B, -235B-A22B): Qwen3 attention (QK-norm), routed
// experts only. Both: a layer is sparse unless listed in mlp_only_layers, when
// (index + 1) % decoder_sparse_step == 0; dense layers use intermediate_size.
// Tensor lists: transformers models/qwen2_moe/modeling_qwen2_moe.py, models/qwen3_moe/.
#include <algorithm>

#include "family.hpp"

namespace trace::family {

namespace {

ModelDescription build_qwen_moe(const ConfigReader& config, bool qwen3) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t expert_width = config.require_int({"moe_intermediate_size"}, 1, k_max_width);
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"});
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = qwen3 ? "Qwen3-MoE (sparse MoE decoder, RoPE, RMSNorm, QK-norm)"
                       : "Qwen2-MoE (sparse MoE decoder, QKV bias, shared expert)";
  model.position = PositionKind::rope;
  Moe moe = routed_experts(config, hidden, {"num_experts"}, {"num_experts_per_tok"}, expert_width);
  if (!qwen3) {
    const std::int64_t shared_width =
        config.int_or({"shared_expert_intermediate_size"}, 0, 0, k_max_width);
    if (shared_width > 0) {
      moe.num_shared_experts = 1;
      moe.shared = Mlp{MlpKind::gated, moe.expert.activation, hidden, shared_width, false, false,
                       false};
      moe.shared_expert_gate = true;
    }
  }
  const std::int64_t sparse_step = config.int_or({"decoder_sparse_step"}, 1, 1, k_max_layers);
  const std::vector<std::int64_t> dense_layers = read_layer_list(config, "mlp_only_layers", layers);
  const bool any_dense =
      !dense_layers.empty() || sparse_step > 1;
  const std::int64_t dense_width =
      any_dense ? config.require_int({"intermediate_size"}, 1, k_max_width) : 0;
  const bool bias = qwen3 ? config.bool_or("attention_bias", false) : true;
  WindowRule windows;
  if (config.bool_or("use_sliding_window", false)) {
    windows = {config.int_or({"sliding_window"}, 0, 0, k_max_positions),
               WindowRule::Pattern::from_layer, config.int_or({"max_window_layers"}, 0, 0, k_max_layers)};
  }
  const std::vector<std::int64_t> window_per_layer = resolve_windows(config, layers, windows);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, qwen3 && bias);
    block.attention.rotary_dim = shape.head_dim;
    block.attention.sliding_window = window_per_layer[static_cast<std::size_t>(i)];
    if (qwen3) {
      block.attention.q_norm = rms_norm("q_norm", shape.head_dim);
      block.attention.k_norm = rms_norm("k_norm", shape.head_dim);
    }
    const bool sparse = std::find(dense_layers.begin(), dense_layers.end(), i) == dense_layers.end() &&
                        (i + 1) % sparse_step == 0;
    if (sparse) {
      block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
      block.moe = moe;
    } else {
      block.mlp = Mlp{MlpKind::gated, moe.expert.activation, hidden, dense_width, false, false, false};
    }
    block.norms = {rms_norm("input_layernorm", hidden), rms_norm("post_attention_layernorm", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace

ModelDescription build_qwen2_moe(const ConfigReader& config) { return build_qwen_moe(config, false); }
ModelDescription build_qwen3_moe(const ConfigReader& config) { return build_qwen_moe(config, true); }

}  // namespace trace::family
