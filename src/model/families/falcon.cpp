// Falcon: fused query_key_value, GELU MLP, parallel attention by default.
//  - new_decoder_architecture (Falcon-40B/180B): grouped kv heads (num_kv_heads);
//  - otherwise (Falcon-7B): multi_query shares one kv head.
// Norms (FalconDecoderLayer): parallel_attn false -> input_layernorm + post_attention_layernorm;
// parallel with num_ln_in_parallel_attn == 2 (the new architecture's default) -> ln_attn + ln_mlp;
// else one input_layernorm.
// Every Linear's bias follows `bias`; LayerNorms always have one. RoPE unless `alibi`.
// Tensor list: transformers models/falcon/modeling_falcon.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_falcon(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size", "n_embed"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers", "n_layer"}, 1, k_max_layers);
  HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads", "n_head"}, {});
  const bool new_architecture = config.bool_or("new_decoder_architecture", false);
  if (new_architecture) {
    shape.num_kv_heads = config.int_or({"num_kv_heads", "n_head_kv"}, shape.num_heads, 1, k_max_heads);
    if (shape.num_heads % shape.num_kv_heads != 0) {
      config.fail("num_kv_heads", "must divide num_attention_heads");
    }
  } else if (config.bool_or("multi_query", true)) {
    shape.num_kv_heads = 1;
  }
  const std::int64_t ffn = config.optional_int({"ffn_hidden_size"}, 1, k_max_width).value_or(4 * hidden);
  fill_decoder_basics(model, config, vocab, hidden, true);
  const bool alibi = config.bool_or("alibi", false);
  model.position = alibi ? PositionKind::alibi : PositionKind::rope;
  model.family = new_architecture ? "Falcon (new decoder architecture: GQA, parallel attention)"
                                  : "Falcon (multi-query, parallel attention, GELU MLP)";
  const bool bias = config.bool_or("bias", false);
  const bool parallel = config.bool_or("parallel_attn", true);
  // FalconDecoderLayer: num_ln_in_parallel_attn defaults to 2 for the new architecture.
  const std::int64_t norms_in_parallel =
      config.int_or({"num_ln_in_parallel_attn"}, new_architecture ? 2 : 1, 1, 2);
  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    block.attention.name = "self_attention";
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = alibi ? 0 : shape.head_dim;
    block.mlp = Mlp{MlpKind::plain, config.optional_string("activation").value_or("gelu"), hidden,
                    ffn, bias, bias, false};
    if (!parallel) {
      block.norms = {layer_norm("input_layernorm", hidden),
                     layer_norm("post_attention_layernorm", hidden)};
    } else if (norms_in_parallel == 2) {
      block.norms = {layer_norm("ln_attn", hidden), layer_norm("ln_mlp", hidden)};
    } else {
      block.norms = {layer_norm("input_layernorm", hidden)};
    }
    block.parallel_residual = parallel;
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("ln_f", hidden);
  model.stacks.push_back(std::move(stack));
  if (model.tie_word_embeddings) {
    // tiiuae's own uploads store lm_head.weight although it is tied (Hub total = logical +
    // vocab x hidden for Falcon-7B and -40B); the config cannot say, the headers can.
    model.stored_extras.push_back(StoredExtra{
        "lm_head.weight", 1, checked_mul(vocab, hidden), "BF16", false,
        "a second copy of the tied embedding stored by tiiuae's Falcon uploads"});
  }
  return model;
}

}  // namespace trace::family
