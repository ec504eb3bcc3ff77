// Llama 3.2 Vision (model_type mllama): a Llama 3.1 text decoder in which the layers listed in
// text_config.cross_attention_layers are gated cross-attention layers, a two-stage ViT and a
// projector. Every tensor, as transformers' modeling_mllama.py builds it:
//  Text (language_model.*): embed_tokens [vocab + 8, H] (8 extra rows past vocab_size, for the
//  <|image|> token and padding), lm_head [vocab, H] (untied), norm [H]; self-attention layers as
//  Llama (q/k/v/o, no biases, GQA, RoPE; input / post-attention RMSNorms; SwiGLU MLP); a
//  cross-attention layer has no self-attention: cross_attn q/k/v/o (keys and values read the
//  projected image states, H wide), q_norm / k_norm RMSNorm [head_dim], the scalar gates
//  cross_attn_attn_gate and cross_attn_mlp_gate, the two RMSNorms and the SwiGLU MLP.
//  Vision (vision_model.*): patch_embedding Conv2d [D, C, P, P] without bias, class_embedding [D],
//  gated_positional_embedding (embedding [N + 1, D], gate [1], tile_embedding
//  [R + 1, T (N + 1) D]), pre_ / post_tile_positional_embedding (embedding [R + 1, T D], gate
//  [1]), layernorm_pre / layernorm_post LayerNorm [D]; `num_hidden_layers` local layers and
//  `num_global_layers` global layers (LayerNorms, q/k/v/o without bias, fc1 / fc2 with bias; the
//  global ones add the scalar gates gate_attn and gate_ffn). N = (image_size / patch_size)^2
//  patches per tile, T = max_num_tiles, R = len(supported_aspect_ratios).
//  Projector: multi_modal_projector Linear(vision_output_dim, H) with bias, where the vision
//  output is the last hidden state concatenated with the intermediate_layers_indices states.
// KV cache: a cross-attention layer's keys and values are computed once from the image tokens and
// cached, so they hold T (N + 1) tokens per image (one image per sequence assumed), whatever the
// text context; Attention::cross_source_tokens carries that to the memory estimate.
// Derivation and published totals: tests/data/configs/SOURCES-vlm.md, docs/parameters.md
// section 12.
#include <algorithm>
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

struct VisionShape {
  std::int64_t hidden = 0;
  std::int64_t tiles = 0;
  std::int64_t tokens_per_tile = 0;  // patches + the class token
};

VisionShape add_vision(const ConfigReader& vision, std::int64_t text_hidden,
                       ModelDescription& model) {
  const std::int64_t hidden = vision.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t local_layers = vision.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t global_layers = vision.require_int({"num_global_layers"}, 0, k_max_layers);
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t image = vision.require_int({"image_size"}, 1, 1 << 20);
  const std::int64_t patch = vision.require_int({"patch_size"}, 1, 4096);
  const std::int64_t tiles = vision.require_int({"max_num_tiles"}, 1, 1024);
  const std::int64_t output = vision.require_int({"vision_output_dim"}, 1, k_max_width);
  const std::int64_t channels = vision.int_or({"num_channels"}, 3, 1, 64);
  const HeadShape shape =
      read_head_shape(vision, hidden, {"attention_heads", "num_attention_heads"}, {}, false);
  if (!vision.has("supported_aspect_ratios") ||
      !vision.json().at("supported_aspect_ratios").is_array() ||
      vision.json().at("supported_aspect_ratios").empty()) {
    vision.fail("supported_aspect_ratios",
                "is missing or not a list of [w, h] tile grids; its length sizes the tile "
                "embeddings");
  }
  const auto aspect_rows =
      static_cast<std::int64_t>(vision.json().at("supported_aspect_ratios").size()) + 1;
  std::int64_t intermediate_outputs = 0;
  if (vision.has("intermediate_layers_indices")) {
    const nlohmann::json& list = vision.json().at("intermediate_layers_indices");
    if (!list.is_array()) vision.fail("intermediate_layers_indices", "must be a list of layer indices");
    intermediate_outputs = static_cast<std::int64_t>(list.size());
  } else {
    vision.fail("intermediate_layers_indices",
                "is missing; the vision output concatenates these layers' states");
  }
  if (output != checked_mul(hidden, 1 + intermediate_outputs)) {
    vision.fail("vision_output_dim",
                fmt::format("= {} but the vision model emits hidden_size x (1 + "
                            "len(intermediate_layers_indices)) = {}",
                            output, hidden * (1 + intermediate_outputs)));
  }
  if (image % patch != 0) vision.fail("image_size", "is not a multiple of patch_size");
  note_defaults(model, vision, "MllamaVisionConfig", {{"num_channels", "3"}});
  const std::int64_t per_side = image / patch;
  const std::int64_t tokens = per_side * per_side + 1;

  // Each with the shape the checkpoint stores (for the tensor inventory): the nn.Parameters bare,
  // the Conv2d, nn.Embedding and Linear weights under ".weight", the projector's bias beside it.
  const auto extra = [&](std::string name, const char* op, std::int64_t params,
                         std::vector<std::int64_t> stored = {}, bool bare = false) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, params, std::move(stored), bare});
  };
  extra("vision_model.patch_embedding", "Conv2d", checked_product({hidden, channels, patch, patch}),
        {hidden, channels, patch, patch});
  extra("vision_model.class_embedding", "Parameter", hidden, {hidden}, true);
  extra("vision_model.gated_positional_embedding.embedding", "Parameter",
        checked_mul(tokens, hidden), {tokens, hidden}, true);
  extra("vision_model.gated_positional_embedding.gate", "Parameter", 1, {1}, true);
  extra("vision_model.gated_positional_embedding.tile_embedding", "Embedding",
        checked_product({aspect_rows, tiles, tokens, hidden}),
        {aspect_rows, checked_product({tiles, tokens, hidden})});
  for (const char* name : {"pre_tile_positional_embedding", "post_tile_positional_embedding"}) {
    extra(fmt::format("vision_model.{}.embedding", name), "Embedding",
          checked_product({aspect_rows, tiles, hidden}), {aspect_rows, checked_mul(tiles, hidden)});
    extra(fmt::format("vision_model.{}.gate", name), "Parameter", 1, {1}, true);
  }
  extra("vision_model.layernorm_pre", "LayerNorm", 2 * hidden);
  extra("vision_model.layernorm_post", "LayerNorm", 2 * hidden);
  if (global_layers > 0) {
    extra("vision_model.global_transformer.layers.*.gate_attn + gate_ffn", "Parameter",
          2 * global_layers);
  }
  extra("multi_modal_projector", "Linear",
        checked_add(checked_mul(output, text_hidden), text_hidden), {text_hidden, output});

  const auto encoder = [&](const char* name, std::int64_t layers) {
    Stack stack;
    stack.name = name;
    stack.causal = false;
    stack.vision = true;
    for (std::int64_t i = 0; i < layers; ++i) {
      Block block;
      block.attention = self_attention(hidden, shape, false, false);
      block.mlp = Mlp{MlpKind::plain, vision.optional_string("hidden_act").value_or("gelu"),
                      hidden, intermediate, true, true, false};
      block.norms = {layer_norm("input_layernorm", hidden),
                     layer_norm("post_attention_layernorm", hidden)};
      stack.blocks.push_back(std::move(block));
    }
    model.stacks.push_back(std::move(stack));
  };
  encoder("vision_model.transformer", local_layers);
  if (global_layers > 0) encoder("vision_model.global_transformer", global_layers);
  return VisionShape{hidden, tiles, tokens};
}

}  // namespace

