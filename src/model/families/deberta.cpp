// DeBERTa (v1, model_type "deberta") and DeBERTa-v2 / v3 ("deberta-v2"): a BERT-style post-LN
// encoder whose attention adds disentangled relative-position terms (content->position "c2p",
// position->content "p2c") computed from one shared table, encoder.rel_embeddings.
//  - embeddings: word_embeddings [vocab, E] (E = embedding_size, default hidden); position
//    table [max_position_embeddings, E] only when position_biased_input (default true);
//    token types [type_vocab_size, E] when > 0; embed_proj [hidden, E] when E != hidden;
//    LayerNorm. Most released checkpoints set position_biased_input false.
//  - encoder: rel_embeddings [2 x span, hidden] when relative_attention (span = position_buckets
//    when > 0, else max_relative_positions, else max_position_embeddings); v2: encoder.LayerNorm
//    when norm_rel_ebd names layer_norm, encoder.conv (Conv1d + LayerNorm) when conv_kernel_size
//    > 0.
//  - layer: v2 query/key/value_proj with biases (+ pos_key_proj / pos_query_proj, biased, when
//    share_att_key is false, for c2p / p2c); v1 one fused in_proj without bias + q_bias + v_bias
//    (+ pos_proj without bias for c2p, pos_q_proj with bias for p2c; talking_head projections);
//    attention.output.dense + LayerNorm, intermediate.dense, output.dense + LayerNorm.
//  - heads by `architectures`; with none (Microsoft's pre-training uploads) the heads those
//    uploads hold: lm_predictions.lm_head (MLM), and for v2 also mask_predictions (the v3 RTD
//    discriminator head).
// Tensor lists: transformers models/deberta/modeling_deberta.py, deberta_v2/modeling_deberta_v2.py.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "family.hpp"

namespace trace::family {

namespace {

// The relative-attention terms, from pos_att_type: "p2c|c2p" (as written by Microsoft) or a list
// (as transformers saves it). "p2p" is accepted and, as in transformers, adds no tensor.
struct PosAttention {
  bool c2p = false;
  bool p2c = false;
};

PosAttention read_pos_att_type(const ConfigReader& config) {
  PosAttention terms;
  if (!config.has("pos_att_type")) return terms;
  std::vector<std::string> entries;
  const nlohmann::json& value = config.json().at("pos_att_type");
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t bar = std::min(text.find('|', start), text.size());
      entries.push_back(text.substr(start, bar - start));
      start = bar + 1;
    }
  } else if (value.is_array()) {
    for (const nlohmann::json& entry : value) {
      if (!entry.is_string()) {
        config.fail("pos_att_type", fmt::format("must list strings, got {}", value.dump()));
      }
      entries.push_back(entry.get<std::string>());
    }
  } else {
    config.fail(
        "pos_att_type",
        fmt::format("must be a string such as \"p2c|c2p\" or a list, got {}", value.dump()));
  }
  for (std::string entry : entries) {
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry == "c2p") {
      terms.c2p = true;
    } else if (entry == "p2c") {
      terms.p2c = true;
    } else if (!entry.empty() && entry != "p2p" && entry != "none") {
      config.fail("pos_att_type", fmt::format("names \"{}\"; expected c2p, p2c (or p2p)", entry));
    }
  }
  return terms;
}

std::string stored_dtype(const ConfigReader& config) {
  const std::string dtype = read_torch_dtype(config);
  if (dtype == "float32") return "F32";
  if (dtype == "bfloat16") return "BF16";
  return "F16";  // Microsoft's uploads (config without torch_dtype) are float16
}

