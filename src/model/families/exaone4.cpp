// EXAONE 4.0 (model_type exaone4: LGAI-EXAONE/EXAONE-4.0-1.2B, EXAONE-4.0-32B and their FP8 /
// AWQ siblings), transformers-native: an OLMo-2-style post-norm decoder (no input_layernorm; a
// post_attention_layernorm and a post_feedforward_layernorm on each sublayer's output), per-head
// q_norm / k_norm RMSNorms, GQA, bias-free SwiGLU. With a sliding_window set, layers marked
// sliding (layer_types, or sliding_window_pattern) attend locally with RoPE and the global layers
// use no positional encoding (NoPE); without one every layer is full attention with RoPE (1.2B).
// Tensor list: transformers models/exaone4/modular_exaone4.py (modeling_exaone4.py).
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// Per layer: true when sliding. sliding_window_pattern is either an int n (every n-th layer is
// global) or a string of 'L' (local) / 'G' (global) repeated over the stack, the last layer
// always global (Exaone4Config's docstring).
std::vector<bool> read_sliding_layers(const ConfigReader& config, std::int64_t layers) {
  std::vector<bool> sliding(static_cast<std::size_t>(layers), false);
  const nlohmann::json& json = config.json();
  if (json.contains("sliding_window_pattern") && json.at("sliding_window_pattern").is_string()) {
    const std::string pattern = json.at("sliding_window_pattern").get<std::string>();
    if (pattern.empty() || pattern.find_first_not_of("LG") != std::string::npos) {
      config.fail("sliding_window_pattern",
                  fmt::format("= \"{}\"; expected a non-empty string of 'L' (local) and 'G' "
                              "(global) characters, or an integer",
                              pattern));
    }
    for (std::int64_t i = 0; i + 1 < layers; ++i) {
      sliding[static_cast<std::size_t>(i)] =
          pattern[static_cast<std::size_t>(i) % pattern.size()] == 'L';
    }
    return sliding;
  }
  const std::int64_t every = config.int_or({"sliding_window_pattern"}, 4, 1, k_max_layers);
  for (std::int64_t i = 0; i < layers; ++i) {
    sliding[static_cast<std::size_t>(i)] = (i + 1) % every != 0;
  }
  return sliding;
}

}  // namespace

ModelDescription build_exaone4(const ConfigReader& config) {
  ModelDescription model;
  DecoderDims dims = read_decoder_dims(config, model, false);  // tie_word_embeddings: False
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  HeadShape& shape = dims.heads;
  // Exaone4Config defaults num_key_value_heads to 32, not to the query head count.
  if (!config.json().contains("num_key_value_heads")) {
    shape.num_kv_heads = 32;
    if (shape.num_kv_heads > shape.num_heads || shape.num_heads % shape.num_kv_heads != 0) {
      config.fail("num_key_value_heads",
                  fmt::format("is missing, so Exaone4Config's default 32 applies, which does not "
                              "divide num_attention_heads = {}; set it explicitly",
                              shape.num_heads));
    }
  }
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family =
      "EXAONE 4.0 (decoder-only, post-norm RMSNorm, per-head QK-norm, SwiGLU, GQA, "
      "local RoPE + global NoPE)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;

  // Exaone4Config: sliding_window defaults to 4096 when the key is left out; null disables it.
  const std::int64_t window = sliding_window_with_default(config, 4096, 0);

  DecoderLayout layout;
  layout.norms = DecoderLayout::Norms::post;
  layout.qk_norm = DecoderLayout::QkNorm::per_head;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};
  layout.rotary_dim = shape.head_dim;
  std::int64_t global_layers = layers;
  if (window > 0) {
    // layer_types wins; without it the pattern decides. Exaone4Attention applies RoPE only on
    // the sliding layers once a window is set.
    if (config.has("layer_types")) {
      layout.windows = resolve_windows(config, layers, {window, WindowRule::Pattern::none, 0});
    } else {
      const std::vector<bool> sliding = read_sliding_layers(config, layers);
      layout.windows.assign(static_cast<std::size_t>(layers), 0);
      for (std::size_t i = 0; i < sliding.size(); ++i) {
        if (sliding[i]) layout.windows[i] = window;
      }
    }
    global_layers = 0;
    for (const std::int64_t layer_window : layout.windows) {
      layout.rope_layers.push_back(layer_window > 0);
      if (layer_window == 0) ++global_layers;
    }
    model.notes.push_back(
        fmt::format("global NoPE layers (no rotary embedding): {} of {}", global_layers, layers));
  } else if (config.has("layer_types")) {
    // Without a window nothing slides and every layer applies RoPE, whatever layer_types says.
    read_string_list(config, "layer_types", layers, {"full_attention", "sliding_attention"});
  }
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  note_defaults(model, config, "Exaone4Config",
                {{"num_key_value_heads", "32"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"},
                 {"tie_word_embeddings", "false"}});
  // note_defaults treats null as absent; here null means "no window", so the window keys are
  // noted only when truly left out (and the pattern only when it decided the layers).
  if (!config.json().contains("sliding_window")) {
    model.notes.push_back("Exaone4Config default used: sliding_window = 4096");
  }
  if (window > 0 && !config.has("layer_types") && !config.has("sliding_window_pattern")) {
    model.notes.push_back(
        "Exaone4Config default used: sliding_window_pattern = 4 (every 4th layer global)");
  }
  // The rotary inv_freq buffers are non-persistent: the checkpoint stores none.
  return model;
}

}  // namespace trace::family
