// DeepSeek-VL2 (model_type deepseek_vl_v2, remote code DeepseekVLV2ForCausalLM):
// deepseek-ai/deepseek-vl2-tiny, deepseek-vl2-small and deepseek-vl2. Four parts, all stored in
// the checkpoint and all counted:
//  - language.*: language_config, a DeepSeek-V2 MoE decoder (DeepseekV2ForCausalLM of the repo's
//    modeling_deepseek.py). use_mla true (Small, base): MLA as in DeepSeek-V2, built by the
//    deepseek builder. use_mla false (Tiny): transformers' LlamaAttention (q/k/v/o_proj, heads
//    hidden / num_attention_heads wide) with the same MoE, built by the DeepSeekMoE builder. A
//    noaux_tc router stores e_score_correction_bias (the base model).
//  - vision.*: a timm-layout SigLIP ViT (siglip_vit.py VisionTransformer): patch_embed.proj
//    Conv2d(3 -> w, p x p) + bias, pos_embed [1, (image / p)^2, w], blocks.N.{norm1, attn.qkv
//    [3w, w] + bias, attn.proj + bias, norm2, mlp.fc1 [int(w * mlp_ratio), w] + bias, mlp.fc2},
//    norm, and for global_pool "map" the attention-pooling head attn_pool.{latent [1, 1, w],
//    q, kv [2w, w], proj, norm, mlp.fc1, mlp.fc2} (built, hence stored, although ignore_head
//    keeps the forward pass from using it).
//  - projector.layers.*: MlpProjector; downsample_mlp_gelu concatenates each r x r group of
//    patches (input_dim r^2 wide) before Linear -> GELU -> ... -> Linear(n_embed).
//  - image_newline [n_embed] and view_seperator [n_embed] (the checkpoint's spelling) for
//    tile_tag "2D".
// DeepSeek-OCR (architectures DeepseekOCRForCausalLM, the same model_type; its vision_config.width
// is an object of two sub-towers) swaps the SigLIP tower for DeepEncoder, every tensor under
// model.*: sam_model, a SAM ViT-B (patch_embed Conv2d 3 -> w, 16 x 16 + bias; pos_embed
// [1, 64, 64, w]; blocks of LayerNorms, qkv [3w, w] + bias, proj + bias, mlp.lin1 / lin2 (4w) +
// bias and decomposed relative positions rel_pos_h / rel_pos_w [2 s - 1, w / heads] with s = 14
// on windowed blocks and 64 on global_attn_indexes; neck Conv 1 x 1 w -> 256 and 3 x 3 256 -> 256
// without bias, each followed by a LayerNorm2d; net_2 / net_3 3 x 3 convs to downsample_channels
// without bias), and vision_model, a CLIP-L/14 at 224 (class_embedding, bias-free patch conv,
// (224 / 14)^2 + 1 positions, pre_layrnorm, layers with a fused biased qkv_proj, out_proj, fc1 /
// fc2 (4w) and LayerNorms; no post-norm). The projector reads CLIP's and SAM's features side by
// side (input_dim = CLIP width + the last downsample channel count). The sub-towers' image size,
// patch, window and MLP ratio are fixed in DeepSeek-OCR's code (deepencoder.py), not read.
// Keys the config leaves out take VisionEncoderConfig / MlpProjectorConfig / DeepseekV2Config
// defaults as the remote config classes set them (the published configs rely on several: no
// vision heads or image_size, no projector type, and the base model's language_config has no
// num_hidden_layers or num_attention_heads); each one used is listed in the notes.
// Tensor list: deepseek-ai/DeepSeek-VL2 deepseek_vl2/models/modeling_deepseek_vl_v2.py,
// siglip_vit.py (with timm's AttentionPoolLatent), modeling_deepseek.py, configuration_deepseek.py.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "family.hpp"

