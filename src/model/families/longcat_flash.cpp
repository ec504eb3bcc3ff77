// LongCat-Flash (model_type longcat_flash, LongcatFlashForCausalLM; Meituan's LongCat-Flash-Chat,
// -Thinking). Tensor lists: vLLM's models/longcat_flash.py and longcat_flash_mtp.py, SGLang's
// longcat_flash.py, transformers' models/longcat_flash/ (tests/data/configs/SOURCES-longcat.md).
// Each of the num_layers layers holds two sub-layers and one shortcut-connected MoE:
//   input_layernorm.{0,1}, post_attention_layernorm.{0,1};
//   self_attn.{0,1}: MLA (q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
//                   kv_a_layernorm, kv_b_proj, o_proj);
//   mlps.{0,1}: SwiGLU of ffn_hidden_size;
//   mlp: n_routed_experts SwiGLU experts of expert_ffn_hidden_size, top moe_topk, routed by
//        router.classifier [n_routed_experts + zero_expert_num, H] with an
//        e_score_correction_bias of the same rows; the zero_expert_num "zero-computation"
//        (identity) experts hold no weights.
// trace holds a layer as two blocks (the MoE with the first), so the graph shows 2 x num_layers.
// The checkpoint stores one MTP layer (model.mtp.*): its own embed_tokens, eh_proj [H, 2H],
// enorm, hnorm, one MLA + dense SwiGLU layer and a final norm; no head of its own.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_longcat_flash(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  if (!config.has("num_layers")) {
    config.fail("num_layers",
                "is missing; LongCat-Flash counts its layers there, each of two attention + MLP "
                "sub-layers (a config's num_hidden_layers may hold either count, so trace does "
                "not read it)");
  }
  const std::int64_t layers = config.require_int({"num_layers"}, 1, k_max_layers);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  MlaShape mla;
  mla.q_lora_rank = config.require_int({"q_lora_rank"}, 1, k_max_width);
  mla.kv_lora_rank = config.require_int({"kv_lora_rank"}, 1, k_max_width);
  mla.qk_nope_head_dim = config.require_int({"qk_nope_head_dim"}, 0, k_max_width);
  mla.qk_rope_head_dim = config.require_int({"qk_rope_head_dim"}, 0, k_max_width);
  mla.v_head_dim = config.require_int({"v_head_dim"}, 1, k_max_width);
  const std::int64_t dense_width = config.require_int({"ffn_hidden_size"}, 1, k_max_width);
  if (const std::string method = config.optional_string("attention_method").value_or("MLA");
      method != "MLA") {
    config.fail("attention_method",
                fmt::format("= \"{}\" is not supported yet (only MLA is checked against a "
                            "published checkpoint)",
                            method));
  }
  const std::string zero_type = config.optional_string("zero_expert_type").value_or("identity");
  if (zero_type != "identity") {
    config.fail("zero_expert_type",
                fmt::format("= \"{}\" is not supported yet (only identity experts, which hold "
                            "no weights, are checked)",
                            zero_type));
  }
  const std::int64_t zero_experts = config.int_or({"zero_expert_num"}, 0, 0, 1 << 20);
  Moe moe = routed_experts(config, hidden, {"n_routed_experts"}, {"moe_topk"},
                           config.require_int({"expert_ffn_hidden_size"}, 1, k_max_width));
  if (moe.top_k > moe.num_experts + zero_experts) {
    config.fail("moe_topk", "exceeds n_routed_experts + zero_expert_num");
  }
  moe.router_correction_bias = true;
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.position = PositionKind::rope;

  const Attention attention =
      mla_attention(mla, hidden, heads, config.bool_or("attention_bias", false));
  const Mlp dense{MlpKind::gated, moe.expert.activation, hidden, dense_width, false, false, false};

  const auto sub_layer = [&](int index) {
    Block block;
    block.attention = attention;
    block.attention.name = fmt::format("self_attn.{}", index);
    block.mlp = dense;
    block.norms = {rms_norm(fmt::format("input_layernorm.{}", index), hidden),
                   rms_norm(fmt::format("post_attention_layernorm.{}", index), hidden)};
    return block;
  };
  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block first = sub_layer(0);
    first.moe = moe;
    stack.blocks.push_back(std::move(first));
    stack.blocks.push_back(sub_layer(1));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  if (zero_experts > 0) {
    // The router's rows (and correction-bias entries) for the zero-computation experts.
    model.extra_parameters.push_back(
        {fmt::format("layers.*.mlp.router: {} zero-computation experts' classifier rows and "
                     "correction biases",
                     zero_experts),
         "router", "Linear",
         checked_mul(layers, checked_mul(zero_experts, hidden + 1), "the router parameters")});
    // Their correction-bias entries are F32 like the routed experts' (storage estimate).
    model.fp32_stored_params =
        checked_add(model.fp32_stored_params, checked_mul(layers, zero_experts), "the router");
  }

  // One MTP layer unless the config says otherwise (no published config names the count).
  const std::int64_t mtp_layers = config.int_or({"num_nextn_predict_layers"}, 1, 0, 64);
  if (!config.has("num_nextn_predict_layers")) {
    model.notes.push_back(
        "num_nextn_predict_layers absent: one MTP layer counted, as LongCat-Flash's checkpoints "
        "store (model.mtp.*; vLLM and SGLang load it for speculative decoding, transformers "
        "skips it)");
  }
  if (mtp_layers > 0) {
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t i = 0; i < mtp_layers; ++i) {
      Block block;
      block.attention = attention;
      block.mlp = dense;
      block.norms = pre_norm_pair(hidden);
      mtp.blocks.push_back(std::move(block));
      // The extras under their checkpoint names (the tensor inventory's, naming_longcat.cpp).
      const std::string at = fmt::format("model.mtp.layers.{}.", i);
      model.extra_parameters.push_back(
          {at + "eh_proj", "mtp", "Linear", checked_mul(hidden, 2 * hidden)});
      model.extra_parameters.push_back({at + "enorm.m", "mtp", "RMSNorm", hidden, {hidden}});
      model.extra_parameters.push_back({at + "hnorm.m", "mtp", "RMSNorm", hidden, {hidden}});
    }
    model.extra_parameters.push_back(
        {"model.mtp.embed_tokens", "mtp", "Embedding", checked_mul(vocab, hidden)});
    model.extra_parameters.push_back({"model.mtp.norm", "mtp", "RMSNorm", hidden, {hidden}});
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
  }

  model.family = fmt::format(
      "LongCat-Flash (two MLA + SwiGLU sub-layers and a shortcut MoE per layer, {} "
      "zero-computation experts, MTP)",
      zero_experts);
  model.notes.push_back(fmt::format(
      "each of the {} layers is shown as two blocks (self_attn.0 + mlps.0 with the shortcut MoE, "
      "then self_attn.1 + mlps.1); the KV cache holds both attentions' latents",
      layers));
  if (zero_experts > 0) {
    model.notes.push_back(fmt::format(
        "active parameters take all {0} routed picks as real experts, the most a token uses; a "
        "pick of one of the {1} zero-computation (identity) experts computes nothing, so a "
        "token's count lies between this less {0} experts and this",
        moe.top_k, zero_experts));
  }
  model.notes.push_back(
      "routers counted at the checkpoint's dtype (engines compute them in F32; the checkpoint's "
      "router dtype is not published)");
  return model;
}

}  // namespace trace::family
