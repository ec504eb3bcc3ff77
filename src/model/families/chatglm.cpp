// ChatGLM2 / ChatGLM3 / GLM-4-9B remote code (model_type chatglm, ChatGLMModel in the repo's
// modeling_chatglm.py): word_embeddings of padded_vocab_size; num_layers GLMBlocks, each an
// RMSNorm (or LayerNorm when rmsnorm is false) before self_attention and one before the MLP;
// self_attention is one fused query_key_value Linear to heads x kv_channels + 2 x
// multi_query_group_num x kv_channels (bias = add_qkv_bias or add_bias_linear) and a dense
// output Linear (bias = add_bias_linear); the MLP is SwiGLU with one fused dense_h_to_4h
// (hidden -> 2 x ffn_hidden_size) and dense_4h_to_h; final_layernorm when post_layer_norm; an
// output_layer Linear of its own (never tied: ChatGLMModel holds it beside the embedding).
// RoPE covers half of each head (RotaryEmbedding(kv_channels // 2)); its inv_freq buffer is
// saved in the checkpoints but is not a parameter.
// The first ChatGLM-6B (GLM-130B layout, position_encoding_2d) uses the same model_type with a
// different config: chatglm_v1.cpp.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_chatglm(const ConfigReader& config) {
  if (!config.has("padded_vocab_size") &&
      (config.has("position_encoding_2d") || config.has("inner_hidden_size"))) {
    return build_chatglm_v1(config);  // the first ChatGLM-6B: chatglm_v1.cpp
  }
  if (!config.has("padded_vocab_size")) {
    config.fail("padded_vocab_size",
                "is missing; ChatGLM2/3 and GLM-4 configs give the embedding rows there (the "
                "first ChatGLM-6B names inner_hidden_size and position_encoding_2d instead)");
  }
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"padded_vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers =
      config.require_int({"num_layers", "num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t ffn = config.require_int({"ffn_hidden_size"}, 1, k_max_width);
  HeadShape shape;
  shape.num_heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  shape.head_dim = config.require_int({"kv_channels"}, 1, k_max_width);
  const bool multi_query = config.bool_or("multi_query_attention", false);
  shape.num_kv_heads =
      multi_query ? config.require_int({"multi_query_group_num"}, 1, k_max_heads) : shape.num_heads;
  if (shape.num_heads % shape.num_kv_heads != 0) {
    config.fail("multi_query_group_num",
                fmt::format("= {} does not divide num_attention_heads = {}", shape.num_kv_heads,
                            shape.num_heads));
  }
  if (shape.head_dim % 4 != 0) {
    config.fail("kv_channels", "must be a multiple of 4: RoPE covers half of each head in pairs");
  }

  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = "ChatGLM2/3, GLM-4 (remote code; MQA groups, fused qkv, half-head RoPE, SwiGLU)";
  model.position = PositionKind::rope;
  if (config.bool_or("tie_word_embeddings", false)) {
    model.notes.push_back(
        "tie_word_embeddings is true, but modeling_chatglm.py keeps output_layer as its own Linear; "
        "counted untied");
  }
  model.tie_word_embeddings = false;
  note_defaults(model, config, "ChatGLMConfig",
                {{"multi_query_attention", "false"},
                 {"add_qkv_bias", "false"},
                 {"add_bias_linear", "false"},
                 {"rmsnorm", "true"},
                 {"post_layer_norm", "true"}});

  const bool linear_bias = config.bool_or("add_bias_linear", false);
  const bool qkv_bias = linear_bias || config.bool_or("add_qkv_bias", false);
  const bool rms = config.bool_or("rmsnorm", true);
  const auto norm = [&](const char* name) {
    return rms ? rms_norm(name, hidden) : layer_norm(name, hidden);
  };

  Stack stack;
  stack.name = "decoder";  // transformer.encoder in the checkpoint; causal all the same
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, qkv_bias, linear_bias);
    block.attention.name = "self_attention";
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = shape.head_dim / 2;
    block.mlp = Mlp{MlpKind::gated, "silu", hidden, ffn, linear_bias, linear_bias, true};
    block.norms = {norm("input_layernorm"), norm("post_attention_layernorm")};
    stack.blocks.push_back(std::move(block));
  }
  if (config.bool_or("post_layer_norm", true)) stack.final_norm = norm("final_layernorm");
  model.stacks.push_back(std::move(stack));

  // RotaryEmbedding builds inv_freq in config.torch_dtype, so it is saved in the checkpoint's dtype.
  const std::string buffer_dtype = model.torch_dtype == "bfloat16" ? "BF16"
                                   : model.torch_dtype == "float32" ? "F32"
                                                                    : "F16";
  model.stored_extras.push_back(
      StoredExtra{"transformer.rotary_pos_emb.inv_freq",
                  1,
                  shape.head_dim / 4,
                  buffer_dtype,
                  false,
                  "RotaryEmbedding's frequency buffer, saved with the weights; never a parameter",
                  {shape.head_dim / 4}});
  return model;
}

}  // namespace trace::family
