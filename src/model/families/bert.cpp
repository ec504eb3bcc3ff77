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
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t positions =
      config.require_int({"max_position_embeddings"}, 1, k_max_positions);
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  const std::string position_type =
      config.optional_string("position_embedding_type").value_or("absolute");
  if (position_type != "absolute") {
    config.fail("position_embedding_type",
                fmt::format("= \"{}\" is not supported yet (only \"absolute\")", position_type));
  }
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
  model.torch_dtype = config.optional_string("torch_dtype").value_or("");

  Stack stack;
  stack.name = "encoder";
  stack.causal = false;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.attention.name = "attention";
    block.mlp = Mlp{MlpKind::plain, config.optional_string("hidden_act").value_or("gelu"), hidden,
                    intermediate, true, true, false};
    block.norms = {layer_norm("attention.output.LayerNorm", hidden),
                   layer_norm("output.LayerNorm", hidden)};
    block.post_norm = true;
    stack.blocks.push_back(std::move(block));
  }
  model.stacks.push_back(std::move(stack));

  const std::int64_t dense = checked_add(checked_mul(hidden, hidden), hidden);
  const std::string architecture = first_architecture(config);
  model.extra_parameters.push_back({"pooler.dense", "head", "Linear", dense});
  if (architecture.empty() || architecture == "BertForPreTraining" ||
      architecture == "BertForMaskedLM") {
    model.extra_parameters.push_back({"cls.predictions.transform.dense", "head", "Linear", dense});
    model.extra_parameters.push_back(
        {"cls.predictions.transform.LayerNorm", "norm", "LayerNorm", 2 * hidden});
    model.extra_parameters.push_back({"cls.predictions.bias", "head", "Bias", vocab});
    model.extra_parameters.push_back(
        {"cls.seq_relationship", "head", "Linear", 2 * hidden + 2});
    model.notes.push_back(
        "counted with the pre-training heads (pooler, cls.predictions, cls.seq_relationship) that "
        "Google's BERT checkpoints hold; the MLM decoder is tied to the word embeddings");
  } else if (architecture == "BertForSequenceClassification") {
    std::int64_t labels = 2;
    if (config.has("id2label") && config.json().at("id2label").is_object()) {
      labels = static_cast<std::int64_t>(config.json().at("id2label").size());
    }
    labels = config.int_or({"num_labels"}, labels, 1, k_max_vocab);
    model.extra_parameters.push_back(
        {"classifier", "head", "Linear", checked_add(checked_mul(hidden, labels), labels)});
  } else if (architecture != "BertModel") {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: "
                            "BertForPreTraining, BertForMaskedLM, BertModel, "
                            "BertForSequenceClassification",
                            architecture));
  }
  return model;
}

}  // namespace trace::family