namespace trace::family {

namespace {

// configuration_deepseek.py DeepseekV2Config.__init__ defaults for every size this builder reads.
constexpr std::array<KeyDefault, 9> k_text_defaults{{
    {"vocab_size", 102'400},
    {"hidden_size", 4096},
    {"intermediate_size", 11'008},
    {"moe_intermediate_size", 1407},
    {"num_hidden_layers", 30},
    {"num_attention_heads", 32},
    {"max_position_embeddings", 2048},
    {"first_k_dense_replace", 0},
    {"moe_layer_freq", 1},
}};
constexpr std::array<KeyDefault, 5> k_mla_defaults{{
    {"kv_lora_rank", 512},
    {"q_lora_rank", 1536},
    {"qk_rope_head_dim", 64},
    {"qk_nope_head_dim", 128},
    {"v_head_dim", 128},
}};

// Sets the keys `object` does not contain at all. Unlike fill_absent_keys an explicit null stays:
// DeepseekV2Config keeps q_lora_rank = None (no query LoRA) and n_routed_experts = None (dense).
void fill_missing(nlohmann::json& object, std::span<const KeyDefault> defaults, std::string& used) {
  for (const KeyDefault& fallback : defaults) {
    if (object.contains(fallback.key)) continue;
    object[fallback.key] = fallback.value;
    used += fmt::format("{}{} = {}", used.empty() ? "" : ", ", fallback.key, fallback.value);
  }
}

std::int64_t linear(std::int64_t in, std::int64_t out) {
  return checked_add(checked_mul(in, out), out);
}

// The language model: DeepseekV2ForCausalLM with either attention.
ModelDescription build_language(const ConfigReader& config, const ConfigReader& language) {
  nlohmann::json text = language.json();
  const bool mla = language.bool_or("use_mla", true);
  std::string used;
  fill_missing(text, k_text_defaults, used);
  if (mla) {
    fill_missing(text, k_mla_defaults, used);
  } else if (!language.has("num_key_value_heads")) {
    // DeepseekV2Config: num_key_value_heads None means one kv head per query head.
    text["num_key_value_heads"] = text.at("num_attention_heads");
    used += fmt::format("{}num_key_value_heads = num_attention_heads", used.empty() ? "" : ", ");
  }
  // DeepseekV2ForCausalLM reads tie_word_embeddings from language_config (default false).
  if (!language.has("tie_word_embeddings")) text["tie_word_embeddings"] = false;
  if (!language.has("torch_dtype") && !language.has("dtype")) {
    if (config.has("torch_dtype"))
      text["torch_dtype"] = config.json().at("torch_dtype");
    else if (config.has("dtype"))
      text["dtype"] = config.json().at("dtype");
  }
  // The repo's DeepseekV2Model builds no MTP layer, whatever the key says.
  const std::int64_t declared_mtp = language.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  text.erase("num_nextn_predict_layers");

  const ConfigReader reader(text, "language_config", config.model_type());
  ModelDescription model = mla ? build_deepseek(reader) : build_deepseek_moe(reader);
  if (!mla) {
    // build_deepseek_moe names its defaults after DeepseekConfig; here they are DeepseekV2Config's
    // (the same values), listed below. Its router never holds the noaux_tc correction bias.
    std::erase_if(model.notes, [](const std::string& note) {
      return note.starts_with("DeepseekConfig default");
    });
    if (language.optional_string("topk_method").value_or("") == "noaux_tc") {
      for (Stack& stack : model.stacks) {
        for (Block& block : stack.blocks) {
          if (block.moe) block.moe->router_correction_bias = true;
        }
      }
    }
  }
  if (!used.empty()) {
    model.notes.push_back(
        fmt::format("language_config omits keys; DeepseekV2Config defaults "
                    "used: {}",
                    used));
  }
  if (declared_mtp > 0) {
    model.notes.push_back(
        fmt::format("language_config.num_nextn_predict_layers = {} is not counted: DeepSeek-VL2's "
                    "DeepseekV2Model builds no MTP layer",
                    declared_mtp));
  }
  model.family =
      fmt::format("DeepSeek-VL2 (SigLIP-SO400M tower + DeepSeek-V2 MoE text decoder, {})",
                  mla ? "MLA" : "multi-head attention");
  return model;
}

// siglip_vit.py VisionTransformer as DeepseekVLV2ForCausalLM builds it from vision_config.
Stack vision_tower(const ConfigReader& vision, ModelDescription& model) {
  if (vision.json().contains("width") && vision.json().at("width").is_object()) {
    vision.fail("width",
                "is an object of sub-towers (DeepSeek-OCR's SAM + CLIP encoder); only "
                "DeepSeek-VL2's single SigLIP tower is supported");
  }
  const std::int64_t width = vision.int_or({"width"}, 1024, 1, k_max_width);
  const std::int64_t layers = vision.int_or({"layers"}, 24, 1, k_max_layers);
  const std::int64_t heads = vision.int_or({"heads"}, 16, 1, k_max_heads);
  const std::int64_t patch = vision.int_or({"patch_size"}, 16, 1, 4096);
  const std::int64_t image = vision.int_or({"image_size"}, 384, 1, 1 << 20);
  const double ratio = vision.optional_number("mlp_ratio").value_or(4.0);
  if (!(ratio > 0.0 && ratio <= 64.0)) vision.fail("mlp_ratio", "must lie in (0, 64]");
  const bool class_token = vision.bool_or("class_token", false);
  const std::string pool = vision.optional_string("global_pool").value_or("map");
  if (pool != "map" && pool != "avg" && pool != "token" && !pool.empty()) {
    vision.fail("global_pool", fmt::format("= \"{}\"; timm accepts \"\", \"avg\", \"token\" or "
                                           "\"map\"",
                                           pool));
  }
  if (pool == "token" && !class_token) {
    vision.fail("global_pool", "= \"token\" needs class_token = true");
  }
  if (width % heads != 0) {
    vision.fail("heads", fmt::format("= {} does not divide width {}", heads, width));
  }
  if (image < patch) {
    vision.fail("image_size", fmt::format("= {} is smaller than patch_size {}", image, patch));
  }
  note_defaults(model, vision, "VisionEncoderConfig",
                {{"width", "1024"},
                 {"layers", "24"},
                 {"heads", "16"},
                 {"patch_size", "16"},
                 {"image_size", "384"},
                 {"mlp_ratio", "4"},
                 {"global_pool", "\"map\""},
                 {"class_token", "false"}});
  // timm's Mlp: hidden_features = int(dim * mlp_ratio), truncated (1152 x 3.7362 -> 4304).
  const auto intermediate = static_cast<std::int64_t>(static_cast<double>(width) * ratio);
  const std::int64_t grid = image / patch;  // timm PatchEmbed: img_size // patch_size per side
  const std::int64_t positions = checked_add(checked_mul(grid, grid), class_token ? 1 : 0);

  // Each at its stored shape (timm's modules; a bias beside where the count holds one), bare
  // nn.Parameters under their own names.
  const auto extra = [&](std::string name, const char* op, std::int64_t params,
                         std::vector<std::int64_t> shape = {}, bool bare = false) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, params, std::move(shape), bare});
  };
  const auto biased = [&](std::string name, std::int64_t in, std::int64_t out) {
    extra(std::move(name), "Linear", linear(in, out), {out, in});
  };
  extra("vision.patch_embed.proj", "Conv2d",
        checked_add(checked_product({width, 3, patch, patch}), width), {width, 3, patch, patch});
  extra("vision.pos_embed", "Parameter", checked_mul(positions, width), {1, positions, width},
        true);
  if (class_token) extra("vision.cls_token", "Parameter", width, {1, 1, width}, true);
  if (pool == "map") {
    extra("vision.attn_pool.latent", "Parameter", width, {1, 1, width}, true);
    biased("vision.attn_pool.q", width, width);
    biased("vision.attn_pool.kv", width, 2 * width);
    biased("vision.attn_pool.proj", width, width);
    extra("vision.attn_pool.norm", "LayerNorm", 2 * width);
    biased("vision.attn_pool.mlp.fc1", width, intermediate);
    biased("vision.attn_pool.mlp.fc2", intermediate, width);
    model.notes.push_back(
        "vision.attn_pool (the SigLIP attention-pooling head) is built and stored, so it is "
        "counted, although ignore_head keeps DeepSeek-VL2 from running it");
  }

