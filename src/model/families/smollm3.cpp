// SmolLM3 (model_type smollm3: HuggingFaceTB/SmolLM3-3B, SmolLM3-3B-Base): a Llama-layout decoder
// (RMSNorm, GQA, SwiGLU, tied embeddings by default) whose layers listed 0 in no_rope_layers skip
// RoPE (NoPE layers); sliding windows, when enabled at all, only apply to the layers layer_types
// marks sliding (derived: the NoPE layers).
// Tensor list: transformers models/smollm3/modular_smollm3.py (modeling_smollm3.py).
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// Per layer: true when the layer applies RoPE. The config's list wins over the interval (the
// config class only derives the list from the interval when the list is absent); the list may
// be longer than the stack, its tail is ignored.
std::vector<bool> read_rope_layers(const ConfigReader& config, std::int64_t layers) {
  std::vector<bool> rope(static_cast<std::size_t>(layers), true);
  if (!config.has("no_rope_layers")) {
    const std::int64_t interval = config.int_or({"no_rope_layer_interval"}, 4, 1, k_max_layers);
    for (std::int64_t i = 0; i < layers; ++i) {
      rope[static_cast<std::size_t>(i)] = (i + 1) % interval != 0;
    }
    return rope;
  }
  const nlohmann::json& list = config.json().at("no_rope_layers");
  if (!list.is_array() || static_cast<std::int64_t>(list.size()) < layers) {
    config.fail("no_rope_layers",
                fmt::format("must be a list of at least {} entries (1 = the layer uses RoPE, "
                            "0 = NoPE), one per layer",
                            layers));
  }
  for (std::int64_t i = 0; i < layers; ++i) {
    const nlohmann::json& entry = list[static_cast<std::size_t>(i)];
    const bool valid = (entry.is_number_integer() &&
                        (entry.get<std::int64_t>() == 0 || entry.get<std::int64_t>() == 1)) ||
                       entry.is_boolean();
    if (!valid) {
      config.fail("no_rope_layers",
                  fmt::format("entry {} is {}; expected 1 (RoPE) or 0 (NoPE)", i, entry.dump()));
    }
    rope[static_cast<std::size_t>(i)] =
        entry.is_boolean() ? entry.get<bool>() : entry.get<std::int64_t>() == 1;
  }
  return rope;
}

}  // namespace

ModelDescription build_smollm3(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, true);  // tie_word_embeddings: True
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "SmolLM3 (decoder-only, RoPE + NoPE layers, RMSNorm, SwiGLU, GQA)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 32768;

  const bool attention_bias = config.bool_or("attention_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);
  const std::vector<bool> rope = read_rope_layers(config, layers);

  // SmolLM3Attention: a window only when use_sliding_window and the layer type is sliding; a
  // null sliding_window leaves every layer full. Without layer_types the config class marks the
  // NoPE layers sliding (under the same two conditions).
  const bool use_sliding = config.bool_or("use_sliding_window", false);
  const std::int64_t window = config.int_or({"sliding_window"}, 0, 0, k_max_positions);
  const std::vector<std::string> types =
      read_string_list(config, "layer_types", layers, {"full_attention", "sliding_attention"});

  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = attention_bias;
  layout.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"),
                   hidden,         intermediate,
                   mlp_bias,       mlp_bias,
                   false};
  layout.rotary_dim = rotary;
  layout.rope_layers = rope;
  layout.windows.resize(static_cast<std::size_t>(layers), 0);
  std::int64_t nope_layers = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    const auto index = static_cast<std::size_t>(i);
    const bool sliding = types.empty() ? !rope[index] : types[index] == "sliding_attention";
    if (use_sliding && sliding) layout.windows[index] = window;
    if (!rope[index]) ++nope_layers;
  }
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));

  model.notes.push_back(
      fmt::format("NoPE layers (no rotary embedding): {} of {}", nope_layers, layers));
  if (use_sliding && window == 0) {
    model.notes.push_back(
        "use_sliding_window is true but sliding_window is null: every layer "
        "attends to the whole context");
  }
  note_defaults(model, config, "SmolLM3Config",
                {{"tie_word_embeddings", "true"},
                 {"attention_bias", "false"},
                 {"mlp_bias", "false"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "32768"},
                 {"use_sliding_window", "false"},
                 {"no_rope_layers", "1 except every no_rope_layer_interval-th layer"}});
  return model;
}

}  // namespace trace::family
