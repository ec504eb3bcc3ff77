// InternVL chat models (model_type internvl_chat, remote code InternVLChatModel): OpenGVLab
// InternVL-Chat-V1-5, Mini-InternVL-Chat-2B/4B-V1-5, InternVL2-1B/2B/4B/8B/26B/40B/76B,
// InternVL2_5-1B..78B (and their MPO variants), InternVL3-1B/2B/8B/14B/38B/78B, InternVL3_5-1B..
// 241B-A28B (Qwen3 / Qwen3-MoE text) and InternVL3_5-GPT-OSS-20B-A4B-Preview. Three parts, all
// held by the checkpoint and all counted:
//  - vision_config (InternVisionConfig, model_type intern_vit_6b): InternViT-300M or InternViT-6B
//    under vision_model.*: embeddings.patch_embedding Conv2d(3 -> d, p x p) with bias,
//    embeddings.class_embedding [1, 1, d], embeddings.position_embedding [1, (image / p)^2 + 1, d];
//    per encoder layer norm1 / norm2 (LayerNorm or RMSNorm by norm_type), attn.qkv [3d, d]
//    (biased when qkv_bias), optional attn.q_norm / k_norm (RMSNorm over all heads, d wide),
//    attn.proj [d, d] + bias, mlp.fc1 / fc2 with biases, and the layer-scale vectors ls1 / ls2
//    [d]. No final norm.
//  - mlp1: LayerNorm(d * k^2) -> Linear(d * k^2 -> text hidden) -> GELU -> Linear(text hidden ->
//    text hidden), all biased, where k = int(1 / downsample_ratio) (the pixel shuffle folds k x k
//    patches into one token). Stored as mlp1.0, mlp1.1, mlp1.3.
//  - llm_config: the text model picked by llm_config.architectures[0] (Qwen2ForCausalLM,
//    InternLM2ForCausalLM, LlamaForCausalLM, Phi3ForCausalLM; InternVL3.5's Qwen3ForCausalLM,
//    Qwen3MoeForCausalLM, GptOssForCausalLM), built by that family's builder and stored under
//    language_model.*; its lm_head is never tied (see below).
// Tensor lists: OpenGVLab/InternVL internvl_chat/internvl/model/internvl_chat/
// modeling_intern_vit.py, modeling_internvl_chat.py, configuration_intern_vit.py,
// configuration_internvl_chat.py (the same files ship as remote code in every Hub repo; the
// InternVL3.5 copies add Qwen3 / Qwen3-MoE, and internvl_chat_gpt_oss/ builds any llm_config
// through AutoModelForCausalLM).
// Derivation and published totals: tests/data/configs/SOURCES-internvl.md (InternVL3.5:
// SOURCES-internvl_hf.md).
#include <fmt/format.h>

#include <cmath>

#include "family.hpp"

namespace trace::family {

// ---- shared with internvl_hf.cpp (transformers' InternVLForConditionalGeneration holds the
// same tower and projector under other names); it declares these two at its top ----

// One InternViT encoder layer: norm -> attention over the full width (q/k/v biased when
// qkv_bias, optional QK-norm, biased output projection) -> norm -> biased fc1 -> fc2. Its
// layer-scale vectors are listed by the caller. `hf_names`: transformers' spelling (attention
// with q/k/v_proj, layernorm_before / layernorm_after) instead of the remote code's (attn with
// one fused qkv, norm1 / norm2).
Block intern_vit_layer(std::int64_t hidden, std::int64_t heads, std::int64_t intermediate,
                       bool qkv_bias, bool qk_norm, bool rms_norms, const std::string& activation,
                       bool hf_names) {
  const HeadShape shape{heads, heads, hidden / heads};
  Block block;
  block.attention = self_attention(hidden, shape, qkv_bias, true);  // proj always biased
  block.attention.name = hf_names ? "attention" : "attn";
  block.attention.fused_qkv = !hf_names;
  if (qk_norm) {
    // InternRMSNorm over the flattened heads (d wide), RMSNorm whatever norm_type says.
    block.attention.q_norm = rms_norm("q_norm", hidden);
    block.attention.k_norm = rms_norm("k_norm", hidden);
  }
  block.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, true, true, false};
  const auto norm = [&](const char* name) {
    return rms_norms ? rms_norm(name, hidden) : layer_norm(name, hidden);
  };
  block.norms = {norm(hf_names ? "layernorm_before" : "norm1"),
                 norm(hf_names ? "layernorm_after" : "norm2")};
  return block;
}

