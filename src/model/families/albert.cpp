// ALBERT (model_type albert). Factorized embeddings: word, position and token-type tables and
// their LayerNorm are embedding_size (E) wide, then encoder.embedding_hidden_mapping_in (Linear
// E -> H, biased) lifts them to hidden_size. The encoder stores num_hidden_groups groups of
// inner_group_num BERT-style post-LayerNorm layers (attention.{query,key,value,dense} biased,
// attention.LayerNorm, ffn -> ffn_output biased, full_layer_layer_norm) and runs them
// num_hidden_layers times: run i calls group i / (num_hidden_layers / num_hidden_groups), which
// runs all its inner layers. So the stack holds num_hidden_layers x inner_group_num blocks
// (activations, FLOPs, KV), and only the first run of each group owns weights; later runs are
// Blocks with shared_weights. Heads, chosen by `architectures`:
//  - AlbertForMaskedLM (the released albert/* checkpoints) / AlbertForPreTraining: pooler,
//    predictions.dense (H -> E), predictions.LayerNorm (E), predictions.bias (V; the decoder's
//    weight is tied to the word embeddings, its bias to predictions.bias); PreTraining adds
//    sop_classifier.classifier. AlbertForMaskedLM no longer builds the pooler, but the released
//    checkpoints hold it, so it is counted (as bert.cpp counts BERT's);
//  - AlbertModel: pooler;  AlbertForSequenceClassification: pooler + classifier;
//  - AlbertForMultipleChoice: pooler + classifier (H -> 1);
//  - AlbertForTokenClassification: classifier;  AlbertForQuestionAnswering: qa_outputs (no pooler).
// Tensor list: transformers models/albert/modeling_albert.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_albert(const ConfigReader& config) {
  ModelDescription model;
  const auto [vocab, hidden, layers, intermediate, positions] = read_encoder_sizes(config);
  const std::int64_t embedding = config.require_int({"embedding_size"}, 1, k_max_width);
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  // AlbertConfig defaults: one group of one layer, two token types.
  const std::int64_t groups = config.int_or({"num_hidden_groups"}, 1, 1, k_max_layers);
  const std::int64_t inner = config.int_or({"inner_group_num"}, 1, 1, k_max_layers);
  const std::int64_t token_types = config.int_or({"type_vocab_size"}, 2, 0, k_max_vocab);
  if (layers % groups != 0) {
    // transformers picks the group with a float division; trace counts only even splits.
    config.fail("num_hidden_groups",
                fmt::format("= {} does not divide num_hidden_layers = {}; only configs whose "
                            "layers split evenly into the groups are supported",
                            groups, layers));
  }
  if (checked_mul(layers, inner) > k_max_layers) {
    config.fail("inner_group_num", fmt::format("x num_hidden_layers = {} layer runs is beyond {}",
                                               checked_mul(layers, inner), k_max_layers));
  }
  require_absolute_positions(config);
  const bool tied = config.bool_or("tie_word_embeddings", true);

  model.architecture = "encoder-only";
  model.family =
      "ALBERT (encoder-only, factorized embeddings, layers shared across groups, post-LayerNorm)";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = embedding;
  model.position = PositionKind::learned;
  model.max_position_embeddings = positions;
  model.learned_positions = positions;
  model.token_types = token_types;
  model.position_dim = embedding;  // the position and token-type tables are E wide, as the words
  model.embedding_norm = layer_norm("embeddings.LayerNorm", embedding);
  model.has_lm_head = false;
  model.tie_word_embeddings = tied;
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype = "float32";  // albert-*-v2 store F32 (configs without torch_dtype)
  std::vector<ExtraParameter>& extras = model.extra_parameters;
  extras.push_back({"encoder.embedding_hidden_mapping_in", "embedding", "Linear",
                    linear_params(embedding, hidden)});

  const std::string activation = config.optional_string("hidden_act").value_or("gelu_new");
  Block layer;
  layer.attention = self_attention(hidden, shape, true, true);
  layer.attention.name = "attention";
  layer.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, true, true, false};
  layer.norms = {layer_norm("attention.LayerNorm", hidden),
                 layer_norm("full_layer_layer_norm", hidden)};
  layer.post_norm = true;
  Stack stack;
  stack.name = "encoder";
  stack.causal = false;
  const std::int64_t runs_per_group = layers / groups;
  for (std::int64_t i = 0; i < layers; ++i) {
    for (std::int64_t j = 0; j < inner; ++j) {
      Block block = layer;
      block.shared_weights = i % runs_per_group != 0;  // the group's first run owns its weights
      stack.blocks.push_back(std::move(block));
    }
  }
  model.stacks.push_back(std::move(stack));
  model.notes.push_back(fmt::format(
      "{} layer runs x {} inner layers share {} stored layer(s) (num_hidden_groups = {}, "
      "inner_group_num = {}): weights counted once, activations and FLOPs for every run",
      layers, inner, checked_mul(groups, inner), groups, inner));

  const std::string architecture = first_architecture(config);
  const bool masked_lm = architecture.empty() || architecture == "AlbertForMaskedLM";
  const bool pretraining = architecture == "AlbertForPreTraining";
  const bool token_head = architecture == "AlbertForTokenClassification" ||
                          architecture == "AlbertForQuestionAnswering";
  if (!masked_lm && !pretraining && !token_head && architecture != "AlbertModel" &&
      architecture != "AlbertForSequenceClassification" &&
      architecture != "AlbertForMultipleChoice") {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: "
                            "AlbertForMaskedLM, AlbertForPreTraining, AlbertModel, "
                            "AlbertForSequenceClassification, AlbertForMultipleChoice, "
                            "AlbertForTokenClassification, AlbertForQuestionAnswering",
                            architecture));
  }
  if (!token_head) extras.push_back({"pooler", "head", "Linear", linear_params(hidden, hidden)});
  if (masked_lm || pretraining) {
    extras.push_back({"predictions.dense", "head", "Linear", linear_params(hidden, embedding)});
    extras.push_back({"predictions.LayerNorm", "norm", "LayerNorm", checked_mul(2, embedding)});
    extras.push_back({"predictions.bias", "head", "Bias", vocab});
    if (!tied) {
      extras.push_back(
          {"predictions.decoder.weight (untied)", "head", "Linear", checked_mul(vocab, embedding)});
    }
    // The albert/* uploads store predictions.decoder.bias beside predictions.bias although the
    // two are one parameter (Hub total of albert-base-v2 = this count + vocab_size).
    model.stored_extras.push_back(
        StoredExtra{"predictions.decoder.bias", 1, vocab, "F32", false,
                    "a second copy of the tied predictions.bias, stored by the albert/* uploads"});
    model.notes.push_back(
        masked_lm ? "counted with the pooler and masked-LM head that the albert/* checkpoints hold "
                    "(AlbertForMaskedLM itself no longer loads the pooler)"
                  : "counted with the pooler, masked-LM head and sentence-order head");
  }
  if (pretraining) {
    extras.push_back({"sop_classifier.classifier", "head", "Linear",
                      linear_params(hidden, classifier_labels(config))});
  } else if (architecture == "AlbertForSequenceClassification" ||
             architecture == "AlbertForTokenClassification") {
    extras.push_back(
        {"classifier", "head", "Linear", linear_params(hidden, classifier_labels(config))});
  } else if (architecture == "AlbertForMultipleChoice") {
    extras.push_back({"classifier", "head", "Linear", linear_params(hidden, 1)});
  } else if (architecture == "AlbertForQuestionAnswering") {
    extras.push_back(
        {"qa_outputs", "head", "Linear", linear_params(hidden, classifier_labels(config))});
  }
  // Checkpoints saved by transformers before v4.31 also hold the int64 position_ids buffer.
  model.stored_extras.push_back(
      StoredExtra{"albert.embeddings.position_ids", 1, positions, "I64", false,
                  "a buffer (not a parameter) that uploads saved by transformers < 4.31 hold"});
  set_head_class(model, architecture, config, "albert.");
  return model;
}

}  // namespace trace::family
