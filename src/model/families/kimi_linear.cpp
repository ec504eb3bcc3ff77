// Kimi-Linear (model_type kimi_linear: moonshotai/Kimi-Linear-48B-A3B-Base / -Instruct). Every
// layer is input_layernorm, one token mixer (self_attn), post_attention_layernorm and an FFN. The
// mixer is chosen by linear_attn_config's kda_layers / full_attn_layers (1-based layer numbers),
// or by layer_types when the config spells it out:
//   KDA (Kimi Delta Attention)  q_proj / k_proj [Hk dk, H], v_proj [Hv dv, H], q_conv1d /
//       k_conv1d / v_conv1d [width, 1, K] without bias, A_log [Hv], f_a_proj [dv, H] -> f_b_proj
//       [Hv dv, dv] (the forget gate, low rank) with dt_bias [Hv dv], b_proj [Hv, H] (beta),
//       g_a_proj [dv, H] -> g_b_proj [Hv dv, dv] (the output gate, low rank), o_norm [dv] (gated
//       RMSNorm), o_proj [H, Hv dv]; heads and head_dim from linear_attn_config (keys and values
//       alike); recurrent state Hv x dk x dv per sequence, conv state (K - 1) x (2 Hk dk + Hv dv);
//   MLA (DeepSeek-V3 layout)    q_proj [nq (nope + rope), H] (or q_a_proj / q_a_layernorm /
//       q_b_proj when q_lora_rank is set), kv_a_proj_with_mqa [kv_lora_rank + rope, H],
//       kv_a_layernorm, kv_b_proj [nq (nope + v), kv_lora_rank], o_proj [H, nq v]; with
//       mla_use_nope the rope part of the keys is kept but not rotated (no parameters change).
// FFN (block_sparse_moe, DeepSeek-V3 style): layers before first_k_dense_replace (and off
// moe_layer_freq) are a SwiGLU MLP of intermediate_size; the rest route to top
// num_experts_per_token of num_experts experts (w1 / w3 [moe_intermediate_size, H], w2) with a
// sigmoid router gate [E, H] plus e_score_correction_bias [E], and num_shared_experts shared
// experts fused into one SwiGLU of num_shared x moe_intermediate_size.
// Sources: moonshotai/Kimi-Linear-48B-A3B-Instruct modeling_kimi.py / configuration_kimi.py,
// transformers models/kimi_linear/, vLLM kimi_linear.py; the safetensors header listing and the
// derivation in tests/data/configs/SOURCES-lfm2-kimi-linear.md and docs/parameters.md section 14.
#include <fmt/format.h>

#include <set>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

// Per-layer mixers: true = KDA, false = MLA.
std::vector<bool> kda_schedule(const ConfigReader& config, const ConfigReader& linear,
                               std::int64_t layers) {
  std::vector<bool> kda(static_cast<std::size_t>(layers), false);
  const std::vector<std::string> types = read_string_list(
      config, "layer_types", layers, {"full_attention", "linear_attention", "kda_attention"});
  if (!types.empty()) {
    for (std::size_t i = 0; i < types.size(); ++i) kda[i] = types[i] != "full_attention";
    return kda;
  }
  // 1-based layer numbers; together the two lists must name every layer exactly once.
  std::vector<int> seen(static_cast<std::size_t>(layers), 0);
  for (const char* key : {"kda_layers", "full_attn_layers"}) {
    if (!linear.has(key)) {
      linear.fail(key, "is missing (and the config has no layer_types); trace cannot tell which "
                       "layers are KDA and which MLA");
    }
    const nlohmann::json& list = linear.json().at(key);
    if (!list.is_array()) linear.fail(key, "must be a list of 1-based layer numbers");
    for (const nlohmann::json& item : list) {
      if (!item.is_number_integer() || item.get<std::int64_t>() < 1 ||
          item.get<std::int64_t>() > layers) {
        linear.fail(key, fmt::format("holds {}, not a layer number in 1..{}", item.dump(), layers));
      }
      const auto index = static_cast<std::size_t>(item.get<std::int64_t>() - 1);
      if (seen[index]++ > 0) {
        linear.fail(key, fmt::format("names layer {} twice (kda_layers and full_attn_layers "
                                     "must not overlap)",
                                     item.get<std::int64_t>()));
      }
      kda[index] = std::string_view(key) == "kda_layers";
    }
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] == 0) {
      linear.fail("kda_layers", fmt::format("and full_attn_layers leave layer {} (1-based) out", i + 1));
    }
  }
  return kda;
}

// A key that changes the tensor layout in a way trace does not model yet.
void reject_if(const ConfigReader& config, std::string_view key, bool present) {
  if (present) {
    config.fail(key, "is set; this variant (a Kimi K3 extension) is not supported yet");
  }
}

}  // namespace

Ssm kimi_delta_attention(std::int64_t hidden, std::int64_t heads, std::int64_t head_dim,
                         std::int64_t conv_kernel) {
  Ssm kda;
  kda.kind = SsmKind::kimi_delta;
  kda.name = "self_attn";
  kda.hidden = hidden;
  kda.num_heads = heads;
  kda.head_dim = head_dim;
  kda.groups = heads;    // key heads = value heads
  kda.state = head_dim;  // key head dim = value head dim
  kda.inner = checked_mul(heads, head_dim);
  kda.conv_kernel = conv_kernel;
  kda.conv_bias = false;
  kda.proj_bias = false;
  kda.gated_norm = true;
  kda.chunk_size = 64;
  kda.decay_fp32 = true;  // Kimi-Linear's and GLM-5.3-Flash's checkpoints keep A_log, dt_bias F32
  return kda;
}

