// The Gemma 3 multimodal wrapper (model_type gemma3): text_config (a gemma3_text model), a
// SigLIP vision tower (vision_config) and the multi-modal projector. The checkpoint holds all
// three, so all three are counted.
//  - SigLIP: patch_embedding Conv2d(3 -> d, p x p) with bias, a learned position table of
//    (image_size / patch_size)^2 rows, encoder layers (layer_norm1/2 with bias, q/k/v/out_proj
//    with bias, fc1/fc2 with bias), post_layernorm; no pooling head (vision_use_head false).
//  - projector: mm_input_projection_weight (vision d x text d) and mm_soft_emb_norm (vision d).
// Keys absent from text_config take transformers' Gemma3TextConfig defaults, as transformers
// itself does when it loads the checkpoint; each default used is listed in the report's notes.
// Tensor lists: transformers models/gemma3/modeling_gemma3.py, models/siglip/modeling_siglip.py.
#include <array>
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// transformers Gemma3TextConfig.__init__ defaults.
constexpr std::array<KeyDefault, 7> k_text_defaults{{
    {"vocab_size", 262'208},
    {"num_attention_heads", 8},
    {"num_key_value_heads", 4},
    {"head_dim", 256},
    {"sliding_window", 4096},
    {"sliding_window_pattern", 6},
    {"max_position_embeddings", 131'072},
}};

}  // namespace

ModelDescription build_gemma3(const ConfigReader& config) {
  const ConfigReader text = config.child("text_config");
  nlohmann::json text_json = text.json();
  const std::string defaults_used = fill_absent_keys(text_json, k_text_defaults, "=");
  if (!text.has("tie_word_embeddings") && config.has("tie_word_embeddings")) {
    text_json["tie_word_embeddings"] = config.json().at("tie_word_embeddings");
  }
  ModelDescription model =
      build_gemma3_text(ConfigReader(text_json, "text_config", config.model_type()));
  model.family = "Gemma 3 multimodal (Gemma 3 text decoder + SigLIP vision tower + projector)";
  if (!defaults_used.empty()) {
    model.notes.push_back(fmt::format(
        "text_config omits keys; transformers' Gemma3TextConfig defaults used: {}",
        defaults_used));
  }
  if (model.torch_dtype.empty()) model.torch_dtype = read_torch_dtype(config);

  const ConfigReader vision = config.child("vision_config");
  // Gemma3Config reads every tower size from vision_config and builds no pooling head.
  Stack tower = siglip_tower(
      vision, {"vision_tower", "vision_tower", std::nullopt, SiglipLayout::PoolingHead::refused},
      model);
  const std::int64_t vision_hidden = tower.blocks.front().attention.input_dim;
  // A bare [vision d, text d] Parameter the projector multiplies from the right.
  model.extra_parameters.push_back({"multi_modal_projector.mm_input_projection_weight",
                                    "vision",
                                    "Linear",
                                    checked_mul(vision_hidden, model.hidden_size),
                                    {vision_hidden, model.hidden_size},
                                    true});
  model.extra_parameters.push_back(
      {"multi_modal_projector.mm_soft_emb_norm", "vision", "RMSNorm", vision_hidden});
  model.stacks.push_back(std::move(tower));
  return model;
}

}  // namespace trace::family
