// InternVL in transformers (model_type internvl, InternVLForConditionalGeneration): OpenGVLab
// InternVL3-1B/2B/8B/9B/14B/38B/78B-hf, InternVL2_5-*-MPO-hf and InternVL3_5-1B..241B-A28B-HF,
// InternVL3_5-GPT-OSS-20B-A4B-Preview-HF. The remote-code internvl_chat model (internvl.cpp) with
// its tensors renamed and split; each part is held by the checkpoint and counted:
//  - vision_config (InternVLVisionConfig, internvl_vision) under vision_tower.*:
//    embeddings.cls_token [1, 1, d], optional mask_token [1, 1, d] (use_mask_token),
//    patch_embeddings.projection Conv2d(num_channels -> d, patch) with bias, position_embeddings
//    [1, patches + 1, d] (use_absolute_position_embeddings); per encoder.layer.N:
//    layernorm_before / layernorm_after (LayerNorm or RMSNorm by norm_type), attention.q/k/v_proj
//    [d, d] (biased when attention_bias), optional attention.q_norm / k_norm (RMSNorm over all
//    heads, use_qk_norm), attention.projection_layer [d, d] + bias, mlp.fc1 / fc2 with biases,
//    lambda_1 / lambda_2 [d]; then layernorm (a LayerNorm, only when use_mean_pooling is false).
//  - multi_modal_projector: layer_norm(d * k^2), linear_1 (d * k^2 -> text hidden), linear_2
//    (text hidden -> text hidden), all biased, k = int(1 / downsample_ratio).
//  - text_config: a qwen2 / qwen3 / qwen3_moe / gpt_oss / llama decoder (InternVLConfig reads
//    "qwen2" when model_type is absent), built by that family's builder under language_model.*.
// The checkpoints name them vision_tower.*, multi_modal_projector.*, language_model.model.* and
// language_model.lm_head (InternVL3_5-8B-HF index); transformers >= 4.52 loads these as
// model.vision_tower / model.multi_modal_projector / model.language_model and lm_head.
// Tensor list: transformers models/internvl/modeling_internvl.py, configuration_internvl.py.
// Derivation and published totals: tests/data/configs/SOURCES-internvl_hf.md.
#include <fmt/format.h>

#include <utility>

#include "family.hpp"

