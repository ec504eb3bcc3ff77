// GLM-V vision-language models (Zhipu / zai-org): glm4v (GLM-4.1V-9B-Thinking / -Base,
// GLM-4.6V-Flash: a GLM-4-0414 text decoder) and glm4v_moe (GLM-4.5V, GLM-4.6V: a GLM-4.5-Air
// MoE text decoder), both around the same AIMv2-derived ViT; glm46v is transformers' wrapper
// type that picks either text decoder by text_config.model_type.
//  - glm4v text (Glm4vTextModel): GQA with q/k/v biases and o_proj without, head_dim =
//    hidden / heads, fused gate_up_proj SwiGLU, four RMSNorms per layer (input, post_self_attn,
//    post_attention, post_mlp), untied lm_head. M-RoPE over partial rotary dims adds no tensor.
//  - glm4v_moe text (Glm4vMoeTextModel): GLM-4.5-Air's layers (pre-norm pair, first
//    first_k_dense_replace layers dense with unfused gate/up/down, then a sigmoid router with an
//    F32 e_score_correction_bias, n_routed_experts experts and n_shared_experts shared ones), but
//    no MTP layer: the model builds none and GLM-4.5V / GLM-4.6V checkpoints store none.
//  - vision (Glm4vVisionModel, same for both): patch_embed Conv3d [D, C, T, P, P] + bias,
//    post_conv_layernorm RMSNorm(D), embeddings.position_embedding [(image / P)^2, D], depth
//    blocks (norm1 / norm2 RMSNorm, attn.qkv [3D, D] (+ bias with attention_bias), attn.proj
//    [D, D] no bias, SwiGLU gate / up [O, D] and down [D, O] without biases, O = out_hidden_size),
//    post_layernorm RMSNorm(D), downsample Conv2d [O, D, m, m] + bias, merger: proj [O, O],
//    post_projection_norm LayerNorm(O), SwiGLU gate / up [I, O], down [O, I], no biases
//    (I = vision intermediate_size, the text model's FFN width in every release).
// Checkpoint names: model.language_model.*, model.visual.*, lm_head.weight.
// Tensor list: transformers models/glm4v/modeling_glm4v.py, models/glm4v_moe/modeling_glm4v_moe.py
// (derivations in tests/data/configs/SOURCES-glm4v.md).
#include <fmt/format.h>

#include <cmath>

#include "family.hpp"

