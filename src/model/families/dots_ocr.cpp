// dots.ocr (model_type dots_ocr: rednote-hilab/dots.ocr, remote code DotsOCRForCausalLM): a Qwen2
// text model whose keys sit at the top level of config.json (DotsOCRConfig subclasses
// Qwen2Config), plus vision_tower, a dots_vit encoder (vision_config):
//  - patch_embed.patchifier.proj: Conv2d(num_channels -> E, p x p), biased whatever use_bias says
//    (a 2-D conv: temporal_patch_size slices the input, it sizes nothing); patchifier.norm
//    RMSNorm [E];
//  - blocks.N: norm1 / norm2 RMSNorms [E], attn.qkv [3E, E] and attn.proj [E, E], mlp.fc1 / fc3
//    (SwiGLU gate and up) [I, E] and fc2 [E, I], every Linear biased only with use_bias;
//  - post_trunk_norm RMSNorm [E] when post_norm;
//  - merger: ln_q LayerNorm [E] (weight and bias), mlp.0 [E m^2, E m^2] + bias, mlp.2
//    [hidden_size, E m^2] + bias, with m = spatial_merge_size and hidden_size vision_config's
//    (the text width for dots.ocr).
// Sources: vLLM model_executor/models/dots_ocr.py and transformers_utils/configs/dotsocr.py
// (the remote code's layout); derivation in tests/data/configs/SOURCES-dots_ocr-deepseek_ocr.md.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_dots_ocr(const ConfigReader& config) {
  ModelDescription model = build_qwen2(config);
  model.family = "dots.ocr (Qwen2 text decoder + dots_vit vision encoder, patch merger)";
  const ConfigReader vision = config.child("vision_config");
  // DotsVisionConfig's defaults (dots.ocr's own values).
  const std::int64_t width = vision.int_or({"embed_dim"}, 1536, 1, k_max_width);
  const std::int64_t out = vision.int_or({"hidden_size"}, 1536, 1, k_max_width);
  const std::int64_t intermediate = vision.int_or({"intermediate_size"}, 4224, 1, k_max_width);
  const std::int64_t layers = vision.int_or({"num_hidden_layers"}, 42, 1, k_max_layers);
  const std::int64_t heads = vision.int_or({"num_attention_heads"}, 12, 1, k_max_heads);
  const std::int64_t channels = vision.int_or({"num_channels"}, 3, 1, 64);
  const std::int64_t patch = vision.int_or({"patch_size"}, 14, 1, 4096);
  const std::int64_t merge = vision.int_or({"spatial_merge_size"}, 2, 1, 64);
  const bool bias = vision.bool_or("use_bias", false);
  const bool post_norm = vision.bool_or("post_norm", true);
  if (width % heads != 0) {
    vision.fail("num_attention_heads",
                fmt::format("= {} does not divide embed_dim {}", heads, width));
  }
  note_defaults(model, vision, "DotsVisionConfig",
                {{"embed_dim", "1536"},
                 {"hidden_size", "1536"},
                 {"intermediate_size", "4224"},
                 {"num_hidden_layers", "42"},
                 {"num_attention_heads", "12"},
                 {"patch_size", "14"},
                 {"spatial_merge_size", "2"},
                 {"use_bias", "false"},
                 {"post_norm", "true"}});
  if (out != model.hidden_size) {
    vision.fail("hidden_size",
                fmt::format("= {} differs from the text hidden_size {}: the merger's "
                            "output replaces text embeddings",
                            out, model.hidden_size));
  }

  // The conv and the merger's Linears at their stored shapes (for the tensor inventory), each
  // with a bias of shape[0].
  const auto biased = [&](std::string name, const char* op, std::int64_t weight,
                          std::vector<std::int64_t> shape) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, checked_add(weight, shape.front()), std::move(shape)});
  };
  biased("vision_tower.patch_embed.patchifier.proj", "Conv2d",
         checked_product({width, channels, patch, patch}), {width, channels, patch, patch});
  add_vision_part(model, "vision_tower.patch_embed.patchifier.norm", "RMSNorm", width);
  const std::int64_t merged = checked_product({width, merge, merge});
  add_vision_part(model, "vision_tower.merger.ln_q", "LayerNorm", 2 * width);
  biased("vision_tower.merger.mlp.0", "Linear", checked_mul(merged, merged), {merged, merged});
  biased("vision_tower.merger.mlp.2", "Linear", checked_mul(merged, out), {out, merged});

  Stack stack;
  stack.name = "vision_tower";
  stack.causal = false;
  stack.vision = true;
  const HeadShape shape{heads, heads, width / heads};
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(width, shape, bias, bias);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.mlp = Mlp{MlpKind::gated, "silu", width, intermediate, bias, bias, false};
    block.norms = {rms_norm("norm1", width), rms_norm("norm2", width)};
    stack.blocks.push_back(std::move(block));
  }
  if (post_norm) stack.final_norm = rms_norm("post_trunk_norm", width);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
