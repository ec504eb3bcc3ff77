// PaliGemma (model_type paligemma, PaliGemmaForConditionalGeneration): google/paligemma-3b-pt-224,
// paligemma-3b-mix-224 / -448 / -896 (text_config a Gemma 1 `gemma` decoder) and PaliGemma 2,
// google/paligemma2-3b / 10b / 28b-pt / mix-224 / 448 / 896 (text_config a `gemma2` decoder).
// Three parts, all held by the checkpoint and all counted:
//  - text_config: the Gemma / Gemma 2 decoder (built by the gemma builders); lm_head is tied to
//    embed_tokens unless tie_word_embeddings says otherwise.
//  - vision_config: a SigLIP vision tower (SiglipVisionModel): patch_embedding Conv2d(c -> d,
//    p x p) with bias, a learned position table of (image_size / patch_size)^2 rows, encoder
//    layers (layer_norm1/2 with bias, q/k/v/out_proj with bias, fc1/fc2 with bias) and
//    post_layernorm. The attention-pooling head only when vision_use_head is true or absent (the
//    released configs all say false).
//  - multi_modal_projector.linear: Linear(vision d -> projection_dim) with bias, projection_dim
//    being the wrapper's key (PaliGemmaConfig copies it into the vision config).
// Tensor lists: transformers models/paligemma/modeling_paligemma.py, configuration_paligemma.py,
// models/siglip/modeling_siglip.py, configuration_siglip.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_paligemma(const ConfigReader& config) {
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  // PaliGemmaConfig: a text_config without model_type is a GemmaConfig.
  const std::string text_type = text.optional_string("model_type").value_or("gemma");
  ModelDescription model;
  if (text_type == "gemma") {
    model = build_gemma(text);
    model.family = "PaliGemma (Gemma text decoder + SigLIP vision tower + linear projector)";
  } else if (text_type == "gemma2") {
    model = build_gemma2(text);
    model.family = "PaliGemma 2 (Gemma 2 text decoder + SigLIP vision tower + linear projector)";
  } else {
    text.fail("model_type", fmt::format("= \"{}\" is not supported inside paligemma (supported: "
                                        "gemma, gemma2)",
                                        text_type));
  }
  note_defaults(model, text, "PaliGemmaConfig (text_config)", {{"model_type", "gemma"}});

  const ConfigReader vision = config.child("vision_config");
  const std::string vision_type =
      vision.optional_string("model_type").value_or("siglip_vision_model");
  if (vision_type != "siglip_vision_model") {
    vision.fail("model_type", fmt::format("= \"{}\" is not supported inside paligemma (supported: "
                                          "siglip_vision_model)",
                                          vision_type));
  }
  Stack tower =
      siglip_tower(vision,
                   {"vision_tower.vision_model", "vision_tower.vision_model.encoder",
                    SiglipDefaults{"SiglipVisionConfig", 768, 12, 3072, 12, 16, 224},
                    SiglipLayout::PoolingHead::unless_disabled},
                   model);
  const std::int64_t vision_hidden = tower.blocks.front().attention.input_dim;

  // The projector writes image tokens into the text embedding stream, so its width must be the
  // text hidden size. PaliGemmaConfig overwrites vision_config.projection_dim with its own.
  note_defaults(model, config, "PaliGemmaConfig", {{"projection_dim", "2048"}});
  const std::int64_t projection = config.int_or({"projection_dim"}, 2048, 1, k_max_width);
  if (projection != model.hidden_size) {
    config.fail("projection_dim",
                fmt::format("= {} differs from text_config.hidden_size {}; the projected image "
                            "tokens join the text embeddings, so they must match",
                            projection, model.hidden_size));
  }
  model.extra_parameters.push_back({"multi_modal_projector.linear",
                                    "vision",
                                    "Linear",
                                    checked_add(checked_mul(vision_hidden, projection), projection),
                                    {projection, vision_hidden}});
  model.stacks.push_back(std::move(tower));
  return model;
}

}  // namespace trace::family