namespace trace::family {

namespace {

// The text settings as an object this file may complete: text_config when present (GLM-4.5V and
// configs re-saved by newer transformers), else the top level, where GLM-4.1V's first
// config.json keeps them (Glm4vConfig builds its text config from the top-level keys then).
nlohmann::json text_settings(const ConfigReader& config, std::string& path) {
  nlohmann::json storage;
  if (config.has("text_config")) {
    (void)nested_text_config(config, storage);
    path = "text_config";
  } else {
    storage = config.json();
    storage.erase("vision_config");
    path.clear();
  }
  return storage;
}

// rope_parameters (transformers v5) or rope_scaling (older configs), when an object.
std::optional<ConfigReader> rope_settings(const ConfigReader& text) {
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (text.has(key) && text.json().at(key).is_object()) return text.child(key);
  }
  return std::nullopt;
}

// Rotary dims per head: head_dim x partial_rotary_factor (top level or in the rope settings).
// M-RoPE spreads the rotary frequencies (half the rotary dims) over time, height and width by
// mrope_section, so 2 x sum(mrope_section) must equal them; a config without the factor gets it
// from mrope_section, and without both the config classes' 0.5.
std::int64_t mrope_rotary_dims(const ConfigReader& text, std::int64_t head_dim,
                               ModelDescription& model) {
  const std::optional<ConfigReader> rope = rope_settings(text);
  std::optional<double> factor = text.optional_number("partial_rotary_factor");
  if (rope) {
    const std::optional<double> nested = rope->optional_number("partial_rotary_factor");
    if (factor && nested && *factor != *nested) {
      rope->fail("partial_rotary_factor",
                 fmt::format("= {} contradicts {} = {}; keep one value", *nested,
                             text.key_path("partial_rotary_factor"), *factor));
    }
    if (!factor) factor = nested;
  }
  std::optional<std::int64_t> frequencies;
  if (rope && rope->has("mrope_section")) {
    const nlohmann::json& list = rope->json().at("mrope_section");
    if (!list.is_array()) rope->fail("mrope_section", "must be a list of three integers");
    std::int64_t sum = 0;
    for (const nlohmann::json& entry : list) {
      if (!entry.is_number_integer() || entry.get<std::int64_t>() < 0 ||
          entry.get<std::int64_t>() > head_dim) {
        rope->fail("mrope_section", fmt::format("holds {}, not a section width", entry.dump()));
      }
      sum += entry.get<std::int64_t>();
    }
    frequencies = sum;
  }
  std::int64_t rotary = head_dim / 2;
  if (factor) {
    if (*factor <= 0.0 || *factor > 1.0) text.fail("partial_rotary_factor", "must lie in (0, 1]");
    rotary = static_cast<std::int64_t>(std::floor(static_cast<double>(head_dim) * *factor));
  } else if (frequencies) {
    rotary = 2 * *frequencies;
  } else {
    model.notes.push_back("partial_rotary_factor not set: 0.5 assumed, as the GLM-V configs set");
  }
  if (rotary % 2 != 0 || rotary > head_dim) {
    text.fail("partial_rotary_factor",
              fmt::format("gives {} rotary dims of a {}-wide head; they must be even and fit it",
                          rotary, head_dim));
  }
  if (frequencies && 2 * *frequencies != rotary) {
    rope->fail("mrope_section",
               fmt::format("sums to {}, but the {} rotary dims per head hold {} frequencies; "
                           "make them agree",
                           *frequencies, rotary, rotary / 2));
  }
  return rotary;
}

// Glm4vTextModel: GLM-4-0414's layer, but heads are always hidden / heads wide and q/k/v always
// carry biases (Glm4vTextAttention reads neither head_dim nor attention_bias).
ModelDescription glm4v_text(const ConfigReader& text) {
  ModelDescription model;
  const std::int64_t vocab = text.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = text.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = text.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = text.require_int({"intermediate_size"}, 1, k_max_width);
  HeadShape shape;
  shape.num_heads = text.require_int({"num_attention_heads"}, 1, k_max_heads);
  shape.num_kv_heads = text.int_or({"num_key_value_heads"}, 2, 1, k_max_heads);
  if (shape.num_kv_heads > shape.num_heads || shape.num_heads % shape.num_kv_heads != 0) {
    text.fail("num_key_value_heads", fmt::format("= {} does not divide num_attention_heads = {}",
                                                 shape.num_kv_heads, shape.num_heads));
  }
  if (hidden % shape.num_heads != 0) {
    text.fail("num_attention_heads",
              fmt::format("= {} does not divide hidden_size = {}; GLM-4.1V heads are "
                          "hidden_size / heads wide",
                          shape.num_heads, hidden));
  }
  shape.head_dim = hidden / shape.num_heads;
  if (const std::optional<std::int64_t> head_dim = text.optional_int({"head_dim"}, 1, k_max_width);
      head_dim && *head_dim != shape.head_dim) {
    text.fail("head_dim", fmt::format("= {}, but Glm4vTextAttention makes heads hidden_size / "
                                      "heads = {} wide; remove it or fix it",
                                      *head_dim, shape.head_dim));
  }
  if (!text.bool_or("attention_bias", true)) {
    text.fail("attention_bias", "is false, but Glm4vTextAttention always gives q/k/v biases");
  }
  fill_decoder_basics(model, text, vocab, hidden, false);
  model.position = PositionKind::rope;
  note_defaults(model, text, "Glm4vTextConfig",
                {{"num_key_value_heads", "2"}, {"tie_word_embeddings", "false"}});

  DecoderLayout layout;
  layout.norms = DecoderLayout::Norms::sandwich;  // the GLM-4-0414 names, as stored
  layout.qkv_bias = true;
  const std::string activation = text.optional_string("hidden_act").value_or("silu");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, true};
  layout.rotary_dim = mrope_rotary_dims(text, shape.head_dim, model);
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  return model;  // the rotary inv_freq buffers are non-persistent: never stored
}

