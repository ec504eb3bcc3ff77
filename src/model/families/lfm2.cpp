// LFM2 / LFM2.5 (model_type lfm2: LiquidAI/LFM2-350M..2.6B, LFM2.5-1.2B-*) and LFM2-MoE (lfm2_moe:
// LFM2-8B-A1B, LFM2-24B-A2B). Every layer is
// operator_norm, one token mixer, ffn_norm and a SwiGLU feed_forward (w1 gate, w3 up, w2 down);
// the mixer is chosen by layer_types ("conv" / "full_attention"), else by full_attn_idxs:
//   conv            gated short convolution (Lfm2ShortConv): in_proj [3H, H] (B, C, x), a
//                   depthwise conv1d [H, 1, conv_L_cache] over B*x, C gates the result,
//                   out_proj [H, H]; every one with a bias iff conv_bias;
//   full_attention  GQA: q_proj [nq hd, H], k_proj / v_proj [nkv hd, H], out_proj [H, nq hd]
//                   without biases, q_layernorm / k_layernorm [hd] (RMSNorm), RoPE.
// The FFN width is not intermediate_size as written (Lfm2MLP): with block_auto_adjust_ff_dim
// it is int(2 x ff / 3), then, if block_ffn_dim_multiplier is not null, int(multiplier x that)
// rounded up to a multiple of block_multiple_of; ff is block_ff_dim when the config has it
// (Lfm2Config reads it in place of intermediate_size), else intermediate_size.
// The model's last norm is called embedding_norm although it sits after the last layer.
// Embeddings are tied unless the config says otherwise (tie_embedding, the original spelling,
// wins over tie_word_embeddings).
// LFM2-MoE: layer_types is required; the first num_dense_layers keep a SwiGLU of
// intermediate_size as written (Lfm2MoeMLP has no width rule), the rest a sigmoid-routed MoE:
// feed_forward.gate [E, H] (no bias), expert_bias [E] (a persistent F32 buffer, stored), E
// experts w1 / w3 [moe_intermediate_size, H], w2 [H, moe_intermediate_size] stored one by one
// (transformers v5 fuses them at load), top num_experts_per_tok, no shared expert.
// Sources: transformers models/lfm2/configuration_lfm2.py and modeling_lfm2.py,
// models/lfm2_moe/modular_lfm2_moe.py and configuration_lfm2_moe.py, vLLM lfm2_moe.py;
// derivations in tests/data/configs/SOURCES-lfm2-kimi-linear.md, SOURCES-lfm2_moe.md and
// docs/parameters.md section 14.
#include <cmath>
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

// Lfm2MLP's width rule (see the header comment).
std::int64_t lfm2_ffn_width(const ConfigReader& config, ModelDescription& model) {
  const bool from_block = config.has("block_ff_dim");
  const std::int64_t written = from_block
                                   ? config.require_int({"block_ff_dim"}, 1, k_max_width)
                                   : config.require_int({"intermediate_size"}, 1, k_max_width);
  const char* written_key = from_block ? "block_ff_dim" : "intermediate_size";
  if (from_block && config.has("intermediate_size") &&
      config.require_int({"intermediate_size"}, 1, k_max_width) != written) {
    model.notes.push_back(fmt::format(
        "block_ff_dim = {} and intermediate_size = {} differ; Lfm2Config reads block_ff_dim",
        written, config.require_int({"intermediate_size"}, 1, k_max_width)));
  }
  if (!config.bool_or("block_auto_adjust_ff_dim", true)) {
    model.notes.push_back(fmt::format("FFN width {} = {} (block_auto_adjust_ff_dim = false)",
                                      written, written_key));
    return written;
  }
  std::int64_t width = 2 * written / 3;
  // An explicit null multiplier skips both the multiplier and the rounding; an absent one is
  // the config class's default 1.0.
  const auto multiplier_at = config.json().find("block_ffn_dim_multiplier");
  const bool multiplier_null =
      multiplier_at != config.json().end() && multiplier_at->is_null();
  if (!multiplier_null) {
    const double multiplier = config.optional_number("block_ffn_dim_multiplier").value_or(1.0);
    if (!(multiplier > 0.0) || multiplier > 64.0) {
      config.fail("block_ffn_dim_multiplier", "must lie in (0, 64]");
    }
    const std::int64_t multiple = config.int_or({"block_multiple_of"}, 256, 1, k_max_width);
    width = static_cast<std::int64_t>(std::floor(multiplier * static_cast<double>(width)));
    width = multiple * ((width + multiple - 1) / multiple);
  }
  if (width < 1) config.fail(written_key, "leaves an FFN width below 1 after the 2/3 adjustment");
  model.notes.push_back(fmt::format(
      "FFN width {} from {} = {} (block_auto_adjust_ff_dim: 2/3, x block_ffn_dim_multiplier, "
      "rounded up to block_multiple_of{})",
      width, written_key, written, multiplier_null ? "; multiplier null, so neither" : ""));
  return width;
}

