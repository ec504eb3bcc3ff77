// T5Gemma (model_type t5gemma: google/t5gemma-2b-2b, -9b-2b, -9b-9b, s/b/l/ml/xl; ul2 / prefixlm /
// -it): an encoder-decoder of Gemma 2 layers. config.json nests `encoder` and `decoder` module
// configs (t5_gemma_module; the decoder defaults to the encoder's), and its top-level vocab_size
// is pushed into both. Each stack has its own token embedding [V, d] (scaled by sqrt(d), not
// tied to each other), Gemma 2 layers (GQA q/k/v/o biased per attention_bias, head_dim default
// 256; pre/post self-attention and pre/post feed-forward RMSNorms stored as one weight each;
// a GeGLU MLP) and a final norm. Decoder layers add cross-attention: q [nq hd, d_dec], k / v
// [nkv hd, d_enc] (the encoder's width: cross_attention_hidden_size), o [d_dec, nq hd], between
// pre_cross_attn_layernorm and post_cross_attn_layernorm. lm_head.out_proj [V, d_dec] is tied to
// the decoder's embedding unless tie_word_embeddings is false. Soft-capping, query scaling and
// sliding windows hold no tensors; T5GemmaEncoderModel keeps the encoder alone.
// Tensor list: transformers models/t5gemma/modular_t5gemma.py and configuration_t5gemma.py.
// Derivations: tests/data/configs/SOURCES-t5.md.
#include <fmt/format.h>

#include <cmath>

#include "family.hpp"

namespace trace::family {

namespace {

struct ModuleShape {
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t intermediate = 0;
  HeadShape heads;
  std::vector<std::int64_t> windows;
  bool bias = false;
  std::string activation;
};

ModuleShape read_module(const ConfigReader& module) {
  ModuleShape shape;
  shape.hidden = module.require_int({"hidden_size"}, 1, k_max_width);
  shape.layers = module.require_int({"num_hidden_layers"}, 1, k_max_layers);
  shape.intermediate = module.require_int({"intermediate_size"}, 1, k_max_width);
  shape.heads = read_head_shape(module, shape.hidden, {"num_attention_heads"},
                                {"num_key_value_heads"}, true, 256);
  shape.windows = resolve_windows(
      module, shape.layers,
      {sliding_window_with_default(module, 4096), WindowRule::Pattern::alternate_even_sliding, 0});
  shape.bias = module.bool_or("attention_bias", false);
  shape.activation = module.optional_string("hidden_activation").value_or("gelu_pytorch_tanh");
  return shape;
}

// Gemma 2's layer: attention and GeGLU MLP between four RMSNorms named as T5Gemma names them.
Block gemma2_layer(const ModuleShape& shape, std::size_t index) {
  Block block;
  block.attention = self_attention(shape.hidden, shape.heads, shape.bias, shape.bias);
  block.attention.rotary_dim = shape.heads.head_dim;
  block.attention.sliding_window = shape.windows[index];
  block.mlp =
      Mlp{MlpKind::gated, shape.activation, shape.hidden, shape.intermediate, false, false, false};
  block.norms = {rms_norm("pre_self_attn_layernorm", shape.hidden),
                 rms_norm("post_self_attn_layernorm", shape.hidden),
                 rms_norm("pre_feedforward_layernorm", shape.hidden),
                 rms_norm("post_feedforward_layernorm", shape.hidden)};
  return block;
}

}  // namespace

ModelDescription build_t5gemma(const ConfigReader& config) {
  // T5GemmaConfig: the top-level vocab_size (default 256000) overrides both modules'.
  const std::int64_t vocab = config.int_or({"vocab_size"}, 256'000, 1, k_max_vocab);
  const ConfigReader encoder_config = config.child("encoder");
  const ModuleShape encoder = read_module(encoder_config);
  const ModuleShape decoder =
      config.has("decoder") ? read_module(config.child("decoder")) : encoder;
  const std::string architecture = first_architecture(config);
  const bool encoder_only = architecture == "T5GemmaEncoderModel";

  ModelDescription model;
  fill_decoder_basics(model, config, vocab, encoder_only ? encoder.hidden : decoder.hidden, true);
  model.architecture = encoder_only ? "encoder-only" : "encoder-decoder";
  model.family = "T5Gemma (encoder-decoder of Gemma 2 layers, cross-attention, GQA, GeGLU)";
  model.position = PositionKind::rope;
  if (model.torch_dtype.empty()) model.torch_dtype = read_torch_dtype(encoder_config);

  Stack encoder_stack;
  encoder_stack.name = "encoder";
  encoder_stack.causal = false;
  for (std::size_t i = 0; i < static_cast<std::size_t>(encoder.layers); ++i) {
    encoder_stack.blocks.push_back(gemma2_layer(encoder, i));
  }
  encoder_stack.final_norm = rms_norm("norm", encoder.hidden);
  model.stacks.push_back(std::move(encoder_stack));
  if (encoder_only) {
    model.has_lm_head = false;
    model.head_logits_per_token = 0;
    model.embedding_scale = std::sqrt(static_cast<double>(encoder.hidden));
    return model;
  }

  // The decoder's table is the model's embedding (the head ties to it); the encoder's is apart.
  model.embedding_scale = std::sqrt(static_cast<double>(decoder.hidden));
  model.extra_parameters.push_back(
      {"model.encoder.embed_tokens", "embedding", "Embedding", checked_mul(vocab, encoder.hidden)});
  const std::int64_t cross_width =
      config.has("decoder") ? config.child("decoder").int_or({"cross_attention_hidden_size"},
                                                             encoder.hidden, 1, k_max_width)
                            : encoder.hidden;
  if (cross_width != encoder.hidden) {
    config.child("decoder").fail(
        "cross_attention_hidden_size",
        fmt::format("= {} differs from the encoder's hidden_size {}; T5GemmaConfig sets it to "
                    "the encoder's",
                    cross_width, encoder.hidden));
  }
  Stack decoder_stack;
  decoder_stack.name = "decoder";
  for (std::size_t i = 0; i < static_cast<std::size_t>(decoder.layers); ++i) {
    Block block = gemma2_layer(decoder, i);
    Attention cross = self_attention(decoder.hidden, decoder.heads, decoder.bias, decoder.bias);
    cross.name = "cross_attn";
    cross.is_cross = true;
    cross.kv_input_dim = encoder.hidden;
    block.cross_attention = cross;
    block.norms.push_back(rms_norm("pre_cross_attn_layernorm", decoder.hidden));
    block.norms.push_back(rms_norm("post_cross_attn_layernorm", decoder.hidden));
    decoder_stack.blocks.push_back(std::move(block));
  }
  decoder_stack.final_norm = rms_norm("norm", decoder.hidden);
  model.stacks.push_back(std::move(decoder_stack));
  if (!config.has("decoder")) {
    model.notes.push_back("T5GemmaConfig default used: decoder = a copy of the encoder");
  }
  note_defaults(model, config, "T5GemmaConfig",
                {{"vocab_size", "256000"}, {"tie_word_embeddings", "true"}});
  return model;
}

}  // namespace trace::family
