// Gemma 3n (model_type gemma3n, Gemma3nForConditionalGeneration: google/gemma-3n-E2B(-it),
// google/gemma-3n-E4B(-it); model_type gemma3n_text, Gemma3nForCausalLM: the text model alone).
// The decoder is Gemma 3's (GQA, per-head QK-norm, a value norm without scale, 4 RMSNorms per
// layer, GeGLU, 4 local : 1 global, tied embeddings) with a per-layer FFN width (MatFormer) and
// four additions that do not fit a Block: AltUp (altup_num_inputs copies of the residual stream,
// a router and coefficient matrices per layer, projections in and out of the stack), LAuReL (a
// low-rank residual Linear pair + norm per layer), per-layer embeddings (a second token table of
// layers x hidden_size_per_layer_input per token, a projection of the token embedding to the same
// shape, and a gate / projection / norm per layer) and KV sharing (the last num_kv_shared_layers
// layers read the cache of the last earlier layer of their type). The wrapper adds a USM-style
// audio conformer, a timm MobileNetV5 vision tower and one multimodal embedder per tower.
// Tensor list: transformers models/gemma3n/modeling_gemma3n.py (configuration_gemma3n.py);
// vision tower: timm models/mobilenetv5.py (mobilenetv5_300m_enc).
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "family.hpp"