// Tied embeddings: tie_embedding (LFM2's own key) wins over tie_word_embeddings, as in Lfm2Config
// and Lfm2MoeConfig.
bool lfm2_tied(const ConfigReader& config) {
  bool tie = config.bool_or("tie_word_embeddings", true);
  if (config.has("tie_embedding")) {
    const bool own = config.bool_or("tie_embedding", true);
    if (config.has("tie_word_embeddings") && own != tie) {
      config.fail("tie_embedding", "disagrees with tie_word_embeddings; the checkpoint holds "
                                   "one or the other, fix the config");
    }
    tie = own;
  }
  return tie;
}

// The layers of both generations: operator_norm, the mixer layer_types names (a gated short
// convolution or QK-normed GQA attention), ffn_norm, and the FFN `ffn(i)` gives layer i.
template <typename SetFfn>
Stack lfm2_stack(const ConfigReader& config, const DecoderDims& dims,
                 const std::vector<std::string>& types, ModelDescription& model, SetFfn set_ffn) {
  const std::int64_t hidden = dims.hidden;
  const bool conv_bias = config.bool_or("conv_bias", false);
  Ssm conv;
  conv.kind = SsmKind::short_conv;
  conv.name = "conv";
  conv.hidden = hidden;
  conv.inner = hidden;
  conv.num_heads = 0;
  conv.head_dim = 0;
  conv.state = 0;
  conv.groups = 0;
  conv.conv_kernel = config.int_or({"conv_L_cache"}, 3, 1, 1024);
  conv.conv_bias = conv_bias;
  conv.proj_bias = conv_bias;
  conv.gated_norm = false;

  Attention attention = self_attention(hidden, dims.heads, false, false);
  attention.q_norm = rms_norm("q_layernorm", dims.heads.head_dim);
  attention.k_norm = rms_norm("k_layernorm", dims.heads.head_dim);
  attention.rotary_dim = dims.heads.head_dim;

  Stack stack;
  stack.name = "decoder";
  std::int64_t conv_layers = 0;
  for (std::int64_t i = 0; i < dims.layers; ++i) {
    Block block;
    block.norms = {rms_norm("operator_norm", hidden), rms_norm("ffn_norm", hidden)};
    if (types[static_cast<std::size_t>(i)] == "full_attention") {
      block.attention = attention;
    } else {
      block.attention.kind = AttentionKind::none;
      block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = hidden;
      block.ssm = conv;
      ++conv_layers;
    }
    set_ffn(i, block);
    stack.blocks.push_back(std::move(block));
  }
  // The model's last norm is called embedding_norm although it sits after the last layer.
  stack.final_norm = rms_norm("embedding_norm", hidden);
  model.notes.push_back(fmt::format(
      "{} short-conv layers hold no KV cache; each keeps its last conv_L_cache - 1 = {} inputs "
      "({} channels) per sequence while served",
      conv_layers, conv.conv_kernel - 1, hidden));
  return stack;
}

}  // namespace

ModelDescription build_lfm2(const ConfigReader& config) {
  ModelDescription model;
  const bool tie = lfm2_tied(config);
  const DecoderDims dims = read_decoder_dims(config, model, true);
  model.tie_word_embeddings = tie;
  const std::int64_t layers = dims.layers;
  model.family = "LFM2 (gated short convolutions + GQA attention, SwiGLU)";

  // The layer schedule.
  std::vector<std::string> types =
      read_string_list(config, "layer_types", layers, {"conv", "full_attention"});
  if (types.empty()) {
    std::vector<std::int64_t> attention_layers = read_layer_list(config, "full_attn_idxs", layers);
    if (!config.has("full_attn_idxs")) {
      for (std::int64_t i = 0; i < layers; ++i) attention_layers.push_back(i);
    }
    types.assign(static_cast<std::size_t>(layers), "conv");
    for (const std::int64_t index : attention_layers) {
      types[static_cast<std::size_t>(index)] = "full_attention";
    }
  }

  const Mlp mlp{MlpKind::gated, "silu", dims.hidden, lfm2_ffn_width(config, model),
                false,          false,  false};
  model.stacks.push_back(
      lfm2_stack(config, dims, types, model, [&](std::int64_t, Block& block) { block.mlp = mlp; }));

  note_defaults(model, config, "Lfm2Config",
                {{"conv_L_cache", "3"},
                 {"conv_bias", "false"},
                 {"block_auto_adjust_ff_dim", "true"},
                 {"block_multiple_of", "256"}});
  if (config.json().find("block_ffn_dim_multiplier") == config.json().end()) {
    model.notes.push_back("Lfm2Config default used: block_ffn_dim_multiplier = 1.0");
  }
  if (!config.has("tie_embedding") && !config.has("tie_word_embeddings")) {
    model.notes.push_back("Lfm2Config default used: tie_word_embeddings = true");
  }
  if (!config.has("layer_types") && !config.has("full_attn_idxs")) {
    model.notes.push_back(
        "Lfm2Config default used: neither layer_types nor full_attn_idxs, so every layer is "
        "full attention");
  }
  return model;
}

