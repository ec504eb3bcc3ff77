// GPT-NeoX / Pythia: two LayerNorms per layer, fused query_key_value with biases, partial RoPE
// (rotary_pct), parallel residual by default, untied embed_out without bias.
// GPT-J: one LayerNorm feeding attention and MLP in parallel, unbiased q/k/v/out, biased MLP,
// an untied lm_head with a bias.
// Tensor lists: transformers models/gpt_neox/modeling_gpt_neox.py, models/gptj/modeling_gptj.py.
#include <algorithm>

#include "family.hpp"

namespace trace::family {

ModelDescription build_gpt_neox(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = "GPT-NeoX (decoder-only, partial RoPE, LayerNorm, parallel residual)";
  model.position = PositionKind::rope;
  const bool bias = config.bool_or("attention_bias", true);
  const bool parallel = config.bool_or("use_parallel_residual", true);
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    block.attention.name = "attention";
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = rotary;
    block.mlp = Mlp{MlpKind::plain, config.optional_string("hidden_act").value_or("gelu"), hidden,
                    intermediate, true, true, false};
    block.norms = {layer_norm("input_layernorm", hidden),
                   layer_norm("post_attention_layernorm", hidden)};
    block.parallel_residual = parallel;
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("final_layer_norm", hidden);
  model.stacks.push_back(std::move(stack));
  model.stored_extras.push_back(
      rotary_inv_freq_extra(layers, rotary, "gpt_neox.layers.*.attention.rotary_emb.inv_freq"));
  const std::int64_t positions = std::max<std::int64_t>(model.max_position_embeddings, 1);
  model.stored_extras.push_back(StoredExtra{
      "gpt_neox.layers.*.attention.bias", layers,
      checked_mul(positions, positions, "the mask size"), "BOOL", false,
      "causal-mask buffers (1 x 1 x max_positions^2) in checkpoints saved by older transformers "
      "(Pythia); not parameters"});
  return model;
}

ModelDescription build_gptj(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"n_embd", "hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"n_layer", "num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t inner =
      config.optional_int({"n_inner"}, 1, k_max_width).value_or(4 * hidden);
  const HeadShape shape =
      read_head_shape(config, hidden, {"n_head", "num_attention_heads"}, {}, false);
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.unspecified_dtype = "float32";  // EleutherAI/gpt-j-6b (main) stores F32
  model.family = "GPT-J (decoder-only, partial RoPE, parallel attention+MLP, LayerNorm)";
  model.position = PositionKind::rope;
  model.lm_head_bias = true;
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, false, false);
    block.attention.name = "attn";
    block.attention.rotary_dim = rotary;
    block.mlp = Mlp{MlpKind::plain,
                    config.optional_string("activation_function").value_or("gelu_new"), hidden,
                    inner, true, true, false};
    block.norms = {layer_norm("ln_1", hidden)};
    block.parallel_residual = true;
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("ln_f", hidden);
  model.stacks.push_back(std::move(stack));
  const std::int64_t positions = std::max<std::int64_t>(model.max_position_embeddings, 1);
  StoredExtra masks{
      "transformer.h.*.attn.bias",
      layers,
      checked_mul(positions, positions, "the mask size"),
      "BOOL",
      false,
      "causal-mask buffers in the original GPT-J .bin checkpoint (with a masked_bias scalar); "
      "not parameters"};
  masks.shape = {1, 1, positions, positions};
  model.stored_extras.push_back(std::move(masks));
  return model;
}

}  // namespace trace::family
