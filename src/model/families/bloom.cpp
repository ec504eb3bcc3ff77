// BLOOM: ALiBi positions (no table), a LayerNorm right after the word embeddings, fused
// query_key_value, 4 x hidden GELU MLP, biases everywhere, tied head.
// Tensor list: transformers models/bloom/modeling_bloom.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_bloom(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size", "n_embed"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"n_layer", "num_hidden_layers"}, 1, k_max_layers);
  const HeadShape shape =
      read_head_shape(config, hidden, {"n_head", "num_attention_heads"}, {}, false);
  fill_decoder_basics(model, config, vocab, hidden, true);
  model.family = "BLOOM (decoder-only, ALiBi, LayerNorm, GELU MLP)";
  model.position = PositionKind::alibi;
  model.embedding_norm = layer_norm("word_embeddings_layernorm", hidden);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.attention.name = "self_attention";
    block.attention.fused_qkv = true;
    block.mlp = Mlp{MlpKind::plain, "gelu", hidden, 4 * hidden, true, true, false};
    block.norms = {layer_norm("input_layernorm", hidden),
                   layer_norm("post_attention_layernorm", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("ln_f", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
