// Qwen3-Next (model_type qwen3_next: Qwen3-Next-80B-A3B, Qwen3-Coder-Next) and Qwen3.5
// (qwen3_5: dense, qwen3_5_moe: MoE; each a wrapper of text_config + vision_config; the text
// configs alone are qwen3_5_text / qwen3_5_moe_text). Every layer is input_layernorm, one token
// mixer, post_attention_layernorm and an FFN; the mixer is chosen by layer_types (else every
// full_attention_interval-th layer is full attention, transformers' rule):
//   linear_attention  gated DeltaNet: in_proj_qkvz [2 Hk dk + 2 Hv dv, H] + in_proj_ba [2 Hv, H]
//                     (Qwen3.5 splits them into in_proj_qkv, in_proj_z, in_proj_b, in_proj_a: the
//                     same sizes), depthwise conv1d [2 Hk dk + Hv dv, 1, K] without bias, A_log and
//                     dt_bias [Hv], gated RMSNorm [dv], out_proj [H, Hv dv];
//   full_attention    gated attention: q_proj [2 nq hd, H] (queries and a sigmoid output gate),
//                     k_proj / v_proj [nkv hd, H], o_proj [H, nq hd], q_norm / k_norm [hd],
//                     partial RoPE (partial_rotary_factor, default 0.25).
// FFN: Qwen3-Next / qwen3_5_moe a sparse MoE (router [E, H], E experts gate/up/down of
// moe_intermediate_size, one shared expert of shared_expert_intermediate_size behind
// shared_expert_gate [1, H]) unless the layer is in mlp_only_layers or off decoder_sparse_step,
// then a SwiGLU MLP of intermediate_size; qwen3_5 a SwiGLU MLP of intermediate_size everywhere.
// MTP (checkpoint tensors mtp.*): fc [H, 2H], pre_fc_norm_embedding [H], pre_fc_norm_hidden [H],
// layers.N (full-attention layers with the model's FFN), norm [H]; embedding and head are the
// backbone's. Qwen3-Next configs carry no depth key and every published checkpoint stores one
// layer (vLLM qwen3_next_mtp.py: num_nextn_predict_layers, default 1); Qwen3.5 says
// mtp_num_hidden_layers.
// Qwen3.5 vision: the Qwen3-VL tower (model.visual.*), built by add_qwen3_vl_vision in
// qwen_vision.cpp.
// Sources: transformers models/qwen3_next/modeling_qwen3_next.py, models/qwen3_5/,
// models/qwen3_vl/modeling_qwen3_vl.py; vLLM qwen3_next_mtp.py; derivations in
// tests/data/configs/SOURCES-qwen3-next.md and docs/parameters.md section 9.
#include <fmt/format.h>

#include <algorithm>

#include "../quantization.hpp"
#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

enum class FfnKind { dense, moe };

// The partial rotary factor: top level (Qwen3-Next) or inside rope_parameters (Qwen3.5).
std::int64_t gated_attention_rotary_dims(const ConfigReader& config, std::int64_t head_dim,
                                         std::vector<std::string>& defaults) {
  std::optional<double> factor = config.optional_number("partial_rotary_factor");
  if (!factor && config.has("rope_parameters")) {
    factor = config.child("rope_parameters").optional_number("partial_rotary_factor");
  }
  if (!factor) {
    factor = 0.25;
    defaults.push_back("partial_rotary_factor=0.25");
  }
  if (*factor <= 0.0 || *factor > 1.0) config.fail("partial_rotary_factor", "must lie in (0, 1]");
  return static_cast<std::int64_t>(static_cast<double>(head_dim) * *factor);
}

