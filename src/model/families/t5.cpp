// T5 / mT5 encoder-decoder: one shared embedding, bias-free attention with inner width
// num_heads x d_kv, a bucketed relative-position bias table in the first block of each stack,
// weight-only T5LayerNorm (RMS), ReLU (wi) or gated-GELU (wi_0, wi_1) feed-forward, final norms
// per stack, and an lm_head that T5 v1.0 ties to the embedding while v1.1 / mT5 / T0 do not.
// Tensor list: transformers models/t5/modeling_t5.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_t5(const ConfigReader& config) {
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
  const std::string projection = config.optional_string("feed_forward_proj").value_or("relu");
  const bool gated = projection.rfind("gated-", 0) == 0;
  if (!gated && projection != "relu" && projection != "gelu") {
    config.fail("feed_forward_proj",
                fmt::format("= \"{}\"; expected \"relu\", \"gelu\" or \"gated-<act>\"", projection));
  }
  const std::string activation = gated ? projection.substr(6) : projection;

  model.architecture = "encoder-decoder";
  model.family = "T5 (encoder-decoder, relative position bias, RMS LayerNorm)";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = hidden;
  model.position = PositionKind::relative_bias;
  model.tie_word_embeddings =
      config.bool_or("tie_word_embeddings", config.model_type() == "t5");
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype = "float32";  // t5-*, mt5-*, T0 store F32 (configs without torch_dtype)

  const HeadShape shape{heads, heads, head_dim};
  const auto make_attention = [&](const char* name, bool first, bool cross) {
    Attention attention = self_attention(hidden, shape, false, false);
    attention.name = name;
    attention.is_cross = cross;
    attention.relative_attention_buckets = first && !cross ? buckets : 0;
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
  model.stacks.push_back(std::move(encoder));
  model.stacks.push_back(std::move(decoder));
  if (model.tie_word_embeddings) {
    // The original T5 v1.0 uploads (t5-small .. t5-11b) carry an unused cross-attention bias
    // table (transformers issues #2334, #8933): stored, never used, not a parameter here.
    model.stored_extras.push_back(StoredExtra{
        "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias", 1,
        checked_mul(buckets, heads), "F32", false,
        "unused table left in the original T5 v1.0 checkpoints"});
  }
  return model;
}

}  // namespace trace::family
