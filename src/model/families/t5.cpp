// T5 / mT5 / umT5 encoder-decoders: one shared embedding, bias-free attention with inner width
// num_heads x d_kv, a bucketed relative-position bias table [buckets, heads] in the self-attention
// of the first block of each stack (umT5: of every block; cross-attention never has one),
// weight-only T5LayerNorm (RMS), ReLU / GELU (wi) or gated (wi_0, wi_1) feed-forward, final norms
// per stack, and an lm_head that T5 v1.0 ties to the embedding while v1.1 / mT5 / T0 / umT5 do
// not. A *EncoderModel class (T5EncoderModel: FLUX's and SD3's text encoder; UMT5EncoderModel:
// Wan's) holds the shared table and the encoder alone, whatever num_decoder_layers says.
// Tensor lists: transformers models/t5/modeling_t5.py, models/umt5/modeling_umt5.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

struct T5Variant {
  const char* family;
  bool bias_table_every_block;  // umT5's UMT5LayerSelfAttention
  const char* default_projection;
  bool default_tie;
};

// feed_forward_proj, or what an older serialization spells is_gated_act + dense_act_fn.
std::string feed_forward_projection(const ConfigReader& config, const T5Variant& variant) {
  if (const std::optional<std::string> projection = config.optional_string("feed_forward_proj")) {
    return *projection;
  }
  if (config.has("is_gated_act")) {
    const std::string activation = config.optional_string("dense_act_fn").value_or("gelu_new");
    return config.bool_or("is_gated_act", false) ? "gated-" + activation : activation;
  }
  return variant.default_projection;
}

ModelDescription build_t5_like(const ConfigReader& config, const T5Variant& variant) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"d_model"}, 1, k_max_width);
  const std::int64_t head_dim = config.require_int({"d_kv"}, 1, k_max_width);
  const std::int64_t ffn = config.require_int({"d_ff"}, 1, k_max_width);
  const std::int64_t encoder_layers = config.require_int({"num_layers"}, 1, k_max_layers);
  const std::int64_t decoder_layers =
      config.int_or({"num_decoder_layers"}, encoder_layers, 1, k_max_layers);
  const std::int64_t heads = config.require_int({"num_heads"}, 1, k_max_heads);
  const std::int64_t buckets =
      config.int_or({"relative_attention_num_buckets"}, 32, 1, k_max_positions);
  const std::string projection = feed_forward_projection(config, variant);
  const bool gated = projection.rfind("gated-", 0) == 0;
  const std::string activation = gated ? projection.substr(6) : projection;
  if (activation.empty() ||
      (!gated && projection != "relu" && projection != "gelu" && projection != "gelu_new")) {
    config.fail("feed_forward_proj",
                fmt::format("= \"{}\"; expected \"relu\", \"gelu\" or \"gated-<act>\"", projection));
  }
  const std::string architecture = first_architecture(config);
  const bool encoder_only = architecture.ends_with("EncoderModel");

  model.architecture = encoder_only ? "encoder-only" : "encoder-decoder";
  model.family = encoder_only ? fmt::format("{}, encoder alone ({})", variant.family, architecture)
                              : variant.family;
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = hidden;
  model.position = PositionKind::relative_bias;
  model.tie_word_embeddings = config.bool_or("tie_word_embeddings", variant.default_tie);
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype = "float32";  // t5-*, mt5-*, T0 store F32 (configs without torch_dtype)

  const HeadShape shape{heads, heads, head_dim};
  const auto make_attention = [&](const char* name, bool first, bool cross) {
    Attention attention = self_attention(hidden, shape, false, false);
    attention.name = name;
    attention.is_cross = cross;
    const bool table = !cross && (first || variant.bias_table_every_block);
    attention.relative_attention_buckets = table ? buckets : 0;
    return attention;
  };
  const Mlp mlp{gated ? MlpKind::gated : MlpKind::plain, activation, hidden, ffn, false, false,
                false};

  Stack encoder;
  encoder.name = "encoder";
  encoder.causal = false;
  for (std::int64_t i = 0; i < encoder_layers; ++i) {
    Block block;
    block.attention = make_attention("SelfAttention", i == 0, false);
    block.mlp = mlp;
    block.norms = {rms_norm("layer.0.layer_norm", hidden), rms_norm("layer.1.layer_norm", hidden)};
    encoder.blocks.push_back(std::move(block));
  }
  encoder.final_norm = rms_norm("final_layer_norm", hidden);
  model.stacks.push_back(std::move(encoder));
  if (encoder_only) {
    // No decoder and no lm_head: the hidden states are the output (no logits in training).
    model.has_lm_head = false;
    model.head_logits_per_token = 0;
    model.notes.push_back(fmt::format(
        "{}: the encoder alone; num_decoder_layers ({}) and the head are not in the checkpoint",
        architecture, decoder_layers));
    return model;
  }

  Stack decoder;
  decoder.name = "decoder";
  for (std::int64_t i = 0; i < decoder_layers; ++i) {
    Block block;
    block.attention = make_attention("SelfAttention", i == 0, false);
    block.cross_attention = make_attention("EncDecAttention", false, true);
    block.mlp = mlp;
    block.norms = {rms_norm("layer.0.layer_norm", hidden), rms_norm("layer.1.layer_norm", hidden),
                   rms_norm("layer.2.layer_norm", hidden)};
    decoder.blocks.push_back(std::move(block));
  }
  decoder.final_norm = rms_norm("final_layer_norm", hidden);
  model.stacks.push_back(std::move(decoder));
  if (model.tie_word_embeddings && !variant.bias_table_every_block) {
    // The original T5 v1.0 uploads (t5-small .. t5-11b) carry an unused cross-attention bias
    // table (transformers issues #2334, #8933): stored, never used, not a parameter here.
    model.stored_extras.push_back(
        StoredExtra{"decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",
                    1,
                    checked_mul(buckets, heads),
                    "F32",
                    false,
                    "unused table left in the original T5 v1.0 checkpoints",
                    {buckets, heads}});
  }
  return model;
}

}  // namespace

