// The first ChatGLM-6B (THUDM/chatglm-6b, model_type chatglm, GLM-130B's layout at 6B): its
// config names inner_hidden_size and position_encoding_2d where ChatGLM2/3 name
// ffn_hidden_size and padded_vocab_size. From the repo's modeling_chatglm.py: word_embeddings
// of vocab_size rows; num_layers GLMBlocks, each a LayerNorm (weight + bias) before the
// attention and one before the MLP; the attention is one fused, biased query_key_value Linear
// (hidden -> 3 x hidden, every head hidden / num_attention_heads wide) and a biased dense
// output; the MLP is two biased Linears hidden -> inner_hidden_size -> hidden around a GELU (not
// gated); final_layernorm; an lm_head tied to the embedding (PreTrainedModel ties them, the
// config leaving tie_word_embeddings at its default). The 2-D rotary embedding turns each half
// of a head by its own position id; each layer's RotaryEmbedding saves an inv_freq buffer
// (head_dim / 4 values, fp16). The residual's alpha scaling has no parameters.
// Refused: quantization_bit (the int4/int8 repos' own QuantizedLinear layout) and pre_seq_len
// (a P-tuning prefix encoder).
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_chatglm_v1(const ConfigReader& config) {
  if (config.int_or({"quantization_bit"}, 0, 0, 64) != 0) {
    config.fail("quantization_bit",
                "is not 0: the chatglm-6b int4/int8 repos store their own QuantizedLinear "
                "layout, which trace does not count; use the 16-bit THUDM/chatglm-6b config");
  }
  if (config.int_or({"pre_seq_len"}, 0, 0, k_max_positions) != 0) {
    config.fail("pre_seq_len",
                "is set: a P-tuning v2 prefix encoder is not counted; plan the base model with "
                "pre_seq_len null");
  }
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_layers"}, 1, k_max_layers);
  const std::int64_t inner = config.require_int({"inner_hidden_size"}, 1, k_max_width);
  // every head hidden / num_attention_heads wide, keys and values included
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  const bool two_d = config.bool_or("position_encoding_2d", true);
  if (two_d && shape.head_dim % 4 != 0) {
    config.fail("position_encoding_2d",
                fmt::format("needs a head width divisible by 4 (each half rotated in pairs); "
                            "hidden_size / num_attention_heads = {}",
                            shape.head_dim));
  }

  fill_decoder_basics(model, config, vocab, hidden, true, {"max_sequence_length"});
  model.family = "ChatGLM-6B, first generation (remote code; GLM-130B layout, 2-D RoPE, GELU)";
  model.position = PositionKind::rope;
  note_defaults(model, config, "ChatGLMConfig", {{"position_encoding_2d", "true"}});

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.attention.name = "attention";
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = shape.head_dim;  // two halves, each rotated in full
    block.mlp = Mlp{MlpKind::plain, "gelu", hidden, inner, true, true, false};
    block.norms = {layer_norm("input_layernorm", hidden),
                   layer_norm("post_attention_layernorm", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("final_layernorm", hidden);
  model.stacks.push_back(std::move(stack));

  const std::int64_t rotary = two_d ? shape.head_dim / 2 : shape.head_dim;
  model.stored_extras.push_back(StoredExtra{
      "transformer.layers.*.attention.rotary_emb.inv_freq",
      layers,
      rotary / 2,
      "F16",
      false,
      "each layer's RotaryEmbedding frequency buffer (half precision), saved with the weights; "
      "never a parameter",
      {rotary / 2}});
  // lm_head is Linear(hidden, vocab, dtype=half) tied to word_embeddings; THUDM's .bin shards
  // store it again (ChatGLM-6B issue #665: "lm_head.weight 在 pytorch_model-00008-of-00008.bin").
  model.stored_extras.push_back(StoredExtra{
      "lm_head.weight",
      1,
      checked_mul(vocab, hidden),
      "F16",
      false,
      "the tied lm_head saved again beside word_embeddings (THUDM's .bin shards); never a "
      "second parameter",
      {vocab, hidden}});
  // The checkpoint names differ from ChatGLM2/3's under the same model_type: the tensor
  // inventory tells the layouts apart by this tag (src/checkpoint/naming_chatglm.cpp).
  model.text_model_type = "chatglm_v1";
  return model;
}

}  // namespace trace::family
