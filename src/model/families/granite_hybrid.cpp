// Granite 4.0 (model_type granitemoehybrid: granite-4.0-h-small, h-tiny, h-micro, h-1b/350m, and
// the attention-only granite-4.0-micro / 1b / 350m, which use the same type). Every layer is
//   input_layernorm -> mixer -> post_attention_layernorm -> block_sparse_moe + shared_mlp
// with the mixer chosen per layer by layer_types (alias layers_block_type; absent = all Mamba):
//  "mamba": Mamba-2 (GraniteMoeHybridMambaLayer): in_proj [d_inner + conv_dim + heads, H]
//    (+bias if mamba_proj_bias), conv1d over x|B|C (conv_dim = d_inner + 2 groups N, +bias if
//    mamba_conv_bias), dt_bias / A_log / D per head, gated RMSNorm over d_inner, out_proj;
//    d_inner = mamba_expand x hidden = mamba_n_heads x mamba_d_head ("auto" = d_inner / heads);
//  "attention": q/k/v/o (biases per attention_bias), head_dim = hidden / heads, RoPE only when
//    position_embedding_type is "rope" (Granite 4.0-H is NoPE);
//  block_sparse_moe: router Linear(H, num_local_experts) without bias, input_linear
//    [E, 2 intermediate_size, H] (gate and up fused), output_linear [E, H, intermediate_size];
//    none of it when num_local_experts is 0 (the dense models);
//  shared_mlp: input_linear [2 shared_intermediate_size, H], output_linear [H, shared width]:
//    the shared expert beside the MoE, or the whole dense FFN.
// The embedding, attention, residual and logits multipliers are scalars, not tensors. The final
// norm is `norm`; embeddings are tied in every Granite 4.0 config (the class default is untied).
// Sources: transformers models/granitemoehybrid/configuration_granitemoehybrid.py and
// modeling_granitemoehybrid.py; the counts are derived in
// tests/data/configs/SOURCES-jamba-granite.md.
#include <cmath>
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

// The per-layer mixers: true for Mamba, false for attention.
std::vector<bool> read_layer_types(const ConfigReader& config, std::int64_t layers) {
  const char* key = config.has("layer_types") ? "layer_types" : "layers_block_type";
  if (!config.has(key)) return std::vector<bool>(static_cast<std::size_t>(layers), true);
  if (config.has("layer_types") && config.has("layers_block_type") &&
      config.json().at("layer_types") != config.json().at("layers_block_type")) {
    config.fail("layers_block_type", "disagrees with 'layer_types'; give one schedule");
  }
  const std::vector<std::string> types =
      read_string_list(config, key, layers, {"mamba", "attention"});
  std::vector<bool> mamba;
  mamba.reserve(types.size());
  for (const std::string& type : types) mamba.push_back(type == "mamba");
  return mamba;
}

}  // namespace

Ssm read_mamba2_keys(const ConfigReader& config, std::int64_t hidden) {
  Ssm ssm;
  ssm.kind = SsmKind::mamba2;
  ssm.hidden = hidden;
  const double expand = config.optional_number("mamba_expand").value_or(2.0);
  if (!(expand > 0.0) || expand * static_cast<double>(hidden) > static_cast<double>(k_max_width)) {
    config.fail("mamba_expand", "must be a positive factor of hidden_size");
  }
  ssm.inner = static_cast<std::int64_t>(expand * static_cast<double>(hidden));  // int(), as HF
  if (ssm.inner < 1) config.fail("mamba_expand", "makes the Mamba width zero");
  ssm.num_heads = config.int_or({"mamba_n_heads"}, 128, 1, k_max_heads);
  if (ssm.inner % ssm.num_heads != 0) {
    config.fail("mamba_n_heads", fmt::format("= {} does not divide mamba_expand x hidden_size = {}",
                                             ssm.num_heads, ssm.inner));
  }
  const bool auto_head = config.has("mamba_d_head") && config.json().at("mamba_d_head").is_string();
  if (auto_head && config.json().at("mamba_d_head").get<std::string>() != "auto") {
    config.fail("mamba_d_head", "must be an integer or \"auto\"");
  }
  ssm.head_dim = auto_head ? ssm.inner / ssm.num_heads
                           : config.int_or({"mamba_d_head"}, ssm.inner / ssm.num_heads, 1,
                                           k_max_width);
  if (checked_mul(ssm.head_dim, ssm.num_heads) != ssm.inner) {
    config.fail("mamba_d_head",
                fmt::format("= {} times mamba_n_heads = {} is not mamba_expand x hidden_size = {}",
                            ssm.head_dim, ssm.num_heads, ssm.inner));
  }
  ssm.state = config.int_or({"mamba_d_state"}, 256, 1, k_max_width);
  ssm.groups = config.int_or({"mamba_n_groups"}, 1, 1, k_max_heads);
  if (ssm.num_heads % ssm.groups != 0) {
    config.fail("mamba_n_groups", fmt::format("= {} does not divide mamba_n_heads = {}",
                                              ssm.groups, ssm.num_heads));
  }
  ssm.conv_kernel = config.int_or({"mamba_d_conv"}, 4, 1, 1024);
  ssm.chunk_size = config.int_or({"mamba_chunk_size"}, 256, 1, k_max_positions);
  ssm.conv_bias = config.bool_or("mamba_conv_bias", true);
  ssm.proj_bias = config.bool_or("mamba_proj_bias", false);
  ssm.gated_norm = true;
  return ssm;
}

