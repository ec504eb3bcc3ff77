// RoBERTa, XLM-RoBERTa and CamemBERT: BERT's encoder (post-LayerNorm, biased attention, GELU
// MLP) with a position table of max_position_embeddings rows (514: the ids start after the
// padding index), type_vocab_size 1, and the heads `architectures` names (prefix Roberta,
// XLMRoberta or Camembert):
//  - ForMaskedLM / ForCausalLM: lm_head.dense, lm_head.layer_norm, lm_head.bias; the decoder
//    weight is tied to the word embeddings (lm_head.decoder.bias is lm_head.bias);
//  - ForSequenceClassification: classifier.dense + classifier.out_proj (no pooler);
//  - ForTokenClassification: classifier;  ForQuestionAnswering: qa_outputs (num_labels, 2);
//  - ForMultipleChoice: pooler + classifier (1 output);  Model: pooler.
// Which checkpoints hold a pooler the classes do not use (tests/data/configs/SOURCES-roberta.md):
// roberta-base / -large store none; FacebookAI/xlm-roberta-* and almanach/camembert-base store
// roberta.pooler.dense beside their MLM head, and XLMRobertaModel / CamembertModel load it.
// Tensor list: transformers models/roberta/modeling_roberta.py (xlm_roberta, camembert copy it).
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

struct Variant {
  const char* prefix;  // class-name prefix: Roberta, XLMRoberta, Camembert
  const char* name;
  const char* family;
  bool mlm_upload_pooler;  // the published MLM uploads also store roberta.pooler.dense
};

ModelDescription build(const ConfigReader& config, const Variant& variant) {
  ModelDescription model;
  const auto [vocab, hidden, layers, intermediate, positions] = read_encoder_sizes(config);
  model.architecture = "encoder-only";
  model.family = variant.family;
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = hidden;
  model.position = PositionKind::learned;
  model.learned_positions = positions;
  // RobertaEmbeddings numbers positions from padding_idx + 1 (pad_token_id, 1): 514 rows hold
  // 512 tokens.
  const std::int64_t pad = config.int_or({"pad_token_id"}, 1, 0, positions - 1);
  model.max_position_embeddings = positions - pad - 1;
  model.token_types = config.int_or({"type_vocab_size"}, 2, 0, k_max_vocab);
  model.embedding_norm = layer_norm("embeddings.LayerNorm", hidden);
  model.has_lm_head = false;
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype = "float32";  // roberta-*, xlm-roberta-*, camembert-base store F32
                                        // (configs without torch_dtype)
  model.stacks.push_back(bert_encoder_stack(config, hidden, layers, intermediate));
  model.stored_extras.push_back(StoredExtra{
      "roberta.embeddings.position_ids", 1, positions, "I64", false,
      "a buffer saved by transformers < 4.31 (roberta-base / -large store it; xlm-roberta-* do "
      "not); never a parameter"});

  const std::string prefix = variant.prefix;
  std::string head = first_architecture(config);
  if (head.empty()) head = prefix + "ForMaskedLM";  // what every published base upload names
  const std::string suffix = head.starts_with(prefix) ? head.substr(prefix.size()) : std::string();
  const std::int64_t dense = linear_params(hidden, hidden);
  const auto add = [&](std::string name, const char* component, const char* op,
                       std::int64_t params) {
    model.extra_parameters.push_back({std::move(name), component, op, params});
  };
  if (suffix == "ForMaskedLM" || suffix == "ForCausalLM") {
    if (suffix == "ForCausalLM" && !config.bool_or("is_decoder", false)) {
      model.notes.push_back(
          fmt::format("{} without is_decoder = true runs unmasked (as "
                      "transformers warns); the count is the same",
                      head));
    }
    if (suffix == "ForCausalLM") model.stacks.back().causal = config.bool_or("is_decoder", false);
    add("lm_head.dense", "head", "Linear", dense);
    add("lm_head.layer_norm", "norm", "LayerNorm", 2 * hidden);
    add("lm_head.bias", "head", "Bias", vocab);
    model.tie_word_embeddings = config.bool_or("tie_word_embeddings", true);
    if (!model.tie_word_embeddings) {
      add("lm_head.decoder", "head", "Linear", checked_mul(vocab, hidden));
    }
    if (suffix == "ForMaskedLM" && variant.mlm_upload_pooler) {
      add("pooler.dense", "head", "Linear", dense);
      model.notes.push_back(fmt::format(
          "counted with roberta.pooler.dense, which the published {} MLM uploads store beside "
          "lm_head ({}Model loads it; {} does not use it)",
          variant.name, prefix, head));
    }
  } else if (suffix == "Model") {
    add("pooler.dense", "head", "Linear", dense);
  } else if (suffix == "ForSequenceClassification") {
    add("classifier.dense", "head", "Linear", dense);
    add("classifier.out_proj", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (suffix == "ForTokenClassification") {
    add("classifier", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (suffix == "ForQuestionAnswering") {
    add("qa_outputs", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (suffix == "ForMultipleChoice") {
    add("pooler.dense", "head", "Linear", dense);
    add("classifier", "head", "Linear", linear_params(hidden, 1));
  } else {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: {p}Model, "
                            "{p}ForMaskedLM, {p}ForCausalLM, {p}ForSequenceClassification, "
                            "{p}ForTokenClassification, {p}ForQuestionAnswering, "
                            "{p}ForMultipleChoice",
                            head, fmt::arg("p", prefix)));
  }
  set_head_class(model, head, config, "roberta.");
  return model;
}

}  // namespace

ModelDescription build_roberta(const ConfigReader& config) {
  return build(config,
               {"Roberta", "RoBERTa",
                "RoBERTa (encoder-only, learned positions, post-LayerNorm, GELU MLP)", false});
}

ModelDescription build_xlm_roberta(const ConfigReader& config) {
  return build(config,
               {"XLMRoberta", "XLM-RoBERTa",
                "XLM-RoBERTa (encoder-only, learned positions, post-LayerNorm, GELU MLP)", true});
}

ModelDescription build_camembert(const ConfigReader& config) {
  return build(config,
               {"Camembert", "CamemBERT",
                "CamemBERT (encoder-only, learned positions, post-LayerNorm, GELU MLP)", true});
}

}  // namespace trace::family
