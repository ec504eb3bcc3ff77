// ELECTRA: BERT's encoder behind embeddings of width embedding_size (word, position and token
// type tables and their LayerNorm), projected to hidden_size by electra.embeddings_project when
// the two differ. Heads by `architectures`:
//  - ElectraForPreTraining (the discriminators): discriminator_predictions.dense (H x H) and
//    .dense_prediction (H -> 1);
//  - ElectraForMaskedLM / ElectraForCausalLM (the generators): generator_predictions.dense
//    (H -> E) and .LayerNorm (E), generator_lm_head.bias; its weight is tied to the word
//    embeddings;
//  - ElectraForSequenceClassification: classifier.dense + classifier.out_proj;
//  - ElectraForTokenClassification: classifier;  ElectraForQuestionAnswering: qa_outputs;
//  - ElectraModel: none (ELECTRA has no pooler).
// Google's base and large discriminator uploads also store an embeddings_project they never use
// (embedding_size == hidden_size; transformers issue #7530): listed as stored, not counted.
// Tensor list: transformers models/electra/modeling_electra.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_electra(const ConfigReader& config) {
  ModelDescription model;
  const auto [vocab, hidden, layers, intermediate, positions] = read_encoder_sizes(config);
  const std::int64_t embedding = config.int_or({"embedding_size"}, 128, 1, k_max_width);
  const std::int64_t types = config.int_or({"type_vocab_size"}, 2, 0, k_max_vocab);
  note_defaults(model, config, "ElectraConfig", {{"embedding_size", "128"}});
  model.architecture = "encoder-only";
  model.family = "ELECTRA (encoder-only, learned positions, post-LayerNorm, GELU MLP)";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = embedding;
  model.position = PositionKind::learned;
  model.max_position_embeddings = positions;
  model.embedding_norm = layer_norm("embeddings.LayerNorm", embedding);
  model.has_lm_head = false;
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype = "float32";  // google/electra-* store F32 (configs without torch_dtype)
  const auto add = [&](std::string name, const char* component, const char* op,
                       std::int64_t params) {
    model.extra_parameters.push_back({std::move(name), component, op, params});
  };
  // The word, position and token-type tables are embedding_size wide.
  model.learned_positions = positions;
  model.token_types = types;
  model.position_dim = embedding;
  if (embedding != hidden) {
    add("embeddings_project", "embedding", "Linear", linear_params(embedding, hidden));
    model.notes.push_back(
        fmt::format("embeddings of width embedding_size {}, projected to hidden_size {} by "
                    "embeddings_project",
                    embedding, hidden));
  }
  model.stacks.push_back(bert_encoder_stack(config, hidden, layers, intermediate));

  std::string head = first_architecture(config);
  if (head.empty()) {
    head = "ElectraModel";
    model.notes.push_back("no architectures: counted as ElectraModel (no head)");
  }
  if (head == "ElectraForPreTraining") {
    add("discriminator_predictions.dense", "head", "Linear", linear_params(hidden, hidden));
    add("discriminator_predictions.dense_prediction", "head", "Linear", linear_params(hidden, 1));
    if (embedding == hidden) {
      model.stored_extras.push_back(StoredExtra{
          "electra.embeddings_project.weight", 1, checked_mul(hidden, embedding), "F32", false,
          "google/electra-{base,large}-discriminator store an embeddings_project that "
          "ElectraModel never builds when embedding_size == hidden_size; unused, not counted"});
      model.stored_extras.push_back(StoredExtra{"electra.embeddings_project.bias", 1, hidden, "F32",
                                                false, "see embeddings_project.weight"});
    }
  } else if (head == "ElectraForMaskedLM" || head == "ElectraForCausalLM") {
    if (head == "ElectraForCausalLM") {
      model.stacks.back().causal = config.bool_or("is_decoder", false);
    }
    add("generator_predictions.dense", "head", "Linear", linear_params(hidden, embedding));
    add("generator_predictions.LayerNorm", "norm", "LayerNorm", 2 * embedding);
    add("generator_lm_head.bias", "head", "Bias", vocab);
    model.tie_word_embeddings = config.bool_or("tie_word_embeddings", true);
    if (!model.tie_word_embeddings) {
      add("generator_lm_head", "head", "Linear", checked_mul(vocab, embedding));
    }
  } else if (head == "ElectraForSequenceClassification") {
    add("classifier.dense", "head", "Linear", linear_params(hidden, hidden));
    add("classifier.out_proj", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (head == "ElectraForTokenClassification") {
    add("classifier", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (head == "ElectraForQuestionAnswering") {
    add("qa_outputs", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (head != "ElectraModel") {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: ElectraModel, "
                            "ElectraForPreTraining, ElectraForMaskedLM, ElectraForCausalLM, "
                            "ElectraForSequenceClassification, ElectraForTokenClassification, "
                            "ElectraForQuestionAnswering",
                            head));
  }
  set_head_class(model, head, config);
  // the discriminator: one replaced-or-original logit per token
  if (head == "ElectraForPreTraining") model.head_logits_per_token = 1;
  return model;
}

}  // namespace trace::family