// Glm4vMoeTextModel is GLM-4.5-Air's decoder (build_glm4_moe) under Glm4vMoeTextConfig's
// defaults, without QK-norm and without the MTP layer.
ModelDescription glm4v_moe_text(nlohmann::json& storage, const std::string& path,
                                const std::string& model_type) {
  static constexpr KeyDefault k_defaults[] = {{"first_k_dense_replace", 1},
                                              {"n_shared_experts", 1}};
  std::string defaults = fill_absent_keys(storage, k_defaults, " = ");
  if (!storage.contains("attention_bias") || storage.at("attention_bias").is_null()) {
    storage["attention_bias"] = true;
    defaults += fmt::format("{}attention_bias = true", defaults.empty() ? "" : ", ");
  }
  const ConfigReader text(storage, path, model_type);
  if (text.bool_or("use_qk_norm", false)) {
    text.fail("use_qk_norm", "is true, but Glm4vMoeTextAttention has no QK-norm; set it false");
  }
  std::string mtp_note;
  if (text.int_or({"num_nextn_predict_layers"}, 0, 0, 64) > 0) {
    mtp_note = fmt::format(
        "{} = {} ignored: Glm4vMoe builds no MTP layer and GLM-4.5V / "
        "GLM-4.6V checkpoints store none",
        text.key_path("num_nextn_predict_layers"), storage.at("num_nextn_predict_layers").dump());
    storage["num_nextn_predict_layers"] = 0;
  }
  ModelDescription model = build_glm4_moe(text);
  if (!defaults.empty()) {
    model.notes.push_back(fmt::format("Glm4vMoeTextConfig defaults used: {}", defaults));
  }
  if (!mtp_note.empty()) model.notes.push_back(mtp_note);
  // build_glm4_moe reads partial_rotary_factor at the top level only; M-RoPE configs may keep it
  // under rope_parameters.
  const std::int64_t head_dim = model.stacks.at(0).blocks.at(0).attention.head_dim;
  const std::int64_t rotary = mrope_rotary_dims(text, head_dim, model);
  for (Stack& stack : model.stacks) {
    for (Block& block : stack.blocks) block.attention.rotary_dim = rotary;
  }
  return model;
}

