// MPT (model_type mpt: mosaicml/mpt-7b, -7b-instruct, -7b-chat, -7b-storywriter, -7b-8k, mpt-30b
// and their fine-tunes): a pre-norm decoder with a fused Wqkv, ALiBi positions by default, a plain
// up_proj -> GELU -> down_proj MLP of expansion_ratio x d_model, LayerNorms and Linears without
// biases (no_bias), and the head tied to wte.
// Tensor list: transformers models/mpt/modeling_mpt.py and the checkpoints' remote code
// (llm-foundry modeling_mpt.py / blocks.py / attention.py / ffn.py, which adds the options read
// below: attn_type, kv_n_heads, qk_ln, rope, learned_pos_emb, norm_type, ffn_config).
#include <fmt/format.h>

#include <cmath>

#include "family.hpp"

namespace trace::family {

namespace {

// The FFN width: llm-foundry takes ffn_config.ffn_hidden_size when given, else
// d_model x expansion_ratio (a ratio such as 2.5 is allowed when the product is whole).
std::int64_t mpt_ffn_width(const ConfigReader& config, const ConfigReader* ffn,
                           std::int64_t hidden) {
  if (ffn != nullptr) {
    if (const auto width = ffn->optional_int({"ffn_hidden_size"}, 1, k_max_width)) return *width;
  }
  const double ratio = config.optional_number("expansion_ratio").value_or(4.0);
  const double width = static_cast<double>(hidden) * ratio;
  if (!(ratio > 0.0) || width > static_cast<double>(k_max_width) || std::floor(width) != width) {
    config.fail("expansion_ratio", fmt::format("= {} does not give a whole FFN width for "
                                               "d_model = {}",
                                               ratio, hidden));
  }
  return static_cast<std::int64_t>(width);
}

}  // namespace

ModelDescription build_mpt(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"d_model", "hidden_size"}, 1, k_max_width);
  const std::int64_t layers =
      config.require_int({"n_layers", "num_hidden_layers"}, 1, k_max_layers);
  // MPTForCausalLM ties the head to wte (the mpt-7b-era remote code refuses anything else).
  fill_decoder_basics(model, config, vocab, hidden, true, {"max_seq_len"});
  if (!config.has("max_seq_len")) model.max_position_embeddings = 2048;  // MPTConfig default
  model.family = "MPT (decoder-only, ALiBi, LayerNorm without bias, fused Wqkv, GELU MLP)";

  // attn_config is a nested object; the config class fills the keys it leaves out.
  nlohmann::json no_attn_config = nlohmann::json::object();
  const ConfigReader attn = config.has("attn_config")
                                ? config.child("attn_config")
                                : ConfigReader(no_attn_config, "attn_config", config.model_type());
  HeadShape shape = read_head_shape(config, hidden, {"n_heads", "num_attention_heads"}, {}, false);
  const std::string attn_type = attn.optional_string("attn_type").value_or("multihead_attention");
  if (attn_type == "multiquery_attention") {
    shape.num_kv_heads = 1;
  } else if (attn_type == "grouped_query_attention") {
    shape.num_kv_heads = attn.int_or({"kv_n_heads"}, 1, 1, k_max_heads);
    if (shape.num_kv_heads > shape.num_heads || shape.num_heads % shape.num_kv_heads != 0) {
      attn.fail("kv_n_heads", fmt::format("= {} does not divide n_heads = {}", shape.num_kv_heads,
                                          shape.num_heads));
    }
  } else if (attn_type != "multihead_attention") {
    attn.fail("attn_type", fmt::format("is \"{}\"; expected multihead_attention, "
                                       "multiquery_attention or grouped_query_attention",
                                       attn_type));
  }

  // Positions: ALiBi wins (the config class then turns learned_pos_emb off), RoPE next, else the
  // learned wpe table of max_seq_len rows when learned_pos_emb is set.
  const bool alibi = attn.bool_or("alibi", true);
  const bool rope = attn.bool_or("rope", false);
  if (alibi && rope) attn.fail("rope", "and alibi are both true; MPT applies one of them");
  const bool learned = config.bool_or("learned_pos_emb", true);
  if (alibi) {
    model.position = PositionKind::alibi;
  } else if (rope) {
    model.position = PositionKind::rope;
  } else if (learned) {
    model.position = PositionKind::learned;
    model.learned_positions = model.max_position_embeddings;
  } else {
    model.position = PositionKind::none;
  }

  // no_bias strips the bias of every Linear and LayerNorm (llm-foundry removes each nn.Parameter
  // named bias; transformers' MptBlock sets the norm biases to None).
  const bool bias = !config.bool_or("no_bias", true);
  const std::string norm_type =
      config.optional_string("norm_type").value_or("low_precision_layernorm");
  DecoderLayout layout;
  if (norm_type == "low_precision_layernorm" || norm_type == "layernorm") {
    layout.norm_kind = bias ? NormKind::layer_norm : NormKind::layer_norm_no_bias;
  } else if (norm_type == "rmsnorm" || norm_type == "low_precision_rmsnorm" ||
             norm_type == "triton_rmsnorm") {
    layout.norm_kind = NormKind::rms_norm;
  } else {
    config.fail("norm_type",
                fmt::format("is \"{}\"; expected a layernorm or rmsnorm variant", norm_type));
  }

  nlohmann::json no_ffn_config = nlohmann::json::object();
  const bool has_ffn = config.has("ffn_config");
  const ConfigReader ffn = has_ffn ? config.child("ffn_config")
                                   : ConfigReader(no_ffn_config, "ffn_config", config.model_type());
  const std::string ffn_type = ffn.optional_string("ffn_type").value_or("mptmlp");
  const std::int64_t width = mpt_ffn_width(config, has_ffn ? &ffn : nullptr, hidden);
  if (ffn_type == "mptmlp") {
    layout.mlp = Mlp{MlpKind::plain, "gelu", hidden, width, bias, bias, false};
  } else if (ffn_type == "mptglu" || ffn_type == "mptgeglu") {
    const std::string activation = ffn.optional_string("ffn_act_fn").value_or("gelu");
    layout.mlp = Mlp{MlpKind::gated, activation, hidden, width, bias, bias, false};
  } else {
    ffn.fail("ffn_type", fmt::format("is \"{}\"; only mptmlp and mptglu FFNs are modelled "
                                     "(Transformer Engine and MoE FFNs are not)",
                                     ffn_type));
  }

  layout.norms = DecoderLayout::Norms::pre;
  layout.norm_names = {"norm_1", "norm_2"};
  layout.final_norm_name = "norm_f";
  layout.attention_name = "attn";
  layout.fused_qkv = true;
  layout.qkv_bias = layout.o_bias = bias;
  layout.rotary_dim = rope ? shape.head_dim : 0;
  // qk_ln: q_ln over d_model and k_ln over the key width, of the blocks' norm type.
  if (attn.bool_or("qk_ln", false)) layout.qk_norm = DecoderLayout::QkNorm::full_width;
  layout.qk_norm_names = {"q_ln", "k_ln"};
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));

  note_defaults(model, config, "MPTConfig",
                {{"expansion_ratio", "4"},
                 {"max_seq_len", "2048"},
                 {"no_bias", "true"},
                 {"norm_type", "low_precision_layernorm"},
                 {"learned_pos_emb", "true (off under alibi)"},
                 {"tie_word_embeddings", "true"}});
  note_defaults(model, attn, "MPT attn_config",
                {{"attn_type", "multihead_attention"}, {"alibi", "true"}, {"qk_ln", "false"}});
  return model;
}

}  // namespace trace::family