  const HeadShape shape{heads, heads, width / heads};
  Stack stack = vit_encoder_stack("vision", layers, shape, intermediate, "gelu_pytorch_tanh");
  for (Block& block : stack.blocks) {
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.norms[0].name = "norm1";
    block.norms[1].name = "norm2";
  }
  // global_pool "avg" moves the final LayerNorm after pooling (fc_norm); same tensors.
  stack.final_norm->name = pool == "avg" ? "fc_norm" : "norm";
  return stack;
}

// DeepSeek-OCR's DeepEncoder (see the header): returns the width the projector reads.
std::int64_t add_deep_encoder(const ConfigReader& vision, ModelDescription& model) {
  const ConfigReader towers = vision.child("width");
  const ConfigReader sam = towers.child("sam_vit_b");
  const ConfigReader clip = towers.child("clip-l-14-224");
  // Each at its stored shape (a bias of shape[0] beside where the count holds one), bare
  // nn.Parameters under their own names, as DeepSeek-OCR's safetensors listing has them.
  const auto extra = [&](std::string name, const char* op, std::int64_t params,
                         std::vector<std::int64_t> shape = {}, bool bare = false) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, params, std::move(shape), bare});
  };

  // SAM ViT-B as build_sam_vit_b() fixes it: 1024-pixel images, 16-pixel patches, 14-patch
  // windows, MLP ratio 4, a 256-channel neck.
  constexpr std::int64_t sam_image = 1024;
  constexpr std::int64_t sam_patch = 16;
  constexpr std::int64_t sam_window = 14;
  constexpr std::int64_t neck = 256;
  const std::int64_t width = sam.require_int({"width"}, 1, k_max_width);
  const std::int64_t layers = sam.require_int({"layers"}, 1, k_max_layers);
  const std::int64_t heads = sam.require_int({"heads"}, 1, k_max_heads);
  if (width % heads != 0)
    sam.fail("heads", fmt::format("= {} does not divide width {}", heads, width));
  const std::vector<std::int64_t> global = read_layer_list(sam, "global_attn_indexes", layers);
  const std::vector<std::int64_t> channels =
      read_size_list(sam, "downsample_channels", k_max_width);
  const std::int64_t grid = sam_image / sam_patch;
  const std::int64_t head_dim = width / heads;
  extra("model.sam_model.patch_embed.proj", "Conv2d",
        checked_add(checked_product({width, 3, sam_patch, sam_patch}), width),
        {width, 3, sam_patch, sam_patch});
  extra("model.sam_model.pos_embed", "Parameter", checked_product({grid, grid, width}),
        {1, grid, grid, width}, true);
  // Each block's rel_pos_h and rel_pos_w: [2 s - 1, head_dim], s the window or the whole grid.
  for (std::int64_t i = 0; i < layers; ++i) {
    const bool whole = std::find(global.begin(), global.end(), i) != global.end();
    const std::int64_t span = 2 * (whole ? grid : sam_window) - 1;
    for (const char* axis : {"h", "w"}) {
      extra(fmt::format("model.sam_model.blocks.{}.attn.rel_pos_{}", i, axis), "Parameter",
            checked_mul(span, head_dim), {span, head_dim}, true);
    }
  }
  // The neck: Conv2d 1 x 1 and 3 x 3 without bias, each followed by a LayerNorm2d.
  extra("model.sam_model.neck.0", "Conv2d", checked_mul(neck, width), {neck, width, 1, 1});
  extra("model.sam_model.neck.1", "LayerNorm2d", 2 * neck, {neck});
  extra("model.sam_model.neck.2", "Conv2d", checked_product({neck, neck, 9}), {neck, neck, 3, 3});
  extra("model.sam_model.neck.3", "LayerNorm2d", 2 * neck, {neck});
  std::int64_t in = neck;
  for (std::size_t i = 0; i < channels.size(); ++i) {
    extra(fmt::format("model.sam_model.net_{}", i + 2), "Conv2d",
          checked_product({channels[i], in, 9}), {channels[i], in, 3, 3});
    in = channels[i];
  }
  Stack sam_stack = vit_encoder_stack("sam_model", layers, HeadShape{heads, heads, head_dim},
                                      checked_mul(4, width), "gelu");
  for (Block& block : sam_stack.blocks) {
    block.attention.fused_qkv = true;
    block.norms[0].name = "norm1";
    block.norms[1].name = "norm2";
  }
  sam_stack.final_norm.reset();
  model.stacks.push_back(std::move(sam_stack));

  // CLIP-L/14 at 224, the projector reading its class token and patches.
  const std::int64_t clip_width = clip.require_int({"width"}, 1, k_max_width);
  const std::int64_t clip_layers = clip.require_int({"layers"}, 1, k_max_layers);
  const std::int64_t clip_heads = clip.require_int({"heads"}, 1, k_max_heads);
  const std::int64_t patch = clip.require_int({"patch_size"}, 1, 4096);
  const std::int64_t image = clip.require_int({"image_size"}, patch, 1 << 20);
  if (clip_width % clip_heads != 0) {
    clip.fail("heads", fmt::format("= {} does not divide width {}", clip_heads, clip_width));
  }
  const std::int64_t positions = checked_add(checked_mul(image / patch, image / patch), 1);
  extra("model.vision_model.embeddings.class_embedding", "Parameter", clip_width, {clip_width},
        true);
  extra("model.vision_model.embeddings.patch_embedding", "Conv2d",
        checked_product({clip_width, 3, patch, patch}), {clip_width, 3, patch, patch});
  extra("model.vision_model.embeddings.position_embedding", "Embedding",
        checked_mul(positions, clip_width), {positions, clip_width});
  extra("model.vision_model.pre_layrnorm", "LayerNorm", 2 * clip_width);
  Stack clip_stack = vit_encoder_stack("vision_model", clip_layers,
                                       HeadShape{clip_heads, clip_heads, clip_width / clip_heads},
                                       checked_mul(4, clip_width), "quick_gelu");
  for (Block& block : clip_stack.blocks) block.attention.fused_qkv = true;
  clip_stack.final_norm.reset();
  model.stacks.push_back(std::move(clip_stack));
  return checked_add(clip_width, channels.back());
}

