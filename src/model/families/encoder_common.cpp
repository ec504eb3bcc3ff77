// Pieces the BERT-lineage encoders share (BERT, RoBERTa / XLM-R / CamemBERT, ELECTRA,
// DistilBERT, ALBERT, DeBERTa, ModernBERT): the BertLayer stack and the heads' sizes.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/checked_math.hpp"

namespace trace::family {

EncoderSizes read_encoder_sizes(const ConfigReader& config) {
  EncoderSizes sizes;
  sizes.vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  sizes.hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  sizes.layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  sizes.intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  sizes.positions = config.require_int({"max_position_embeddings"}, 1, k_max_positions);
  return sizes;
}

void require_absolute_positions(const ConfigReader& config) {
  const std::string position_type =
      config.optional_string("position_embedding_type").value_or("absolute");
  if (position_type != "absolute") {
    config.fail("position_embedding_type",
                fmt::format("= \"{}\" is not supported yet (only \"absolute\")", position_type));
  }
}

Stack bert_encoder_stack(const ConfigReader& config, std::int64_t hidden, std::int64_t layers,
                         std::int64_t intermediate) {
  require_absolute_positions(config);
  if (config.bool_or("add_cross_attention", false)) {
    config.fail("add_cross_attention",
                "= true (cross-attention layers for an encoder-decoder) is not supported yet");
  }
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  return post_norm_encoder_stack(config, hidden, layers, intermediate, shape,
                                 "attention.output.LayerNorm");
}

Stack post_norm_encoder_stack(const ConfigReader& config, std::int64_t hidden,
                              std::int64_t layers, std::int64_t intermediate,
                              const HeadShape& shape, const char* attention_norm) {
  const std::string activation = config.optional_string("hidden_act").value_or("gelu");
  Stack stack;
  stack.name = "encoder";
  stack.causal = false;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, true, true);
    block.attention.name = "attention";
    block.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, true, true, false};
    block.norms = {layer_norm(attention_norm, hidden), layer_norm("output.LayerNorm", hidden)};
    block.post_norm = true;
    stack.blocks.push_back(std::move(block));
  }
  return stack;
}

std::int64_t classifier_labels(const ConfigReader& config) {
  std::int64_t labels = 2;
  if (config.has("id2label") && config.json().at("id2label").is_object()) {
    labels = static_cast<std::int64_t>(config.json().at("id2label").size());
  }
  return config.int_or({"num_labels"}, labels, 1, k_max_vocab);
}

void set_head_class(ModelDescription& model, std::string_view architecture,
                    const ConfigReader& config, std::string_view wrapper_prefix) {
  if (architecture.ends_with("ForSequenceClassification") ||
      architecture.ends_with("ForMultipleChoice") || architecture.ends_with("Model")) {
    model.head_logits_per_token = 0;  // a head over the pooled sequence, or none
  } else if (architecture.ends_with("ForTokenClassification")) {
    model.head_logits_per_token = classifier_labels(config);
  } else if (architecture.ends_with("ForQuestionAnswering")) {
    model.head_logits_per_token = 2;  // span start and end
  }
  // "BertModel", not "BertLMHeadModel" or "BertForMaskedLM".
  model.bare_base_model =
      architecture.ends_with("Model") && architecture.find("For") == std::string_view::npos &&
      !architecture.ends_with("LMHeadModel") && !architecture.ends_with("PreTrainedModel");
  if (model.bare_base_model && !wrapper_prefix.empty()) {
    for (StoredExtra& extra : model.stored_extras) {
      if (extra.name.starts_with(wrapper_prefix)) extra.name.erase(0, wrapper_prefix.size());
    }
  }
}

std::int64_t linear_params(std::int64_t in, std::int64_t out, bool bias) {
  const std::int64_t weights = checked_mul(in, out);
  return bias ? checked_add(weights, out) : weights;
}

std::int64_t biased_conv_params(std::int64_t in, std::int64_t out, std::int64_t kernel) {
  return linear_params(checked_mul(in, kernel), out);
}

void add_vision_part(ModelDescription& model, std::string name, const char* op,
                     std::int64_t params) {
  model.extra_parameters.push_back({std::move(name), "vision", op, params});
}

void add_vision_multihead_attention(ModelDescription& model, const std::string& name,
                                    std::int64_t d) {
  model.extra_parameters.push_back(
      {name + ".in_proj_weight", "vision", "Parameter", checked_mul(3 * d, d), {3 * d, d}, true});
  model.extra_parameters.push_back(
      {name + ".in_proj_bias", "vision", "Parameter", 3 * d, {3 * d}, true});
  model.extra_parameters.push_back(
      {name + ".out_proj", "vision", "Linear", checked_add(checked_mul(d, d), d), {d, d}});
}

}  // namespace trace::family
