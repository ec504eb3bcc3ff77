// OpenBMB MiniCPM decoders (remote code, muP-scaled Llama layouts):
//  minicpm: openbmb/MiniCPM-2B-sft-bf16 / -dpo, MiniCPM-1B-sft-bf16, MiniCPM-S-1B, MiniCPM-MoE-8x2B
//    (num_experts > 0), MiniCPM4-0.5B / MiniCPM4-8B / MiniCPM4.1-8B. A Llama layer: q/k/v/o_proj
//    (biased per attention_bias, heads hidden / num_attention_heads wide), gate/up/down_proj,
//    input_layernorm + post_attention_layernorm, final norm; tied head by default. MiniCPM-MoE
//    swaps the MLP for num_experts SwiGLU experts of intermediate_size (w1/w2/w3) and a bias-free
//    router. MiniCPM4's InfLLM v2 sparse attention (sparse_config) compresses keys by mean pooling
//    (CompressK): no tensors.
//  minicpm3: openbmb/MiniCPM3-4B. The same layer with DeepSeek-V2's multi-head latent attention
//    (q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj).
// scale_emb, scale_depth, dim_model_base (and MiniCPM4's mup_denominator) are plain floats.
// Tensor list: openbmb's modeling_minicpm.py (MiniCPMAttention, MiniCPMMLP, MiniCPMMoE as vLLM's
// models/minicpm.py loads it), transformers models/minicpm3/modular_minicpm3.py (MiniCPM3Attention
// = DeepseekV2Attention) and models/minicpm4 (the native port of MiniCPM4's checkpoints).
// Counts are derived in tests/data/configs/SOURCES-minicpm.md.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// The three muP scalars, read so a reader sees they cost no parameters. dim_model_base divides
// hidden_size before the head; zero would make the logits infinite.
void read_mup_scalars(ModelDescription& model, const ConfigReader& config, std::int64_t layers) {
  // Both remote config classes default all three to 1 (no scaling).
  const double scale_emb = config.optional_number("scale_emb").value_or(1.0);
  const double scale_depth = config.optional_number("scale_depth").value_or(1.0);
  const double dim_base = config.optional_number("dim_model_base").value_or(1.0);
  if (!(dim_base > 0.0)) {
    config.fail("dim_model_base",
                "must be positive: the final hidden states are divided by "
                "hidden_size / dim_model_base");
  }
  model.embedding_scale = scale_emb;
  model.notes.push_back(fmt::format(
      "MiniCPM muP scalars (no tensors): embeddings x {}, residual branches x {} / sqrt({}), "
      "final hidden states / ({} / {})",
      scale_emb, scale_depth, layers, model.hidden_size, dim_base));
}

}  // namespace

ModelDescription build_minicpm(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  // MiniCPMAttention sizes its heads hidden_size / num_attention_heads; a head_dim key is unread.
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  const std::optional<std::int64_t> head_dim = config.optional_int({"head_dim"}, 1, k_max_width);
  if (head_dim && *head_dim != shape.head_dim) {
    config.fail("head_dim", fmt::format("is {}, but MiniCPM's attention heads are hidden_size / "
                                        "num_attention_heads = {} wide",
                                        *head_dim, shape.head_dim));
  }
  // MiniCPM-SALA (lightning-attention hybrid layers, output gates, QK-norm) shares the type name
  // in some conversions; its extra tensors are not described here.
  if (config.has("mixer_types") || config.bool_or("use_output_gate", false) ||
      config.bool_or("qk_norm", false)) {
    config.fail(config.has("mixer_types") ? "mixer_types" : "use_output_gate",
                "marks MiniCPM-SALA's hybrid layers (lightning attention, output gates, QK-norm), "
                "which trace does not model as minicpm");
  }
  fill_decoder_basics(model, config, vocab, hidden, true);  // MiniCPMConfig ties by default
  model.position = PositionKind::rope;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  const bool attention_bias = config.bool_or("attention_bias", false);
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  const std::int64_t experts = config.int_or({"num_experts"}, 0, 0, 1 << 16);

  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = attention_bias;
  layout.rotary_dim = shape.head_dim;
  layout.mlp = experts > 0
                   ? Mlp{MlpKind::none, "", hidden, 0, false, false, false}
                   : Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};
  Stack stack = decoder_stack(hidden, layers, shape, layout);
  if (experts > 0) {
    // MiniCPM-MoE-8x2B: experts.N.w1/w3 [I, H], w2 [H, I]; gate Linear(H, E) without bias.
    const Moe moe =
        routed_experts(config, hidden, {"num_experts"}, {"num_experts_per_tok"}, intermediate);
    for (Block& block : stack.blocks) set_moe(block, moe, hidden);
    model.family = "MiniCPM-MoE (muP-scaled Llama layout, sparse MoE, RoPE, RMSNorm)";
  } else {
    model.family = "MiniCPM (muP-scaled Llama layout, RoPE, RMSNorm, SwiGLU, GQA)";
  }
  model.stacks.push_back(std::move(stack));
  read_mup_scalars(model, config, layers);
  if (config.has("mup_denominator")) {
    model.notes.push_back("mup_denominator is a scalar (no tensor)");
  }
  if (config.has("sparse_config")) {
    model.notes.push_back(
        "sparse_config: InfLLM v2 sparse attention; its key compression is mean pooling, no "
        "tensors");
  }
  note_defaults(model, config, "MiniCPMConfig",
                {{"tie_word_embeddings", "true"},
                 {"num_key_value_heads", "num_attention_heads"},
                 {"attention_bias", "false"},
                 {"hidden_act", "silu"},
                 {"scale_emb", "1"},
                 {"scale_depth", "1"},
                 {"dim_model_base", "1"}});
  return model;
}

