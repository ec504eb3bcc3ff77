// GPT-2 and GPT-BigCode (SantaCoder, StarCoder): learned absolute positions, pre-LayerNorm,
// fused c_attn with biases, GELU MLP of n_inner (default 4 x n_embd), tied head.
// GPT-BigCode with multi_query shares one key/value head across all query heads.
// Tensor lists: transformers models/gpt2/modeling_gpt2.py, models/gpt_bigcode/modeling_gpt_bigcode.py.
#include "family.hpp"

namespace trace::family {

namespace {

ModelDescription build_gpt2_like(const ConfigReader& config, bool bigcode) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"n_embd", "hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"n_layer", "num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t positions =
      config.require_int({"n_positions", "max_position_embeddings"}, 1, k_max_positions);
  const std::int64_t inner =
      config.optional_int({"n_inner"}, 1, k_max_width).value_or(4 * hidden);
  HeadShape shape = read_head_shape(config, hidden, {"n_head", "num_attention_heads"}, {}, false);
  if (bigcode && config.bool_or("multi_query", true)) shape.num_kv_heads = 1;
  fill_decoder_basics(model, config, vocab, hidden, true);
  model.unspecified_dtype =
      "float32";  // gpt2-*, santacoder, octocoder store F32 (configs without torch_dtype)
  model.family = bigcode ? "GPT-BigCode (decoder-only, learned positions, LayerNorm, MQA)"
                         : "GPT-2 (decoder-only, learned positions, LayerNorm, GELU MLP)";
  model.position = PositionKind::learned;
  model.learned_positions = positions;
  model.max_position_embeddings = positions;

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.mlp = Mlp{MlpKind::plain,
                    config.optional_string("activation_function").value_or("gelu_new"), hidden,
                    inner, true, true, false};
    block.norms = {layer_norm("ln_1", hidden), layer_norm("ln_2", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("ln_f", hidden);
  model.stacks.push_back(std::move(stack));
  if (!bigcode) {
    model.stored_extras.push_back(StoredExtra{
        "h.*.attn.bias", layers, checked_mul(positions, positions, "the GPT-2 mask size"), "F32",
        false,
        "causal-mask buffers (1 x 1 x n_positions x n_positions) stored by the original GPT-2 "
        "checkpoints; not parameters"});
  }
  return model;
}

}  // namespace

ModelDescription build_gpt2(const ConfigReader& config) { return build_gpt2_like(config, false); }

ModelDescription build_gpt_bigcode(const ConfigReader& config) {
  return build_gpt2_like(config, true);
}

}  // namespace trace::family
