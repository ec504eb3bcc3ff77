// OPT: learned positions with a +2 offset (OPTLearnedPositionalEmbedding), biased attention and
// MLP (enable_bias), LayerNorms per layer, an optional final LayerNorm, and when
// word_embed_proj_dim differs from hidden_size (OPT-350m) bias-free project_in / project_out.
// Tensor list: transformers models/opt/modeling_opt.py.
#include "family.hpp"

namespace trace::family {

ModelDescription build_opt(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t ffn = config.require_int({"ffn_dim"}, 1, k_max_width);
  const std::int64_t positions =
      config.require_int({"max_position_embeddings"}, 1, k_max_positions);
  const std::int64_t projection = config.int_or({"word_embed_proj_dim"}, hidden, 1, k_max_width);
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  fill_decoder_basics(model, config, vocab, hidden, true);
  model.family = "OPT (decoder-only, learned positions, LayerNorm, ReLU MLP)";
  model.position = PositionKind::learned;
  model.learned_positions = positions + 2;  // OPT reserves two rows (padding offset)
  model.embedding_dim = projection;
  const bool bias = config.bool_or("enable_bias", true);
  const bool affine = config.bool_or("layer_norm_elementwise_affine", true);
  const NormKind norm_kind = affine ? NormKind::layer_norm : NormKind::layer_norm_no_affine;
  if (projection != hidden) {
    model.extra_parameters.push_back({"model.decoder.project_in",
                                      "embedding",
                                      "Linear",
                                      checked_mul(projection, hidden),
                                      {hidden, projection}});
    model.extra_parameters.push_back({"model.decoder.project_out",
                                      "head",
                                      "Linear",
                                      checked_mul(hidden, projection),
                                      {projection, hidden}});
  }

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    block.mlp = Mlp{MlpKind::plain, config.optional_string("activation_function").value_or("relu"),
                    hidden, ffn, bias, bias, false};
    block.norms = {Norm{"self_attn_layer_norm", norm_kind, hidden},
                   Norm{"final_layer_norm", norm_kind, hidden}};
    stack.blocks.push_back(std::move(block));
  }
  if (config.bool_or("do_layer_norm_before", true) &&
      !config.bool_or("_remove_final_layer_norm", false)) {
    stack.final_norm = Norm{"final_layer_norm", norm_kind, hidden};
  }
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
