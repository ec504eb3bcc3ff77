// ModernBERT (answerdotai/ModernBERT-base / -large and their fine-tunes): an encoder-only,
// pre-LayerNorm transformer with RoPE, a fused Wqkv, a fused GeGLU MLP (Wi emits 2 x
// intermediate), LayerNorms with or without bias (norm_bias), and global attention every
// global_attn_every_n_layers-th layer (layer 0 included), local attention elsewhere.
// Tensor list (transformers models/modernbert/modeling_modernbert.py):
//   model.embeddings.tok_embeddings [V, h], model.embeddings.norm
//   model.layers.i: attn_norm (an Identity in layer 0: no tensor), attn.Wqkv [3h, h],
//     attn.Wo [h, h] (both biased when attention_bias), mlp_norm, mlp.Wi [2I, h],
//     mlp.Wo [h, I] (both biased when mlp_bias)
//   model.final_norm
// Heads, chosen by `architectures`:
//   ModernBertForMaskedLM: head.dense [h, h] (bias = classifier_bias), head.norm, decoder
//     (weight tied to tok_embeddings unless tie_word_embeddings is false; bias = decoder_bias);
//   ModernBertFor{Sequence,Token}Classification, ...ForQuestionAnswering: head.dense, head.norm,
//     classifier [num_labels, h] + bias (always biased);
//   ModernBertForMultipleChoice: head.dense, head.norm, classifier [1, h] + bias;
//   ModernBertModel: none.
// The rotary inv_freq tensors are non-persistent buffers: no checkpoint stores them.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

// Per-layer attended keys: 0 for global layers, `window` for local ones. transformers reads
// local_attention as the full span: flash gets window_size (w / 2, w / 2) and the SDPA / eager
// mask keeps |i - j| <= w // 2, so a token sees 2 * (w / 2) + 1 keys, itself included.
// layer_types (newer configs) wins over global_attn_every_n_layers, which makes layer i global
// when i % n == 0 (layer 0 is global).
std::vector<std::int64_t> layer_windows(const ConfigReader& config, std::int64_t layers,
                                        std::int64_t window, ModelDescription& model) {
  const std::int64_t every = config.int_or({"global_attn_every_n_layers"}, 3, 1, k_max_layers);
  std::vector<std::int64_t> windows(static_cast<std::size_t>(layers), 0);
  for (std::int64_t i = 0; i < layers; ++i) {
    if (i % every != 0) windows[static_cast<std::size_t>(i)] = window;
  }
  if (!config.has("layer_types")) return windows;
  const std::vector<std::int64_t> listed =
      resolve_windows(config, layers, WindowRule{window, WindowRule::Pattern::none, 0});
  if (listed != windows && config.has("global_attn_every_n_layers")) {
    // Older transformers windows the attention by global_attn_every_n_layers whatever
    // layer_types says; only hand-edited configs disagree.
    model.notes.push_back(
        "layer_types disagrees with global_attn_every_n_layers; windows follow layer_types");
  }
  return listed;
}

}  // namespace

ModelDescription build_modernbert(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // ModernBertAttention: head_dim = hidden / heads, all heads share k and v widths (no GQA).
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  // ModernBertConfig's defaults for the keys a config may leave out.
  const bool norm_bias = config.bool_or("norm_bias", false);
  const bool attention_bias = config.bool_or("attention_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  const std::string activation = config.optional_string("hidden_activation").value_or("gelu");

  model.architecture = "encoder-only";
  model.family = "ModernBERT (encoder-only, RoPE, pre-LayerNorm, GeGLU, local/global attention)";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = hidden;
  model.position = PositionKind::rope;
  model.max_position_embeddings =
      config.int_or({"max_position_embeddings"}, 8192, 1, k_max_positions);
  model.embedding_norm = layer_norm("embeddings.norm", hidden, norm_bias);
  model.torch_dtype =
      config.optional_string("torch_dtype").value_or(config.optional_string("dtype").value_or(""));

  const std::int64_t local = config.int_or({"local_attention"}, 128, 0, k_max_positions);
  const std::int64_t window = 2 * (local / 2) + 1;
  const std::vector<std::int64_t> windows = layer_windows(config, layers, window, model);
  Stack stack;
  stack.name = "model";
  stack.causal = false;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, attention_bias, attention_bias);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.attention.rotary_dim = shape.head_dim;
    block.attention.sliding_window = windows[static_cast<std::size_t>(i)];
    block.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, mlp_bias, mlp_bias, true};
    // Layer 0 reads the already normed embeddings: its attn_norm is an nn.Identity.
    if (i > 0) block.norms.push_back(layer_norm("attn_norm", hidden, norm_bias));
    block.norms.push_back(layer_norm("mlp_norm", hidden, norm_bias));
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm("final_norm", hidden, norm_bias);
  model.stacks.push_back(std::move(stack));
  model.notes.push_back(fmt::format(
      "layer 0 has no attn_norm (nn.Identity); local layers attend to {} tokens ({} on either "
      "side and itself, for local_attention = {})",
      window, local / 2, local));

  std::string architecture = first_architecture(config);
  if (architecture.empty()) {
    architecture = "ModernBertForMaskedLM";
    model.notes.push_back(
        "no architectures key: counted as ModernBertForMaskedLM, the class of the released "
        "answerdotai checkpoints");
  }
  model.has_lm_head = false;
  set_head_class(model, architecture, config);
  if (architecture == "ModernBertModel") return model;

  // ModernBertPredictionHead: dense (bias = classifier_bias), activation, LayerNorm.
  const bool classifier_bias = config.bool_or("classifier_bias", false);
  const std::int64_t dense = linear_params(hidden, hidden, classifier_bias);
  const std::int64_t classifier_width =
      architecture == "ModernBertForMultipleChoice" ? 1
      : architecture == "ModernBertForSequenceClassification" ||
              architecture == "ModernBertForTokenClassification" ||
              architecture == "ModernBertForQuestionAnswering"
          ? classifier_labels(config)
          : 0;
  if (architecture != "ModernBertForMaskedLM" && classifier_width == 0) {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: "
                            "ModernBertForMaskedLM, ModernBertModel, "
                            "ModernBertForSequenceClassification, "
                            "ModernBertForTokenClassification, ModernBertForQuestionAnswering, "
                            "ModernBertForMultipleChoice",
                            architecture));
  }
  model.extra_parameters.push_back({"head.dense", "head", "Linear", dense});
  model.extra_parameters.push_back(
      {"head.norm", "norm", "LayerNorm", norm_bias ? 2 * hidden : hidden});
  if (architecture == "ModernBertForMaskedLM") {
    // The decoder is the lm_head: tied to tok_embeddings by default, biased by decoder_bias.
    model.has_lm_head = true;
    model.tie_word_embeddings = config.bool_or("tie_word_embeddings", true);
    model.lm_head_bias = config.bool_or("decoder_bias", true);
    return model;
  }
  model.extra_parameters.push_back(
      {"classifier", "head", "Linear", linear_params(hidden, classifier_width)});
  return model;
}

}  // namespace trace::family