ModelDescription build_mllama(const ConfigReader& config) {
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  ModelDescription model;
  const std::int64_t vocab = text.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = text.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = text.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = text.require_int({"intermediate_size"}, 1, k_max_width);
  // MllamaTextSelfAttention / CrossAttention: head_dim = hidden_size // num_attention_heads.
  const HeadShape heads = read_head_shape(text, hidden, {"num_attention_heads"},
                                          {"num_key_value_heads"}, false);
  if (!text.has("cross_attention_layers")) {
    text.fail("cross_attention_layers",
              "is missing; it lists the gated cross-attention layers (Llama-3.2-11B-Vision: "
              "[3, 8, ..., 38])");
  }
  const std::vector<std::int64_t> cross_layers =
      read_layer_list(text, "cross_attention_layers", layers);
  fill_decoder_basics(model, text, vocab, hidden, false);
  model.position = PositionKind::rope;
  model.family = "Llama 3.2 Vision (Llama decoder with gated cross-attention layers + tiled ViT)";
  note_defaults(model, text, "MllamaTextConfig", {{"hidden_act", "silu"}});
  // MllamaTextModel: nn.Embedding(vocab_size + 8, hidden_size).
  model.extra_parameters.push_back({"language_model.model.embed_tokens (8 rows past vocab_size)",
                                    "embedding", "Embedding", checked_mul(8, hidden)});

  const VisionShape vision = add_vision(config.child("vision_config"), hidden, model);
  const std::int64_t image_tokens = checked_mul(vision.tiles, vision.tokens_per_tile);

  const std::string activation = text.optional_string("hidden_act").value_or("silu");
  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    const bool cross = std::find(cross_layers.begin(), cross_layers.end(), i) != cross_layers.end();
    block.attention = self_attention(hidden, heads, false, false);
    if (cross) {
      block.attention.name = "cross_attn";
      block.attention.is_cross = true;
      block.attention.cross_source_tokens = image_tokens;
      block.attention.q_norm = rms_norm("q_norm", heads.head_dim);
      block.attention.k_norm = rms_norm("k_norm", heads.head_dim);
    } else {
      block.attention.rotary_dim = heads.head_dim;
    }
    block.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};
    block.norms = pre_norm_pair(hidden);
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  // Put the text stack first: the report and the graph read the decoder before the towers.
  std::rotate(model.stacks.begin(), model.stacks.end() - 1, model.stacks.end());
  if (!cross_layers.empty()) {
    model.extra_parameters.push_back(
        {"language_model.model.layers.*.cross_attn_attn_gate + cross_attn_mlp_gate", "other",
         "Parameter", checked_mul(2, static_cast<std::int64_t>(cross_layers.size()))});
  }
  model.notes.push_back(fmt::format(
      "{} cross-attention layers attend to the image tokens: their KV cache holds {} tokens per "
      "sequence (one image: {} tiles x ({} patches + class token)), not the text context",
      cross_layers.size(), image_tokens, vision.tiles, vision.tokens_per_tile - 1));
  return model;
}

}  // namespace trace::family