// The pixel-shuffle projector: LayerNorm(d * k^2) -> Linear(d * k^2 -> text hidden) -> GELU ->
// Linear(text hidden -> text hidden), all biased, k = int(1 / downsample_ratio). `rows` x
// `columns` is the tower's patch grid, which the shuffle must shrink to whole rows and columns.
void add_pixel_shuffle_projector(const ConfigReader& config, std::int64_t vision_hidden,
                                 std::int64_t rows, std::int64_t columns, bool hf_names,
                                 ModelDescription& model) {
  const double ratio = config.optional_number("downsample_ratio").value_or(0.5);
  if (!(ratio > 0.0) || ratio > 1.0) {
    config.fail("downsample_ratio", fmt::format("= {} must lie in (0, 1]", ratio));
  }
  const auto fold = static_cast<std::int64_t>(std::floor(1.0 / ratio));
  // pixel_shuffle reshapes the patch grid by the ratio; it fails unless the grid shrinks to
  // whole rows (and columns).
  for (const std::int64_t side : {rows, columns}) {
    const double shrunk = static_cast<double>(side) * ratio;
    if (shrunk != std::floor(shrunk)) {
      config.fail("downsample_ratio",
                  fmt::format("= {} does not divide the {} patches per image side (vision_config "
                              "image_size / patch_size) into whole rows",
                              ratio, side));
    }
  }
  const std::int64_t folded = checked_product({vision_hidden, fold, fold});
  const std::int64_t text_hidden = model.hidden_size;
  model.extra_parameters.push_back({hf_names ? "multi_modal_projector.layer_norm" : "mlp1.0",
                                    "vision", "LayerNorm", checked_mul(2, folded)});
  model.extra_parameters.push_back({hf_names ? "multi_modal_projector.linear_1" : "mlp1.1",
                                    "vision",
                                    "Linear",
                                    checked_add(checked_mul(folded, text_hidden), text_hidden),
                                    {text_hidden, folded}});
  model.extra_parameters.push_back({hf_names ? "multi_modal_projector.linear_2" : "mlp1.3",
                                    "vision",
                                    "Linear",
                                    checked_add(checked_mul(text_hidden, text_hidden), text_hidden),
                                    {text_hidden, text_hidden}});
}

