// Arcee AFM (model_type arcee: arcee-ai/AFM-4.5B, AFM-4.5B-Base and fine-tunes): a Llama-layout
// decoder (pre-norm RMSNorm, GQA, RoPE, untied head by default) whose FFN is not gated: one
// up_proj, a ReLU² (relu2) activation, then down_proj, both biased per mlp_bias.
// Tensor list: transformers models/arcee/modular_arcee.py (modeling_arcee.py).
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_arcee(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);  // tie_word_embeddings: False
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Arcee AFM (decoder-only, RoPE, RMSNorm, GQA, non-gated ReLU² MLP)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 4096;

  const bool attention_bias = config.bool_or("attention_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = attention_bias;
  // ArceeMLP: down_proj(act(up_proj(x))), no gate_proj.
  const std::string activation = config.optional_string("hidden_act").value_or("relu2");
  layout.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, mlp_bias, mlp_bias, false};
  layout.rotary_dim = rotary_dims(config, shape.head_dim);
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  note_defaults(model, config, "ArceeConfig",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"head_dim", "hidden_size / num_attention_heads"},
                 {"hidden_act", "relu2"},
                 {"attention_bias", "false"},
                 {"mlp_bias", "false"},
                 {"max_position_embeddings", "4096"},
                 {"tie_word_embeddings", "false"}});
  // The rotary inv_freq buffer is non-persistent: the checkpoint stores none.
  return model;
}

}  // namespace trace::family
