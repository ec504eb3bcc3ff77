// Hunyuan dense (model_type hunyuan_v1_dense: tencent/Hunyuan-0.5B/1.8B/4B/7B-Instruct and
// -Pretrain, Hy-MT translation models): a Llama-layout decoder (pre-norm RMSNorm, GQA, bias-free
// SwiGLU) whose attention normalises each query and key head after RoPE with its own RMSNorm,
// stored as self_attn.query_layernorm / key_layernorm. The released configs tie the head.
// Tensor list: transformers models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_hunyuan_v1_dense(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);  // tie_word_embeddings: False
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Hunyuan dense (decoder-only, RoPE, RMSNorm, SwiGLU, GQA, per-head QK-norm)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;

  // The remote-code configs also carry attention_head_dim; it must agree with the head width used.
  if (const std::optional<std::int64_t> width =
          config.optional_int({"attention_head_dim"}, 1, k_max_width);
      width && *width != shape.head_dim) {
    config.fail("attention_head_dim",
                fmt::format("= {} contradicts the head width {} (head_dim, or hidden_size / "
                            "num_attention_heads)",
                            *width, shape.head_dim));
  }
  // Cross-layer attention (layers reusing an earlier layer's k/v projections) is a remote-code
  // option the released dense checkpoints leave off; the transformers class does not build it.
  if (config.bool_or("use_cla", false)) {
    config.fail("use_cla",
                "is true (cross-layer KV sharing), which HunYuanDenseV1 in transformers does not "
                "implement and this tool does not model; only use_cla: false is supported");
  }
  // The transformers class always builds the per-head norms; a remote-code checkpoint saved with
  // use_qk_norm: false holds none.
  const bool qk_norm = config.bool_or("use_qk_norm", true);
  // mlp_bias is not read: HunYuanDenseV1MLP builds gate/up/down without biases.
  if (config.bool_or("mlp_bias", false)) {
    config.fail("mlp_bias", "is true, but HunYuanDenseV1MLP has no biases; expected false");
  }
  const bool attention_bias = config.bool_or("attention_bias", false);

  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = attention_bias;
  layout.qk_norm = qk_norm ? DecoderLayout::QkNorm::per_head : DecoderLayout::QkNorm::none;
  layout.qk_norm_names = {"query_layernorm", "key_layernorm"};
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};
  layout.rotary_dim = shape.head_dim;
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  if (!qk_norm) {
    model.notes.push_back(
        "use_qk_norm is false: no query_layernorm / key_layernorm (remote-code layout; the "
        "transformers class would create them)");
  }
  note_defaults(model, config, "HunYuanDenseV1Config",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"head_dim", "hidden_size / num_attention_heads"},
                 {"attention_bias", "false"},
                 {"use_qk_norm", "true"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"},
                 {"tie_word_embeddings", "false"}});
  // inv_freq and original_inv_freq (NTK-alpha RoPE) are non-persistent buffers.
  return model;
}

}  // namespace trace::family