namespace {

// The text model InternVLChatConfig builds for llm_config.architectures[0]; it accepts no other.
ModelDescription build_llm(const ConfigReader& config) {
  const ConfigReader given = config.child("llm_config");
  const std::string architecture = first_architecture(given);
  ModelDescription (*build)(const ConfigReader&) = nullptr;
  const char* text_type = "";
  if (architecture == "Qwen2ForCausalLM") {
    build = build_qwen2;
    text_type = "qwen2";
  } else if (architecture == "InternLM2ForCausalLM") {
    build = build_internlm2;
    text_type = "internlm2";
  } else if (architecture == "LlamaForCausalLM") {
    build = build_llama;
    text_type = "llama";
  } else if (architecture == "Phi3ForCausalLM") {
    build = build_phi3;
    text_type = "phi3";
  } else if (architecture == "Qwen3ForCausalLM") {  // InternVL3.5 dense
    build = build_qwen3;
    text_type = "qwen3";
  } else if (architecture == "Qwen3MoeForCausalLM") {  // InternVL3.5-30B-A3B, 241B-A28B
    build = build_qwen3_moe;
    text_type = "qwen3_moe";
  } else if (architecture == "GptOssForCausalLM") {  // InternVL3.5-GPT-OSS-20B-A4B-Preview
    build = build_gpt_oss;
    text_type = "gpt_oss";
  }
  if (build == nullptr) {
    given.fail("architectures",
               fmt::format("names \"{}\"; InternVLChatConfig builds only Qwen2ForCausalLM, "
                           "InternLM2ForCausalLM, LlamaForCausalLM, Phi3ForCausalLM, "
                           "Qwen3ForCausalLM, Qwen3MoeForCausalLM or GptOssForCausalLM",
                           architecture));
  }
  nlohmann::json storage = given.json();
  // InternVLChatConfig sets tie_word_embeddings = False on itself and on llm_config for every
  // size, so language_model.lm_head (or InternLM2's output) is always stored apart.
  const bool tie_asked =
      given.bool_or("tie_word_embeddings", false) || config.bool_or("tie_word_embeddings", false);
  storage["tie_word_embeddings"] = false;
  if (!storage.contains("torch_dtype") && !storage.contains("dtype")) {
    if (config.has("torch_dtype"))
      storage["torch_dtype"] = config.json().at("torch_dtype");
    else if (config.has("dtype"))
      storage["dtype"] = config.json().at("dtype");
  }
  const ConfigReader text(storage, "llm_config", config.model_type());
  ModelDescription model = build(text);
  model.text_model_type = text_type;
  // The release checkpoints were saved by transformers >= 4.37, whose rotary inv_freq buffers
  // are non-persistent (InternLM2's and Phi-3's remote code register them so too).
  model.stored_extras.clear();
  if (tie_asked) {
    model.notes.push_back(
        "tie_word_embeddings = true ignored: InternVLChatConfig forces it false, so the text "
        "model's lm_head is stored apart");
  }
  return model;
}

struct VisionShape {
  std::int64_t hidden = 0;
  std::int64_t per_side = 0;  ///< patches per image side (image_size / patch_size)
};

// InternViT: embeddings as extra parameters (component "vision"), the encoder as a vision stack.
VisionShape add_intern_vit(const ConfigReader& config, ModelDescription& model) {
  const ConfigReader vision = config.child("vision_config");
  const std::string type = vision.optional_string("model_type").value_or("intern_vit_6b");
  if (type != "intern_vit_6b") {
    vision.fail("model_type", fmt::format("= \"{}\"; InternVLChatConfig reads vision_config as an "
                                          "InternVisionConfig (intern_vit_6b)",
                                          type));
  }
  // InternVisionConfig.__init__ defaults: an InternViT-6B at 224 px.
  note_defaults(model, vision, "InternVisionConfig",
                {{"hidden_size", "3200"},
                 {"num_hidden_layers", "48"},
                 {"num_attention_heads", "25"},
                 {"intermediate_size", "12800"},
                 {"patch_size", "14"},
                 {"image_size", "224"},
                 {"qkv_bias", "false"},
                 {"qk_normalization", "true"},
                 {"norm_type", "rms_norm"},
                 {"hidden_act", "gelu"}});
  const std::int64_t hidden = vision.int_or({"hidden_size"}, 3200, 1, k_max_width);
  const std::int64_t layers = vision.int_or({"num_hidden_layers"}, 48, 1, k_max_layers);
  const std::int64_t intermediate = vision.int_or({"intermediate_size"}, 12'800, 1, k_max_width);
  const std::int64_t patch = vision.int_or({"patch_size"}, 14, 1, 4096);
  const std::int64_t image = vision.int_or({"image_size"}, 224, 1, 1 << 20);
  if (image < patch) {
    vision.fail("image_size",
                fmt::format("= {} is smaller than patch_size {}: no patch fits", image, patch));
  }
  const std::int64_t heads = vision.int_or({"num_attention_heads"}, 25, 1, k_max_heads);
  if (hidden % heads != 0) {
    vision.fail("num_attention_heads",
                fmt::format("= {} does not divide hidden_size {} (InternAttention requires it)",
                            heads, hidden));
  }
  const bool qkv_bias = vision.bool_or("qkv_bias", false);
  const bool qk_norm = vision.bool_or("qk_normalization", true);
  const std::string norm_type = vision.optional_string("norm_type").value_or("rms_norm");
  if (norm_type != "rms_norm" && norm_type != "layer_norm") {
    vision.fail("norm_type",
                fmt::format("= \"{}\"; InternViT knows rms_norm or layer_norm", norm_type));
  }
  // The patch Conv2d is built with in_channels = 3 whatever num_channels says.
  if (const std::optional<std::int64_t> channels = vision.optional_int({"num_channels"}, 1, 64);
      channels && *channels != 3) {
    model.notes.push_back(fmt::format(
        "vision_config.num_channels = {} ignored: InternVisionEmbeddings builds its patch Conv2d "
        "with 3 input channels",
        *channels));
  }

  // The position table is sized by vision_config.image_size (force_image_size does not resize
  // it); one extra row for the class token.
  const std::int64_t per_side = image / patch;
  const std::int64_t positions = checked_add(checked_mul(per_side, per_side), 1);
  // At their stored shapes: the Conv2d with its bias, the bare class and position parameters.
  const auto extra = [&model](std::string name, const char* op, std::int64_t params,
                              std::vector<std::int64_t> shape = {}, bool bare = false) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, params, std::move(shape), bare});
  };
  extra("vision_model.embeddings.patch_embedding", "Conv2d",
        checked_add(checked_product({hidden, 3, patch, patch}), hidden), {hidden, 3, patch, patch});
  extra("vision_model.embeddings.class_embedding", "Parameter", hidden, {1, 1, hidden}, true);
  extra("vision_model.embeddings.position_embedding", "Parameter", checked_mul(positions, hidden),
        {1, positions, hidden}, true);
  // Layer scale: ls1 and ls2 [d] per layer multiply the attention and MLP branches. They are
  // neither norms nor projections, so they are listed here rather than inside the blocks.
  extra("vision_model.encoder.layers.*.ls1/ls2", "LayerScale",
        checked_product({2, hidden, layers}));

  const std::string activation = vision.optional_string("hidden_act").value_or("gelu");
  Stack stack;
  stack.name = "vision_model.encoder";
  stack.causal = false;
  stack.vision = true;
  stack.blocks.assign(static_cast<std::size_t>(layers),
                      intern_vit_layer(hidden, heads, intermediate, qkv_bias, qk_norm,
                                       norm_type == "rms_norm", activation, false));
  model.stacks.push_back(std::move(stack));
  model.notes.push_back(fmt::format(
      "vision tower: InternViT ({} layers, d {}, {}, {}qkv bias, {}QK-norm, layer scale)", layers,
      hidden, norm_type == "rms_norm" ? "RMSNorm" : "LayerNorm", qkv_bias ? "" : "no ",
      qk_norm ? "" : "no "));

  // select_layer picks one of the L + 1 hidden states; -1 is the last layer's output.
  const std::int64_t select = config.int_or({"select_layer"}, -1, -(layers + 1), layers);
  const std::int64_t state = select < 0 ? layers + 1 + select : select;
  if (state < layers) {
    model.notes.push_back(fmt::format(
        "vision tower: encoder layers {} to {} stored and counted but unused by the forward pass "
        "(select_layer = {} reads hidden state {} of 0..{})",
        state, layers - 1, select, state, layers));
  }
  return {hidden, per_side};
}

}  // namespace

