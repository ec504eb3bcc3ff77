// Kimi-VL (model_type kimi_vl, remote code KimiVLForConditionalGeneration): moonshotai/
// Kimi-VL-A3B-Instruct, Kimi-VL-A3B-Thinking and Kimi-VL-A3B-Thinking-2506. Three parts, all
// stored in the checkpoint and all counted:
//  - language_model.*: text_config, a DeepSeek-V3-layout MoE decoder (MLA without query LoRA,
//    64 routed + 2 shared experts, noaux_tc router with e_score_correction_bias), built by the
//    deepseek builder. The remote DeepseekV3ForCausalLM builds no MTP layer whatever
//    num_nextn_predict_layers says, so none is counted.
//  - vision_tower.*: MoonViT. patch_embed.proj Conv2d(3 -> d, p x p) with bias; patch_embed.
//    pos_emb.weight [pos_emb_height, pos_emb_width, d] (interpolated to each image's grid); per
//    block norm0 / norm1 LayerNorm(d), wqkv [3d, d] + bias, wo [d, d] + bias, mlp.fc0 [I, d] +
//    bias, mlp.fc1 [d, I] + bias (gelu tanh); encoder.final_layernorm. The 2-D RoPE table is
//    computed at run time, never stored.
//  - multi_modal_projector.*: pre_norm LayerNorm(d), linear_1 [m, m] + bias and linear_2
//    [text hidden, m] + bias with m = d x merge_kernel_size[0] x merge_kernel_size[1].
// Tensor list: the model repo's modeling_kimi_vl.py (MoonVitPretrainedModel, MoonVitEncoderLayer,
// KimiVLMultiModalProjector, KimiVLForConditionalGeneration) and configuration_kimi_vl.py.
#include <fmt/format.h>

#include <array>

#include "family.hpp"

