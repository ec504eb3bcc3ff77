// OLMo in transformers format (model_type olmo: OLMo-1B-hf, OLMo-7B-hf, OLMo-7B-0424-hf /
// 0724-hf): the Llama layout whose three LayerNorms hold no weight and no bias, with optional
// clip_qkv clamping. (olmo2 and olmo3 are built in llama.cpp.)
// Tensor list: transformers models/olmo/modular_olmo.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_olmo(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "OLMo (decoder-only, RoPE, non-parametric LayerNorm, SwiGLU)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;

  // OlmoAttention is LlamaAttention: attention_bias applies to q, k, v and o alike.
  const bool bias = config.bool_or("attention_bias", false);
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);
  if (const std::optional<double> clip = config.optional_number("clip_qkv")) {
    if (!(*clip > 0.0)) {
      config.fail("clip_qkv", "must be a positive bound (or null for no clamping)");
    }
    model.notes.push_back(fmt::format(
        "clip_qkv = {}: q, k and v are clamped to [-{}, {}] (no parameters)", *clip, *clip, *clip));
  }

  DecoderLayout layout;
  // OlmoLayerNorm: F.layer_norm with weight and bias None, so nothing is stored.
  layout.norm_kind = NormKind::layer_norm_no_affine;
  layout.qkv_bias = layout.o_bias = bias;
  layout.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"),
                   hidden,         intermediate,
                   false,          false,
                   false};
  layout.rotary_dim = rotary;
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));

  note_defaults(model, config, "OlmoConfig",
                {{"tie_word_embeddings", "false"},
                 {"attention_bias", "false"},
                 {"clip_qkv", "null"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"}});
  return model;
}

}  // namespace trace::family
