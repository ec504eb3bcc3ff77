// The first Qwen generation (model_type qwen: Qwen-1.8B / 7B / 14B / 72B and their -Chat models,
// Qwen-VL / Qwen-VL-Chat), remote code QWenLMHeadModel in each repo's modeling_qwen.py:
// transformer.wte [vocab, h]; per QWenBlock an RMSNorm ln_1, attn.c_attn [3 x heads x
// kv_channels, h] + bias (always biased), attn.c_proj [h, heads x kv_channels] (bias = not
// no_bias), an RMSNorm ln_2 and a SwiGLU MLP whose w1, w2 [intermediate_size / 2, h] and c_proj
// [h, intermediate_size / 2] carry no bias under no_bias (the config's intermediate_size counts
// both halves); transformer.ln_f; lm_head [vocab, h] of its own (tie_word_embeddings false).
// RoPE over rotary_pct of each head; its inv_freq buffer is not persistent.
//
// Qwen-VL adds `visual` (visual.py VisionTransformer, an OpenCLIP ViT-bigG): conv1 Conv2d(3,
// width, patch, patch) without bias, positional_embedding [256, width] (interpolated to the
// patch grid at run time), ln_pre; `layers` residual blocks with LayerNorm ln_1 / ln_2,
// attn.in_proj [3 width, width] + bias and attn.out_proj [width, width] + bias, mlp.c_fc
// [int(width x mlp_ratio), width] + bias, GELU, mlp.c_proj + bias; then the Resampler attn_pool
// (n_queries = 256 learned queries of output_dim, their fixed 2-D sin-cos pos_embed stored as a
// frozen parameter, kv_proj [output_dim, width] without bias, an nn.MultiheadAttention of
// output_dim / 128 heads with in_proj and out_proj biases, ln_q and ln_kv), ln_post and proj
// [output_dim, output_dim]. Derivations and published totals: docs/parameters.md section 14.
#include <cmath>
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

void add_qwen_vl_visual(const ConfigReader& visual, ModelDescription& model) {
  const std::int64_t width = visual.require_int({"width"}, 1, k_max_width);
  const std::int64_t layers = visual.require_int({"layers"}, 1, k_max_layers);
  const std::int64_t heads = visual.require_int({"heads"}, 1, k_max_heads);
  const std::int64_t patch = visual.require_int({"patch_size"}, 1, 4096);
  const std::int64_t output_dim = visual.require_int({"output_dim"}, 1, k_max_width);
  const std::int64_t queries = visual.int_or({"n_queries"}, 256, 1, 1 << 20);
  const std::optional<double> ratio = visual.optional_number("mlp_ratio");
  if (!ratio) visual.fail("mlp_ratio", "is missing; visual.py sizes the MLP as width x mlp_ratio");
  if (!(*ratio > 0.0 && *ratio <= 64.0)) visual.fail("mlp_ratio", "must lie in (0, 64]");
  if (width % heads != 0) {
    visual.fail("width", fmt::format("= {} is not a multiple of heads = {}", width, heads));
  }
  if (output_dim % 128 != 0) {
    visual.fail("output_dim", fmt::format("= {} is not a multiple of 128: the Resampler runs "
                                          "output_dim / 128 heads",
                                          output_dim));
  }
  // visual.py: mlp_width = int(width * mlp_ratio), 8,192 for ViT-bigG's 1,664 x 4.9231.
  const auto mlp_width = static_cast<std::int64_t>(static_cast<double>(width) * *ratio);

  // The stored shapes (the checkpoint inventory's): Linear / Conv2d weights [out, in, ...], the
  // bare nn.Parameters (positional_embedding, pos_embed, query, proj) under their own names.
  const auto extra = [&](std::string name, const char* op, std::int64_t params,
                         std::vector<std::int64_t> shape = {}, bool bare = false) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, params, std::move(shape), bare});
  };
  extra("visual.conv1", "Conv2d", checked_product({width, 3, patch, patch}),
        {width, 3, patch, patch});
  extra("visual.positional_embedding", "Embedding", checked_mul(256, width), {256, width}, true);
  extra("visual.ln_pre", "LayerNorm", 2 * width);
  const std::int64_t d = output_dim;
  extra("visual.attn_pool.pos_embed", "Embedding", checked_mul(queries, d), {queries, d}, true);
  extra("visual.attn_pool.query", "Embedding", checked_mul(queries, d), {queries, d}, true);
  if (width != d) extra("visual.attn_pool.kv_proj", "Linear", checked_mul(d, width), {d, width});
  // The Resampler's nn.MultiheadAttention(d, d / 128 heads), 4 d^2 + 4 d: its packed q/k/v
  // projection as two bare parameters, in_proj_weight [3d, d] and in_proj_bias [3d], beside the
  // biased out_proj Linear.
  add_vision_multihead_attention(model, "visual.attn_pool.attn", d);
  extra("visual.attn_pool.ln_q", "LayerNorm", 2 * d);
  extra("visual.attn_pool.ln_kv", "LayerNorm", 2 * d);
  extra("visual.ln_post", "LayerNorm", 2 * d);
  extra("visual.proj", "Linear", checked_mul(d, d), {d, d}, true);

  HeadShape shape;
  shape.num_heads = shape.num_kv_heads = heads;
  shape.head_dim = width / heads;
  Stack stack;
  stack.name = "visual";
  stack.causal = false;
  stack.vision = true;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(width, shape, true, true);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.mlp = Mlp{MlpKind::plain, "gelu", width, mlp_width, true, true, false};
    block.norms = {layer_norm("ln_1", width), layer_norm("ln_2", width)};
    stack.blocks.push_back(std::move(block));
  }
  model.stacks.push_back(std::move(stack));
}

}  // namespace

