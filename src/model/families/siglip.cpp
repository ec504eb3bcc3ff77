// The SigLIP vision encoder (transformers models/siglip/modeling_siglip.py SiglipVisionModel)
// and the pre-norm ViT encoder stack it shares with CLIP (llava.cpp)
// that Gemma 3, PaliGemma and Idefics3 / SmolVLM put beside their text decoders: a patch
// Conv2d(channels -> d, p x p) with bias, a learned position table of (image / patch)^2 rows,
// pre-norm layers (layer_norm1/2 with bias, q/k/v/out_proj with bias, fc1/fc2 with bias),
// post_layernorm, and optionally the attention-pooling head.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// SiglipMultiheadAttentionPoolingHead: probe [1, 1, d], nn.MultiheadAttention (in_proj [3d, d]
// + bias, out_proj [d, d] + bias), layernorm (w + b) and a SiglipMLP (fc1 d -> I, fc2 I -> d,
// both biased).
std::int64_t pooling_head_params(std::int64_t hidden, std::int64_t intermediate) {
  const std::int64_t attention = checked_add(checked_mul(4 * hidden, hidden), 4 * hidden);
  const std::int64_t mlp =
      checked_add(checked_mul(2 * hidden, intermediate), checked_add(intermediate, hidden));
  return checked_add(checked_add(attention, mlp), 3 * hidden);  // probe + layernorm
}

}  // namespace

Stack siglip_tower(const ConfigReader& vision, const SiglipLayout& layout,
                   ModelDescription& model) {
  const std::optional<SiglipDefaults>& fallback = layout.defaults;
  const auto size = [&](std::string_view key, std::int64_t SiglipDefaults::*field,
                        std::int64_t max) {
    return fallback ? vision.int_or({key}, (*fallback).*field, 1, max)
                    : vision.require_int({key}, 1, max);
  };
  const std::int64_t hidden = size("hidden_size", &SiglipDefaults::hidden, k_max_width);
  const std::int64_t layers = size("num_hidden_layers", &SiglipDefaults::layers, k_max_layers);
  const std::int64_t intermediate =
      size("intermediate_size", &SiglipDefaults::intermediate, k_max_width);
  const std::int64_t patch = size("patch_size", &SiglipDefaults::patch, 4096);
  const std::int64_t image = size("image_size", &SiglipDefaults::image, 1 << 20);
  const std::int64_t channels = vision.int_or({"num_channels"}, 3, 1, 64);
  // SiglipAttention: head_dim = hidden / heads, which must divide.
  const std::int64_t heads = size("num_attention_heads", &SiglipDefaults::heads, k_max_heads);
  if (hidden % heads != 0) {
    vision.fail("num_attention_heads",
                fmt::format("= {} does not divide hidden_size {}", heads, hidden));
  }
  if (image < patch) {
    vision.fail("image_size",
                fmt::format("= {} is smaller than patch_size {}: no patch fits", image, patch));
  }
  if (fallback) {
    const SiglipDefaults& d = *fallback;
    const std::string values[] = {std::to_string(d.hidden),       std::to_string(d.layers),
                                  std::to_string(d.intermediate), std::to_string(d.heads),
                                  std::to_string(d.patch),        std::to_string(d.image)};
    note_defaults(model, vision, d.config_class,
                  {{"hidden_size", values[0].c_str()},
                   {"num_hidden_layers", values[1].c_str()},
                   {"intermediate_size", values[2].c_str()},
                   {"num_attention_heads", values[3].c_str()},
                   {"patch_size", values[4].c_str()},
                   {"image_size", values[5].c_str()},
                   {"num_channels", "3"},
                   {"hidden_act", "gelu_pytorch_tanh"}});
  }
  const std::int64_t per_side = image / patch;
  model.extra_parameters.push_back(
      {layout.prefix + ".embeddings.patch_embedding",
       "vision",
       "Conv2d",
       checked_add(checked_product({hidden, channels, patch, patch}), hidden),
       {hidden, channels, patch, patch}});
  model.extra_parameters.push_back({layout.prefix + ".embeddings.position_embedding",
                                    "vision",
                                    "Embedding",
                                    checked_product({per_side, per_side, hidden}),
                                    {checked_mul(per_side, per_side), hidden}});
  switch (layout.head) {
    case SiglipLayout::PoolingHead::never:
      break;
    case SiglipLayout::PoolingHead::refused:
      if (vision.bool_or("vision_use_head", false)) {
        vision.fail("vision_use_head", "= true (a SigLIP pooling head) is not supported yet");
      }
      break;
    case SiglipLayout::PoolingHead::unless_disabled:
      // SiglipVisionTransformer builds the head unless the config says vision_use_head = false.
      if (vision.bool_or("vision_use_head", true)) {
        model.extra_parameters.push_back({layout.prefix + ".head", "vision", "AttentionPoolingHead",
                                          pooling_head_params(hidden, intermediate)});
        if (!vision.has("vision_use_head")) {
          model.notes.push_back(
              "vision_config.vision_use_head absent: SiglipVisionTransformer builds its "
              "attention-pooling head, so it is counted");
        }
      }
      break;
  }

  const HeadShape shape{heads, heads, hidden / heads};
  return vit_encoder_stack(layout.stack_name, layers, shape, intermediate,
                           vision.optional_string("hidden_act").value_or("gelu_pytorch_tanh"));
}

Stack vit_encoder_stack(std::string name, std::int64_t layers, const HeadShape& shape,
                        std::int64_t intermediate, const std::string& activation) {
  const std::int64_t hidden = shape.num_heads * shape.head_dim;
  Stack stack;
  stack.name = std::move(name);
  stack.causal = false;
  stack.vision = true;
  stack.blocks.reserve(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, true, true, false};
    block.norms = {layer_norm("layer_norm1", hidden), layer_norm("layer_norm2", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("post_layernorm", hidden);
  return stack;
}

}  // namespace trace::family
