// Bailing MoE V2 / Ling 2.0 (BailingMoeV2ForCausalLM; the Hub configs say model_type bailing_moe,
// which bailing_moe.cpp hands over here by architecture; third-party ports say bailing_moe_v2):
// inclusionAI/Ling-mini-2.0, Ling-flash-2.0, Ling-1T, Ring-mini-2.0, Ring-flash-2.0 and their
// -base checkpoints (remote code). A pre-norm RMSNorm decoder: one fused query_key_value Linear
// [(heads + 2 kv) x head_dim, H] (bias per use_qkv_bias), per-head RMSNorm QK-norm
// (query_layernorm / key_layernorm, use_qk_norm), partial RoPE, output `dense` (bias per use_bias,
// default false). The first first_k_dense_replace layers hold a dense SwiGLU of intermediate_size;
// the rest a sigmoid router gate [E, H] with an expert_bias buffer [E] (stored, F32, whatever
// moe_router_enable_expert_bias says: the gate always registers it), num_experts SwiGLU experts of
// moe_intermediate_size (top num_experts_per_tok within topk_group of n_group groups) and the
// shared experts as one MLP of num_shared_experts x moe_intermediate_size. No MLP has a bias.
// num_nextn_predict_layers MTP layers are stored after the main stack (model.layers.{L + i}, as
// inclusionAI's DCP converter, Megatron-Bridge and llama.cpp lay them out): enorm, hnorm, eh_proj
// [H, 2H], input_layernorm, attention, post_attention_layernorm, an MoE FFN, final_layernorm; they
// share the model's embedding and head. The published Ling 2.0 checkpoints store none.
// Checkpoint names: model.word_embeddings, model.layers.N.attention.{query_key_value, dense,
// query_layernorm, key_layernorm}, mlp.{gate.weight, gate.expert_bias, experts.E.*,
// shared_experts.*}, input_layernorm, post_attention_layernorm, model.norm, lm_head.
// Tensor list: inclusionAI/Ling-V2 models/modeling_bailing_moe_v2.py (BailingMoeV2Gate,
// BailingMoeV2SparseMoeBlock, BailingMoeV2Attention, BailingMoeV2MTPLayer).
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// The MTP layer's tensors outside its attention and FFN (BailingMoeV2MTPLayer), named as the
// layer index after the main stack.
void add_bailing_mtp_extras(ModelDescription& model, std::int64_t layer, std::int64_t hidden) {
  const std::string prefix = fmt::format("model.layers.{}", layer);
  model.extra_parameters.push_back({prefix + ".enorm", "mtp", "RMSNorm", hidden});
  model.extra_parameters.push_back({prefix + ".hnorm", "mtp", "RMSNorm", hidden});
  model.extra_parameters.push_back(
      {prefix + ".eh_proj", "mtp", "Linear", checked_mul(2 * hidden, hidden)});
  model.extra_parameters.push_back({prefix + ".final_layernorm", "mtp", "RMSNorm", hidden});
}

// n_group / topk_group only steer routing, but the gate reshapes the scores into n_group equal
// groups and draws top_k from topk_group of them: refuse values that cannot run.
void check_groups(const ConfigReader& config, const Moe& moe) {
  const std::int64_t groups = config.int_or({"n_group"}, 0, 0, 1 << 20);
  if (groups <= 1) return;
  if (moe.num_experts % groups != 0) {
    config.fail("n_group",
                fmt::format("= {} does not divide num_experts = {}", groups, moe.num_experts));
  }
  const std::int64_t chosen = config.int_or({"topk_group"}, groups, 1, 1 << 20);
  if (chosen > groups) {
    config.fail("topk_group", fmt::format("= {} exceeds n_group = {}", chosen, groups));
  }
  if (moe.top_k > chosen * (moe.num_experts / groups)) {
    config.fail(
        "num_experts_per_tok",
        fmt::format("= {} exceeds the {} experts that topk_group = {} groups of {} hold", moe.top_k,
                    chosen * (moe.num_experts / groups), chosen, moe.num_experts / groups));
  }
}

}  // namespace

