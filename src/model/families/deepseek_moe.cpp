// DeepSeekMoE, the first DeepSeek MoE release (model_type deepseek, remote code):
// deepseek-ai/deepseek-moe-16b-base and -chat. Llama attention (q/k/v/o, biased per
// attention_bias, heads hidden / num_attention_heads wide, full RoPE), pre-norm RMSNorm pair,
// untied head. Layer i holds the MoE when n_routed_experts is set, i >= first_k_dense_replace and
// i % moe_layer_freq == 0; the others a dense SwiGLU of intermediate_size. The MoE (mlp.*):
// gate.weight [n_routed_experts, hidden] (no bias), experts.E.{gate,up,down}_proj of
// moe_intermediate_size, and shared_experts, one SwiGLU of n_shared_experts x
// moe_intermediate_size (absent when n_shared_experts is null).
// Tensor list: deepseek-ai/deepseek-moe-16b-base modeling_deepseek.py (DeepseekAttention,
// DeepseekMLP, MoEGate, DeepseekMoE, DeepseekDecoderLayer) and configuration_deepseek.py;
// cross-read with vLLM model_executor/models/deepseek.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_deepseek_moe(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  // DeepseekAttention reads no head_dim: heads are hidden_size / num_attention_heads wide.
  HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  // DeepseekConfig's num_key_value_heads defaults to 32 when the key is left out; only an
  // explicit null means one kv head per query head (what read_head_shape assumed).
  if (!config.json().contains("num_key_value_heads")) {
    shape.num_kv_heads = 32;
    if (shape.num_kv_heads > shape.num_heads || shape.num_heads % shape.num_kv_heads != 0) {
      throw ConfigError(fmt::format(
          "config.json ({}): 'num_attention_heads' = {} is not a multiple of DeepseekConfig's "
          "default num_key_value_heads 32; set 'num_key_value_heads'",
          config.model_type(), shape.num_heads));
    }
  }
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.position = PositionKind::rope;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");

  // A null (or absent) n_routed_experts makes every layer dense, as in the remote code.
  const bool has_experts = config.has("n_routed_experts");
  const std::int64_t first_dense = config.int_or({"first_k_dense_replace"}, 0, 0, k_max_layers);
  const std::int64_t frequency = config.int_or({"moe_layer_freq"}, 1, 1, k_max_layers);
  const auto is_moe_layer = [&](std::int64_t index) {
    return has_experts && index >= first_dense && index % frequency == 0;
  };
  std::int64_t moe_layers = 0;
  for (std::int64_t i = 0; i < layers; ++i) moe_layers += is_moe_layer(i) ? 1 : 0;
  model.family = moe_layers > 0
                     ? "DeepSeekMoE (fine-grained routed experts + shared experts, MHA, RoPE)"
                     : "DeepSeekMoE layout without experts (dense Llama-style decoder)";

  Moe moe;
  if (moe_layers > 0) {
    // num_experts_per_tok has no usable default (None), so it is required with the experts.
    moe = routed_experts(config, hidden, {"n_routed_experts"}, {"num_experts_per_tok"},
                         config.int_or({"moe_intermediate_size"}, 1407, 1, k_max_width));
    set_shared_experts(moe, config.int_or({"n_shared_experts"}, 0, 0, 1 << 16));
  }
  // The dense width is only read where a dense layer exists.
  const std::int64_t dense_width =
      moe_layers < layers ? config.int_or({"intermediate_size"}, 11008, 1, k_max_width) : 0;

  const bool attention_bias = config.bool_or("attention_bias", false);
  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = attention_bias;
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, dense_width, false, false, false};
  layout.rotary_dim = shape.head_dim;
  Stack stack = decoder_stack(hidden, layers, shape, layout);
  for (std::int64_t i = 0; i < layers; ++i) {
    if (is_moe_layer(i)) set_moe(stack.blocks[static_cast<std::size_t>(i)], moe, hidden);
  }
  model.stacks.push_back(std::move(stack));

  if (has_experts && moe_layers == 0) {
    model.notes.push_back(fmt::format(
        "n_routed_experts is set but first_k_dense_replace = {} and moe_layer_freq = {} leave "
        "no MoE layer among {}: every layer is dense",
        first_dense, frequency, layers));
  }
  if (!config.json().contains("num_key_value_heads")) {
    model.notes.push_back("DeepseekConfig default used: num_key_value_heads = 32");
  }
  note_defaults(model, config, "DeepseekConfig",
                {{"first_k_dense_replace", "0"},
                 {"moe_layer_freq", "1"},
                 {"moe_intermediate_size", "1407"},
                 {"intermediate_size", "11008"},
                 {"n_shared_experts", "null (no shared experts)"},
                 {"attention_bias", "false"},
                 {"hidden_act", "silu"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