ModelDescription build_t5(const ConfigReader& config) {
  return build_t5_like(config, {"T5 (encoder-decoder, relative position bias, RMS LayerNorm)",
                                false, "relu", config.model_type() == "t5"});
}

// umT5 (google/umt5-small .. -xxl; Wan 2.x's UMT5EncoderModel text encoder): mT5's modules with a
// relative-position bias table in every self-attention; UMT5Config defaults feed_forward_proj
// to gated-gelu and ties the head, which every published umT5 config unties.
ModelDescription build_umt5(const ConfigReader& config) {
  ModelDescription model = build_t5_like(
      config, {"umT5 (encoder-decoder, a relative position bias per layer, RMS LayerNorm)", true,
               "gated-gelu", true});
  note_defaults(model, config, "UMT5Config",
                {{"tie_word_embeddings", "true"},
                 {"relative_attention_num_buckets", "32"},
                 {"num_decoder_layers", "num_layers"}});
  if (!config.has("feed_forward_proj") && !config.has("is_gated_act")) {
    model.notes.push_back("UMT5Config default used: feed_forward_proj = gated-gelu");
  }
  const std::string version = config.optional_string("transformers_version").value_or("");
  if (model.has_lm_head && model.tie_word_embeddings && version.rfind("5.", 0) == 0) {
    // UMT5Config.__post_init__ in transformers 5 writes true whatever the checkpoint holds.
    model.notes.push_back(fmt::format(
        "tie_word_embeddings = true as transformers {} writes it for every umT5 config: the "
        "google/umt5-* checkpoints store lm_head apart ({} x {} more parameters than counted "
        "here); set it false if this checkpoint holds lm_head.weight",
        version, model.vocab_size, model.hidden_size));
  }
  return model;
}

}  // namespace trace::family
