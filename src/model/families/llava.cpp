// LLaVA wrappers (model_type llava, LlavaForConditionalGeneration: llava-hf/llava-1.5-7b-hf,
// llava-1.5-13b-hf, bakLlava-v1-hf; model_type llava_next, LlavaNextForConditionalGeneration:
// llava-hf/llava-v1.6-mistral-7b-hf, llava-v1.6-vicuna-7b/13b-hf, llava-v1.6-34b-hf; model_type
// llava_onevision, LlavaOnevisionForConditionalGeneration: llava-hf/llava-onevision-qwen2-0.5b /
// 7b / 72b-ov-hf and -si-hf). Three parts, all held by the checkpoint and all counted:
//  - text_config: a llama / mistral / qwen2 decoder (vicuna is llama), built by that family's
//    builder under language_model.*; keys it omits take that config class's defaults, as
//    transformers does (llava-1.5's text_config gives only vocab_size and max positions).
//  - vision_config: a CLIP vision tower (CLIPVisionModel, vision_tower.vision_model.*):
//    patch_embedding Conv2d(C -> D, P x P, no bias), class_embedding [D], position_embedding
//    [(image / P)^2 + 1, D], pre_layrnorm, encoder layers (layer_norm1, q/k/v/out_proj with
//    bias, layer_norm2, fc1 / fc2 with bias), post_layernorm. vision_feature_layer (-2) reads an
//    earlier layer's output, yet the checkpoint still stores every layer and post_layernorm
//    (llava-1.5-7b-hf: 686 tensors, 391 of them the full 24-layer tower).
//  - multi_modal_projector: linear_1 (D x feature layers -> text hidden), linear_2 (text hidden
//    -> text hidden), biased when multimodal_projector_bias (default true); llava_next and
//    llava_onevision add the image_newline vector [text hidden].
// llava_onevision differs in defaults and tower: text_config defaults to qwen2, the projector
// reads the last hidden state (vision_feature_layer -1), and the tower is a SigLIP one
// (SiglipVisionModel, siglip.cpp) with its attention-pooling head unless vision_use_head is
// false (the llava-hf conversions drop both that head and the last of So400m's 27 layers).
// Tensor lists: transformers models/llava/modeling_llava.py,
// models/llava_next/modeling_llava_next.py, models/llava_onevision/modeling_llava_onevision.py,
// models/clip/modeling_clip.py, models/siglip/modeling_siglip.py.
// Derivation and published totals: tests/data/configs/SOURCES-llava.md,
// SOURCES-vlm-wrappers.md (llava_onevision).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "family.hpp"

