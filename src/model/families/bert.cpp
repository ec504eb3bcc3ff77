// BERT: learned absolute positions, segment (token type) embeddings, an embedding LayerNorm,
// post-LayerNorm layers with biased attention and GELU MLP, and whatever heads the checkpoint's
// `architectures` says it holds:
//  - BertForPreTraining / BertForMaskedLM (Google's released checkpoints hold both): pooler,
//    cls.predictions.transform (dense + LayerNorm), cls.predictions.bias (decoder tied to the
//    word embeddings), cls.seq_relationship;
//  - BertModel: pooler only;  BertForSequenceClassification: pooler + classifier.
// Tensor list: transformers models/bert/modeling_bert.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_bert(const ConfigReader& config) {
  ModelDescription model;
  const auto [vocab, hidden, layers, intermediate, positions] = read_encoder_sizes(config);
  model.architecture = "encoder-only";
  model.family = "BERT (encoder-only, learned positions, post-LayerNorm, GELU MLP)";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = hidden;
  model.position = PositionKind::learned;
  model.learned_positions = positions;
  model.max_position_embeddings = positions;
  model.token_types = config.int_or({"type_vocab_size"}, 2, 0, k_max_vocab);
  model.embedding_norm = layer_norm("embeddings.LayerNorm", hidden);
  model.has_lm_head = false;
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype =
      "float32";  // google-bert/bert-* store F32 (configs without torch_dtype)

  model.stacks.push_back(bert_encoder_stack(config, hidden, layers, intermediate));
  model.stored_extras.push_back(StoredExtra{
      "bert.embeddings.position_ids", 1, positions, "I64", false,
      "a buffer saved by transformers < 4.31 (fine-tunes and sentence-transformers models of "
      "those years store it; Google's conversions do not); never a parameter"});

  const std::int64_t dense = linear_params(hidden, hidden);
  const std::string architecture = first_architecture(config);
  // Token classification and QA build BertModel without its pooler (add_pooling_layer=False).
  const bool token_head = architecture == "BertForTokenClassification" ||
                          architecture == "BertForQuestionAnswering";
  if (!token_head) model.extra_parameters.push_back({"pooler.dense", "head", "Linear", dense});
  if (architecture.empty() || architecture == "BertForPreTraining" ||
      architecture == "BertForMaskedLM") {
    model.extra_parameters.push_back({"cls.predictions.transform.dense", "head", "Linear", dense});
    model.extra_parameters.push_back(
        {"cls.predictions.transform.LayerNorm", "norm", "LayerNorm", 2 * hidden});
    model.extra_parameters.push_back({"cls.predictions.bias", "head", "Bias", vocab});
    model.extra_parameters.push_back({"cls.seq_relationship", "head", "Linear", 2 * hidden + 2});
    // BertLMPredictionHead.decoder: Linear(hidden, vocab, bias=False), tied unless the config
    // unties it (its bias is cls.predictions.bias either way).
    model.tie_word_embeddings = config.bool_or("tie_word_embeddings", true);
    if (!model.tie_word_embeddings) {
      model.extra_parameters.push_back(
          {"cls.predictions.decoder", "head", "Linear", checked_mul(vocab, hidden)});
    }
    model.notes.push_back(fmt::format(
        "counted with the pre-training heads (pooler, cls.predictions, cls.seq_relationship) that "
        "Google's BERT checkpoints hold; the MLM decoder is {}",
        model.tie_word_embeddings ? "tied to the word embeddings"
                                  : "a matrix of its own (tie_word_embeddings is false)"));
  } else if (architecture == "BertForSequenceClassification") {
    model.extra_parameters.push_back(
        {"classifier", "head", "Linear", linear_params(hidden, classifier_labels(config))});
  } else if (architecture == "BertForTokenClassification") {
    model.extra_parameters.push_back(
        {"classifier", "head", "Linear", linear_params(hidden, classifier_labels(config))});
  } else if (architecture == "BertForQuestionAnswering") {
    model.extra_parameters.push_back({"qa_outputs", "head", "Linear", linear_params(hidden, 2)});
  } else if (architecture != "BertModel") {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: "
                            "BertForPreTraining, BertForMaskedLM, BertModel, "
                            "BertForSequenceClassification, BertForTokenClassification, "
                            "BertForQuestionAnswering",
                            architecture));
  }
  set_head_class(model, architecture, config, "bert.");
  return model;
}

}  // namespace trace::family
