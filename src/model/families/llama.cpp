// The Llama lineage: pre-norm decoder, RMSNorm, RoPE, SwiGLU MLP, optional GQA.
// llama (Llama 2/3.x, SmolLM2, TinyLlama, CodeLlama, Yi), mistral, qwen2, qwen3, olmo2.
// Tensor lists: transformers models/<type>/modeling_<type>.py.
#include "family.hpp"

namespace trace::family {

namespace {

struct LlamaVariant {
  const char* family;
  bool qkv_bias = false;          // qwen2: q/k/v biased, o not
  bool o_bias = false;
  bool mlp_bias = false;
  bool per_head_qk_norm = false;  // qwen3: RMSNorm(head_dim) on q and k
  bool full_width_qk_norm = false;  // olmo2: RMSNorm over all q / all k channels
  bool post_norms = false;          // olmo2: norms after attention and MLP, none before
  WindowRule windows;
};

ModelDescription build_llama_like(const ConfigReader& config, const LlamaVariant& variant) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const HeadShape& shape = dims.heads;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = variant.family;

  const std::vector<std::int64_t> windows = resolve_windows(config, layers, variant.windows);
  const std::int64_t rotary = rotary_dims(config, shape.head_dim);

  Stack stack;
  stack.name = "decoder";
  stack.blocks.reserve(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, variant.qkv_bias, variant.o_bias);
    block.attention.rotary_dim = rotary;
    block.attention.sliding_window = windows[static_cast<std::size_t>(i)];
    if (variant.per_head_qk_norm) {
      block.attention.q_norm = rms_norm("q_norm", shape.head_dim);
      block.attention.k_norm = rms_norm("k_norm", shape.head_dim);
    }
    if (variant.full_width_qk_norm) {
      block.attention.q_norm = rms_norm("q_norm", shape.num_heads * shape.head_dim);
      block.attention.k_norm = rms_norm("k_norm", shape.num_kv_heads * shape.head_dim);
    }
    block.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"), hidden,
                    intermediate, variant.mlp_bias, variant.mlp_bias, false};
    if (variant.post_norms) {
      block.norms = {rms_norm("post_attention_layernorm", hidden),
                     rms_norm("post_feedforward_layernorm", hidden)};
      block.post_norm = true;
    } else {
      block.norms = {rms_norm("input_layernorm", hidden),
                     rms_norm("post_attention_layernorm", hidden)};
    }
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  model.stored_extras.push_back(rotary_inv_freq_extra(layers, rotary));
  return model;
}

std::int64_t sliding_window_or_zero(const ConfigReader& config) {
  return config.int_or({"sliding_window"}, 0, 0, k_max_positions);
}

// Qwen2/Qwen3: sliding window only when use_sliding_window, and only from max_window_layers on.
WindowRule qwen_windows(const ConfigReader& config) {
  WindowRule rule;
  if (!config.bool_or("use_sliding_window", false)) return rule;
  rule.window = sliding_window_or_zero(config);
  rule.pattern = WindowRule::Pattern::from_layer;
  rule.parameter = config.int_or({"max_window_layers"}, 0, 0, k_max_layers);
  return rule;
}

}  // namespace

ModelDescription build_llama(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "Llama (decoder-only, RoPE, RMSNorm, SwiGLU)";
  variant.qkv_bias = variant.o_bias = config.bool_or("attention_bias", false);
  variant.mlp_bias = config.bool_or("mlp_bias", false);
  return build_llama_like(config, variant);
}

ModelDescription build_mistral(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "Mistral (decoder-only, RoPE, RMSNorm, SwiGLU, GQA)";
  variant.windows = {sliding_window_or_zero(config), WindowRule::Pattern::all, 0};
  return build_llama_like(config, variant);
}

ModelDescription build_qwen2(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "Qwen2 (decoder-only, RoPE, RMSNorm, SwiGLU, QKV bias)";
  variant.qkv_bias = true;  // hard-coded in Qwen2Attention
  variant.windows = qwen_windows(config);
  return build_llama_like(config, variant);
}

ModelDescription build_qwen3(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "Qwen3 (decoder-only, RoPE, RMSNorm, SwiGLU, QK-norm)";
  variant.qkv_bias = variant.o_bias = config.bool_or("attention_bias", false);
  variant.per_head_qk_norm = true;
  variant.windows = qwen_windows(config);
  return build_llama_like(config, variant);
}

ModelDescription build_olmo2(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "OLMo 2 (decoder-only, RoPE, post-norm RMSNorm, QK-norm, SwiGLU)";
  variant.qkv_bias = variant.o_bias = config.bool_or("attention_bias", false);
  variant.full_width_qk_norm = true;
  variant.post_norms = true;
  return build_llama_like(config, variant);
}

}  // namespace trace::family
