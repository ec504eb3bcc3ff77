// Seed-OSS (model_type seed_oss: ByteDance-Seed/Seed-OSS-36B-Instruct, Seed-OSS-36B-Base,
// Seed-OSS-36B-Base-woSyn): a Llama-layout decoder (pre-norm RMSNorm, GQA, SwiGLU, untied head by
// default) whose q/k/v projections carry biases per attention_bias and whose o_proj has its own
// switch, attention_out_bias. Its heads are wider than the residual stream (80 x 128 = 10240 over
// hidden 5120), so head_dim is read, never derived, when the config gives it.
// Tensor list: transformers models/seed_oss/modular_seed_oss.py (modeling_seed_oss.py).
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_seed_oss(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // SeedOssConfig defaults head_dim to 128 when the key is left out; an explicit null falls back
  // to hidden_size / num_attention_heads.
  const bool head_dim_null =
      config.json().contains("head_dim") && config.json().at("head_dim").is_null();
  HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, true,
                      head_dim_null ? std::nullopt : std::optional<std::int64_t>(128));
  // SeedOssConfig defaults num_key_value_heads to 8 when left out (null: one per query head).
  if (!config.json().contains("num_key_value_heads")) {
    shape.num_kv_heads = 8;
    if (shape.num_heads % 8 != 0) {
      config.fail("num_key_value_heads",
                  fmt::format("is missing, so SeedOssConfig's default 8 applies, which does not "
                              "divide num_attention_heads = {}; set it explicitly",
                              shape.num_heads));
    }
  }
  fill_decoder_basics(model, config, vocab, hidden, false);  // tie_word_embeddings: False
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 524288;
  model.position = PositionKind::rope;
  model.family = "Seed-OSS (decoder-only, RoPE, RMSNorm, SwiGLU, GQA, q/k/v biases)";

  const bool qkv_bias = config.bool_or("attention_bias", true);
  const bool o_bias = config.bool_or("attention_out_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  DecoderLayout layout;
  layout.qkv_bias = qkv_bias;
  layout.o_bias = o_bias;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, mlp_bias, mlp_bias, false};
  // SeedOssAttention rotates the whole head; no partial-rotary key is read.
  layout.rotary_dim = shape.head_dim;
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  if (config.has("sliding_window") || config.bool_or("use_sliding_window", false)) {
    model.notes.push_back(
        "sliding_window is ignored: SeedOssAttention attends to the whole context on every "
        "layer");
  }
  if (!config.json().contains("head_dim")) {
    model.notes.push_back("SeedOssConfig default used: head_dim = 128");
  }
  note_defaults(model, config, "SeedOssConfig",
                {{"num_key_value_heads", "8"},
                 {"attention_bias", "true"},
                 {"attention_out_bias", "false"},
                 {"mlp_bias", "false"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "524288"},
                 {"tie_word_embeddings", "false"}});
  // The rotary inv_freq buffer is non-persistent: the checkpoint stores none.
  return model;
}

}  // namespace trace::family
