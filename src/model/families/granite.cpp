// IBM Granite 3.x decoders: granite (dense: granite-3.0/3.1/3.2/3.3-2b and -8b, PowerLM-3b),
// granitemoe (granite-3.0/3.1-1b-a400m and -3b-a800m, PowerMoE-3b) and granitemoeshared (the
// same MoE plus a shared MLP: ibm-research/moe-7b-1b-active-shared-experts).
// Every layer is input_layernorm -> self_attn (q/k/v/o, biased per attention_bias, RoPE) ->
// post_attention_layernorm -> FFN, then a final `norm`:
//  granite: mlp.gate_proj / up_proj / down_proj, biased per mlp_bias (Llama's MLP);
//  granitemoe: block_sparse_moe with router.layer [E, H] (no bias), input_linear [E, 2 I, H]
//    (gate and up fused) and output_linear [E, H, I]; experts carry no biases;
//  granitemoeshared: as granitemoe plus shared_mlp.input_linear [2 S, H] and output_linear [H, S]
//    (S = shared_intermediate_size; 0 means no shared MLP), added to the routed output.
// embedding_multiplier, attention_multiplier (the softmax scale), residual_multiplier and
// logits_scaling are plain floats: no tensor. Head width is hidden / heads unless head_dim is set.
// Tensor lists: transformers models/granite/modeling_granite.py,
// models/granitemoe/modeling_granitemoe.py, models/granitemoeshared/modeling_granitemoeshared.py
// (experts from models/jetmoe: JetMoeParallelExperts, JetMoeTopKGating). Counts are derived in
// tests/data/configs/SOURCES-granite.md.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// The four scalar multipliers, reported so a reader sees they were read and cost no parameters.
void note_multipliers(ModelDescription& model, const ConfigReader& config) {
  const double embedding = config.optional_number("embedding_multiplier").value_or(1.0);
  const double attention = config.optional_number("attention_multiplier").value_or(1.0);
  const double residual = config.optional_number("residual_multiplier").value_or(1.0);
  const double logits = config.optional_number("logits_scaling").value_or(1.0);
  // logits are divided by logits_scaling; zero would make every logit infinite.
  if (!(logits > 0.0)) config.fail("logits_scaling", "must be a positive divisor of the logits");
  model.notes.push_back(fmt::format(
      "Granite scalars (no tensors): embeddings x {}, attention scores x {} (in place of "
      "1/sqrt(head_dim)), residual branches x {}, logits / {}",
      embedding, attention, residual, logits));
}

// The layers shared by all three types: pre-norm RMSNorm pair, attention, RoPE. The FFN is set
// by the caller.
struct GraniteLayout {
  DecoderDims dims;
  std::int64_t rotary = 0;
  bool attention_bias = false;
};

GraniteLayout read_layout(const ConfigReader& config, ModelDescription& model) {
  GraniteLayout layout;
  // Every Granite config class defaults tie_word_embeddings to false; the released 3.x
  // checkpoints all set it true.
  layout.dims = read_decoder_dims(config, model, false);
  layout.rotary = rotary_dims(config, layout.dims.heads.head_dim);
  layout.attention_bias = config.bool_or("attention_bias", false);
  return layout;
}

// The Llama layer stack every Granite type shares, with `ffn` as every layer's FFN.
Stack granite_stack(const GraniteLayout& granite, const Mlp& ffn) {
  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = granite.attention_bias;
  layout.mlp = ffn;
  layout.rotary_dim = granite.rotary;
  return decoder_stack(granite.dims.hidden, granite.dims.layers, granite.dims.heads, layout);
}

// granitemoe / granitemoeshared: the routed experts (GraniteMoeMoE), optionally with the shared
// MLP (GraniteMoeSharedMLP) beside them.
ModelDescription build_granite_moe_like(const ConfigReader& config, bool shared_allowed) {
  ModelDescription model;
  const GraniteLayout layout = read_layout(config, model);
  const std::int64_t hidden = layout.dims.hidden;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");

  Moe moe = routed_experts(config, hidden, {"num_local_experts"}, {"num_experts_per_tok"},
                           config.require_int({"intermediate_size"}, 1, k_max_width),
                           ExpertDefaults{8, 2});
  moe.expert.fused_gate_up = true;  // input_linear holds gate and up as one [2 I, H] matrix

  std::int64_t shared_width = 0;
  if (shared_allowed) {
    shared_width = config.int_or({"shared_intermediate_size"}, 0, 0, k_max_width);
    if (shared_width > 0) {
      moe.num_shared_experts = 1;
      moe.shared = Mlp{MlpKind::gated, activation, hidden, shared_width, false, false, true};
    }
  }
  model.family = shared_width > 0
                     ? "Granite MoE shared (sparse MoE decoder + shared MLP, RoPE, RMSNorm, GQA)"
                     : "Granite MoE (sparse MoE decoder, RoPE, RMSNorm, GQA)";

  Stack stack = granite_stack(layout, Mlp{MlpKind::none, "", hidden, 0, false, false, false});
  for (Block& block : stack.blocks) set_moe(block, moe, hidden);
  model.stacks.push_back(std::move(stack));
  note_multipliers(model, config);
  if (shared_allowed) {
    note_defaults(model, config, "GraniteMoeSharedConfig",
                  {{"num_key_value_heads", "num_attention_heads"},
                   {"num_local_experts", "8"},
                   {"num_experts_per_tok", "2"},
                   {"shared_intermediate_size", "0 (no shared MLP)"},
                   {"tie_word_embeddings", "false"}});
  } else {
    note_defaults(model, config, "GraniteMoeConfig",
                  {{"num_key_value_heads", "num_attention_heads"},
                   {"num_local_experts", "8"},
                   {"num_experts_per_tok", "2"},
                   {"tie_word_embeddings", "false"}});
  }
  return model;
}

}  // namespace

ModelDescription build_granite(const ConfigReader& config) {
  ModelDescription model;
  const GraniteLayout layout = read_layout(config, model);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  model.family = "Granite (decoder-only, RoPE, RMSNorm, SwiGLU, GQA)";

  model.stacks.push_back(granite_stack(
      layout,
      Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"), layout.dims.hidden,
          config.require_int({"intermediate_size"}, 1, k_max_width), mlp_bias, mlp_bias, false}));
  note_multipliers(model, config);
  note_defaults(model, config, "GraniteConfig",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"attention_bias", "false"},
                 {"mlp_bias", "false"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

ModelDescription build_granitemoe(const ConfigReader& config) {
  return build_granite_moe_like(config, false);
}

ModelDescription build_granitemoeshared(const ConfigReader& config) {
  return build_granite_moe_like(config, true);
}

}  // namespace trace::family
