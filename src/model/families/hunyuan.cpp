// Hunyuan dense (model_type hunyuan_v1_dense: tencent/Hunyuan-0.5B/1.8B/4B/7B-Instruct and
// -Pretrain, Hy-MT translation models): a Llama-layout decoder (pre-norm RMSNorm, GQA, bias-free
// SwiGLU) whose attention normalises each query and key head after RoPE with its own RMSNorm,
// stored as self_attn.query_layernorm / key_layernorm. The released configs tie the head.
// Tensor list: transformers models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py.
// Hunyuan MoE (model_type hunyuan_v1_moe: tencent/Hunyuan-A13B-Instruct, -Pretrain; 80B total,
// 13B active): the same attention, and every layer's FFN one shared SwiGLU MLP (mlp.shared_mlp)
// beside num_experts routed SwiGLU experts (mlp.experts.E) picked top moe_topk by a bias-free
// softmax router (mlp.gate.wg). num_experts, moe_topk, moe_intermediate_size and
// num_shared_expert may be one number or one per layer.
// Tensor list: transformers models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py and tencent's remote
// code (hunyuan.py) for the per-layer list keys.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// What both Hunyuan types share: the head-width cross-check, cross-layer KV sharing refused, a
// bias-free MLP, q/k/v/o biased by attention_bias, and RoPE then a per-head RMSNorm on q and k
// (self_attn.query_layernorm / key_layernorm). The caller sets the FFN.
DecoderLayout hunyuan_layout(const ConfigReader& config, const HeadShape& shape,
                             const char* config_class, ModelDescription& model) {
  // The remote-code configs also carry attention_head_dim; it must agree with the head width.
  if (const std::optional<std::int64_t> width =
          config.optional_int({"attention_head_dim"}, 1, k_max_width);
      width && *width != shape.head_dim) {
    config.fail("attention_head_dim",
                fmt::format("= {} contradicts the head width {} (head_dim, or hidden_size / "
                            "num_attention_heads)",
                            *width, shape.head_dim));
  }
  // Cross-layer attention (layers reusing an earlier layer's k/v projections) is a remote-code
  // option the released checkpoints leave off; the transformers classes do not build it.
  if (config.bool_or("use_cla", false)) {
    config.fail("use_cla",
                fmt::format("is true (cross-layer KV sharing), which {} in transformers does not "
                            "implement and this tool does not model; expected false",
                            config_class));
  }
  if (config.bool_or("mlp_bias", false)) {
    config.fail("mlp_bias",
                fmt::format("is true, but {}'s MLPs have no biases; expected false", config_class));
  }
  // The transformers classes always build the per-head norms; a remote-code checkpoint saved
  // with use_qk_norm: false holds none.
  const bool qk_norm = config.bool_or("use_qk_norm", true);
  if (!qk_norm) {
    model.notes.push_back(
        "use_qk_norm is false: no query_layernorm / key_layernorm (remote-code layout; the "
        "transformers class would create them)");
  }
  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = config.bool_or("attention_bias", false);
  layout.qk_norm = qk_norm ? DecoderLayout::QkNorm::per_head : DecoderLayout::QkNorm::none;
  layout.qk_norm_names = {"query_layernorm", "key_layernorm"};
  layout.rotary_dim = shape.head_dim;
  return layout;
}

// A key that is either one integer for every layer or a list with one integer per layer.
std::vector<std::int64_t> per_layer_ints(const ConfigReader& config, std::string_view key,
                                         std::int64_t layers, std::int64_t fallback,
                                         std::int64_t min, std::int64_t max) {
  const auto count = static_cast<std::size_t>(layers);
  if (!config.has(key)) return std::vector<std::int64_t>(count, fallback);
  const nlohmann::json& value = config.json().at(key);
  if (!value.is_array()) {
    return std::vector<std::int64_t>(count, config.require_int({key}, min, max));
  }
  if (value.size() != count) {
    config.fail(key, fmt::format("lists {} values for {} layers (one per layer expected)",
                                 value.size(), layers));
  }
  std::vector<std::int64_t> list;
  list.reserve(count);
  for (const nlohmann::json& item : value) {
    if (!item.is_number_integer() || item.get<std::int64_t>() < min ||
        item.get<std::int64_t>() > max) {
      config.fail(key, fmt::format("holds {}, not an integer in {}..{}", item.dump(), min, max));
    }
    list.push_back(item.get<std::int64_t>());
  }
  return list;
}

}  // namespace