ModelDescription build_lfm2_moe(const ConfigReader& config) {
  ModelDescription model;
  const bool tie = lfm2_tied(config);
  DecoderDims dims;
  dims.vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  dims.hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  dims.layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  // Lfm2MoeConfig's num_key_value_heads defaults to 8, not to num_attention_heads.
  dims.heads = read_head_shape(config, dims.hidden, {"num_attention_heads"}, {}, true);
  dims.heads.num_kv_heads = config.int_or({"num_key_value_heads"}, 8, 1, k_max_heads);
  if (dims.heads.num_kv_heads > dims.heads.num_heads ||
      dims.heads.num_heads % dims.heads.num_kv_heads != 0) {
    config.fail("num_key_value_heads", fmt::format("= {} does not divide num_attention_heads = {}",
                                                   dims.heads.num_kv_heads, dims.heads.num_heads));
  }
  fill_decoder_basics(model, config, dims.vocab, dims.hidden, true);
  model.position = PositionKind::rope;
  model.tie_word_embeddings = tie;
  model.family = "LFM2-MoE (gated short convolutions + GQA attention, sigmoid-routed MoE)";

  // Lfm2MoeDecoderLayer indexes layer_types: there is no full_attn_idxs fallback.
  const std::vector<std::string> types =
      read_string_list(config, "layer_types", dims.layers, {"conv", "full_attention"});
  if (types.empty()) {
    config.fail("layer_types", "is required: lfm2_moe picks each layer's mixer from it");
  }
  // Unlike Lfm2MLP, Lfm2MoeMLP takes intermediate_size as written.
  const Mlp dense{MlpKind::gated, "silu",
                  dims.hidden,    config.int_or({"intermediate_size"}, 7168, 1, k_max_width),
                  false,          false,
                  false};
  Moe moe = routed_experts(config, dims.hidden, {"num_experts"}, {"num_experts_per_tok"},
                           config.int_or({"moe_intermediate_size"}, 1792, 1, k_max_width),
                           ExpertDefaults{32, 4});
  // expert_bias [E]: a persistent F32 buffer the checkpoints store, steering the top-k choice as
  // DeepSeek-V3's correction bias does (counted the same way: docs/parameters.md section 2.1).
  moe.router_correction_bias = config.bool_or("use_expert_bias", true);
  const std::int64_t first_dense = config.int_or({"num_dense_layers"}, 2, 0, k_max_layers);
  if (first_dense > dims.layers) {
    config.fail("num_dense_layers",
                fmt::format("= {} exceeds num_hidden_layers = {}", first_dense, dims.layers));
  }
  model.stacks.push_back(lfm2_stack(config, dims, types, model, [&](std::int64_t i, Block& block) {
    if (i < first_dense) {
      block.mlp = dense;
    } else {
      set_moe(block, moe, dims.hidden);
    }
  }));

  note_defaults(model, config, "Lfm2MoeConfig",
                {{"num_key_value_heads", "8"},
                 {"intermediate_size", "7168"},
                 {"moe_intermediate_size", "1792"},
                 {"num_experts", "32"},
                 {"num_experts_per_tok", "4"},
                 {"num_dense_layers", "2"},
                 {"use_expert_bias", "true"},
                 {"conv_L_cache", "3"},
                 {"conv_bias", "false"}});
  if (!config.has("tie_embedding") && !config.has("tie_word_embeddings")) {
    model.notes.push_back("Lfm2MoeConfig default used: tie_word_embeddings = true");
  }
  return model;
}

}  // namespace trace::family
