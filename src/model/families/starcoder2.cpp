// StarCoder2 (model_type starcoder2: bigcode/starcoder2-3b, -7b, -15b and their fine-tunes): a
// pre-norm decoder with biased LayerNorms, GQA with RoPE, a plain (non-gated) c_fc -> c_proj MLP,
// `use_bias` on every Linear, and one sliding window shared by all layers.
// Tensor list: transformers models/starcoder2/modeling_starcoder2.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_starcoder2(const ConfigReader& config) {
  ModelDescription model;
  // Starcoder2Config ties the head to the embedding by default; the 15B config unties it.
  DecoderDims dims = read_decoder_dims(config, model, true);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  HeadShape& shape = dims.heads;
  if (!config.has("num_key_value_heads")) {
    // Starcoder2Config defaults num_key_value_heads to 2 (the 3B's value), not to the head count.
    shape.num_kv_heads = 2;
    if (shape.num_heads % 2 != 0) {
      config.fail("num_key_value_heads",
                  fmt::format("is missing, so Starcoder2Config's default 2 applies, which does not "
                              "divide num_attention_heads = {}; set it explicitly",
                              shape.num_heads));
    }
  }
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "StarCoder2 (decoder-only, RoPE, LayerNorm, GQA, sliding window, biased GELU MLP)";
  // One flag sets the bias of q/k/v/o, c_fc and c_proj alike; the LayerNorms always have one.
  const bool bias = config.bool_or("use_bias", true);
  // Starcoder2Attention passes config.sliding_window to every layer (null: full attention).
  DecoderLayout layout;
  layout.norm_kind = NormKind::layer_norm;
  layout.qkv_bias = layout.o_bias = bias;
  layout.mlp =
      Mlp{MlpKind::plain, config.optional_string("hidden_act").value_or("gelu_pytorch_tanh"),
          hidden,         intermediate,
          bias,           bias,
          false};
  layout.rotary_dim = rotary_dims(config, shape.head_dim);
  // Starcoder2Attention passes config.sliding_window to every layer (null: full attention).
  layout.windows = resolve_windows(
      config, layers,
      {config.int_or({"sliding_window"}, 0, 0, k_max_positions), WindowRule::Pattern::all, 0});
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  note_defaults(model, config, "Starcoder2Config",
                {{"use_bias", "true"},
                 {"tie_word_embeddings", "true"},
                 {"hidden_act", "gelu_pytorch_tanh"},
                 {"num_key_value_heads", "2"}});
  return model;
}

}  // namespace trace::family