ModelDescription build_hunyuan_v1_dense(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);  // tie_word_embeddings: False
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Hunyuan dense (decoder-only, RoPE, RMSNorm, SwiGLU, GQA, per-head QK-norm)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;

  DecoderLayout layout = hunyuan_layout(config, shape, "HunYuanDenseV1", model);
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  note_defaults(model, config, "HunYuanDenseV1Config",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"head_dim", "hidden_size / num_attention_heads"},
                 {"attention_bias", "false"},
                 {"use_qk_norm", "true"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"},
                 {"tie_word_embeddings", "false"}});
  // inv_freq and original_inv_freq (NTK-alpha RoPE) are non-persistent buffers.
  return model;
}

ModelDescription build_hunyuan_v1_moe(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);  // tie_word_embeddings: False
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  model.family = "Hunyuan MoE (GQA, per-head QK-norm, shared MLP + routed SwiGLU experts)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);

  if (config.bool_or("use_mla", false)) {
    config.fail("use_mla",
                "is true (latent attention), which HunYuanMoEV1 in transformers does "
                "not implement and this tool does not model; expected false");
  }
  if (config.int_or({"moe_layer_num_skipped"}, 0, 0, k_max_layers) != 0) {
    config.fail("moe_layer_num_skipped",
                "is not 0: dense layers before the MoE ones are a remote-code option "
                "HunYuanMoEV1 does not build; expected 0");
  }
  // transformers always builds shared_mlp; tencent's code only when use_mixed_mlp_moe. A config
  // that turns it off explicitly describes a checkpoint without it, which trace will not guess.
  if (config.json().contains("use_mixed_mlp_moe") && !config.bool_or("use_mixed_mlp_moe", true)) {
    config.fail("use_mixed_mlp_moe",
                "is false: tencent's code then builds no shared MLP while transformers' "
                "HunYuanMoEV1 always does; only use_mixed_mlp_moe: true is supported");
  }
  const std::string activation = config.optional_string("hidden_act").value_or("silu");

  // HunYuanMoEV1Config defaults: one expert, top 1; experts as wide as intermediate_size (the
  // transformers class uses it for experts and shared MLP alike) and one shared MLP.
  const std::vector<std::int64_t> experts =
      per_layer_ints(config, "num_experts", layers, 1, 1, 1 << 20);
  const std::vector<std::int64_t> top_k = per_layer_ints(config, "moe_topk", layers, 1, 1, 1 << 20);
  const std::vector<std::int64_t> expert_width =
      per_layer_ints(config, "moe_intermediate_size", layers, intermediate, 1, k_max_width);
  const std::vector<std::int64_t> shared_count =
      per_layer_ints(config, "num_shared_expert", layers, 1, 0, 1 << 16);

  DecoderLayout layout = hunyuan_layout(config, shape, "HunYuanMoEV1", model);
  layout.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
  Stack stack = decoder_stack(hidden, layers, shape, layout);
  for (std::int64_t i = 0; i < layers; ++i) {
    const auto index = static_cast<std::size_t>(i);
    if (top_k[index] > experts[index]) {
      config.fail("moe_topk", fmt::format("routes layer {}'s tokens to {} of its {} experts", i,
                                          top_k[index], experts[index]));
    }
    Moe moe;
    moe.num_experts = experts[index];
    moe.top_k = top_k[index];
    moe.hidden_dim = hidden;
    moe.expert = Mlp{MlpKind::gated, activation, hidden, expert_width[index], false, false, false};
    // tencent's code widens the one shared MLP to intermediate_size x num_shared_expert.
    if (shared_count[index] > 0) {
      moe.num_shared_experts = shared_count[index];
      const std::int64_t shared_width = checked_mul(intermediate, shared_count[index]);
      moe.shared = Mlp{MlpKind::gated, activation, hidden, shared_width, false, false, false};
    }
    set_moe(stack.blocks[index], moe, hidden);
  }
  model.stacks.push_back(std::move(stack));
  note_defaults(model, config, "HunYuanMoEV1Config",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"attention_bias", "false"},
                 {"num_experts", "1"},
                 {"moe_topk", "1"},
                 {"moe_intermediate_size", "intermediate_size"},
                 {"num_shared_expert", "1"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"},
                 {"tie_word_embeddings", "false"}});
  // inv_freq (NTK-alpha RoPE) is a non-persistent buffer: not stored.
  return model;
}

}  // namespace trace::family
