// DistilBERT (model_type distilbert): BERT distilled to n_layers post-LayerNorm layers. Word and
// position embeddings (no token types) and an embedding LayerNorm, all `dim` wide; per layer
// attention.{q_lin,k_lin,v_lin,out_lin} (all biased), sa_layer_norm, ffn.lin1 -> lin2 (biased,
// `activation`), output_layer_norm. With sinusoidal_pos_embds the position table is filled with
// fixed sines and frozen, but it is still an nn.Embedding weight, so it is stored and counted
// whatever the flag says. Heads, chosen by `architectures`:
//  - DistilBertForMaskedLM (the released checkpoints): vocab_transform (dim -> dim),
//    vocab_layer_norm, vocab_projector (tied to the word embeddings unless tie_word_embeddings is
//    false; its bias always stored);
//  - DistilBertForSequenceClassification: pre_classifier (dim -> dim) + classifier;
//  - DistilBertForMultipleChoice: pre_classifier + classifier (dim -> 1);
//  - DistilBertForTokenClassification: classifier;  DistilBertForQuestionAnswering: qa_outputs;
//  - DistilBertModel: none.
// `tie_weights_` is a key of the 2019 configs that transformers no longer reads.
// Tensor list: transformers models/distilbert/modeling_distilbert.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_distilbert(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t dim = config.require_int({"dim", "hidden_size"}, 1, k_max_width);
  const std::int64_t layers =
      config.require_int({"n_layers", "num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t ffn = config.require_int({"hidden_dim"}, 1, k_max_width);
  const std::int64_t positions =
      config.require_int({"max_position_embeddings"}, 1, k_max_positions);
  const HeadShape shape =
      read_head_shape(config, dim, {"n_heads", "num_attention_heads"}, {}, false);
  const std::string activation = config.optional_string("activation").value_or("gelu");
  const bool tied = config.bool_or("tie_word_embeddings", true);

  model.architecture = "encoder-only";
  model.family = "DistilBERT (encoder-only, learned positions, post-LayerNorm, GELU MLP)";
  model.vocab_size = vocab;
  model.hidden_size = dim;
  model.embedding_dim = dim;
  model.position = PositionKind::learned;
  model.learned_positions = positions;
  model.max_position_embeddings = positions;
  model.token_types = 0;
  model.embedding_norm = layer_norm("embeddings.LayerNorm", dim);
  model.has_lm_head = false;
  model.tie_word_embeddings = tied;
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype = "float32";  // distilbert-base-* store F32 (configs without torch_dtype)
  if (config.bool_or("sinusoidal_pos_embds", false)) {
    // create_sinusoidal_embeddings fills the weight and sets requires_grad = False.
    model.sinusoidal_position_table = true;
    model.frozen_parameters = checked_mul(model.learned_positions, dim);
    model.notes.push_back(
        "sinusoidal_pos_embds: the position table holds fixed sines and is frozen, but it is an "
        "nn.Embedding weight and stored, so it is counted (a full fine-tune trains the rest)");
  }

  Stack stack;
  stack.name = "transformer";
  stack.causal = false;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(dim, shape, true, true);
    block.attention.name = "attention";
    block.mlp = Mlp{MlpKind::plain, activation, dim, ffn, true, true, false};
    block.norms = {layer_norm("sa_layer_norm", dim), layer_norm("output_layer_norm", dim)};
    block.post_norm = true;
    stack.blocks.push_back(std::move(block));
  }
  model.stacks.push_back(std::move(stack));

  const std::string architecture = first_architecture(config);
  const std::int64_t square = linear_params(dim, dim);
  std::vector<ExtraParameter>& extras = model.extra_parameters;
  if (architecture.empty() || architecture == "DistilBertForMaskedLM") {
    extras.push_back({"vocab_transform", "head", "Linear", square});
    extras.push_back({"vocab_layer_norm", "norm", "LayerNorm", checked_mul(2, dim)});
    extras.push_back({"vocab_projector.bias", "head", "Bias", vocab});
    if (!tied) {
      extras.push_back(
          {"vocab_projector.weight (untied)", "head", "Linear", checked_mul(vocab, dim)});
    }
    model.notes.push_back(
        tied ? "counted with the masked-LM head the released checkpoints hold (vocab_transform, "
               "vocab_layer_norm, vocab_projector bias; its weight is the word embedding)"
             : "counted with the masked-LM head; tie_word_embeddings is false, so "
               "vocab_projector.weight is a matrix of its own");
  } else if (architecture == "DistilBertForSequenceClassification") {
    extras.push_back({"pre_classifier", "head", "Linear", square});
    extras.push_back(
        {"classifier", "head", "Linear", linear_params(dim, classifier_labels(config))});
  } else if (architecture == "DistilBertForMultipleChoice") {
    extras.push_back({"pre_classifier", "head", "Linear", square});
    extras.push_back({"classifier", "head", "Linear", linear_params(dim, 1)});
  } else if (architecture == "DistilBertForTokenClassification") {
    extras.push_back(
        {"classifier", "head", "Linear", linear_params(dim, classifier_labels(config))});
  } else if (architecture == "DistilBertForQuestionAnswering") {
    const std::int64_t labels = classifier_labels(config);
    if (labels != 2) {
      config.fail("num_labels", fmt::format("= {}; DistilBertForQuestionAnswering needs 2 (span "
                                            "start and end logits)",
                                            labels));
    }
    extras.push_back({"qa_outputs", "head", "Linear", linear_params(dim, 2)});
  } else if (architecture != "DistilBertModel") {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: "
                            "DistilBertForMaskedLM, DistilBertModel, "
                            "DistilBertForSequenceClassification, DistilBertForMultipleChoice, "
                            "DistilBertForTokenClassification, DistilBertForQuestionAnswering",
                            architecture));
  }
  set_head_class(model, architecture, config);
  return model;
}

}  // namespace trace::family