ModelDescription build_granite_hybrid(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.ssm_cache_dtype = config.optional_string("mamba_ssm_cache_dtype").value_or("");

  const std::vector<bool> mamba = read_layer_types(config, layers);
  std::int64_t mamba_count = 0;
  for (const bool is_mamba : mamba) mamba_count += is_mamba ? 1 : 0;

  // position_embedding_type: "rope" builds a rotary embedding; None / "nope" leave attention
  // without positions.
  bool rope = false;
  if (const std::optional<std::string> type = config.optional_string("position_embedding_type")) {
    if (*type == "rope") {
      rope = true;
    } else if (*type != "nope") {
      config.fail("position_embedding_type",
                  fmt::format("is \"{}\"; expected \"rope\", \"nope\" or null", *type));
    }
  }
  model.position = rope ? PositionKind::rope : PositionKind::none;

  const HeadShape heads =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  const bool attention_bias = config.bool_or("attention_bias", false);
  const std::string activation = config.optional_string("hidden_act").value_or("silu");

  std::optional<Ssm> ssm;
  if (mamba_count > 0) ssm = read_mamba2_keys(config, hidden);

  // The FFN: routed experts (unless num_local_experts is 0) and the shared MLP.
  const std::int64_t num_experts = config.int_or({"num_local_experts"}, 8, 0, 1 << 20);
  const std::int64_t shared_width =
      config.int_or({"shared_intermediate_size"}, 1024, 0, k_max_width);
  std::optional<Mlp> shared;
  if (shared_width > 0) {
    shared = Mlp{MlpKind::gated, activation, hidden, shared_width, false, false, true};
  }
  std::optional<Moe> moe;
  if (num_experts > 0) {
    Moe routed;
    routed.num_experts = num_experts;
    routed.top_k = config.int_or({"num_experts_per_tok"}, 2, 1, 1 << 20);
    if (routed.top_k > num_experts) {
      config.fail("num_experts_per_tok",
                  fmt::format("is {}: more experts per token than the {} there are",
                              routed.top_k, num_experts));
    }
    routed.expert = Mlp{MlpKind::gated, activation, hidden,
                        config.int_or({"intermediate_size"}, 11008, 1, k_max_width), false, false,
                        true};
    routed.hidden_dim = hidden;
    if (shared) {
      routed.num_shared_experts = 1;
      routed.shared = shared;
    }
    moe = routed;
  }

  const bool dense = !moe;
  model.family = fmt::format(
      "Granite 4.0 ({}{})",
      mamba_count == 0 ? "attention-only"
                       : mamba_count == layers ? "Mamba-2" : "hybrid Mamba-2 / attention",
      dense ? ", dense shared MLP" : ", fine-grained MoE with a shared expert");

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.norms = {rms_norm("input_layernorm", hidden),
                   rms_norm("post_attention_layernorm", hidden)};
    if (mamba[static_cast<std::size_t>(i)]) {
      block.attention.kind = AttentionKind::none;
      block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = hidden;
      block.ssm = ssm;
    } else {
      block.attention = self_attention(hidden, heads, attention_bias, attention_bias);
      block.attention.rotary_dim = rope ? heads.head_dim : 0;
    }
    if (moe) {
      set_moe(block, *moe, hidden);
    } else if (shared) {
      block.mlp = *shared;
    } else {
      block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
    }
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  note_defaults(model, config, "GraniteMoeHybridConfig",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"num_local_experts", "8"},
                 {"num_experts_per_tok", "2"},
                 {"intermediate_size", "11008"},
                 {"shared_intermediate_size", "1024"},
                 {"tie_word_embeddings", "false"}});
  if (!config.has("layer_types") && !config.has("layers_block_type")) {
    model.notes.push_back("GraniteMoeHybridConfig defaults used: no layer_types, so every layer is "
                          "\"mamba\"");
  }
  if (ssm) {
    note_defaults(model, config, "GraniteMoeHybridConfig (Mamba-2)",
                  {{"mamba_expand", "2"}, {"mamba_n_heads", "128"}, {"mamba_d_head", "auto"},
                   {"mamba_d_state", "256"}, {"mamba_n_groups", "1"}, {"mamba_d_conv", "4"},
                   {"mamba_chunk_size", "256"}, {"mamba_conv_bias", "true"},
                   {"mamba_proj_bias", "false"}});
  }
  model.notes.push_back(fmt::format("{} Mamba-2 layers, {} attention layers ({})", mamba_count,
                                    layers - mamba_count, rope ? "RoPE" : "no positional encoding"));
  return model;
}

}  // namespace trace::family