ModelDescription build_qwen(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t both_halves = config.require_int({"intermediate_size"}, 2, k_max_width);
  if (both_halves % 2 != 0) {
    config.fail("intermediate_size", fmt::format("= {} is odd; modeling_qwen.py gives w1 and w2 "
                                                 "intermediate_size / 2 rows each",
                                                 both_halves));
  }
  HeadShape shape;
  shape.num_heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  shape.num_kv_heads = shape.num_heads;
  if (hidden % shape.num_heads != 0) {
    config.fail("num_attention_heads", fmt::format("= {} does not divide hidden_size = {}",
                                                   shape.num_heads, hidden));
  }
  shape.head_dim = config.int_or({"kv_channels"}, hidden / shape.num_heads, 1, k_max_width);
  if (checked_mul(shape.head_dim, shape.num_heads) != hidden) {
    config.fail("kv_channels",
                fmt::format("= {} x {} heads differs from hidden_size = {}; modeling_qwen.py's "
                            "c_proj needs them equal",
                            shape.head_dim, shape.num_heads, hidden));
  }

  // seq_length is the training length, max_position_embeddings the positions RoPE is set up for
  // (dynamic NTK stretches both): the release configs give both (2,048 and 8,192), so the
  // positions come from max_position_embeddings, else seq_length.
  fill_decoder_basics(model, config, vocab, hidden, false,
                      {config.has("max_position_embeddings") ? "max_position_embeddings"
                                                             : "seq_length"});
  model.family = "Qwen (first generation, remote code; fused biased c_attn, SwiGLU, RMSNorm)";
  model.position = PositionKind::rope;
  note_defaults(model, config, "QWenConfig",
                {{"no_bias", "true"}, {"kv_channels", "hidden_size / num_attention_heads"}});
  const bool linear_bias = !config.bool_or("no_bias", true);

  Stack stack;
  stack.name = "decoder";  // transformer.h in the checkpoint
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, linear_bias);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = rotary_dims(config, shape.head_dim);
    block.mlp = Mlp{MlpKind::gated, "silu", hidden, both_halves / 2, linear_bias, linear_bias,
                    false};
    block.norms = {rms_norm("ln_1", hidden), rms_norm("ln_2", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("ln_f", hidden);
  model.stacks.push_back(std::move(stack));

  if (config.has("visual")) {
    model.family = "Qwen-VL (Qwen-7B decoder + ViT-bigG with a 256-query resampler)";
    add_qwen_vl_visual(config.child("visual"), model);
  }
  return model;
}

}  // namespace trace::family
