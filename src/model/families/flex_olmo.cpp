// FlexOlmo (model_type flex_olmo: allenai/FlexOlmo-7x7B-1T and its -RT / a4 variants): OLMo 2's
// layer (norms after attention and after the FFN, none before; q_norm / k_norm RMSNorms over the
// whole q and k widths; q/k/v/o biased per attention_bias) whose FFN is OLMoE's sparse block: a
// bias-free router mlp.gate [E, H] and num_experts SwiGLU experts of intermediate_size, top
// num_experts_per_tok. No head_dim key: heads are hidden / heads wide. Untied head by default.
// Tensor list: transformers models/flex_olmo/modular_flex_olmo.py and configuration_flex_olmo.py.
// Derivation: tests/data/configs/SOURCES-flex_olmo.md.
#include "family.hpp"

namespace trace::family {

ModelDescription build_flex_olmo(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  model.family = "FlexOlmo (OLMo 2 post-norm layers, QK-norm, OLMoE sparse FFN)";
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // FlexOlmoConfig: num_experts 7, top 5 (its num_local_experts alias reads the same key).
  const Moe moe = routed_experts(config, dims.hidden, {"num_experts", "num_local_experts"},
                                 {"num_experts_per_tok"}, intermediate, ExpertDefaults{7, 5});
  const bool bias = config.bool_or("attention_bias", false);

  DecoderLayout layout;
  layout.norms = DecoderLayout::Norms::post;
  layout.qk_norm = DecoderLayout::QkNorm::full_width;
  layout.qkv_bias = layout.o_bias = bias;
  layout.rotary_dim = rotary_dims(config, dims.heads.head_dim);
  Stack stack = decoder_stack(dims.hidden, dims.layers, dims.heads, layout);
  for (Block& block : stack.blocks) set_moe(block, moe, dims.hidden);
  model.stacks.push_back(std::move(stack));
  note_defaults(model, config, "FlexOlmoConfig",
                {{"num_experts", "7"},
                 {"num_experts_per_tok", "5"},
                 {"attention_bias", "false"},
                 {"num_key_value_heads", "num_attention_heads"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
