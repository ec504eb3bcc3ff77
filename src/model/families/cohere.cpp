// Cohere (model_type cohere: Command-R v01 / 08-2024, Command-R+, Aya-23, Aya Expanse) and
// Cohere2 (model_type cohere2: Command R7B, Command A). One bias-free LayerNorm feeds attention
// and a SwiGLU MLP in parallel; the head is tied to the embedding and scaled by logit_scale (a
// constant, not a tensor). Cohere may add a bias-free LayerNorm per head on q and k
// (use_qk_norm); Cohere2 interleaves sliding-window layers with global layers that use no RoPE.
// Tensor list: transformers models/cohere/modeling_cohere.py, models/cohere2/modeling_cohere2.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// The layout both types share: one bias-free LayerNorm (input_layernorm) feeding attention and a
// bias-free SwiGLU side by side; q/k/v/o biased by attention_bias.
DecoderLayout cohere_layout(const ConfigReader& config, std::int64_t hidden,
                            std::int64_t intermediate) {
  DecoderLayout layout;
  layout.norm_kind = NormKind::layer_norm_no_bias;
  layout.norms = DecoderLayout::Norms::parallel;
  layout.qkv_bias = layout.o_bias = config.bool_or("attention_bias", false);
  layout.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"),
                   hidden,         intermediate,
                   false,          false,
                   false};
  return layout;
}

}  // namespace

ModelDescription build_cohere(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, true);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Cohere Command-R (decoder-only, RoPE, parallel attention+MLP, LayerNorm, SwiGLU)";
  DecoderLayout layout = cohere_layout(config, hidden, intermediate);
  layout.rotary_dim = rotary_dims(config, shape.head_dim);
  // CohereLayerNorm((heads, head_dim)): a weight of its own for every head, no bias.
  if (config.bool_or("use_qk_norm", false)) layout.qk_norm = DecoderLayout::QkNorm::full_width;
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  note_defaults(model, config, "CohereConfig",
                {{"tie_word_embeddings", "true"},
                 {"attention_bias", "false"},
                 {"use_qk_norm", "false"},
                 {"num_key_value_heads", "num_attention_heads"}});
  return model;
}

ModelDescription build_cohere2(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // Cohere2Config overwrites head_dim with hidden_size / num_attention_heads, so the weights have
  // that width whatever the key says; a head_dim that disagrees is refused rather than ignored.
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  if (const std::optional<std::int64_t> head_dim =
          config.optional_int({"head_dim"}, 1, k_max_width);
      head_dim && *head_dim != shape.head_dim) {
    config.fail("head_dim", fmt::format("is {} but Cohere2 heads are hidden_size / "
                                        "num_attention_heads = {} wide; fix or drop the key",
                                        *head_dim, shape.head_dim));
  }
  fill_decoder_basics(model, config, vocab, hidden, true);
  model.position = PositionKind::rope;
  model.family =
      "Cohere2 Command R7B / A (decoder-only, interleaved sliding window, NoPE global layers, "
      "parallel attention+MLP, LayerNorm, SwiGLU)";

  // Cohere2Config: sliding_window defaults to 4096 (an explicit null disables it); without
  // layer_types every sliding_window_pattern-th layer (default 4) is global.
  const std::int64_t window = sliding_window_with_default(config, 4096);
  const std::int64_t pattern = config.int_or({"sliding_window_pattern"}, 4, 1, k_max_layers);
  const WindowRule rule{window, WindowRule::Pattern::every_nth_global, pattern};
  const std::vector<std::int64_t> windows = resolve_windows(config, layers, rule);
  if (config.has("layer_types") && config.has("sliding_window_pattern")) {
    // transformers follows layer_types and drops the pattern; two that disagree are refused.
    for (std::int64_t i = 0; i < layers; ++i) {
      const bool sliding = windows[static_cast<std::size_t>(i)] > 0;
      if (sliding != ((i + 1) % pattern != 0)) {
        config.fail("layer_types",
                    fmt::format("disagrees with sliding_window_pattern = {} at layer {}; keep "
                                "one of the two",
                                pattern, i));
      }
    }
  }
  DecoderLayout layout = cohere_layout(config, hidden, intermediate);
  layout.rotary_dim = rotary_dims(config, shape.head_dim);
  layout.windows = windows;
  // Cohere2Attention applies RoPE only on sliding layers; global layers see no positions.
  std::int64_t global = 0;
  for (const std::int64_t layer_window : windows) {
    layout.rope_layers.push_back(layer_window > 0);
    if (layer_window == 0) ++global;
  }
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  if (global < layers) {
    model.notes.push_back(
        fmt::format("{} of {} layers attend globally without RoPE; the others "
                    "use a {}-token sliding window with RoPE",
                    global, layers, window));
  }
  note_defaults(model, config, "Cohere2Config",
                {{"tie_word_embeddings", "true"},
                 {"attention_bias", "false"},
                 {"sliding_window", "4096"},
                 {"num_key_value_heads", "num_attention_heads"}});
  if (!config.has("layer_types")) {
    note_defaults(model, config, "Cohere2Config", {{"sliding_window_pattern", "4"}});
  }
  return model;
}

}  // namespace trace::family
