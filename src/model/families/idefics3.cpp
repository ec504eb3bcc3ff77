// Idefics3 (model_type idefics3): HuggingFaceM4/Idefics3-8B-Llama3, HuggingFaceTB/SmolVLM-Instruct,
// SmolVLM-256M / 500M-Instruct, SmolDocling-256M-preview (Idefics3ForConditionalGeneration), and
// SmolVLM2 (model_type smolvlm): HuggingFaceTB/SmolVLM2-2.2B-Instruct, SmolVLM2-256M / 500M-Video-
// Instruct (SmolVLMForConditionalGeneration). SmolVLM subclasses every Idefics3 module unchanged
// (it only rewrites how image tokens are merged), and SmolVLMConfig / SmolVLMVisionConfig keep
// Idefics3's defaults, so one builder serves both types.
// Three parts, all held by the checkpoint and all counted:
//  - vision_config (Idefics3VisionConfig, whatever its model_type says): a SigLIP-layout tower
//    model.vision_model: patch_embedding Conv2d(c -> d, p x p) with bias, a learned position
//    table of (image_size / patch_size)^2 rows, encoder layers (layer_norm1/2, q/k/v/out_proj,
//    fc1/fc2, all biased) and post_layernorm. No pooling head.
//  - model.connector.modality_projection.proj: Linear(d * s^2 -> text hidden, no bias), after the
//    pixel shuffle that folds s x s patches (s = scale_factor) into one token.
//  - text_config: a Llama decoder (model.text_model) and lm_head [vocab, text hidden], stored
//    apart unless tie_word_embeddings.
// Keys the config leaves out take Idefics3Config / Idefics3VisionConfig defaults (note that the
// vision defaults are not SiglipVisionConfig's); each one used is listed in the report's notes.
// Tensor lists: transformers models/idefics3/modeling_idefics3.py, configuration_idefics3.py,
// models/smolvlm/modular_smolvlm.py, configuration_smolvlm.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// What differs between the two model types: only names (the layout and defaults are shared).
struct Idefics3Names {
  const char* model_type;
  const char* family;
  const char* config_class;
  const char* vision_config_class;
};

ModelDescription build_idefics3_like(const ConfigReader& config, const Idefics3Names& names) {
  const ConfigReader raw_text = config.child("text_config");
  // transformers versions differ on which of the two keys ties lm_head (the wrapper's, or
  // text_config's through get_text_config); a config where they disagree has no one reading.
  if (raw_text.has("tie_word_embeddings") && config.has("tie_word_embeddings") &&
      raw_text.bool_or("tie_word_embeddings", false) !=
          config.bool_or("tie_word_embeddings", false)) {
    config.fail("tie_word_embeddings",
                "disagrees with text_config.tie_word_embeddings; make the two agree");
  }
  const std::string text_type = raw_text.optional_string("model_type").value_or("llama");
  if (text_type != "llama") {
    raw_text.fail("model_type", fmt::format("= \"{}\" is not supported inside {} "
                                            "(supported: llama)",
                                            text_type, names.model_type));
  }
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  ModelDescription model = build_llama(text);
  model.family = names.family;
  // The wrapper's dtype is the one the checkpoint was saved in; text_config's may be the base
  // LLM's (SmolVLM2-500M-Video-Instruct: text_config bfloat16, float32 weights).
  const std::string outer_dtype =
      config.optional_string("torch_dtype").value_or(config.optional_string("dtype").value_or(""));
  if (!outer_dtype.empty()) model.torch_dtype = outer_dtype;
  // Idefics3 arrived in transformers 4.45, long after RoPE buffers stopped being saved.
  model.stored_extras.clear();
  if (!raw_text.has("tie_word_embeddings") && !config.has("tie_word_embeddings")) {
    model.notes.push_back(fmt::format(
        "tie_word_embeddings absent: {} default false (lm_head stored apart)", names.config_class));
  }
  note_defaults(model, config, names.config_class, {{"scale_factor", "2"}});

  const ConfigReader vision = config.child("vision_config");
  // Idefics3VisionConfig's defaults differ from SiglipVisionConfig's; its tower has no head.
  Stack tower =
      siglip_tower(vision,
                   {"model.vision_model", "model.vision_model.encoder",
                    SiglipDefaults{names.vision_config_class, 1152, 12, 3072, 16, 32, 224},
                    SiglipLayout::PoolingHead::never},
                   model);
  const std::int64_t vision_hidden = tower.blocks.front().attention.input_dim;

  // Pixel shuffle regroups the (image / patch)^2 patches s x s at a time; the reshape fails
  // unless s divides the patches per side.
  const std::int64_t scale = config.int_or({"scale_factor"}, 2, 1, 64);
  const std::int64_t per_side =
      vision.int_or({"image_size"}, 224, 1, 1 << 20) / vision.int_or({"patch_size"}, 32, 1, 4096);
  if (per_side % scale != 0) {
    config.fail("scale_factor", fmt::format("= {} does not divide the {} patches per image side "
                                            "(vision_config image_size / patch_size)",
                                            scale, per_side));
  }
  // (a bias-free nn.Linear, stored [out, in])
  model.extra_parameters.push_back(
      {"model.connector.modality_projection.proj",
       "vision",
       "Linear",
       checked_product({vision_hidden, scale, scale, model.hidden_size}),
       {model.hidden_size, checked_product({vision_hidden, scale, scale})}});
  model.stacks.push_back(std::move(tower));
  return model;
}

}  // namespace

ModelDescription build_idefics3(const ConfigReader& config) {
  return build_idefics3_like(
      config,
      {"idefics3",
       "Idefics3 (Llama text decoder + SigLIP-layout vision tower + pixel-shuffle projector)",
       "Idefics3Config", "Idefics3VisionConfig"});
}

ModelDescription build_smolvlm(const ConfigReader& config) {
  return build_idefics3_like(
      config,
      {"smolvlm",
       "SmolVLM2 (Llama text decoder + SigLIP-layout vision tower + pixel-shuffle projector)",
       "SmolVLMConfig", "SmolVLMVisionConfig"});
}

}  // namespace trace::family