ModelDescription build_hybrid_text(const ConfigReader& config, FfnKind ffn, bool qwen3_5) {
  ModelDescription model;
  std::vector<std::string> defaults;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  if (!config.has("head_dim")) {
    // Both config classes default head_dim to 256, not hidden / heads.
    throw ConfigError(fmt::format("config.json ({}): '{}' is missing; Qwen3-Next / Qwen3.5 "
                                  "attention heads are 256 wide in every release, add it",
                                  config.model_type(), config.key_path("head_dim")));
  }
  model.family = qwen3_5 ? (ffn == FfnKind::moe
                                ? "Qwen3.5-MoE (gated DeltaNet + gated attention, sparse MoE, MTP)"
                                : "Qwen3.5 (gated DeltaNet + gated attention, dense SwiGLU, MTP)")
                         : "Qwen3-Next (gated DeltaNet + gated attention, sparse MoE with shared "
                           "expert, MTP)";
  model.ssm_cache_dtype = config.optional_string("mamba_ssm_cache_dtype")
                              .value_or(config.optional_string("mamba_ssm_dtype").value_or(""));

  // The layer schedule.
  std::vector<std::string> types =
      read_string_list(config, "layer_types", layers, {"linear_attention", "full_attention"});
  if (types.empty()) {
    const std::int64_t interval = config.int_or({"full_attention_interval"}, 4, 1, k_max_layers);
    if (!config.has("full_attention_interval")) defaults.push_back("full_attention_interval=4");
    for (std::int64_t i = 0; i < layers; ++i) {
      types.emplace_back((i + 1) % interval == 0 ? "full_attention" : "linear_attention");
    }
  }

  // Gated DeltaNet.
  Ssm delta;
  delta.kind = SsmKind::gated_delta_net;
  delta.name = "linear_attn";
  delta.hidden = hidden;
  delta.num_heads = config.require_int({"linear_num_value_heads"}, 1, k_max_heads);
  delta.head_dim = config.require_int({"linear_value_head_dim"}, 1, k_max_width);
  delta.groups = config.require_int({"linear_num_key_heads"}, 1, k_max_heads);
  delta.state = config.require_int({"linear_key_head_dim"}, 1, k_max_width);
  delta.conv_kernel = config.require_int({"linear_conv_kernel_dim"}, 1, 1024);
  delta.inner = checked_mul(delta.num_heads, delta.head_dim);
  delta.conv_bias = false;
  delta.proj_bias = false;
  delta.chunk_size = 64;
  delta.split_in_proj = qwen3_5;
  if (delta.num_heads % delta.groups != 0) {
    config.fail("linear_num_value_heads", "is not a multiple of linear_num_key_heads");
  }

  // Gated attention.
  const bool attention_bias = config.bool_or("attention_bias", false);
  Attention attention = self_attention(hidden, dims.heads, attention_bias, attention_bias);
  attention.output_gate = config.bool_or("attn_output_gate", true);
  attention.q_norm = rms_norm("q_norm", dims.heads.head_dim);
  attention.k_norm = rms_norm("k_norm", dims.heads.head_dim);
  attention.rotary_dim = gated_attention_rotary_dims(config, dims.heads.head_dim, defaults);

  // FFN.
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  std::optional<Moe> moe;
  std::vector<std::int64_t> dense_layers;
  std::int64_t sparse_step = 1;
  if (ffn == FfnKind::moe) {
    const std::int64_t expert_width =
        config.require_int({"moe_intermediate_size"}, 1, k_max_width);
    moe = routed_experts(config, hidden, {"num_experts"}, {"num_experts_per_tok"}, expert_width);
    const std::int64_t shared_width =
        config.require_int({"shared_expert_intermediate_size"}, 0, k_max_width);
    if (shared_width > 0) {
      moe->num_shared_experts = 1;
      moe->shared = Mlp{MlpKind::gated, activation, hidden, shared_width, false, false, false};
      moe->shared_expert_gate = true;
    }
    dense_layers = read_layer_list(config, "mlp_only_layers", layers);
    sparse_step = config.int_or({"decoder_sparse_step"}, 1, 1, k_max_layers);
  } else if (config.int_or({"num_experts"}, 0, 0, 1 << 20) > 0) {
    config.fail("num_experts", fmt::format("is set, but model_type {} is the dense Qwen3.5; a "
                                           "sparse checkpoint is qwen3_5_moe",
                                           config.model_type()));
  }
  const bool any_dense = ffn == FfnKind::dense || !dense_layers.empty() || sparse_step > 1;
  const std::int64_t dense_width =
      any_dense ? config.require_int({"intermediate_size"}, 1, k_max_width) : 0;
  const auto is_sparse = [&](std::int64_t layer) {
    if (ffn != FfnKind::moe) return false;
    for (const std::int64_t dense : dense_layers) {
      if (dense == layer) return false;
    }
    return (layer + 1) % sparse_step == 0;
  };

  const auto make_block = [&](bool full, bool sparse) {
    Block block;
    block.norms = pre_norm_pair(hidden);
    if (full) {
      block.attention = attention;
    } else {
      block.attention.kind = AttentionKind::none;
      block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = hidden;
      block.ssm = delta;
    }
    if (sparse) {
      set_moe(block, *moe, hidden);
    } else {
      block.mlp = Mlp{MlpKind::gated, activation, hidden, dense_width, false, false, false};
    }
    return block;
  };

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    stack.blocks.push_back(
        make_block(types[static_cast<std::size_t>(i)] == "full_attention", is_sparse(i)));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  if (qwen3_5) {
    // Qwen3.5's own uploads (4B, 9B, 27B, 397B-A17B: their index total_sizes) keep each DeltaNet's
    // A_log and gated norm in F32; Qwen3.6-35B-A3B's and later ones store them at BF16, as
    // trace's bytes assume. Nothing in config.json tells the two apart, so it is a note.
    const auto linear_layers = static_cast<std::int64_t>(
        std::count(types.begin(), types.end(), std::string("linear_attention")));
    model.notes.push_back(fmt::format(
        "Qwen3.5's own uploads store each DeltaNet's A_log [{}] and norm [{}] in F32: {} bytes "
        "more than the storage shown (Qwen3.6 and later uploads: BF16, as shown)",
        delta.num_heads, delta.head_dim,
        checked_product({2, linear_layers, delta.num_heads + delta.head_dim})));
  }

  // MTP.
  std::int64_t depths = 0;
  if (qwen3_5) {
    depths = config.int_or({"mtp_num_hidden_layers"}, 0, 0, 64);
    if (depths > 0 && config.bool_or("mtp_use_dedicated_embeddings", false)) {
      config.fail("mtp_use_dedicated_embeddings",
                  "= true (an MTP embedding of its own) is not supported yet");
    }
  } else {
    depths = config.int_or({"num_nextn_predict_layers"}, 1, 0, 64);
    if (!config.has("num_nextn_predict_layers")) {
      defaults.push_back("num_nextn_predict_layers=1 (vLLM's default; every published "
                         "Qwen3-Next checkpoint stores one mtp.layers.0)");
    }
  }
  if (depths > 0) {
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t depth = 0; depth < depths; ++depth) {
      mtp.blocks.push_back(make_block(true, ffn == FfnKind::moe));
    }
    mtp.final_norm = rms_norm("norm", hidden);
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = 1;  // one prediction module (one mtp.fc), whatever its layer count
    model.extra_parameters.push_back(
        {"mtp.fc", "mtp", "Linear", checked_mul(2 * hidden, hidden)});
    model.extra_parameters.push_back({"mtp.pre_fc_norm_embedding", "mtp", "RMSNorm", hidden});
    model.extra_parameters.push_back({"mtp.pre_fc_norm_hidden", "mtp", "RMSNorm", hidden});
    model.notes.push_back(fmt::format(
        "{} MTP layer(s) stored (mtp.fc, two pre-fc norms, full-attention layer(s), mtp.norm; "
        "embedding and head shared with the backbone): in parameters.total and parameters.mtp, "
        "not in active",
        depths));
  }
  if (!defaults.empty()) {
    std::string list;
    for (const std::string& item : defaults) list += (list.empty() ? "" : ", ") + item;
    model.notes.push_back(
        fmt::format("keys absent from the config; defaults used (transformers' config "
                    "classes, vLLM for MTP): {}",
                    list));
  }
  return model;
}

