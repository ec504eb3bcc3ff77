// The Llama lineage: pre-norm decoder, RMSNorm, RoPE, SwiGLU MLP, optional GQA.
// llama (Llama 2/3.x, SmolLM2, TinyLlama, CodeLlama, Yi), mistral, qwen2, qwen3, olmo2, olmo3.
// Tensor lists: transformers models/<type>/modeling_<type>.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

struct LlamaVariant {
  const char* family;
  bool qkv_bias = false;          // qwen2: q/k/v biased, o not
  bool o_bias = false;
  bool mlp_bias = false;
  DecoderLayout::QkNorm qk_norm = DecoderLayout::QkNorm::none;  // qwen3 per head, olmo2 full
  bool post_norms = false;          // olmo2: norms after attention and MLP, none before
  WindowRule windows;
};

ModelDescription build_llama_like(const ConfigReader& config, const LlamaVariant& variant) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = variant.family;

  DecoderLayout layout;
  layout.norms = variant.post_norms ? DecoderLayout::Norms::post : DecoderLayout::Norms::pre;
  layout.qk_norm = variant.qk_norm;
  layout.qkv_bias = variant.qkv_bias;
  layout.o_bias = variant.o_bias;
  layout.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"),
                   dims.hidden, intermediate, variant.mlp_bias, variant.mlp_bias, false};
  layout.rotary_dim = rotary_dims(config, dims.heads.head_dim);
  layout.windows = resolve_windows(config, dims.layers, variant.windows);
  model.stacks.push_back(decoder_stack(dims.hidden, dims.layers, dims.heads, layout));
  model.stored_extras.push_back(rotary_inv_freq_extra(dims.layers, layout.rotary_dim));
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
  variant.qk_norm = DecoderLayout::QkNorm::per_head;
  variant.windows = qwen_windows(config);
  return build_llama_like(config, variant);
}

ModelDescription build_olmo2(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "OLMo 2 (decoder-only, RoPE, post-norm RMSNorm, QK-norm, SwiGLU)";
  variant.qkv_bias = variant.o_bias = config.bool_or("attention_bias", false);
  variant.qk_norm = DecoderLayout::QkNorm::full_width;
  variant.post_norms = true;
  return build_llama_like(config, variant);
}

// Helium (kyutai/helium-1-preview-2b, helium-1-2b): Llama's layer whose o_proj is always
// Linear(hidden, hidden) without a bias, whatever attention_bias says (q/k/v follow it).
// Tensor list: transformers models/helium/modular_helium.py.
ModelDescription build_helium(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "Helium (decoder-only, RoPE, RMSNorm, SwiGLU; o_proj never biased)";
  variant.qkv_bias = config.bool_or("attention_bias", false);
  variant.mlp_bias = config.bool_or("mlp_bias", false);
  ModelDescription model = build_llama_like(config, variant);
  const Attention& attention = model.stacks.front().blocks.front().attention;
  if (attention.num_heads * attention.head_dim != model.hidden_size) {
    config.fail("head_dim",
                fmt::format("x num_attention_heads = {} is not hidden_size {}: "
                            "Helium's o_proj maps hidden_size to hidden_size",
                            attention.num_heads * attention.head_dim, model.hidden_size));
  }
  return model;
}

// Code World Model (facebook/cwm): Llama's layer with q/k/v/o never biased (CwmConfig drops
// attention_bias) and interleaved windows: layer_types, else layers 0, 4, 8, ... global and the
// rest sliding over sliding_window (default 8192). Tensor list: transformers models/cwm/.
ModelDescription build_cwm(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family = "Code World Model (decoder-only, RoPE, RMSNorm, SwiGLU, 3 local : 1 global)";
  variant.mlp_bias = config.bool_or("mlp_bias", false);
  variant.windows = {sliding_window_with_default(config, 8192),
                     WindowRule::Pattern::first_of_n_global, 4};
  ModelDescription model = build_llama_like(config, variant);
  if (config.bool_or("attention_bias", false)) {
    model.notes.push_back("attention_bias ignored: CwmConfig removes it, no projection is biased");
  }
  note_defaults(model, config, "CwmConfig",
                {{"sliding_window", "8192"}, {"tie_word_embeddings", "false"}});
  if (!config.has("layer_types")) {
    model.notes.push_back("CwmConfig default used: layers 0, 4, 8, ... global, the rest sliding");
  }
  return model;
}

// OLMo 3 (Olmo-3-1025-7B, Olmo-3-1125-32B): the OLMo 2 layout with sliding-window layers.
// Tensor list: transformers models/olmo3/modular_olmo3.py.
ModelDescription build_olmo3(const ConfigReader& config) {
  LlamaVariant variant;
  variant.family =
      "OLMo 3 (decoder-only, RoPE, post-norm RMSNorm, QK-norm, SwiGLU, sliding window)";
  variant.qkv_bias = variant.o_bias = config.bool_or("attention_bias", false);
  variant.qk_norm = DecoderLayout::QkNorm::full_width;
  variant.post_norms = true;
  // Olmo3Config: sliding_window defaults to 4096 (an explicit null turns the windows off) and,
  // without layer_types, every 4th layer is full and the rest slide.
  const std::int64_t window = sliding_window_with_default(config, 4096);
  variant.windows = {window, WindowRule::Pattern::every_nth_global, 4};
  ModelDescription model = build_llama_like(config, variant);
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;
  if (window == 0) {
    model.notes.push_back("sliding_window is null: every layer attends to the whole context");
  }
  note_defaults(model, config, "Olmo3Config",
                {{"tie_word_embeddings", "false"},
                 {"attention_bias", "false"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"},
                 {"sliding_window", "4096"},
                 {"layer_types", "sliding except every 4th layer"}});
  return model;
}

}  // namespace trace::family