// MlpProjector and the tile-layout tokens; n_embed must be the text width the tokens join.
void add_projector(const ConfigReader& config, const ConfigReader& projector,
                   std::int64_t vision_width, std::int64_t text_hidden, ModelDescription& model) {
  const std::string type =
      projector.optional_string("projector_type").value_or("downsample_mlp_gelu");
  const std::int64_t input = projector.int_or({"input_dim"}, 1152, 1, k_max_width);
  const std::int64_t embed = projector.int_or({"n_embed"}, 2048, 1, k_max_width);
  const std::int64_t depth = projector.int_or({"depth"}, 2, 1, 64);
  const std::int64_t ratio = projector.int_or({"mlp_ratio"}, 1, 1, 64);
  const std::int64_t downsample = projector.int_or({"downsample_ratio"}, 2, 1, 64);
  note_defaults(model, projector, "MlpProjectorConfig",
                {{"projector_type", "\"downsample_mlp_gelu\""},
                 {"input_dim", "1152"},
                 {"n_embed", "2048"},
                 {"depth", "2"},
                 {"mlp_ratio", "1"},
                 {"downsample_ratio", "2"}});
  if (embed != text_hidden) {
    projector.fail("n_embed", fmt::format("= {} differs from language_config.hidden_size {}: the "
                                          "image tokens replace text embeddings",
                                          embed, text_hidden));
  }
  if (type != "identity" && input != vision_width) {
    projector.fail("input_dim", fmt::format("= {} differs from vision_config.width {}, the "
                                            "width of the tower's output",
                                            input, vision_width));
  }
  // Biased Linears at their stored [out, in].
  const auto extra = [&](std::string name, std::int64_t in, std::int64_t out) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", "Linear", linear(in, out), {out, in}});
  };
  if (type == "identity") {
    if (vision_width != text_hidden) {
      projector.fail("projector_type",
                     "= \"identity\" needs vision_config.width equal to "
                     "language_config.hidden_size");
    }
  } else if (type == "linear") {
    extra("projector.layers", input, embed);
  } else if (type == "mlp_gelu") {
    extra("projector.layers.0", input, embed);
    for (std::int64_t i = 1; i < depth; ++i) {
      extra(fmt::format("projector.layers.{}", 2 * i), embed, embed);
    }
  } else if (type == "downsample_mlp_gelu") {
    // Linear(input r^2 -> n ratio), depth - 2 hidden Linears, then Linear(n ratio -> n); the
    // last Linear is built even for depth 1, so there are max(depth, 2) of them.
    const std::int64_t wide = checked_mul(embed, ratio);
    extra("projector.layers.0", checked_product({input, downsample, downsample}), wide);
    const std::int64_t count = std::max<std::int64_t>(depth, 2);
    for (std::int64_t i = 1; i + 1 < count; ++i) {
      extra(fmt::format("projector.layers.{}", 2 * i), wide, wide);
    }
    extra(fmt::format("projector.layers.{}", 2 * (count - 1)), wide, embed);
  } else {
    projector.fail("projector_type",
                   fmt::format("= \"{}\" is unknown (identity, linear, mlp_gelu or "
                               "downsample_mlp_gelu)",
                               type));
  }
  if (projector.bool_or("token_pooling", false)) {
    extra("projector.token_pooling_layer", checked_mul(input, 4), input);
  }

  const std::optional<std::string> tile_tag = config.optional_string("tile_tag");
  if (!tile_tag) {
    config.fail("tile_tag",
                "is missing; DeepseekVLV2Config's default (\"tile_tag\") makes the "
                "model refuse to build. Published configs say \"2D\"");
  }
  if (*tile_tag == "1D") {
    config.fail("tile_tag",
                "= \"1D\" is not supported: its tile_indicators are sized from "
                "config.aligner, which DeepseekVLV2Config never sets");
  }
  if (*tile_tag != "2D") {
    config.fail("tile_tag", fmt::format("= \"{}\"; DeepSeek-VL2 accepts \"2D\"", *tile_tag));
  }
  model.extra_parameters.push_back({"image_newline", "vision", "Parameter", embed, {embed}, true});
  model.extra_parameters.push_back({"view_seperator", "vision", "Parameter", embed, {embed}, true});
}

}  // namespace