ModelDescription build_qwen3_5_wrapper(const ConfigReader& config, FfnKind ffn) {
  const ConfigReader text = config.child("text_config");
  nlohmann::json text_json = text.json();
  if (!text.has("tie_word_embeddings") && config.has("tie_word_embeddings")) {
    text_json["tie_word_embeddings"] = config.json().at("tie_word_embeddings");
  }
  ModelDescription model =
      build_hybrid_text(ConfigReader(text_json, "text_config", config.model_type()), ffn, true);
  model.family += " + vision encoder";
  if (model.torch_dtype.empty()) {
    model.torch_dtype = config.optional_string("torch_dtype")
                            .value_or(config.optional_string("dtype").value_or(""));
  }
  add_qwen3_vl_vision(config.child("vision_config"), model.hidden_size, model);
  // Qwen's own block-FP8 uploads (quant_method fp8, 128 x 128 blocks) convert the Gated
  // DeltaNet's in_proj_qkv, in_proj_z and out_proj as well, keep the per-head in_proj_a and
  // in_proj_b and the vision tower unconverted, and store the block scales in BF16: Qwen3.6-27B-
  // FP8's shard sizes and tensor counts (tests/data/configs/SOURCES-qwen3_6-fp8-names.md).
  model.quantization = parse_quantization(config);
  if (model.quantization && model.quantization->format == QuantFormat::fp8_block) {
    model.quantization->ssm_quantized = true;
    model.quantization->ssm_unconverted = {"in_proj_a", "in_proj_b"};
    model.quantization->block_scales_bf16 = true;
  }
  return model;
}

}  // namespace

ModelDescription build_qwen3_next(const ConfigReader& config) {
  return build_hybrid_text(config, FfnKind::moe, false);
}

ModelDescription build_qwen3_5(const ConfigReader& config) {
  return build_qwen3_5_wrapper(config, FfnKind::dense);
}

ModelDescription build_qwen3_5_moe(const ConfigReader& config) {
  return build_qwen3_5_wrapper(config, FfnKind::moe);
}

ModelDescription build_qwen3_5_text(const ConfigReader& config) {
  return build_hybrid_text(config, FfnKind::dense, true);
}

ModelDescription build_qwen3_5_moe_text(const ConfigReader& config) {
  return build_hybrid_text(config, FfnKind::moe, true);
}

}  // namespace trace::family