namespace trace::family {

namespace {

// The text decoder through the builder of text_config.model_type.
ModelDescription build_text(const ConfigReader& config) {
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  const std::string type = text.optional_string("model_type").value_or("qwen2");
  ModelDescription (*build)(const ConfigReader&) = nullptr;
  if (type == "qwen2")
    build = build_qwen2;  // InternVL3 (Qwen2.5), InternVL2_5-1B/4B/38B/78B-MPO
  else if (type == "qwen3")
    build = build_qwen3;  // InternVL3.5 dense
  else if (type == "qwen3_moe")
    build = build_qwen3_moe;  // InternVL3.5-30B-A3B, 241B-A28B
  else if (type == "gpt_oss")
    build = build_gpt_oss;  // InternVL3.5-GPT-OSS-20B-A4B-Preview
  else if (type == "llama")
    build = build_llama;  // InternVL3-9B (InternLM3), InternVL2_5-2B/8B/26B-MPO (InternLM2)
  if (build == nullptr) {
    text.fail("model_type",
              fmt::format("= \"{}\" is not supported inside internvl yet (supported: qwen2, "
                          "qwen3, qwen3_moe, gpt_oss, llama)",
                          type));
  }
  ModelDescription model = build(text);
  if (!text.has("model_type")) {
    model.notes.push_back("text_config.model_type absent: InternVLConfig reads it as qwen2");
  }
  // InternVLForConditionalGeneration exists since transformers 4.52, long after rotary inv_freq
  // became a non-persistent buffer (4.31): no internvl checkpoint stores it.
  model.stored_extras.clear();
  return model;
}

// InternVLVisionConfig maps the remote code's spellings onto its own (attribute_map); a config
// may carry either, not both with different values.
nlohmann::json vision_keys(const ConfigReader& given) {
  nlohmann::json storage = given.json();
  for (const auto& [key, legacy] :
       {std::pair{"attention_bias", "qkv_bias"}, std::pair{"use_qk_norm", "qk_normalization"}}) {
    if (!given.has(legacy)) continue;
    if (given.has(key) && given.bool_or(key, false) != given.bool_or(legacy, false)) {
      given.fail(legacy, fmt::format("= {} contradicts {} = {} (InternVLVisionConfig reads {} as "
                                     "{}); keep one",
                                     given.bool_or(legacy, false), key, given.bool_or(key, false),
                                     legacy, key));
    }
    storage[key] = storage.at(legacy);
  }
  return storage;
}

// image_size / patch_size: an int (square) or [height, width], as InternVLVisionConfig takes.
std::pair<std::int64_t, std::int64_t> read_size(const ConfigReader& vision, const char* key,
                                                std::int64_t fallback, std::int64_t max) {
  if (!vision.has(key)) return {fallback, fallback};
  const nlohmann::json& value = vision.json().at(key);
  if (!value.is_array()) {
    const std::int64_t side = vision.require_int({key}, 1, max);
    return {side, side};
  }
  const auto side = [&](std::size_t index) {
    const nlohmann::json& item = value.at(index);
    if (!item.is_number_integer() || item.get<std::int64_t>() < 1 ||
        item.get<std::int64_t>() > max) {
      vision.fail(key, fmt::format("= {} must hold integers in 1..{}", value.dump(), max));
    }
    return item.get<std::int64_t>();
  };
  if (value.size() != 2) {
    vision.fail(key, fmt::format("= {} must be an integer or [height, width]", value.dump()));
  }
  return {side(0), side(1)};
}

struct VisionShape {
  std::int64_t hidden = 0;
  std::int64_t rows = 0;     ///< patches down the image (image height / patch height)
  std::int64_t columns = 0;  ///< patches across
};

// The InternVLVisionModel tower: embeddings, layer scale and the optional final LayerNorm as
// extra parameters (component "vision"), the encoder as a vision stack.
VisionShape add_vision_tower(const ConfigReader& config, ModelDescription& model) {
  const ConfigReader given = config.child("vision_config");
  const std::string type = given.optional_string("model_type").value_or("internvl_vision");
  if (type != "internvl_vision") {
    given.fail("model_type", fmt::format("= \"{}\"; InternVLConfig reads vision_config as an "
                                         "InternVLVisionConfig (internvl_vision)",
                                         type));
  }
  const nlohmann::json storage = vision_keys(given);
  const ConfigReader vision(storage, "vision_config", config.model_type());
  // InternVLVisionConfig defaults: InternViT-300M at 448 px.
  note_defaults(model, vision, "InternVLVisionConfig",
                {{"hidden_size", "1024"},
                 {"num_hidden_layers", "24"},
                 {"num_attention_heads", "16"},
                 {"intermediate_size", "4096"},
                 {"attention_bias", "false"},
                 {"use_qk_norm", "false"},
                 {"norm_type", "layer_norm"},
                 {"hidden_act", "gelu"},
                 {"image_size", "[448, 448]"},
                 {"patch_size", "[14, 14]"},
                 {"num_channels", "3"},
                 {"use_mask_token", "false"},
                 {"use_absolute_position_embeddings", "true"},
                 {"use_mean_pooling", "true"}});
  const std::int64_t hidden = vision.int_or({"hidden_size"}, 1024, 1, k_max_width);
  const std::int64_t layers = vision.int_or({"num_hidden_layers"}, 24, 1, k_max_layers);
  const std::int64_t intermediate = vision.int_or({"intermediate_size"}, 4096, 1, k_max_width);
  const std::int64_t heads = vision.int_or({"num_attention_heads"}, 16, 1, k_max_heads);
  if (hidden % heads != 0) {
    vision.fail("num_attention_heads",
                fmt::format("= {} does not divide hidden_size {} (InternVLVisionAttention "
                            "requires it)",
                            heads, hidden));
  }
  const std::int64_t channels = vision.int_or({"num_channels"}, 3, 1, 64);
  const auto [image_h, image_w] = read_size(vision, "image_size", 448, 1 << 20);
  const auto [patch_h, patch_w] = read_size(vision, "patch_size", 14, 4096);
  if (image_h < patch_h || image_w < patch_w) {
    vision.fail("image_size", fmt::format("= {} x {} is smaller than patch_size {} x {}: no "
                                          "patch fits",
                                          image_h, image_w, patch_h, patch_w));
  }
  const bool qkv_bias = vision.bool_or("attention_bias", false);
  const bool qk_norm = vision.bool_or("use_qk_norm", false);
  const std::string norm_type = vision.optional_string("norm_type").value_or("layer_norm");
  if (norm_type != "rms_norm" && norm_type != "layer_norm") {
    vision.fail("norm_type", fmt::format("= \"{}\"; InternVLVisionLayer knows rms_norm or "
                                         "layer_norm",
                                         norm_type));
  }

  // The position table is sized by image_size: one row per patch plus the class token.
  const std::int64_t rows = image_h / patch_h;
  const std::int64_t columns = image_w / patch_w;
  // At their stored shapes: the Conv2d with its bias, the bare token and position parameters.
  const auto extra = [&model](const char* name, const char* op, std::int64_t params,
                              std::vector<std::int64_t> shape = {}, bool bare = false) {
    model.extra_parameters.push_back({name, "vision", op, params, std::move(shape), bare});
  };
  extra("vision_tower.embeddings.patch_embeddings.projection", "Conv2d",
        checked_add(checked_product({hidden, channels, patch_h, patch_w}), hidden),
        {hidden, channels, patch_h, patch_w});
  extra("vision_tower.embeddings.cls_token", "Parameter", hidden, {1, 1, hidden}, true);
  if (vision.bool_or("use_mask_token", false)) {
    extra("vision_tower.embeddings.mask_token", "Parameter", hidden, {1, 1, hidden}, true);
  }
  if (vision.bool_or("use_absolute_position_embeddings", true)) {
    const std::int64_t positions = checked_add(checked_mul(rows, columns), 1);
    extra("vision_tower.embeddings.position_embeddings", "Parameter",
          checked_mul(positions, hidden), {1, positions, hidden}, true);
  }
  // Layer scale: lambda_1 and lambda_2 [d] per layer scale the attention and MLP branches; they
  // exist whatever layer_scale_init_value is. Neither norms nor projections, so listed here.
  extra("vision_tower.encoder.layer.*.lambda_1/lambda_2", "LayerScale",
        checked_product({2, hidden, layers}));
  // use_mean_pooling (the release configs) replaces the final LayerNorm with an identity.
  if (!vision.bool_or("use_mean_pooling", true)) {
    extra("vision_tower.layernorm", "LayerNorm", checked_mul(2, hidden));
  }

  Stack stack;
  stack.name = "vision_tower.encoder";
  stack.causal = false;
  stack.vision = true;
  stack.blocks.assign(
      static_cast<std::size_t>(layers),
      intern_vit_layer(hidden, heads, intermediate, qkv_bias, qk_norm, norm_type == "rms_norm",
                       vision.optional_string("hidden_act").value_or("gelu"), true));
  model.stacks.push_back(std::move(stack));
  model.notes.push_back(fmt::format(
      "vision tower: InternViT ({} layers, d {}, {}, {}qkv bias, {}QK-norm, layer scale)", layers,
      hidden, norm_type == "rms_norm" ? "RMSNorm" : "LayerNorm", qkv_bias ? "" : "no ",
      qk_norm ? "" : "no "));
  if (rows != columns) {
    model.notes.push_back(fmt::format(
        "vision tower: a {} x {} patch grid; InternVLModel reshapes the image features to a "
        "square grid, so its forward pass needs square tiles",
        rows, columns));
  }

  // vision_feature_layer (alias select_layer) picks one of the L + 1 hidden states; -1 is the
  // last layer's output.
  const std::int64_t select =
      config.int_or({"vision_feature_layer", "select_layer"}, -1, -(layers + 1), layers);
  const std::int64_t state = select < 0 ? layers + 1 + select : select;
  if (state < layers) {
    const std::string unused = state == layers - 1
                                   ? fmt::format("encoder layer {}", state)
                                   : fmt::format("encoder layers {} to {}", state, layers - 1);
    model.notes.push_back(
        fmt::format("vision tower: {} stored and counted but unused by the forward pass "
                    "(vision_feature_layer = {} reads hidden state {} of 0..{})",
                    unused, select, state, layers));
  }
  return {hidden, rows, columns};
}

}  // namespace

ModelDescription build_internvl(const ConfigReader& config) {
  ModelDescription model = build_text(config);
  model.family = "InternVL (InternViT + pixel-shuffle MLP projector + " + model.family + ")";
  // The wrapper's dtype is the one the checkpoint was saved in.
  const std::string outer_dtype =
      config.optional_string("torch_dtype").value_or(config.optional_string("dtype").value_or(""));
  if (!outer_dtype.empty()) model.torch_dtype = outer_dtype;
  note_defaults(model, config, "InternVLConfig",
                {{"downsample_ratio", "0.5"},
                 {"vision_feature_layer", "-1"},
                 {"vision_feature_select_strategy", "default"}});
  const std::string strategy =
      config.optional_string("vision_feature_select_strategy").value_or("default");
  if (strategy != "default" && strategy != "full") {
    config.fail("vision_feature_select_strategy",
                fmt::format("= \"{}\"; transformers accepts \"default\" or \"full\"", strategy));
  }

  const VisionShape vision = add_vision_tower(config, model);
  add_pixel_shuffle_projector(config, vision.hidden, vision.rows, vision.columns, true, model);
  return model;
}

}  // namespace trace::family