ModelDescription build_deepseek_vl_v2(const ConfigReader& config) {
  const ConfigReader language = config.child("language_config");
  ModelDescription model = build_language(config, language);

  const ConfigReader vision = config.child("vision_config");
  const bool ocr = first_architecture(config).find("OCR") != std::string::npos;
  const bool towers = vision.json().contains("width") && vision.json().at("width").is_object();
  if (ocr != towers) {
    config.fail("architectures",
                fmt::format("names {} but vision_config.width is {}: DeepSeek-OCR's config names "
                            "DeepseekOCRForCausalLM and two sub-towers, DeepSeek-VL2's neither",
                            first_architecture(config), towers ? "an object" : "a number"));
  }
  if (ocr) {
    model.family = fmt::format(
        "DeepSeek-OCR (DeepEncoder: SAM ViT-B + CLIP-L; DeepSeek-V2 MoE text decoder, {})",
        language.bool_or("use_mla", true) ? "MLA" : "multi-head attention");
    const std::int64_t features = add_deep_encoder(vision, model);
    add_projector(config, config.child("projector_config"), features, model.hidden_size, model);
    // Every tensor under model.* (DeepseekOCRModel), not DeepSeek-VL2's language.* / vision.*:
    // the tensor inventory tells the layouts apart by this tag (naming_dots_ocr.cpp).
    model.text_model_type = "deepseek_ocr";
    return model;
  }
  Stack tower = vision_tower(vision, model);
  const std::int64_t vision_width = tower.blocks.front().attention.input_dim;
  // The published configs hold projector_config; without it every MlpProjectorConfig default
  // applies, as in the remote class.
  const nlohmann::json empty = nlohmann::json::object();
  if (config.has("projector_config")) {
    add_projector(config, config.child("projector_config"), vision_width, model.hidden_size, model);
  } else {
    add_projector(config, ConfigReader(empty, "projector_config", config.model_type()),
                  vision_width, model.hidden_size, model);
  }
  model.stacks.push_back(std::move(tower));
  return model;
}

}  // namespace trace::family