namespace trace::family {

namespace {

// transformers Gemma3nTextConfig defaults (its E4B sizes).
constexpr std::array<KeyDefault, 15> k_text_defaults{{
    {"vocab_size", 262'400},
    {"hidden_size", 2048},
    {"intermediate_size", 16'384},
    {"num_hidden_layers", 35},
    {"num_attention_heads", 8},
    {"num_key_value_heads", 2},
    {"head_dim", 256},
    {"max_position_embeddings", 32'768},
    {"sliding_window", 512},
    {"vocab_size_per_layer_input", 262'144},
    {"hidden_size_per_layer_input", 256},
    {"altup_active_idx", 0},
    {"altup_num_inputs", 4},
    {"num_kv_shared_layers", 15},
    {"laurel_rank", 64},
}};

// transformers Gemma3nAudioConfig defaults for the sizes that shape its tensors.
constexpr std::array<KeyDefault, 6> k_audio_defaults{{
    {"vocab_size", 128},
    {"input_feat_size", 128},
    {"hidden_size", 1536},
    {"conf_num_attention_heads", 8},
    {"conf_num_hidden_layers", 12},
    {"conf_conv_kernel_size", 5},
}};

// transformers Gemma3nVisionConfig defaults for the embedder's sizes.
constexpr std::array<KeyDefault, 2> k_vision_defaults{{
    {"vocab_size", 128},
    {"hidden_size", 2048},
}};

// The timm vision towers config.json names but does not describe. The count is the tower's
// parameters in the published checkpoint (model.vision_tower.timm_model.*), derived by hand from
// timm's mobilenetv5.py (conv stem with bias + RmsNorm2d, 84 EdgeResidual / UIR / MobileAttention
// blocks, the multi-scale fusion adapter; SOURCES-gemma3n.md) and confirmed by the Hub totals of
// gemma-3n-E2B-it and -E4B-it, which it closes to the scalar. `width`: its output channels.
struct TimmTower {
  const char* architecture;
  std::int64_t params;
  std::int64_t width;
};
constexpr std::array<TimmTower, 1> k_timm_towers{{
    {"mobilenetv5_300m_enc", 294'126'912, 2048},
}};

// Layer widths of the gated FFN: one int for every layer, or a list with one per layer (the
// config class expands a single int to the list).
std::vector<std::int64_t> read_ffn_widths(const ConfigReader& text, std::int64_t layers) {
  const nlohmann::json& value = text.json().at("intermediate_size");
  if (!value.is_array()) {
    const std::int64_t width = text.require_int({"intermediate_size"}, 1, k_max_width);
    return std::vector<std::int64_t>(static_cast<std::size_t>(layers), width);
  }
  if (static_cast<std::int64_t>(value.size()) != layers) {
    text.fail("intermediate_size",
              fmt::format("lists {} widths for {} layers; give one per layer or a single int",
                          value.size(), layers));
  }
  std::vector<std::int64_t> widths;
  widths.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const nlohmann::json& entry = value[i];
    if (!entry.is_number_integer() || entry.get<std::int64_t>() < 1 ||
        entry.get<std::int64_t>() > k_max_width) {
      text.fail("intermediate_size", fmt::format("entry {} is {}; expected a width in 1..{}", i,
                                                 entry.dump(), k_max_width));
    }
    widths.push_back(entry.get<std::int64_t>());
  }
  return widths;
}

// A list of `count` ints (or of `count` pairs of ints when `pairs`), each >= 1, under `key`;
// `fallback` (the config class's default) when absent.
std::vector<std::int64_t> read_int_list(const ConfigReader& config, std::string_view key,
                                        std::size_t count, bool pairs,
                                        std::vector<std::int64_t> fallback) {
  if (!config.has(key)) return fallback;
  const nlohmann::json& list = config.json().at(key);
  const char* shape = pairs ? "[[h, w], [h, w]]" : "[a, b]";
  if (!list.is_array() || list.size() != count) {
    config.fail(key, fmt::format("must be a list of {} entries, {}: the subsampler has exactly "
                                 "{} conv blocks",
                                 count, shape, count));
  }
  std::vector<std::int64_t> values;
  for (const nlohmann::json& item : list) {
    const nlohmann::json single = nlohmann::json::array({item});
    const nlohmann::json& numbers = pairs ? item : single;
    if (!numbers.is_array() || numbers.size() != (pairs ? 2U : 1U)) {
      config.fail(key, fmt::format("must be shaped {}, got {}", shape, list.dump()));
    }
    for (const nlohmann::json& number : numbers) {
      if (!number.is_number_integer() || number.get<std::int64_t>() < 1 ||
          number.get<std::int64_t>() > k_max_width) {
        config.fail(key, fmt::format("holds {}; expected positive integers", number.dump()));
      }
      values.push_back(number.get<std::int64_t>());
    }
  }
  return values;
}

ExtraParameter extra(std::string name, const char* component, const char* op, std::int64_t params) {
  return ExtraParameter{std::move(name), component, op, params};
}

// The text model: decoder stack plus the tensors outside the Block shape, named under `root`
// ("model.language_model." in the wrapper, "model." in Gemma3nForCausalLM).
ModelDescription gemma3n_text(const ConfigReader& text, const std::string& root) {
  ModelDescription model;
  const std::int64_t vocab = text.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = text.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = text.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const HeadShape shape =
      read_head_shape(text, hidden, {"num_attention_heads"}, {"num_key_value_heads"});
  fill_decoder_basics(model, text, vocab, hidden, true);  // tie_word_embeddings: True
  model.position = PositionKind::rope;
  model.embedding_scale = std::sqrt(static_cast<double>(hidden));
  // Gemma3nTextConfig.validate_architecture refuses this, whatever head_dim says.
  if (hidden % shape.num_heads != 0) {
    text.fail("num_attention_heads",
              fmt::format("= {} does not divide hidden_size {}; Gemma3nTextConfig refuses it",
                          shape.num_heads, hidden));
  }
  const std::vector<std::int64_t> widths = read_ffn_widths(text, layers);
  if (text.has("activation_sparsity_pattern")) {
    const nlohmann::json& pattern = text.json().at("activation_sparsity_pattern");
    if (!pattern.is_array() || static_cast<std::int64_t>(pattern.size()) != layers) {
      text.fail("activation_sparsity_pattern",
                fmt::format("must list one sparsity per layer ({} entries)", layers));
    }
  }

  const std::int64_t per_layer_vocab =
      text.require_int({"vocab_size_per_layer_input"}, 1, k_max_vocab);
  const std::int64_t per_layer_width =
      text.require_int({"hidden_size_per_layer_input"}, 1, k_max_width);
  const std::int64_t streams = text.require_int({"altup_num_inputs"}, 1, 64);
  text.require_int({"altup_active_idx"}, 0, streams - 1);  // AltUp indexes the streams with it
  const std::int64_t laurel_rank = text.require_int({"laurel_rank"}, 1, k_max_width);
  const std::int64_t shared = text.require_int({"num_kv_shared_layers"}, 0, layers);

  DecoderLayout layout;
  layout.norms = DecoderLayout::Norms::sandwich;
  layout.norm_names = {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                       "post_feedforward_layernorm"};
  layout.qk_norm = DecoderLayout::QkNorm::per_head;  // v_norm has no scale: no tensor
  layout.qkv_bias = layout.o_bias = text.bool_or("attention_bias", false);
  const std::string activation =
      text.optional_string("hidden_activation").value_or("gelu_pytorch_tanh");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, widths.front(), false, false, false};
  layout.rotary_dim = shape.head_dim;  // both layer types rotate (different theta)
  // Without layer_types the config class makes every fifth layer global.
  layout.windows = resolve_windows(
      text, layers,
      {sliding_window_with_default(text, 512), WindowRule::Pattern::every_nth_global, 5});
  Stack stack = decoder_stack(hidden, layers, shape, layout);

  // KV sharing (Gemma3nTextAttention): layer i >= first reads the cache of the last layer of its
  // own type before `first`; first = 0 shares nothing. Such a layer still holds its k/v
  // projections and k_norm (the converter loads them strictly; the Hub totals count them).
  const std::int64_t first = layers - shared;
  std::array<std::int64_t, 2> source{-1, -1};  // last earlier layer: full, sliding
  std::array<bool, 2> read{false, false};      // some shared layer of that type reads it
  for (std::int64_t i = 0; i < layers; ++i) {
    Block& block = stack.blocks[static_cast<std::size_t>(i)];
    block.mlp.intermediate = widths[static_cast<std::size_t>(i)];
    block.residual_streams = streams;  // AltUp
    const std::size_t kind = block.attention.sliding_window > 0 ? 1 : 0;
    if (i < first || first == 0) {
      source[kind] = i;
      continue;
    }
    if (source[kind] < 0) {
      text.fail("num_kv_shared_layers",
                fmt::format("= {} makes layer {} ({} attention) reuse the KV cache of an earlier "
                            "layer of its type, but none precedes layer {}",
                            shared, i, kind == 1 ? "sliding" : "full", first));
    }
    block.attention.kv_from_earlier_layer = true;
    read[kind] = true;
  }
  if (read[0] || read[1]) {
    std::string sources;
    for (const std::size_t kind : {std::size_t{1}, std::size_t{0}}) {
      if (!read[kind]) continue;
      sources += fmt::format("{}layer {}'s ({})", sources.empty() ? "" : " / ", source[kind],
                             kind == 1 ? "sliding" : "full");
    }
    model.notes.push_back(fmt::format(
        "KV sharing: layers {}..{} hold no KV cache; they read {} and still store their own "
        "k_proj / v_proj / k_norm",
        first, layers - 1, sources));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));

  // Per layer, outside the Block shape (summed over the layers, one entry per module).
  const std::string each = root + "layers.*.";
  const auto over_layers = [&](std::int64_t per_layer) {
    return checked_mul(per_layer, layers, "the per-layer extras");
  };
  // AltUp: correct_output_scale [h], correction_coefs [n, n], prediction_coefs [n^2, n],
  // modality_router [n, h]; router_norm [h].
  const std::int64_t altup = checked_add(checked_product({streams, streams, streams + 1}),
                                         checked_mul(hidden, streams + 1));
  std::vector<ExtraParameter>& extras = model.extra_parameters;
  extras.push_back(extra(each + "altup", "other", "AltUp", over_layers(altup)));
  extras.push_back(extra(each + "altup.router_norm", "norm", "RMSNorm", over_layers(hidden)));
  extras.push_back(extra(each + "laurel", "other", "Laurel (low-rank Linear pair)",
                         over_layers(checked_product({2, hidden, laurel_rank}))));
  extras.push_back(extra(each + "laurel.post_laurel_norm", "norm", "RMSNorm", over_layers(hidden)));
  const std::int64_t gate = checked_mul(hidden, per_layer_width);
  extras.push_back(extra(each + "per_layer_input_gate", "other", "Linear", over_layers(gate)));
  extras.push_back(extra(each + "per_layer_projection", "other", "Linear", over_layers(gate)));
  extras.push_back(
      extra(each + "post_per_layer_input_norm", "norm", "RMSNorm", over_layers(hidden)));

  // Model level: the per-layer token table, the projection of the token embedding onto it and
  // its norm, and AltUp's n - 1 projections into and out of the extra streams.
  const std::int64_t per_layer_total = checked_mul(layers, per_layer_width);
  extras.push_back(extra(root + "embed_tokens_per_layer", "embedding", "Embedding",
                         checked_mul(per_layer_vocab, per_layer_total)));
  extras.push_back(extra(root + "per_layer_model_projection", "other", "Linear",
                         checked_mul(hidden, per_layer_total)));
  extras.push_back(extra(root + "per_layer_projection_norm", "norm", "RMSNorm", per_layer_width));
  if (streams > 1) {
    const std::int64_t projections = checked_product({streams - 1, hidden, hidden});
    extras.push_back(extra(root + "altup_projections", "other", "Linear", projections));
    extras.push_back(extra(root + "altup_unembed_projections", "other", "Linear", projections));
  }
  model.notes.push_back(fmt::format(
      "per-layer embeddings: embed_tokens_per_layer ({} x {}) is a lookup of {} values per "
      "token; Google's \"effective\" size leaves it (and embed_tokens) out",
      per_layer_vocab, per_layer_total, per_layer_total));
  return model;
}

// A config with keys filled from the config class's defaults (noted), kept alive in `storage`.
ConfigReader with_defaults(const ConfigReader& config, std::string_view key,
                           std::span<const KeyDefault> defaults, const char* config_class,
                           nlohmann::json& storage, ModelDescription& model) {
  storage = config.has(key) ? config.child(key).json() : nlohmann::json::object();
  if (!config.has(key)) {
    model.notes.push_back(fmt::format("{} absent: {} defaults used for every key",
                                      config.key_path(key), config_class));
  }
  const std::string used = fill_absent_keys(storage, defaults, " = ");
  if (config.has(key) && !used.empty()) {
    model.notes.push_back(fmt::format("{} omits keys; {} defaults used: {}", config.key_path(key),
                                      config_class, used));
  }
  return ConfigReader(storage, config.key_path(key), config.model_type());
}

// Gemma3nMultimodalEmbedder: embedding [vocab, d], hard / soft embedding norms [d], projection
// [text d, d]; the post-projection norm has no scale.
void add_embedder(const std::string& name, const ConfigReader& tower, std::int64_t text_hidden,
                  ModelDescription& model) {
  const std::int64_t vocab = tower.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t width = tower.require_int({"hidden_size"}, 1, k_max_width);
  std::vector<ExtraParameter>& extras = model.extra_parameters;
  extras.push_back(extra(name + ".embedding", "vision", "Embedding", checked_mul(vocab, width)));
  extras.push_back(extra(name + ".hard_embedding_norm", "vision", "RMSNorm", width));
  extras.push_back(extra(name + ".soft_embedding_norm", "vision", "RMSNorm", width));
  extras.push_back(
      extra(name + ".embedding_projection", "vision", "Linear", checked_mul(width, text_hidden)));
}

// Gemma3nAudioEncoder: a two-block Conv2d subsampler (no bias, cumulative group norm with a
// scale) and its input projection, then conformer blocks (macaron FFNs of 4 x width, chunked
// local attention with a relative-position projection and per-dim scale, a light depthwise
// conv1d module, a final norm). Counted as extras: a conformer block is no Block.
void add_audio_tower(const ConfigReader& audio, bool present, ModelDescription& model) {
  const std::int64_t width = audio.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = audio.require_int({"conf_num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = audio.require_int({"conf_num_attention_heads"}, 1, k_max_heads);
  const std::int64_t kernel = audio.require_int({"conf_conv_kernel_size"}, 1, 4096);
  const std::int64_t features = audio.require_int({"input_feat_size"}, 1, k_max_width);
  if (width % heads != 0) {
    audio.fail("conf_num_attention_heads",
               fmt::format("= {} does not divide hidden_size {}; the attention output "
                           "(heads x head_dim) must refill the width",
                           heads, width));
  }
  const std::vector<std::int64_t> channels =
      read_int_list(audio, "sscp_conv_channel_size", 2, false, {128, 32});
  const std::vector<std::int64_t> kernels =
      read_int_list(audio, "sscp_conv_kernel_size", 2, true, {3, 3, 3, 3});
  const std::vector<std::int64_t> strides =
      read_int_list(audio, "sscp_conv_stride_size", 2, true, {2, 2, 2, 2});
  // The frequency axis after each conv: padded by one on each side, then strided.
  std::int64_t frequency = features;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t kernel_w = kernels[2 * i + 1];
    if (frequency + 2 < kernel_w) {
      audio.fail("sscp_conv_kernel_size",
                 fmt::format("block {} is {} wide but only {} frequency bins (padded) reach it", i,
                             kernel_w, frequency + 2));
    }
    frequency = (frequency + 2 - kernel_w) / strides[2 * i + 1] + 1;
  }
  if (present) {
    note_defaults(model, audio, "Gemma3nAudioConfig",
                  {{"sscp_conv_channel_size", "[128, 32]"},
                   {"sscp_conv_kernel_size", "[[3, 3], [3, 3]]"},
                   {"sscp_conv_stride_size", "[[2, 2], [2, 2]]"}});
  }

  const std::string at = "model.audio_tower.";
  const std::string block = at + "conformer.*.";
  const auto over_layers = [&](std::int64_t per_layer) {
    return checked_mul(per_layer, layers, "the audio tower");
  };
  const std::int64_t square = checked_mul(width, width);
  std::vector<ExtraParameter>& extras = model.extra_parameters;
  extras.push_back(extra(at + "subsample_conv_projection.conv_0", "vision", "Conv2d + GroupNorm",
                         checked_product({channels[0], kernels[0], kernels[1]}) + channels[0]));
  extras.push_back(
      extra(at + "subsample_conv_projection.conv_1", "vision", "Conv2d + GroupNorm",
            checked_product({channels[1], channels[0], kernels[2], kernels[3]}) + channels[1]));
  extras.push_back(extra(at + "subsample_conv_projection.input_proj_linear", "vision", "Linear",
                         checked_product({channels[1], frequency, width})));
  // pre / post norms, ffw_layer_1 [4d, d], ffw_layer_2 [d, 4d]
  const std::int64_t feed_forward = checked_add(checked_mul(8, square), 2 * width);
  extras.push_back(extra(block + "ffw_layer_start", "vision", "ConformerFeedForward",
                         over_layers(feed_forward)));
  // pre_attn_norm, q/k/v, relative_position_embedding.pos_proj, post, post_norm, per_dim_scale
  extras.push_back(extra(block + "attention", "vision", "ConformerAttention",
                         over_layers(checked_mul(5, square) + 2 * width + width / heads)));
  // pre_layer_norm, linear_start [2d, d], depthwise_conv1d [d, 1, k], conv_norm, linear_end
  extras.push_back(extra(block + "lconv1d", "vision", "LightConv1d",
                         over_layers(checked_mul(3, square) + checked_mul(width, kernel + 2))));
  extras.push_back(
      extra(block + "ffw_layer_end", "vision", "ConformerFeedForward", over_layers(feed_forward)));
  extras.push_back(extra(block + "norm", "vision", "RMSNorm", over_layers(width)));
}

// The timm tower vision_config names, from the table above; any other is refused.
void add_vision_tower(const ConfigReader& vision, bool present, ModelDescription& model) {
  const std::string architecture =
      vision.optional_string("architecture").value_or("mobilenetv5_300m_enc");
  const TimmTower* tower = nullptr;
  for (const TimmTower& row : k_timm_towers) {
    if (architecture == row.architecture) tower = &row;
  }
  if (tower == nullptr) {
    vision.fail("architecture",
                fmt::format("= \"{}\" is a timm model whose layers config.json does not describe; "
                            "only \"mobilenetv5_300m_enc\" (the released Gemma 3n tower) is known",
                            architecture));
  }
  if (vision.json().contains("model_args") && !vision.json().at("model_args").is_null() &&
      !vision.json().at("model_args").empty()) {
    vision.fail("model_args",
                "changes the timm model's construction; the tower's count is only "
                "known for the architecture as registered");
  }
  // get_image_features reshapes the tower's output channels into hidden_size.
  if (vision.require_int({"hidden_size"}, 1, k_max_width) != tower->width) {
    vision.fail("hidden_size", fmt::format("must equal {}'s output channels ({})",
                                           tower->architecture, tower->width));
  }
  if (present && !vision.has("architecture")) {
    model.notes.push_back(
        "vision_config.architecture absent: Gemma3nVisionConfig default "
        "mobilenetv5_300m_enc used");
  }
  model.extra_parameters.push_back(
      extra("model.vision_tower.timm_model", "vision", "MobileNetV5 (timm)", tower->params));
  model.notes.push_back(fmt::format(
      "vision tower {} counted from trace's table ({} parameters): config.json does not describe "
      "its layers",
      tower->architecture, tower->params));
}

}  // namespace

ModelDescription build_gemma3n(const ConfigReader& config) {
  nlohmann::json text_json;
  const ConfigReader text = nested_text_config(config, text_json);
  const std::string text_used = fill_absent_keys(text_json, k_text_defaults, " = ");
  ModelDescription model = gemma3n_text(text, "model.language_model.");
  model.family =
      "Gemma 3n (AltUp / LAuReL / per-layer-embedding decoder with KV sharing + "
      "MobileNetV5 vision tower + conformer audio tower)";
  if (!text_used.empty()) {
    model.notes.push_back(
        fmt::format("text_config omits keys; Gemma3nTextConfig defaults used: {}", text_used));
  }
  if (model.torch_dtype.empty()) {
    model.torch_dtype = read_torch_dtype(config);
  }

  nlohmann::json audio_json;
  const ConfigReader audio = with_defaults(config, "audio_config", k_audio_defaults,
                                           "Gemma3nAudioConfig", audio_json, model);
  add_audio_tower(audio, config.has("audio_config"), model);
  add_embedder("model.embed_audio", audio, model.hidden_size, model);

  nlohmann::json vision_json;
  const ConfigReader vision = with_defaults(config, "vision_config", k_vision_defaults,
                                            "Gemma3nVisionConfig", vision_json, model);
  add_vision_tower(vision, config.has("vision_config"), model);
  add_embedder("model.embed_vision", vision, model.hidden_size, model);
  model.notes.push_back(
      "audio tower, vision tower and their embedders run per clip / image, "
      "never per text token (counted as vision, not active)");
  return model;
}

ModelDescription build_gemma3n_text(const ConfigReader& config) {
  nlohmann::json text_json = config.json();
  const std::string used = fill_absent_keys(text_json, k_text_defaults, " = ");
  ModelDescription model = gemma3n_text(ConfigReader(text_json, "", config.model_type()), "model.");
  model.family = "Gemma 3n text (AltUp / LAuReL / per-layer-embedding decoder with KV sharing)";
  if (!used.empty()) {
    model.notes.push_back(fmt::format("Gemma3nTextConfig defaults used: {}", used));
  }
  return model;
}

}  // namespace trace::family