ModelDescription build(const ConfigReader& config, bool v2) {
  ModelDescription model;
  const auto [vocab, hidden, layers, intermediate, positions] = read_encoder_sizes(config);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  if (hidden % heads != 0) {
    config.fail("num_attention_heads",
                fmt::format("= {} does not divide hidden_size {} (transformers refuses it)", heads,
                            hidden));
  }
  // v2 lets attention_head_size override hidden / heads (deberta-v2-xxlarge sets it).
  const std::int64_t head_dim =
      v2 ? config.int_or({"attention_head_size"}, hidden / heads, 1, k_max_width) : hidden / heads;
  const std::int64_t inner = checked_mul(heads, head_dim);
  const std::int64_t embedding = config.int_or({"embedding_size"}, hidden, 1, k_max_width);
  const bool absolute = config.bool_or("position_biased_input", true);
  const std::int64_t token_types = config.int_or({"type_vocab_size"}, 0, 0, k_max_vocab);
  const bool relative = config.bool_or("relative_attention", false);
  const PosAttention terms = read_pos_att_type(config);
  const bool share_key = v2 && config.bool_or("share_att_key", false);
  const std::string activation = config.optional_string("hidden_act").value_or("gelu");

  model.architecture = "encoder-only";
  model.family = v2 ? "DeBERTa-v2/v3 (encoder-only, disentangled relative attention, post-LN)"
                    : "DeBERTa (encoder-only, disentangled relative attention, post-LN)";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = embedding;
  model.max_position_embeddings = positions;
  model.has_lm_head = false;  // an MLM head reuses word_embeddings; its parts are extras below
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype = "float16";  // Microsoft's uploads (configs without torch_dtype)
  model.attention_dropout = config.optional_number("attention_probs_dropout_prob").value_or(0.0);
  model.hidden_dropout = config.optional_number("hidden_dropout_prob").value_or(0.0);
  model.embedding_norm = layer_norm("embeddings.LayerNorm", hidden);
  model.eager_attention_only = true;
  // At the peak of an inference forward: the scores and, with relative attention, each term
  // gathered to tokens x tokens, their running sum and its scaled temporary, then the sum with
  // the scores (docs/memory.md, "Encoder serving"): 2 without, 3 with one term, 5 with both.
  if (relative && (terms.c2p || terms.p2c)) {
    model.eager_score_tensors =
        2 + (terms.c2p ? 1 : 0) + (terms.p2c ? 1 : 0) + (terms.c2p && terms.p2c ? 1 : 0);
    // Each term's torch.gather keeps its index, clamp(relative_pos +/- att_span), a fresh
    // [1, tokens, tokens] int64 tensor every layer (expanded, not copied, over the batch).
    model.saved_position_index_tensors = (terms.c2p ? 1 : 0) + (terms.p2c ? 1 : 0);
  }
  model.notes.push_back(
      "transformers' DeBERTa has no SDPA / flash attention: a training job keeps every layer's "
      "score matrix, whatever --attention says");

  // Tables of width E count through the model fields when E == hidden (their only width there).
  model.position = absolute   ? PositionKind::learned
                   : relative ? PositionKind::relative_embedding
                              : PositionKind::none;
  if (absolute && embedding == hidden) {
    model.learned_positions = positions;
  } else if (absolute) {
    model.extra_parameters.push_back({"embeddings.position_embeddings", "position_embedding",
                                      "Embedding", checked_mul(positions, embedding)});
  }
  if (embedding == hidden) {
    model.token_types = token_types;
  } else {
    if (token_types > 0) {
      model.extra_parameters.push_back({"embeddings.token_type_embeddings", "embedding",
                                        "Embedding", checked_mul(token_types, embedding)});
    }
    model.extra_parameters.push_back(
        {"embeddings.embed_proj", "embedding", "Linear", checked_mul(embedding, hidden)});
  }

  // The span of relative distances one side of a token sees, hence the table's half height.
  std::int64_t span = 0;
  if (relative) {
    const std::int64_t max_relative =
        config.int_or({"max_relative_positions"}, -1, -1, k_max_positions);
    span = max_relative < 1 ? positions : max_relative;
    const std::int64_t buckets =
        v2 ? config.int_or({"position_buckets"}, -1, -1, k_max_positions) : -1;
    if (buckets > 0) span = buckets;
    model.extra_parameters.push_back({"encoder.rel_embeddings", "position_embedding", "Embedding",
                                      checked_mul(2 * span, hidden)});
    model.notes.push_back(
        fmt::format("disentangled relative attention ({}{}) over {} relative positions each side; "
                    "transformers runs it eagerly (no SDPA / flash path)",
                    terms.c2p ? "c2p" : "", terms.p2c ? (terms.c2p ? "+p2c" : "p2c") : "", span));
  }
  if (v2) {
    const std::string norm_rel = config.optional_string("norm_rel_ebd").value_or("none");
    if (norm_rel.find("layer_norm") != std::string::npos) {
      model.extra_parameters.push_back({"encoder.LayerNorm", "norm", "LayerNorm", 2 * hidden});
    }
    const std::int64_t kernel = config.int_or({"conv_kernel_size"}, 0, 0, k_max_width);
    if (kernel > 0) {
      const std::int64_t groups = config.int_or({"conv_groups"}, 1, 1, hidden);
      if (hidden % groups != 0) {
        config.fail("conv_groups",
                    fmt::format("= {} does not divide hidden_size {}", groups, hidden));
      }
      // Conv1d(hidden, hidden, kernel, groups) with bias, after the first layer.
      model.extra_parameters.push_back(
          {"encoder.conv.conv", "other", "Conv1d",
           checked_add(checked_mul(checked_mul(hidden, hidden / groups), kernel), hidden)});
      model.extra_parameters.push_back({"encoder.conv.LayerNorm", "norm", "LayerNorm", 2 * hidden});
    }
  }

  // Per-layer position projections, one entry for all layers (the Attention shape has no slot).
  if (relative && !share_key) {
    if (terms.c2p) {
      model.extra_parameters.push_back({v2 ? "encoder.layer.*.attention.self.pos_key_proj"
                                           : "encoder.layer.*.attention.self.pos_proj",
                                        "attention", "Linear",
                                        checked_mul(layers, linear_params(hidden, inner, v2))});
    }
    if (terms.p2c) {
      model.extra_parameters.push_back({v2 ? "encoder.layer.*.attention.self.pos_query_proj"
                                           : "encoder.layer.*.attention.self.pos_q_proj",
                                        "attention", "Linear",
                                        checked_mul(layers, linear_params(hidden, inner, true))});
    }
  }
  if (!v2 && config.bool_or("talking_head", false)) {
    model.extra_parameters.push_back(
        {"encoder.layer.*.attention.self.head_logits_proj+"
         "head_weights_proj",
         "attention", "Linear", checked_mul(layers, checked_mul(2 * heads, heads))});
  }

  Stack stack;
  stack.name = "encoder";
  stack.causal = false;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, HeadShape{heads, heads, head_dim}, true, true);
    block.attention.name = "attention";
    if (!v2) {  // in_proj without bias, then q_bias and v_bias: no key bias
      block.attention.fused_qkv = true;
      block.attention.k_bias = false;
    }
    block.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, true, true, false};
    block.norms = {layer_norm("attention.output.LayerNorm", hidden),
                   layer_norm("output.LayerNorm", hidden)};
    block.post_norm = true;
    stack.blocks.push_back(std::move(block));
  }
  model.stacks.push_back(std::move(stack));

  // ---- heads ----
  const std::string prefix = v2 ? "DebertaV2" : "Deberta";
  const std::string architecture = first_architecture(config);
  const auto add_mlm = [&](const char* name) {
    // dense hidden -> E, LayerNorm(E), a vocab bias; the decoder is word_embeddings (tied).
    model.tie_word_embeddings = true;
    model.extra_parameters.push_back(
        {fmt::format("{}.dense", name), "head", "Linear", linear_params(hidden, embedding, true)});
    model.extra_parameters.push_back(
        {fmt::format("{}.LayerNorm", name), "norm", "LayerNorm", 2 * embedding});
    model.extra_parameters.push_back({fmt::format("{}.bias", name), "head", "Bias", vocab});
  };
  const auto add_pooler = [&]() {
    const std::int64_t pooler = config.int_or({"pooler_hidden_size"}, hidden, 1, k_max_width);
    if (pooler != hidden) {
      config.fail("pooler_hidden_size",
                  fmt::format("= {} differs from hidden_size {}; ContextPooler's dense reads the "
                              "hidden state, so such a model cannot run",
                              pooler, hidden));
    }
    model.extra_parameters.push_back(
        {"pooler.dense", "head", "Linear", linear_params(hidden, hidden, true)});
  };
  if (architecture.empty()) {
    add_mlm("lm_predictions.lm_head");
    std::string held = "lm_predictions.lm_head (MLM)";
    if (v2) {
      model.extra_parameters.push_back(
          {"mask_predictions.dense", "head", "Linear", linear_params(hidden, hidden, true)});
      model.extra_parameters.push_back(
          {"mask_predictions.LayerNorm", "norm", "LayerNorm", 2 * hidden});
      model.extra_parameters.push_back(
          {"mask_predictions.classifier", "head", "Linear", linear_params(hidden, 1, true)});
      held += " and mask_predictions (the v3 replaced-token-detection head)";
    }
    model.notes.push_back(fmt::format(
        "no architectures key: counted with the heads Microsoft's pre-training upload holds, {}; "
        "{}Model alone has neither",
        held, prefix));
    if (!absolute) {
      // Microsoft's uploads keep the absolute table their own code built even when unused;
      // transformers drops it on load (_keys_to_ignore_on_load_unexpected).
      model.stored_extras.push_back(StoredExtra{
          "deberta.embeddings.position_embeddings.weight", 1, checked_mul(positions, embedding),
          stored_dtype(config), false,
          "unused absolute table (position_biased_input is false); deberta-v3-base stores it"});
    }
  } else if (architecture == prefix + "ForMaskedLM") {
    add_mlm(v2 && !config.bool_or("legacy", true) ? "lm_predictions.lm_head"
                                                  : "cls.predictions.transform");
    model.notes.push_back("the MLM decoder is tied to the word embeddings");
  } else if (architecture == prefix + "ForSequenceClassification") {
    add_pooler();
    const std::int64_t labels = classifier_labels(config);
    model.extra_parameters.push_back(
        {"classifier", "head", "Linear", linear_params(hidden, labels, true)});
  } else if (v2 && architecture == prefix + "ForMultipleChoice") {
    add_pooler();
    model.extra_parameters.push_back(
        {"classifier", "head", "Linear", linear_params(hidden, 1, true)});
  } else if (architecture == prefix + "ForTokenClassification") {
    model.extra_parameters.push_back(
        {"classifier", "head", "Linear", linear_params(hidden, classifier_labels(config), true)});
  } else if (architecture == prefix + "ForQuestionAnswering") {
    model.extra_parameters.push_back(
        {"qa_outputs", "head", "Linear", linear_params(hidden, classifier_labels(config), true)});
  } else if (architecture != prefix + "Model") {
    config.fail("architectures",
                fmt::format("names {0}, whose heads trace does not know; supported: {1}Model, "
                            "{1}ForMaskedLM, {1}ForSequenceClassification, {2}"
                            "{1}ForTokenClassification, {1}ForQuestionAnswering, or no "
                            "architectures key (the pre-training upload)",
                            architecture, prefix, v2 ? prefix + "ForMultipleChoice, " : ""));
  }
  set_head_class(model, architecture, config);
  return model;
}

}  // namespace

ModelDescription build_deberta(const ConfigReader& config) {
  return build(config, false);
}

ModelDescription build_deberta_v2(const ConfigReader& config) {
  return build(config, true);
}

}  // namespace trace::family