// Glm4vVisionModel: the tower's blocks as a stack, everything around them as extra tensors.
void add_glm4v_vision(const ConfigReader& vision, std::int64_t text_hidden, bool moe,
                      ModelDescription& model) {
  const std::int64_t hidden = vision.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t depth = vision.require_int({"depth"}, 1, k_max_layers);
  const std::int64_t heads = vision.require_int({"num_heads"}, 1, k_max_heads);
  const std::int64_t out = vision.require_int({"out_hidden_size"}, 1, k_max_width);
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t patch = vision.require_int({"patch_size"}, 1, 4096);
  const std::int64_t image = vision.int_or({"image_size"}, 336, 1, 1 << 20);
  const std::int64_t channels = vision.int_or({"in_channels"}, 3, 1, 64);
  const std::int64_t temporal = vision.int_or({"temporal_patch_size"}, 2, 1, 64);
  const std::int64_t merge = vision.int_or({"spatial_merge_size"}, 2, 1, 64);
  const bool qkv_bias = vision.bool_or("attention_bias", false);
  const std::string activation = vision.optional_string("hidden_act").value_or("silu");
  note_defaults(model, vision, moe ? "Glm4vMoeVisionConfig" : "Glm4vVisionConfig",
                {{"image_size", "336"},
                 {"in_channels", "3"},
                 {"temporal_patch_size", "2"},
                 {"spatial_merge_size", "2"},
                 {"attention_bias", "false"}});
  if (hidden % heads != 0) {
    vision.fail("num_heads", fmt::format("= {} does not divide hidden_size = {}", heads, hidden));
  }
  if (image < patch) {
    vision.fail("image_size", fmt::format("= {} is smaller than patch_size = {}", image, patch));
  }
  // The merger's output replaces image-token embeddings, so it must be the text width.
  if (out != text_hidden) {
    vision.fail("out_hidden_size", fmt::format("= {} differs from the text hidden_size {}; the "
                                               "merger writes text embeddings",
                                               out, text_hidden));
  }

  // Each with its stored weight shape (the tensor inventory's names; a bias where params hold
  // shape[0] more).
  const auto extra = [&model](std::string name, const char* op, std::int64_t params,
                              std::vector<std::int64_t> shape = {}) {
    model.extra_parameters.push_back({std::move(name), "vision", op, params, std::move(shape)});
  };
  const std::int64_t grid = image / patch;  // position table side, as (image // patch)^2
  extra("model.visual.patch_embed.proj", "Conv3d",
        checked_add(checked_product({hidden, channels, temporal, patch, patch}), hidden),
        {hidden, channels, temporal, patch, patch});
  extra("model.visual.post_conv_layernorm", "RMSNorm", hidden);
  extra("model.visual.embeddings.position_embedding", "Embedding",
        checked_product({grid, grid, hidden}), {checked_mul(grid, grid), hidden});
  add_glm_vision_merger(model, hidden, out, merge, intermediate);

  HeadShape shape;
  shape.num_heads = shape.num_kv_heads = heads;
  shape.head_dim = hidden / heads;
  Stack stack;
  stack.name = "visual";
  stack.causal = false;
  stack.vision = true;
  for (std::int64_t i = 0; i < depth; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, qkv_bias, false);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    // The blocks' SwiGLU is out_hidden_size wide (Glm4VisionMlp), not intermediate_size.
    block.mlp = Mlp{MlpKind::gated, activation, hidden, out, false, false, false};
    block.norms = {rms_norm("norm1", hidden), rms_norm("norm2", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("post_layernorm", hidden);
  model.stacks.push_back(std::move(stack));
}

constexpr const char* k_dense_family =
    "GLM-4.1V (GLM-4-0414 decoder with M-RoPE + ViT, Conv2d downsample, SwiGLU merger)";
constexpr const char* k_moe_family =
    "GLM-4.5V (GLM-4.5-Air MoE decoder with M-RoPE, no MTP + ViT, Conv2d downsample, SwiGLU "
    "merger)";

ModelDescription build_glm_v(const ConfigReader& config, bool moe) {
  std::string path;
  nlohmann::json storage = text_settings(config, path);
  ModelDescription model = moe ? glm4v_moe_text(storage, path, config.model_type())
                               : glm4v_text(ConfigReader(storage, path, config.model_type()));
  model.family = moe ? k_moe_family : k_dense_family;
  add_glm4v_vision(config.child("vision_config"), model.hidden_size, moe, model);
  return model;
}

}  // namespace

void add_glm_vision_merger(ModelDescription& model, std::int64_t hidden, std::int64_t out,
                           std::int64_t merge, std::int64_t projection) {
  // Each with its stored weight shape, as add_glm4v_vision's.
  const auto extra = [&model](std::string name, const char* op, std::int64_t params,
                              std::vector<std::int64_t> shape = {}) {
    model.extra_parameters.push_back({std::move(name), "vision", op, params, std::move(shape)});
  };
  extra("model.visual.downsample", "Conv2d",
        checked_add(checked_product({out, hidden, merge, merge}), out),
        {out, hidden, merge, merge});
  extra("model.visual.merger.proj", "Linear", checked_mul(out, out), {out, out});
  extra("model.visual.merger.post_projection_norm", "LayerNorm", checked_mul(2, out));
  extra("model.visual.merger.gate_proj", "Linear", checked_mul(projection, out), {projection, out});
  extra("model.visual.merger.up_proj", "Linear", checked_mul(projection, out), {projection, out});
  extra("model.visual.merger.down_proj", "Linear", checked_mul(out, projection), {out, projection});
}

ModelDescription build_glm4v(const ConfigReader& config) {
  return build_glm_v(config, false);
}

ModelDescription build_glm4v_moe(const ConfigReader& config) {
  return build_glm_v(config, true);
}

// Glm46VConfig builds its text and vision configs by their own model_type (glm4v_text by
// default) and, unlike Glm4vConfig, never from top-level keys, so text_config is required. The
// GLM-4.6V releases themselves are typed glm4v / glm4v_moe.
ModelDescription build_glm46v(const ConfigReader& config) {
  const ConfigReader text = config.child("text_config");
  const std::string text_type = text.optional_string("model_type").value_or("glm4v_text");
  if (text_type != "glm4v_text" && text_type != "glm4v_moe_text") {
    text.fail("model_type",
              fmt::format("is \"{}\"; expected \"glm4v_text\" or \"glm4v_moe_text\"", text_type));
  }
  return build_glm_v(config, text_type == "glm4v_moe_text");
}

}  // namespace trace::family
