// GLM-4 in transformers' native layout: glm (THUDM/glm-4-9b-hf, glm-4-9b-chat-hf, the
// transformers conversion of the chatglm remote-code GLM-4-9B) and glm4 (THUDM/GLM-4-9B-0414,
// GLM-4-32B-0414, GLM-Z1-*-0414), which adds a "sandwich" RMSNorm after attention and after the
// MLP. Both: GQA with q/k/v biases (attention_bias; o_proj never biased), partial interleaved
// RoPE (partial_rotary_factor, 0.5 by default), SwiGLU with one fused gate_up_proj, RMSNorm.
// Tensor lists: transformers models/glm/modeling_glm.py, models/glm4/modeling_glm4.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// GlmConfig and Glm4Config set partial_rotary_factor = 0.5 when the config leaves it out
// (glm-4-9b-chat-hf's config.json does); transformers v5 may move it under rope_parameters.
std::int64_t glm_rotary_dims(const ConfigReader& config, std::int64_t head_dim) {
  std::int64_t rotary = head_dim / 2;
  if (config.has("partial_rotary_factor") || config.has("rotary_dim")) {
    rotary = rotary_dims(config, head_dim);
  } else if (config.has("rope_parameters") && config.json().at("rope_parameters").is_object()) {
    const ConfigReader rope = config.child("rope_parameters");
    if (rope.has("partial_rotary_factor")) rotary = rotary_dims(rope, head_dim);
  }
  if (rotary % 2 != 0) {
    config.fail("partial_rotary_factor",
                fmt::format("gives {} rotary dims per head; GLM rotates channel pairs, so it must "
                            "be even",
                            rotary));
  }
  return rotary;
}

ModelDescription build_glm_like(const ConfigReader& config, bool sandwich_norms) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // The config classes default num_key_value_heads to 2 and head_dim to 128 (not heads and
  // hidden / heads), so read_head_shape's fallbacks do not apply.
  HeadShape shape;
  shape.num_heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  shape.num_kv_heads = config.int_or({"num_key_value_heads"}, 2, 1, k_max_heads);
  if (shape.num_kv_heads > shape.num_heads || shape.num_heads % shape.num_kv_heads != 0) {
    config.fail("num_key_value_heads", fmt::format("= {} does not divide num_attention_heads = {}",
                                                   shape.num_kv_heads, shape.num_heads));
  }
  shape.head_dim = config.int_or({"head_dim"}, 128, 1, k_max_width);

  fill_decoder_basics(model, config, vocab, hidden, false);
  model.position = PositionKind::rope;
  model.family = sandwich_norms
                     ? "GLM-4-0414 (decoder-only, partial RoPE, QKV bias, 4 RMSNorms per layer, "
                       "fused SwiGLU)"
                     : "GLM-4 (decoder-only, partial RoPE, QKV bias, RMSNorm, fused SwiGLU)";
  note_defaults(model, config, sandwich_norms ? "Glm4Config" : "GlmConfig",
                {{"attention_bias", "true"},
                 {"num_key_value_heads", "2"},
                 {"head_dim", "128"},
                 {"partial_rotary_factor", "0.5"},
                 {"tie_word_embeddings", "false"}});

  DecoderLayout layout;
  layout.norms = sandwich_norms ? DecoderLayout::Norms::sandwich : DecoderLayout::Norms::pre;
  layout.qkv_bias = config.bool_or("attention_bias", true);  // o_proj never has one
  // gate and up live in one [2 x intermediate, hidden] gate_up_proj; no biases.
  layout.mlp = Mlp{MlpKind::gated,
                   config.optional_string("hidden_act").value_or("silu"),
                   hidden,
                   intermediate,
                   false,
                   false,
                   true};
  layout.rotary_dim = glm_rotary_dims(config, shape.head_dim);
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  // The rotary inv_freq buffer is non-persistent in both modeling files: never stored.
  return model;
}

}  // namespace

ModelDescription build_glm(const ConfigReader& config) {
  return build_glm_like(config, false);
}

ModelDescription build_glm4(const ConfigReader& config) {
  return build_glm_like(config, true);
}

}  // namespace trace::family
