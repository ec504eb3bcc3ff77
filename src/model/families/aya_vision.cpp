// Aya Vision (model_type aya_vision, AyaVisionForConditionalGeneration): CohereLabs (formerly
// CohereForAI) aya-vision-8b (text: a Command R7B `cohere2` decoder) and aya-vision-32b (text:
// Aya Expanse 32B, a `cohere` decoder). Three parts, all held by the checkpoint and all counted:
//  - text_config: the Cohere / Cohere2 decoder (built by cohere.cpp's builders under
//    language_model.*), lm_head tied to the embedding unless tie_word_embeddings says otherwise.
//  - vision_config: a SigLIP tower (SiglipVisionModel, siglip.cpp; SigLIP2 so400m/14 weights in
//    the plain SigLIP layout) under vision_tower.vision_model, with its attention-pooling head
//    unless vision_use_head is false (the released configs say false).
//  - multi_modal_projector (AyaVisionMultiModalProjector): a pixel shuffle folds s x s patches
//    (s = downsample_factor) into one token of width D * s^2; then layernorm [D s^2] (w + b),
//    linear_1 (D s^2 -> A, biased), a SwiGLU that splits A into two halves, and linear_2
//    (A / 2 -> text hidden, biased), A = alignment_intermediate_size (default: text hidden).
// Tensor list: transformers models/aya_vision/modeling_aya_vision.py (modular_aya_vision.py),
// configuration_aya_vision.py, models/siglip/modeling_siglip.py.
// Derivation and published totals: tests/data/configs/SOURCES-vlm-wrappers.md.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_aya_vision(const ConfigReader& config) {
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  // AyaVisionConfig's default for a text_config without model_type changed across transformers
  // versions (llama, later cohere2), so the key is required rather than guessed.
  const std::optional<std::string> text_type = text.optional_string("model_type");
  if (!text_type) {
    text.fail("model_type",
              "is missing; transformers versions disagree on its default (llama or "
              "cohere2), so name the decoder (cohere or cohere2)");
  }
  ModelDescription model;
  if (*text_type == "cohere2") {
    model = build_cohere2(text);
  } else if (*text_type == "cohere") {
    model = build_cohere(text);
  } else {
    text.fail("model_type", fmt::format("= \"{}\" is not supported inside aya_vision (supported: "
                                        "cohere, cohere2)",
                                        *text_type));
  }
  model.family =
      fmt::format("Aya Vision ({} text decoder + SigLIP ViT + pixel-shuffle SwiGLU projector)",
                  *text_type == "cohere2" ? "Cohere2" : "Cohere");
  // The wrapper's dtype is the one the checkpoint was saved in.
  const std::string outer_dtype =
      config.optional_string("torch_dtype").value_or(config.optional_string("dtype").value_or(""));
  if (!outer_dtype.empty()) model.torch_dtype = outer_dtype;

  // The vision_config default model_type also changed across versions (clip_vision_model, later
  // siglip_vision_model); only a SigLIP tower matches the released checkpoints.
  const ConfigReader vision = config.child("vision_config");
  const std::optional<std::string> vision_type = vision.optional_string("model_type");
  if (vision_type != "siglip_vision_model") {
    vision.fail("model_type", vision_type
                                  ? fmt::format("= \"{}\" is not supported inside aya_vision "
                                                "(supported: siglip_vision_model)",
                                                *vision_type)
                                  : std::string("is missing; transformers versions disagree on its "
                                                "default, so name it (siglip_vision_model)"));
  }
  Stack tower = siglip_tower(vision,
                             {"vision_tower.vision_model", "vision_tower.vision_model.encoder",
                              SiglipDefaults{"SiglipVisionConfig", 768, 12, 3072, 12, 16, 224},
                              SiglipLayout::PoolingHead::unless_disabled},
                             model);
  const std::int64_t vision_hidden = tower.blocks.front().attention.input_dim;
  const auto vision_layers = static_cast<std::int64_t>(tower.blocks.size());

  const std::string strategy =
      config.optional_string("vision_feature_select_strategy").value_or("full");
  if (strategy != "default" && strategy != "full") {
    config.fail("vision_feature_select_strategy",
                fmt::format("= \"{}\"; transformers accepts \"default\" or \"full\"", strategy));
  }
  // The projector's layernorm is D * s^2 wide, so it takes exactly one hidden state: a list of
  // layers (concatenated by get_image_features) could not pass through it.
  std::int64_t feature_layer = -1;
  if (config.has("vision_feature_layer")) {
    const nlohmann::json& value = config.json().at("vision_feature_layer");
    if (!value.is_number_integer()) {
      config.fail("vision_feature_layer",
                  "must be one integer: the projector's layernorm takes "
                  "a single hidden state of the vision tower");
    }
    feature_layer = value.get<std::int64_t>();
    if (feature_layer < -(vision_layers + 1) || feature_layer > vision_layers) {
      config.fail("vision_feature_layer",
                  fmt::format("= {} names no hidden state of a {}-layer vision tower (valid: {} "
                              "to {})",
                              feature_layer, vision_layers, -(vision_layers + 1), vision_layers));
    }
  }
  const std::int64_t deepest =
      feature_layer < 0 ? vision_layers + 1 + feature_layer : feature_layer;
  // Hidden state k is the output of encoder layer k - 1 (0-based); state 0 is the embeddings.
  std::string unused = "post_layernorm";
  if (deepest == vision_layers - 1) {
    unused = fmt::format("encoder layer {} and post_layernorm", deepest);
  } else if (deepest < vision_layers - 1) {
    unused = fmt::format("encoder layers {} to {} and post_layernorm", deepest, vision_layers - 1);
  }
  model.notes.push_back(fmt::format(
      "vision tower: {} stored and counted but unused by the forward pass (the projector reads "
      "hidden state {} of 0..{})",
      unused, deepest, vision_layers));

  // pixel_shuffle reshapes the (image / patch)^2 patches into a square grid and folds s x s of
  // them together; the reshape fails unless s divides the patches per side.
  const std::int64_t scale = config.int_or({"downsample_factor"}, 2, 1, 64);
  const std::int64_t per_side =
      vision.int_or({"image_size"}, 224, 1, 1 << 20) / vision.int_or({"patch_size"}, 16, 1, 4096);
  if (per_side % scale != 0) {
    config.fail("downsample_factor",
                fmt::format("= {} does not divide the {} patches per image side (vision_config "
                            "image_size / patch_size)",
                            scale, per_side));
  }
  const std::int64_t text_hidden = model.hidden_size;
  const std::int64_t alignment =
      config.int_or({"alignment_intermediate_size"}, text_hidden, 2, k_max_width);
  if (alignment % 2 != 0) {
    config.fail(
        "alignment_intermediate_size",
        fmt::format("= {} is odd; the SwiGLU splits linear_1's output into two halves", alignment));
  }
  note_defaults(model, config, "AyaVisionConfig",
                {{"downsample_factor", "2"},
                 {"vision_feature_layer", "-1"},
                 {"alignment_intermediate_size", "text_config.hidden_size"}});

  const std::int64_t shuffled = checked_product({vision_hidden, scale, scale});
  model.extra_parameters.push_back(
      {"multi_modal_projector.layernorm", "vision", "LayerNorm", checked_mul(2, shuffled)});
  // nn.Linear weights [out, in], each with its bias.
  ExtraParameter linear_1{"multi_modal_projector.linear_1", "vision", "Linear",
                          checked_add(checked_mul(shuffled, alignment), alignment)};
  linear_1.shape = {alignment, shuffled};
  model.extra_parameters.push_back(std::move(linear_1));
  ExtraParameter linear_2{"multi_modal_projector.linear_2", "vision", "Linear",
                          checked_add(checked_mul(alignment / 2, text_hidden), text_hidden)};
  linear_2.shape = {text_hidden, alignment / 2};
  model.extra_parameters.push_back(std::move(linear_2));
  model.stacks.push_back(std::move(tower));
  return model;
}

}  // namespace trace::family
