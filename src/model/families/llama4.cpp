// Llama 4 (model_type llama4: text_config + vision_config + projector; llama4_text alone).
// Text: GQA attention (weightless L2 QK-norm), MoE on the layers in moe_layers (default every
// interleave_moe_layer_step-th) with num_local_experts experts of intermediate_size, top-k, a
// bias-free router and one shared expert of intermediate_size; dense layers use
// intermediate_size_mlp. RoPE layers use chunked local attention (attention_chunk_size); every
// no_rope_layer_interval-th layer is a global NoPE layer.
// Vision: an unfold-conv patch Linear (no bias), class embedding, (patches + 1) learned
// positions, pre/post LayerNorms, encoder layers with biased attention and GELU MLP, a
// pixel-shuffle adapter MLP (fc1 intermediate -> projector_input_dim, fc2 projector_output_dim
// square, no biases), and the projector Linear(vision_output_dim, text hidden).
// Tensor list: transformers models/llama4/modeling_llama4.py.
#include <algorithm>
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

ModelDescription build_llama4_language(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t expert_width = config.require_int({"intermediate_size"}, 1, k_max_width);
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"});
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = "Llama 4 (MoE decoder, shared expert, chunked local + global NoPE attention)";
  model.position = PositionKind::rope;
  Moe moe = routed_experts(config, hidden, {"num_local_experts"}, {"num_experts_per_tok"},
                           expert_width);
  moe.num_shared_experts = 1;
  moe.shared = Mlp{MlpKind::gated, moe.expert.activation, hidden, expert_width, false, false, false};

  std::vector<std::int64_t> moe_layers = read_layer_list(config, "moe_layers", layers);
  if (!config.has("moe_layers")) {
    const std::int64_t step = config.int_or({"interleave_moe_layer_step"}, 1, 1, k_max_layers);
    for (std::int64_t i = step - 1; i < layers; i += step) moe_layers.push_back(i);
  }
  const bool any_dense = static_cast<std::int64_t>(moe_layers.size()) < layers;
  const std::int64_t dense_width =
      any_dense ? config.require_int({"intermediate_size_mlp"}, 1, k_max_width) : 0;
  const std::int64_t chunk = config.int_or({"attention_chunk_size"}, 0, 0, k_max_positions);
  const std::int64_t nope_interval = config.int_or({"no_rope_layer_interval"}, 4, 1, k_max_layers);
  std::vector<std::int64_t> rope_layers;  // no_rope_layers: 1 = uses RoPE (chunked), 0 = NoPE
  if (config.has("no_rope_layers")) {
    const nlohmann::json& list = config.json().at("no_rope_layers");
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != layers) {
      config.fail("no_rope_layers", fmt::format("must list {} entries (one per layer)", layers));
    }
    for (const nlohmann::json& item : list) {
      rope_layers.push_back(item.is_number_integer() ? item.get<std::int64_t>() : 1);
    }
  } else {
    for (std::int64_t i = 0; i < layers; ++i) rope_layers.push_back((i + 1) % nope_interval != 0);
  }
  const bool bias = config.bool_or("attention_bias", false);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    const bool rope = rope_layers[static_cast<std::size_t>(i)] != 0;
    block.attention.rotary_dim = rope ? shape.head_dim : 0;
    block.attention.sliding_window = rope ? chunk : 0;  // chunked attention holds <= one chunk
    if (std::find(moe_layers.begin(), moe_layers.end(), i) != moe_layers.end()) {
      block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
      block.moe = moe;
    } else {
      block.mlp = Mlp{MlpKind::gated, moe.expert.activation, hidden, dense_width, false, false, false};
    }
    block.norms = {rms_norm("input_layernorm", hidden), rms_norm("post_attention_layernorm", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

void add_llama4_vision(const ConfigReader& vision, std::int64_t text_hidden,
                       ModelDescription& model) {
  const std::int64_t hidden = vision.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = vision.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t patch = vision.require_int({"patch_size"}, 1, 4096);
  const std::int64_t image = vision.require_int({"image_size"}, 1, 1 << 20);
  const std::int64_t channels = vision.int_or({"num_channels"}, 3, 1, 64);
  const std::int64_t projector_in = vision.require_int({"projector_input_dim"}, 1, k_max_width);
  const std::int64_t projector_out = vision.require_int({"projector_output_dim"}, 1, k_max_width);
  const std::int64_t output = vision.require_int({"vision_output_dim"}, 1, k_max_width);
  if (vision.bool_or("multi_modal_projector_bias", false)) {
    vision.fail("multi_modal_projector_bias", "= true is not supported yet");
  }
  const HeadShape shape = read_head_shape(vision, hidden, {"num_attention_heads"}, {}, false);
  const std::int64_t patches = (image / patch) * (image / patch);
  // Each with its stored shape (bias-free Linears [out, in]; bare parameters without ".weight").
  const auto extra = [&](const char* name, const char* op, std::vector<std::int64_t> dims,
                         bool bare = false) {
    ExtraParameter parameter{name, "vision", op, 0, std::move(dims), bare};
    parameter.params = parameter.weight_elements();
    model.extra_parameters.push_back(std::move(parameter));
  };
  extra("vision_model.patch_embedding.linear", "Linear",
        {hidden, checked_product({channels, patch, patch})});
  extra("vision_model.class_embedding", "Embedding", {hidden}, true);
  extra("vision_model.positional_embedding_vlm", "Embedding", {patches + 1, hidden}, true);
  model.extra_parameters.push_back(
      {"vision_model.layernorm_pre", "vision", "LayerNorm", 2 * hidden});
  model.extra_parameters.push_back(
      {"vision_model.layernorm_post", "vision", "LayerNorm", 2 * hidden});
  extra("vision_model.vision_adapter.mlp.fc1", "Linear", {projector_in, intermediate});
  extra("vision_model.vision_adapter.mlp.fc2", "Linear", {projector_out, projector_out});
  extra("multi_modal_projector.linear_1", "Linear", {text_hidden, output});

  Stack stack;
  stack.name = "vision_model";
  stack.causal = false;
  stack.vision = true;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.mlp = Mlp{MlpKind::plain, vision.optional_string("hidden_act").value_or("gelu"), hidden,
                    intermediate, true, true, false};
    block.norms = {layer_norm("input_layernorm", hidden),
                   layer_norm("post_attention_layernorm", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  model.stacks.push_back(std::move(stack));
}

}  // namespace

ModelDescription build_llama4_text(const ConfigReader& config) {
  return build_llama4_language(config);
}

ModelDescription build_llama4(const ConfigReader& config) {
  ModelDescription model = build_llama4_language(config.child("text_config"));
  model.family = "Llama 4 multimodal (MoE text decoder + vision encoder + projector)";
  if (model.torch_dtype.empty()) {
    model.torch_dtype = read_torch_dtype(config);
  }
  add_llama4_vision(config.child("vision_config"), model.hidden_size, model);
  return model;
}

}  // namespace trace::family