ModelDescription build_bailing_moe_v2(const ConfigReader& config) {
  ModelDescription model;
  // The ports of BailingMoeV2Config disagree on this default (4 or 0): ask for it.
  if (!config.has("num_key_value_heads")) {
    config.fail("num_key_value_heads",
                "is missing; the BailingMoeV2Config ports disagree on its default, so trace will "
                "not guess");
  }
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  model.family =
      "Ling 2.0 / Bailing MoE V2 (fused QKV, QK-norm, partial RoPE, sigmoid-routed MoE with "
      "expert bias and shared experts, MTP)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 32768;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  BailingFfn ffn = read_bailing_ffn(config, hidden, layers, 1, ExpertDefaults{256, 8}, activation);
  if (ffn.moe) {
    Moe& moe = *ffn.moe;
    // Absent: the config class's 1; null: none (the block tests `is not None`).
    const std::int64_t shared = config.json().contains("num_shared_experts")
                                    ? config.int_or({"num_shared_experts"}, 0, 0, 1 << 16)
                                    : 1;
    set_shared_experts(moe, shared);
    // The modeling code sizes the shared MLP from moe_intermediate_size x num_shared_experts; the
    // configs also state moe_shared_expert_intermediate_size (which llama.cpp prefers): the two
    // must agree.
    if (const std::optional<std::int64_t> stated =
            config.optional_int({"moe_shared_expert_intermediate_size"}, 0, k_max_width)) {
      const std::int64_t built = moe.shared ? moe.shared->intermediate : 0;
      if (*stated != built) {
        config.fail("moe_shared_expert_intermediate_size",
                    fmt::format("= {} disagrees with num_shared_experts x moe_intermediate_size "
                                "= {}, which the modeling code builds",
                                *stated, built));
      }
    }
    moe.router_correction_bias = true;  // BailingMoeV2Gate's expert_bias buffer
    check_groups(config, moe);
  }

  DecoderLayout layout;
  layout.fused_qkv = true;
  layout.qkv_bias = config.bool_or("use_qkv_bias", false);
  layout.o_bias = config.bool_or("use_bias", false);
  layout.attention_name = "attention";
  if (config.bool_or("use_qk_norm", true)) layout.qk_norm = DecoderLayout::QkNorm::per_head;
  layout.qk_norm_names = {"query_layernorm", "key_layernorm"};
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, ffn.dense_width, false, false, false};
  layout.rotary_dim = rotary_dims(config, shape.head_dim);
  if (!config.has("partial_rotary_factor") && !config.has("rotary_dim")) {
    model.notes.push_back(
        "partial_rotary_factor absent: RoPE over the whole head (the modeling "
        "code's fallback; Ling 2.0 configs state 0.5)");
  }
  Stack stack = decoder_stack(hidden, layers, shape, layout);
  if (ffn.moe) {
    for (std::int64_t i = ffn.first_dense; i < layers; ++i) {
      set_moe(stack.blocks[static_cast<std::size_t>(i)], *ffn.moe, hidden);
    }
  }
  model.stacks.push_back(std::move(stack));

  const std::int64_t mtp_layers = config.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  if (mtp_layers > 0) {
    if (!ffn.moe) {
      config.fail("num_nextn_predict_layers",
                  "is set while num_experts is null; the MTP layer always holds an MoE FFN");
    }
    Stack mtp = decoder_stack(hidden, mtp_layers, shape, layout);
    mtp.name = "mtp";
    mtp.mtp = true;
    mtp.final_norm.reset();  // each MTP layer's final_layernorm is an extra below
    for (std::int64_t i = 0; i < mtp_layers; ++i) {
      set_moe(mtp.blocks[static_cast<std::size_t>(i)], *ffn.moe, hidden);
      add_bailing_mtp_extras(model, layers + i, hidden);
    }
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
    model.notes.push_back(fmt::format(
        "{} MTP layer(s) counted as model.layers.{}.. after the main stack (embedding and head "
        "shared): in parameters.total and parameters.mtp, not in active",
        mtp_layers, layers));
  }
  note_defaults(model, config, "BailingMoeV2Config",
                {{"use_qkv_bias", "false"},
                 {"use_bias", "false"},
                 {"use_qk_norm", "true"},
                 {"num_experts", "256"},
                 {"num_experts_per_tok", "8"},
                 {"num_shared_experts", "1"},
                 {"first_k_dense_replace", "1"},
                 {"num_nextn_predict_layers", "0"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "32768"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