ModelDescription build_minicpm3(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  // Both MiniCPM3Config classes (openbmb's and transformers') default intermediate_size
  // differently (11008 / 6400): ask for it.
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);

  MlaShape mla;
  // q_lora_rank: null means one q_proj; absent takes the config class's 768.
  const bool q_lora_null =
      config.json().contains("q_lora_rank") && config.json().at("q_lora_rank").is_null();
  mla.q_lora_rank = q_lora_null ? 0 : config.int_or({"q_lora_rank"}, 768, 1, k_max_width);
  mla.kv_lora_rank = config.int_or({"kv_lora_rank"}, 256, 1, k_max_width);
  mla.qk_nope_head_dim = config.int_or({"qk_nope_head_dim"}, 64, 0, k_max_width);
  mla.qk_rope_head_dim = config.int_or({"qk_rope_head_dim"}, 32, 0, k_max_width);
  if (mla.qk_nope_head_dim + mla.qk_rope_head_dim == 0) {
    config.fail("qk_nope_head_dim", "and qk_rope_head_dim are both 0: query heads need a width");
  }
  // An absent v_head_dim is qk_nope_head_dim in openbmb's MiniCPM3Config and hidden_size / heads
  // in transformers'; trace takes it only when the two agree.
  if (config.has("v_head_dim")) {
    mla.v_head_dim = config.require_int({"v_head_dim"}, 1, k_max_width);
  } else {
    const bool even = hidden % heads == 0;
    if (!even || hidden / heads != mla.qk_nope_head_dim) {
      config.fail(
          "v_head_dim",
          fmt::format("is missing, and its two defaults differ (qk_nope_head_dim = {} in "
                      "openbmb's MiniCPM3Config, hidden_size / num_attention_heads = {} "
                      "in transformers'); state it",
                      mla.qk_nope_head_dim,
                      even ? fmt::format("{}", hidden / heads) : std::string("not an integer")));
    }
    mla.v_head_dim = mla.qk_nope_head_dim;
  }
  const bool attention_bias = config.bool_or("attention_bias", false);
  if (attention_bias && mla.q_lora_rank == 0) {
    // DeepseekV2Attention's single q_proj has no bias, while q_a_proj would; trace's MLA count
    // gives the query projection the attention bias either way.
    config.fail("attention_bias",
                "is true with q_lora_rank null: the lone q_proj is bias-free "
                "there, a layout trace does not model");
  }
  const bool mlp_bias = config.bool_or("mlp_bias", false);

  fill_decoder_basics(model, config, vocab, hidden, true);  // MiniCPM3Config ties by default
  model.position = PositionKind::rope;
  model.family = "MiniCPM3 (muP-scaled decoder, multi-head latent attention, SwiGLU)";

  // decoder_stack builds the layer around attention (norm names, the MLP, the final norm); each
  // block's attention is then replaced by MLA, which DecoderLayout cannot describe.
  DecoderLayout layout;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, mlp_bias, mlp_bias, false};
  const HeadShape placeholder{heads, heads, mla.qk_nope_head_dim + mla.qk_rope_head_dim};
  Stack stack = decoder_stack(hidden, layers, placeholder, layout);
  for (Block& block : stack.blocks) {
    block.attention = mla_attention(mla, hidden, heads, attention_bias);
  }
  model.stacks.push_back(std::move(stack));
  read_mup_scalars(model, config, layers);
  if (!config.json().contains("q_lora_rank")) {
    model.notes.push_back("MiniCPM3Config default used: q_lora_rank = 768");
  }
  note_defaults(model, config, "MiniCPM3Config",
                {{"tie_word_embeddings", "true"},
                 {"kv_lora_rank", "256"},
                 {"qk_nope_head_dim", "64"},
                 {"qk_rope_head_dim", "32"},
                 {"v_head_dim", "qk_nope_head_dim"},
                 {"attention_bias", "false"},
                 {"hidden_act", "silu"},
                 {"scale_emb", "1 (openbmb) / 12 (transformers)"},
                 {"scale_depth", "1 (openbmb) / 1.4 (transformers)"},
                 {"dim_model_base", "1 (openbmb) / 256 (transformers)"}});
  return model;
}

}  // namespace trace::family