namespace trace::family {

namespace {

// The text config classes' __init__ defaults for the keys that size tensors.
constexpr std::array<KeyDefault, 5> k_llama_defaults{{
    {"vocab_size", 32'000},
    {"hidden_size", 4096},
    {"intermediate_size", 11'008},
    {"num_hidden_layers", 32},
    {"num_attention_heads", 32},
}};
constexpr std::array<KeyDefault, 6> k_mistral_defaults{{
    {"vocab_size", 32'000},
    {"hidden_size", 4096},
    {"intermediate_size", 14'336},
    {"num_hidden_layers", 32},
    {"num_attention_heads", 32},
    {"num_key_value_heads", 8},
}};
constexpr std::array<KeyDefault, 6> k_qwen2_defaults{{
    {"vocab_size", 151'936},
    {"hidden_size", 4096},
    {"intermediate_size", 22'016},
    {"num_hidden_layers", 32},
    {"num_attention_heads", 32},
    {"num_key_value_heads", 32},
}};

// CLIPVisionConfig.__init__ defaults (a CLIP ViT-B/32), for keys vision_config leaves out.
constexpr std::array<KeyDefault, 7> k_clip_defaults{{
    {"hidden_size", 768},
    {"intermediate_size", 3072},
    {"num_hidden_layers", 12},
    {"num_attention_heads", 12},
    {"num_channels", 3},
    {"image_size", 224},
    {"patch_size", 32},
}};


// The CLIP vision tower: its embeddings and pre/post LayerNorms as extra parameters (component
// "vision") and its encoder as a vision stack.
Stack clip_vision_tower(const ConfigReader& config, ModelDescription& model) {
  const ConfigReader given = config.child("vision_config");
  const std::string type = given.optional_string("model_type").value_or("clip_vision_model");
  if (type != "clip_vision_model") {
    given.fail("model_type", fmt::format("= \"{}\" is not supported inside {} yet (supported: "
                                         "clip_vision_model)",
                                         type, config.model_type()));
  }
  nlohmann::json storage = given.json();
  const std::string used = fill_absent_keys(storage, k_clip_defaults, " = ");
  const ConfigReader vision(storage, "vision_config", config.model_type());
  if (!used.empty()) {
    model.notes.push_back(fmt::format(
        "vision_config omits keys; transformers' CLIPVisionConfig defaults used: {}", used));
  }
  const std::int64_t hidden = vision.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = vision.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t channels = vision.require_int({"num_channels"}, 1, 64);
  const std::int64_t image = vision.require_int({"image_size"}, 1, 1 << 20);
  const std::int64_t patch = vision.require_int({"patch_size"}, 1, 4096);
  if (patch > image) {
    vision.fail("patch_size", fmt::format("= {} is larger than image_size = {}", patch, image));
  }
  // CLIPAttention: head_dim = hidden_size / num_attention_heads, which must divide evenly.
  const HeadShape shape = read_head_shape(vision, hidden, {"num_attention_heads"}, {}, false);
  const std::int64_t per_side = image / patch;  // CLIPVisionEmbeddings floors the ratio
  const std::int64_t positions = checked_add(checked_mul(per_side, per_side), 1);  // + class

  // (shapes as stored, for the tensor inventory: the Conv2d's [out, in, P, P], the bare
  // class_embedding [D], the position table [positions, D])
  model.extra_parameters.push_back({"vision_tower.vision_model.embeddings.patch_embedding",
                                    "vision",
                                    "Conv2d",
                                    checked_product({hidden, channels, patch, patch}),
                                    {hidden, channels, patch, patch}});
  model.extra_parameters.push_back({"vision_tower.vision_model.embeddings.class_embedding",
                                    "vision",
                                    "Parameter",
                                    hidden,
                                    {hidden},
                                    true});
  model.extra_parameters.push_back({"vision_tower.vision_model.embeddings.position_embedding",
                                    "vision",
                                    "Embedding",
                                    checked_mul(positions, hidden),
                                    {positions, hidden}});
  model.extra_parameters.push_back(
      {"vision_tower.vision_model.pre_layrnorm", "vision", "LayerNorm", checked_mul(2, hidden)});

  return vit_encoder_stack("vision_tower.vision_model.encoder", layers, shape, intermediate,
                           vision.optional_string("hidden_act").value_or("quick_gelu"));
}

// The hidden states the projector reads: how many it concatenates (1 for an index, the list's
// length for a list) and the deepest one (0 = the embeddings, L = the last layer's output).
// Each index must name one of the tower's L + 1 hidden states; `default_layer` (-2 for llava and
// llava_next, -1 for llava_onevision) applies when the key is absent.
struct FeatureLayers {
  std::int64_t count = 1;
  std::int64_t deepest = 0;
};
FeatureLayers feature_layers(const ConfigReader& config, std::int64_t vision_layers,
                             std::int64_t default_layer) {
  FeatureLayers result{1, vision_layers + 1 + default_layer};
  if (!config.has("vision_feature_layer")) return result;
  const nlohmann::json& value = config.json().at("vision_feature_layer");
  const auto resolve = [&](const nlohmann::json& index) {
    if (!index.is_number_integer()) {
      config.fail("vision_feature_layer", "must be an integer or a list of integers");
    }
    const auto layer = index.get<std::int64_t>();
    if (layer < -(vision_layers + 1) || layer > vision_layers) {
      config.fail("vision_feature_layer",
                  fmt::format("= {} names no hidden state of a {}-layer vision tower (valid: {} "
                              "to {})",
                              layer, vision_layers, -(vision_layers + 1), vision_layers));
    }
    return layer < 0 ? vision_layers + 1 + layer : layer;
  };
  if (!value.is_array()) {
    result.deepest = resolve(value);
    return result;
  }
  if (value.empty()) config.fail("vision_feature_layer", "is an empty list");
  result.count = static_cast<std::int64_t>(value.size());
  result.deepest = 0;
  for (const nlohmann::json& index : value) {
    result.deepest = std::max(result.deepest, resolve(index));
  }
  return result;
}

// What the three wrapper types differ in.
struct WrapperKind {
  const char* family;
  const char* config_class;
  const char* default_text_type;
  const char* default_feature_layer;  // as note_defaults prints it
  std::int64_t default_feature_index;
  bool siglip_tower;   // SiglipVisionModel (llava_onevision) rather than CLIPVisionModel
  bool image_newline;  // llava_next, llava_onevision
};

// The SigLIP tower llava_onevision puts under vision_tower (AutoModel of a siglip_vision_model
// vision_config); keys it omits take SiglipVisionConfig's defaults.
Stack siglip_vision_tower(const ConfigReader& config, ModelDescription& model) {
  const ConfigReader vision = config.child("vision_config");
  const std::string type = vision.optional_string("model_type").value_or("siglip_vision_model");
  if (type != "siglip_vision_model") {
    vision.fail("model_type", fmt::format("= \"{}\" is not supported inside {} yet (supported: "
                                          "siglip_vision_model)",
                                          type, config.model_type()));
  }
  return siglip_tower(vision,
                      {"vision_tower.vision_model", "vision_tower.vision_model.encoder",
                       SiglipDefaults{"SiglipVisionConfig", 768, 12, 3072, 12, 16, 224},
                       SiglipLayout::PoolingHead::unless_disabled},
                      model);
}

ModelDescription build_wrapper(const ConfigReader& config, const WrapperKind& kind) {
  ModelDescription model = build_wrapped_text(config, kind.default_text_type);
  model.family = kind.family;
  const std::string strategy =
      config.optional_string("vision_feature_select_strategy").value_or("default");
  if (strategy != "default" && strategy != "full") {
    config.fail("vision_feature_select_strategy",
                fmt::format("= \"{}\"; transformers accepts \"default\" or \"full\"", strategy));
  }

  // Pixtral-12B's HF upload (mistral-community/pixtral-12b) is a llava with a Pixtral tower.
  const bool pixtral = !kind.siglip_tower && config.has("vision_config") &&
                       config.child("vision_config").optional_string("model_type") == "pixtral";
  Stack tower = kind.siglip_tower ? siglip_vision_tower(config, model)
                : pixtral         ? pixtral_tower(config.child("vision_config"), model)
                                  : clip_vision_tower(config, model);
  const std::int64_t vision_hidden = tower.blocks.front().attention.input_dim;
  const auto vision_layers = static_cast<std::int64_t>(tower.blocks.size());
  const FeatureLayers features = feature_layers(config, vision_layers, kind.default_feature_index);
  note_defaults(model, config, kind.config_class,
                {{"vision_feature_layer", kind.default_feature_layer},
                 {"multimodal_projector_bias", "true"},
                 {"projector_hidden_act", "gelu"}});
  // The projector reads hidden states, which stop before post_layernorm; the layers past the
  // deepest one read do not run either. The checkpoint stores them all the same.
  // Hidden state k is the output of encoder layer k - 1 (0-based); state 0 is the embeddings.
  // (Pixtral's tower has no post_layernorm.)
  const char* post = pixtral ? "" : " and post_layernorm";
  std::string unused = pixtral ? "" : "post_layernorm";
  if (features.deepest == vision_layers - 1) {
    unused = fmt::format("encoder layer {}{}", vision_layers - 1, post);
  } else if (features.deepest < vision_layers - 1) {
    unused = fmt::format("encoder layers {} to {}{}", features.deepest, vision_layers - 1, post);
  }
  if (!unused.empty()) {
    model.notes.push_back(fmt::format(
        "vision tower: {} stored and counted but unused by the forward pass (the projector "
        "reads hidden state {} of 0..{})",
        unused, features.deepest, vision_layers));
  }

  const bool bias = config.bool_or("multimodal_projector_bias", true);
  const std::int64_t text_hidden = model.hidden_size;
  // nn.Linear weights stored [out, in]
  const auto linear = [bias](const char* name, std::int64_t in, std::int64_t out) {
    return ExtraParameter{
        name, "vision", "Linear", checked_add(checked_mul(in, out), bias ? out : 0), {out, in}};
  };
  const std::int64_t projector_in = checked_mul(vision_hidden, features.count);
  model.extra_parameters.push_back(
      linear("multi_modal_projector.linear_1", projector_in, text_hidden));
  model.extra_parameters.push_back(
      linear("multi_modal_projector.linear_2", text_hidden, text_hidden));
  if (kind.image_newline) {
    model.extra_parameters.push_back(
        {"image_newline", "vision", "Parameter", text_hidden, {text_hidden}, true});
  }
  model.stacks.push_back(std::move(tower));
  return model;
}

}  // namespace

ModelDescription build_wrapped_text(const ConfigReader& config, const char* default_type) {
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  const std::string type = text.optional_string("model_type").value_or(default_type);
  std::string used;
  std::string config_class;
  ModelDescription (*build)(const ConfigReader&) = nullptr;
  if (type == "llama") {
    used = fill_absent_keys(storage, k_llama_defaults, " = ");
    if (!storage.contains("max_position_embeddings")) {
      storage["max_position_embeddings"] = 2048;
      used += fmt::format("{}max_position_embeddings = 2048", used.empty() ? "" : ", ");
    }
    config_class = "LlamaConfig";
    build = build_llama;
  } else if (type == "mistral") {
    used = fill_absent_keys(storage, k_mistral_defaults, " = ");
    if (!storage.contains("max_position_embeddings")) {
      storage["max_position_embeddings"] = 131'072;
      used += fmt::format("{}max_position_embeddings = 131072", used.empty() ? "" : ", ");
    }
    // MistralConfig slides 4096 tokens unless the key is there (an explicit null turns it off).
    if (!storage.contains("sliding_window")) {
      storage["sliding_window"] = 4096;
      used += fmt::format("{}sliding_window = 4096", used.empty() ? "" : ", ");
    }
    config_class = "MistralConfig";
    build = build_mistral;
  } else if (type == "qwen2") {
    used = fill_absent_keys(storage, k_qwen2_defaults, " = ");
    if (!storage.contains("max_position_embeddings")) {
      storage["max_position_embeddings"] = 32'768;
      used += fmt::format("{}max_position_embeddings = 32768", used.empty() ? "" : ", ");
    }
    config_class = "Qwen2Config";
    build = build_qwen2;
  } else {
    text.fail("model_type",
              fmt::format("= \"{}\" is not supported inside {} yet (supported: llama, mistral, "
                          "qwen2)",
                          type, config.model_type()));
  }
  ModelDescription model = build(text);
  if (!used.empty()) {
    model.notes.push_back(
        fmt::format("text_config ({}) omits keys; transformers' {} defaults used: {}", type,
                    config_class, used));
  }
  // LlavaForConditionalGeneration exists since transformers 4.36, after RoPE inv_freq became a
  // non-persistent buffer (4.31): no llava checkpoint saved by transformers holds it.
  model.stored_extras.clear();
  // The wrapper's dtype is the one the checkpoint was saved in; text_config's is inherited from
  // the base LLM (llava-v1.6-mistral: bfloat16 there, float16 weights).
  const std::string outer_dtype =
      config.optional_string("torch_dtype").value_or(config.optional_string("dtype").value_or(""));
  if (!outer_dtype.empty()) model.torch_dtype = outer_dtype;
  // The deprecated top-level vocab_size is ignored by transformers; text_config's sizes the
  // embedding.
  if (const std::optional<std::int64_t> outer = config.optional_int({"vocab_size"}, 1, k_max_vocab);
      outer && *outer != model.vocab_size) {
    model.notes.push_back(fmt::format(
        "top-level vocab_size = {} ignored; the embedding has text_config.vocab_size = {} rows",
        *outer, model.vocab_size));
  }
  return model;
}

ModelDescription build_llava(const ConfigReader& config) {
  return build_wrapper(config, {"LLaVA (text decoder + CLIP ViT + MLP projector)", "LlavaConfig",
                                "llama", "-2", -2, false, false});
}

ModelDescription build_llava_next(const ConfigReader& config) {
  return build_wrapper(config,
                       {"LLaVA-NeXT (text decoder + CLIP ViT, any-resolution tiles, MLP projector)",
                        "LlavaNextConfig", "llama", "-2", -2, false, true});
}

// LLaVA-NeXT-Video (llava-hf/LLaVA-NeXT-Video-7B-hf): LLaVA-NeXT's tensors plus the video
// pooler (LlavaNextVideoPooler), which holds a Conv2d(vision width -> spatial_pool_out_channels,
// kernel = stride = spatial_pool_stride) only in spatial_pool_mode "conv"; "average" and "max"
// (every published model: average) hold nothing.
// Tensor list: transformers models/llava_next_video/modular_llava_next_video.py.
ModelDescription build_llava_next_video(const ConfigReader& config) {
  ModelDescription model = build_wrapper(
      config,
      {"LLaVA-NeXT-Video (text decoder + CLIP ViT, image tiles and pooled video frames, MLP "
       "projector)",
       "LlavaNextVideoConfig", "llama", "-2", -2, false, true});
  const std::string mode = config.optional_string("spatial_pool_mode").value_or("average");
  if (mode == "conv") {
    const std::int64_t vision =
        config.child("vision_config").require_int({"hidden_size"}, 1, k_max_width);
    const std::int64_t stride = config.int_or({"spatial_pool_stride"}, 2, 1, 64);
    const std::int64_t out = config.int_or({"spatial_pool_out_channels"}, vision, 1, k_max_width);
    model.extra_parameters.push_back(
        {"vision_resampler.pool", "vision", "Conv2d",
         checked_add(checked_product({vision, out, stride, stride}), out)});
  } else if (mode != "average" && mode != "max") {
    config.fail("spatial_pool_mode", fmt::format("= \"{}\"; expected average, max or conv", mode));
  }
  return model;
}

ModelDescription build_llava_onevision(const ConfigReader& config) {
  // LlavaOnevisionConfig defaults vision_feature_select_strategy to "full", which keeps every
  // patch; the check in build_wrapper accepts either value, and neither sizes a tensor.
  return build_wrapper(
      config, {"LLaVA-OneVision (text decoder + SigLIP ViT, any-resolution tiles, MLP projector)",
               "LlavaOnevisionConfig", "qwen2", "-1", -1, true, true});
}

}  // namespace trace::family
