// MiniMax-Text-01 / MiniMax-M1 (model_types minimax_text_01 and minimax_m1, MiniMax's remote code;
// minimax, transformers' port): a hybrid of lightning attention (linear attention with a fixed
// per-head decay) and softmax attention, every layer's FFN a Mixtral-style MoE. Tensor lists:
// MiniMax-AI/MiniMax-M1's modeling_minimax_m1.py, vLLM's minimax_text_01.py and transformers'
// models/minimax/ (tests/data/configs/SOURCES-minimax.md). Every layer:
//   input_layernorm, post_attention_layernorm [H];
//   self_attn: lightning (attn_type_list 0 / layer_types "linear_attention"): qkv_proj
//              [3 x heads x head_dim, H], output_gate [heads x head_dim, H], norm
//              [heads x head_dim], out_proj [H, heads x head_dim]; or softmax (1 /
//              "full_attention"): q / k / v / o_proj with GQA, RoPE on rotary_dim of head_dim; no
//              biases;
//   block_sparse_moe: gate [E, H] and E SwiGLU experts w1, w3 [I, H], w2 [H, I].
// The residual and norm coefficients (layernorm_*_alpha / beta, postnorm) are scalars, not tensors.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// Per layer, true for softmax attention: attn_type_list (1 softmax, 0 lightning) or layer_types.
std::vector<bool> read_softmax_layers(const ConfigReader& config, std::int64_t layers) {
  std::vector<bool> softmax;
  if (config.has("attn_type_list")) {
    const nlohmann::json& list = config.json().at("attn_type_list");
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != layers) {
      config.fail(
          "attn_type_list",
          fmt::format("must list one 0 (lightning) or 1 (softmax) per layer, {} in all", layers));
    }
    for (const nlohmann::json& value : list) {
      if (!value.is_number_integer() ||
          (value.get<std::int64_t>() != 0 && value.get<std::int64_t>() != 1)) {
        config.fail("attn_type_list", "holds a value other than 0 (lightning) or 1 (softmax)");
      }
      softmax.push_back(value.get<std::int64_t>() == 1);
    }
    return softmax;
  }
  if (config.has("layer_types")) {
    for (const std::string& type :
         read_string_list(config, "layer_types", layers, {"linear_attention", "full_attention"})) {
      softmax.push_back(type == "full_attention");
    }
    return softmax;
  }
  config.fail("attn_type_list",
              "is missing (nor layer_types); MiniMax's layers mix lightning and softmax "
              "attention and trace will not guess which is which");
}

}  // namespace

ModelDescription build_minimax(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::vector<bool> softmax = read_softmax_layers(config, layers);
  if (const std::int64_t shared = config.int_or({"shared_intermediate_size"}, 0, 0, k_max_width);
      shared != 0) {
    config.fail("shared_intermediate_size",
                fmt::format("= {} is not supported yet (the published checkpoints have no shared "
                            "expert)",
                            shared));
  }
  const std::int64_t rotary = config.int_or({"rotary_dim"}, shape.head_dim, 0, shape.head_dim);
  const Moe moe = routed_experts(config, hidden, {"num_local_experts"}, {"num_experts_per_tok"},
                                 config.require_int({"intermediate_size"}, 1, k_max_width));

  Ssm lightning;
  lightning.kind = SsmKind::lightning;
  lightning.name = "self_attn";
  lightning.hidden = hidden;
  lightning.num_heads = shape.num_heads;
  lightning.head_dim = shape.head_dim;
  lightning.inner = checked_mul(shape.num_heads, shape.head_dim, "the lightning attention width");
  lightning.state = shape.head_dim;
  lightning.groups = 0;
  lightning.conv_kernel = 1;  // no convolution: no conv state
  lightning.conv_bias = false;
  lightning.proj_bias = false;

  Stack stack;
  stack.name = "decoder";
  std::int64_t softmax_layers = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    if (softmax[static_cast<std::size_t>(i)]) {
      block.attention = self_attention(hidden, shape, false, false);
      block.attention.rotary_dim = rotary;
      ++softmax_layers;
    } else {
      block.attention.kind = AttentionKind::none;
      block.ssm = lightning;
    }
    set_moe(block, moe, hidden);
    block.norms = pre_norm_pair(hidden);
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  // The published M1 index's bytes hold the routers in F32 (SOURCES-minimax.md).
  model.fp32_stored_params = checked_product({layers, moe.num_experts, hidden}, "the routers");
  model.position = PositionKind::rope;
  model.family = "MiniMax-01 / M1 (lightning + softmax attention hybrid, MoE)";
  model.notes.push_back(fmt::format(
      "{} lightning-attention layers (a {} x {} x {} state per sequence each, whatever the "
      "context) and {} softmax layers (GQA, the KV cache)",
      layers - softmax_layers, shape.num_heads, shape.head_dim, shape.head_dim, softmax_layers));
  model.notes.push_back(
      "lightning state at --ssm-dtype (fp32 by default; vLLM's V1 engine keeps it at the model "
      "dtype, --ssm-dtype bf16 halves it)");
  return model;
}

}  // namespace trace::family