ModelDescription build_kimi_linear(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  fill_decoder_basics(model, config, vocab, hidden, false);
  if (model.max_position_embeddings == 0) {
    model.max_position_embeddings = config.int_or({"model_max_length"}, 0, 0, k_max_positions);
  }
  model.position = PositionKind::rope;
  model.family = "Kimi-Linear (Kimi Delta Attention + MLA, MoE with shared expert)";

  reject_if(config, "mla_use_output_gate", config.bool_or("mla_use_output_gate", false));
  reject_if(config, "attn_res_block_size",
            config.int_or({"attn_res_block_size"}, 0, 0, k_max_layers) > 0);
  reject_if(config, "num_nextn_predict_layers",
            config.int_or({"num_nextn_predict_layers", "num_mtp_layers"}, 0, 0, 64) > 0);
  reject_if(config, "latent_moe_use_norm", config.has("latent_moe_use_norm"));

  // KDA.
  const ConfigReader linear = config.child("linear_attn_config");
  reject_if(linear, "use_full_rank_gate", linear.bool_or("use_full_rank_gate", false));
  const std::int64_t kda_heads = linear.require_int({"num_heads"}, 1, k_max_heads);
  const std::int64_t kda_head_dim = linear.require_int({"head_dim"}, 1, k_max_width);
  const Ssm kda = kimi_delta_attention(hidden, kda_heads, kda_head_dim,
                                       linear.int_or({"short_conv_kernel_size"}, 4, 1, 1024));
  const std::vector<bool> is_kda = kda_schedule(config, linear, layers);

  // MLA.
  MlaShape mla;
  mla.q_lora_rank = config.int_or({"q_lora_rank"}, 0, 0, k_max_width);
  mla.kv_lora_rank = config.require_int({"kv_lora_rank"}, 1, k_max_width);
  mla.qk_nope_head_dim = config.require_int({"qk_nope_head_dim"}, 0, k_max_width);
  mla.qk_rope_head_dim = config.require_int({"qk_rope_head_dim"}, 0, k_max_width);
  mla.v_head_dim = config.require_int({"v_head_dim"}, 1, k_max_width);
  const bool nope = config.bool_or("mla_use_nope", false) || mla.qk_rope_head_dim == 0;
  Attention attention = mla_attention(mla, hidden, heads);
  if (nope) attention.rotary_dim = 0;
  // KDA layers carry no position signal; with mla_use_nope neither do the MLA layers.
  model.position = nope ? PositionKind::none : PositionKind::rope;

  // FFN.
  // dense_ffn_hidden (Kimi K3's key) overrides intermediate_size when set, as in the config class.
  const std::int64_t dense_width =
      config.has("dense_ffn_hidden") ? config.require_int({"dense_ffn_hidden"}, 1, k_max_width)
                                     : config.require_int({"intermediate_size"}, 1, k_max_width);
  Moe moe = routed_experts(config, hidden, {"num_experts", "n_routed_experts"},
                           {"num_experts_per_token", "num_experts_per_tok"},
                           config.require_int({"moe_intermediate_size"}, 1, k_max_width));
  set_shared_experts(moe,
                     config.int_or({"num_shared_experts", "n_shared_experts"}, 1, 0, 1 << 16));
  moe.router_correction_bias = true;  // KimiMoEGate always holds e_score_correction_bias
  const std::vector<std::string> mlp_types =
      read_string_list(config, "mlp_layer_types", layers, {"dense", "sparse"});
  const std::int64_t first_dense = config.int_or({"first_k_dense_replace"}, 1, 0, k_max_layers);
  const std::int64_t frequency = config.int_or({"moe_layer_freq"}, 1, 1, k_max_layers);
  const auto is_sparse = [&](std::int64_t index) {
    if (!mlp_types.empty()) return mlp_types[static_cast<std::size_t>(index)] == "sparse";
    return index >= first_dense && index % frequency == 0;
  };

  Stack stack;
  stack.name = "decoder";
  std::int64_t kda_layers = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.norms = pre_norm_pair(hidden);
    if (is_kda[static_cast<std::size_t>(i)]) {
      block.attention.kind = AttentionKind::none;
      block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = hidden;
      block.ssm = kda;
      ++kda_layers;
    } else {
      block.attention = attention;
    }
    if (is_sparse(i)) {
      set_moe(block, moe, hidden);
    } else {
      block.mlp = Mlp{MlpKind::gated, moe.expert.activation, hidden, dense_width, false, false,
                      false};
    }
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  // moonshotai's checkpoint keeps the routers' e_score_correction_bias at its dtype.
  model.router_bias_at_checkpoint_dtype = true;

  model.notes.push_back(fmt::format(
      "{} KDA layers hold no KV cache: each keeps a {} x {} x {} recurrent state and a "
      "(short_conv_kernel_size - 1) x {} conv state per sequence; {} MLA layers cache the "
      "{}-wide latent plus the {}-wide shared key per token",
      kda_layers, kda.num_heads, kda.state, kda.head_dim, kda.conv_channels(), layers - kda_layers,
      mla.kv_lora_rank, mla.qk_rope_head_dim));
  if (nope) {
    model.notes.push_back("mla_use_nope: the MLA layers apply no rotary embedding (the "
                          "qk_rope_head_dim part of the keys is still stored and cached), so the "
                          "model has no position encoding");
  }
  note_defaults(model, config, "KimiLinearConfig",
                {{"first_k_dense_replace", "1"}, {"moe_layer_freq", "1"}});
  if (!config.has("num_shared_experts") && !config.has("n_shared_experts")) {
    model.notes.push_back("KimiLinearConfig default used: num_shared_experts = 1");
  }
  note_defaults(model, linear, "KimiLinearConfig (linear_attn_config)",
                {{"short_conv_kernel_size", "4"}});
  return model;
}

}  // namespace trace::family