ModelDescription build_internvl_chat(const ConfigReader& config) {
  // LoRA wrapping at construction adds PEFT adapter tensors this description does not model.
  for (const char* key : {"use_backbone_lora", "use_llm_lora"}) {
    if (config.int_or({key}, 0, 0, 1 << 20) != 0) {
      config.fail(key,
                  "is non-zero: InternVLChatModel then wraps that part in PEFT LoRA "
                  "adapters, which trace does not model; merge the adapters and set it to 0");
    }
  }
  ModelDescription model = build_llm(config);
  model.family = "InternVL (InternViT + pixel-shuffle MLP projector + " + model.family + ")";
  model.tie_word_embeddings = false;
  // The wrapper's dtype is the one the checkpoint was saved in.
  const std::string outer_dtype =
      config.optional_string("torch_dtype").value_or(config.optional_string("dtype").value_or(""));
  if (!outer_dtype.empty()) model.torch_dtype = outer_dtype;
  note_defaults(model, config, "InternVLChatConfig",
                {{"downsample_ratio", "0.5"}, {"select_layer", "-1"}});

  const VisionShape vision = add_intern_vit(config, model);

  // mlp1's width: d * int(1 / downsample_ratio)^2, as InternVLChatModel computes it.
  add_pixel_shuffle_projector(config, vision.hidden, vision.per_side, vision.per_side, false,
                              model);
  return model;
}

}  // namespace trace::family