namespace trace::family {

namespace {

// Keys whose absence build_deepseek reads as "none" while the remote config class would fill its
// own DeepSeek-V3 default (query LoRA 1536, 256 routed experts, ...): a Kimi-VL config states
// them, so a config without them is refused rather than guessed.
constexpr std::array<const char*, 5> k_stated_text_keys{
    "q_lora_rank", "n_routed_experts", "n_shared_experts", "first_k_dense_replace", "topk_method"};

struct MergeKernel {
  std::int64_t height = 2;
  std::int64_t width = 2;
};

MergeKernel read_merge_kernel(const ConfigReader& vision) {
  MergeKernel kernel;
  if (!vision.has("merge_kernel_size")) return kernel;
  const nlohmann::json& value = vision.json().at("merge_kernel_size");
  const auto valid = [](const nlohmann::json& entry) {
    return entry.is_number_integer() && entry.get<std::int64_t>() >= 1 &&
           entry.get<std::int64_t>() <= 64;
  };
  if (!value.is_array() || value.size() != 2 || !valid(value[0]) || !valid(value[1])) {
    vision.fail("merge_kernel_size", "must be a list of two integers in 1..64, e.g. [2, 2]");
  }
  kernel.height = value[0].get<std::int64_t>();
  kernel.width = value[1].get<std::int64_t>();
  return kernel;
}

// MoonViT, with MoonViTConfig's defaults (the SO-400M tower) for keys vision_config leaves out.
Stack moonvit_tower(const ConfigReader& vision, std::int64_t text_hidden, ModelDescription& model) {
  if (const std::optional<std::string> type = vision.optional_string("model_type");
      type && *type != "moonvit") {
    vision.fail("model_type", fmt::format("= \"{}\"; Kimi-VL's tower is \"moonvit\"", *type));
  }
  const std::int64_t hidden = vision.int_or({"hidden_size"}, 1152, 1, k_max_width);
  const std::int64_t layers = vision.int_or({"num_hidden_layers"}, 27, 1, k_max_layers);
  const std::int64_t heads = vision.int_or({"num_attention_heads"}, 16, 1, k_max_heads);
  const std::int64_t intermediate = vision.int_or({"intermediate_size"}, 4304, 1, k_max_width);
  const std::int64_t patch = vision.int_or({"patch_size"}, 14, 1, 4096);
  const std::int64_t pos_height = vision.int_or({"init_pos_emb_height"}, 64, 1, 1 << 16);
  const std::int64_t pos_width = vision.int_or({"init_pos_emb_width"}, 64, 1, 1 << 16);
  const MergeKernel merge = read_merge_kernel(vision);
  if (hidden % heads != 0) {
    vision.fail("num_attention_heads",
                fmt::format("= {} does not divide hidden_size {}", heads, hidden));
  }
  note_defaults(model, vision, "MoonViTConfig",
                {{"hidden_size", "1152"},
                 {"num_hidden_layers", "27"},
                 {"num_attention_heads", "16"},
                 {"intermediate_size", "4304"},
                 {"patch_size", "14"},
                 {"init_pos_emb_height", "64"},
                 {"init_pos_emb_width", "64"},
                 {"merge_kernel_size", "[2, 2]"}});

  // MoonVisionPatchEmbed reads RGB patches: its Conv2d always takes 3 channels. Each at its
  // stored shape (a bias beside it where the count holds one); pos_emb is a [H, W, d] Parameter
  // named `weight` inside Learnable2DInterpPosEmb.
  const auto extra = [&](std::string name, const char* op, std::int64_t params,
                         std::vector<std::int64_t> shape) {
    model.extra_parameters.push_back({std::move(name), "vision", op, params, std::move(shape)});
  };
  extra("vision_tower.patch_embed.proj", "Conv2d",
        checked_add(checked_product({hidden, 3, patch, patch}), hidden), {hidden, 3, patch, patch});
  extra("vision_tower.patch_embed.pos_emb", "Parameter",
        checked_product({pos_height, pos_width, hidden}), {pos_height, pos_width, hidden});
  const std::int64_t merged = checked_product({hidden, merge.height, merge.width});
  extra("multi_modal_projector.pre_norm", "LayerNorm", 2 * hidden, {});
  extra("multi_modal_projector.linear_1", "Linear",
        checked_add(checked_mul(merged, merged), merged), {merged, merged});
  extra("multi_modal_projector.linear_2", "Linear",
        checked_add(checked_mul(merged, text_hidden), text_hidden), {text_hidden, merged});

  // Same tensors as the SigLIP/CLIP encoder layer, under MoonViT's names: q/k/v fused in wqkv.
  const HeadShape shape{heads, heads, hidden / heads};
  Stack stack =
      vit_encoder_stack("vision_tower.encoder", layers, shape, intermediate, "gelu_pytorch_tanh");
  for (Block& block : stack.blocks) {
    block.attention.name = "wqkv";
    block.attention.fused_qkv = true;
    block.norms[0].name = "norm0";
    block.norms[1].name = "norm1";
  }
  stack.final_norm->name = "final_layernorm";
  return stack;
}

}  // namespace

ModelDescription build_kimi_vl(const ConfigReader& config) {
  const ConfigReader text = config.child("text_config");
  if (const std::optional<std::string> type = text.optional_string("model_type");
      type && *type != "deepseek_v3" && *type != "deepseek_v2") {
    text.fail("model_type",
              fmt::format("= \"{}\"; Kimi-VL's text model is a deepseek_v3 decoder", *type));
  }
  for (const char* key : k_stated_text_keys) {
    if (!text.json().contains(key)) {
      text.fail(key,
                "is missing; Kimi-VL configs state it (the remote DeepseekV3Config default "
                "differs from what an absent key means here), so trace will not guess");
    }
  }
  nlohmann::json text_json = text.json();
  // The text model reads tie_word_embeddings from text_config (DeepseekV3Config default false),
  // never from the wrapper.
  if (!text.has("tie_word_embeddings")) text_json["tie_word_embeddings"] = false;
  if (!text.has("torch_dtype") && !text.has("dtype")) {
    if (config.has("torch_dtype"))
      text_json["torch_dtype"] = config.json().at("torch_dtype");
    else if (config.has("dtype"))
      text_json["dtype"] = config.json().at("dtype");
  }
  const std::int64_t declared_mtp = text.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  text_json.erase("num_nextn_predict_layers");

  ModelDescription model =
      build_deepseek(ConfigReader(text_json, "text_config", config.model_type()));
  model.family = "Kimi-VL (MoonViT vision tower + DeepSeek-V3-layout MoE text decoder with MLA)";
  if (declared_mtp > 0) {
    model.notes.push_back(
        fmt::format("text_config.num_nextn_predict_layers = {} is not counted: Kimi-VL's remote "
                    "DeepseekV3ForCausalLM builds no MTP layer and the checkpoint stores none",
                    declared_mtp));
  }
  if (!text.has("tie_word_embeddings")) {
    model.notes.push_back("DeepseekV3Config default used: text_config.tie_word_embeddings = false");
  }

  // The upload keeps the routers' e_score_correction_bias in BF16 and holds one 128-byte tensor
  // more per text layer, the rotary inv_freq in F32 (Kimi-VL-A3B-Instruct's 32,815,315,552 bytes
  // = 2 x the parameters + 27 x 32 x 4; SOURCES-t5gemma-kimi_vl-names.md).
  model.router_bias_at_checkpoint_dtype = true;
  if (!model.stacks.empty() && !model.stacks.front().blocks.empty()) {
    const std::int64_t text_layers = static_cast<std::int64_t>(model.stacks.front().blocks.size());
    const std::int64_t rope = model.stacks.front().blocks.front().attention.mla.qk_rope_head_dim;
    if (rope > 0) {
      model.stored_extras.push_back(StoredExtra{
          "language_model.model.layers.*.self_attn.rotary_emb.inv_freq",
          text_layers,
          rope / 2,
          "F32",
          false,
          "RoPE frequency buffer over qk_rope_head_dim; Kimi-VL-A3B's upload holds one per "
          "layer; never a parameter",
          {rope / 2}});
    }
  }

  const ConfigReader vision = config.child("vision_config");
  model.stacks.push_back(moonvit_tower(vision, model.hidden_size, model));
  return model;
}

}  // namespace trace::family
