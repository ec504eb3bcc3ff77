// MPNet (model_type "mpnet"): a BERT-shaped post-LayerNorm encoder with two position signals,
// a learned absolute table and a relative-position bias on the attention scores.
//  - embeddings: word_embeddings [V, H], position_embeddings [max_position_embeddings, H] and
//    LayerNorm; no token-type table. Positions are numbered from the padding index + 1, and the
//    padding index is fixed at 1 whatever pad_token_id says, so 514 rows hold 512 tokens.
//  - encoder: relative_attention_bias [relative_attention_num_buckets, heads], one table held by
//    the encoder and added in every layer; layers of attention.attn.{q,k,v,o} (biased),
//    attention.LayerNorm, intermediate.dense, output.dense, output.LayerNorm.
//  - heads by `architectures` (MPNetForMaskedLM when it names none, as microsoft/mpnet-base):
//    ForMaskedLM: lm_head.dense, lm_head.layer_norm, lm_head.bias (the decoder weight is the
//    word embedding, its bias lm_head.bias); ForSequenceClassification: classifier.dense +
//    classifier.out_proj; ForTokenClassification: classifier; ForQuestionAnswering: qa_outputs
//    (num_labels); ForMultipleChoice: pooler + classifier (1 output); Model: pooler. Only Model
//    and ForMultipleChoice build the pooler.
// sentence-transformers' MPNet uploads of 2021 name MPNetForMaskedLM but store MPNetModel's
// tensors; see below and tests/data/configs/SOURCES-mpnet.md.
// Tensor list: transformers models/mpnet/modeling_mpnet.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// MPNetEmbeddings hard-codes its padding index; pad_token_id does not move it.
constexpr std::int64_t k_padding_index = 1;

// The checkpoint behind a config that names MPNetForMaskedLM yet was saved from MPNetModel:
// the sentence-transformers training script behind all-mpnet-base-v2 kept the base model's
// config (architectures MPNetForMaskedLM, `_name_or_path` "microsoft/mpnet-base") while its
// weights are MPNetModel's, pooler included and lm_head absent (Hub total 109,486,978 = that
// layout + 514 I64 position_ids). An MLM fine-tune re-saved from the same base would match too;
// the note says what it would add.
bool sentence_transformers_upload(const ConfigReader& config, const std::string& head) {
  if (head != "MPNetForMaskedLM") return false;
  // Bookkeeping transformers writes, read leniently: a value of another type is not an error.
  const auto origin = config.json().find("_name_or_path");
  return origin != config.json().end() && origin->is_string() &&
         origin->get<std::string>() == "microsoft/mpnet-base";
}

}  // namespace

ModelDescription build_mpnet(const ConfigReader& config) {
  ModelDescription model;
  const auto [vocab, hidden, layers, intermediate, positions] = read_encoder_sizes(config);
  if (positions <= k_padding_index + 1) {
    config.fail("max_position_embeddings",
                fmt::format("= {} leaves no row for a token: MPNet numbers positions from {}",
                            positions, k_padding_index + 1));
  }
  model.architecture = "encoder-only";
  model.family =
      "MPNet (encoder-only, learned positions + relative attention bias, post-LayerNorm, GELU "
      "MLP)";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = hidden;
  model.position = PositionKind::learned;
  model.learned_positions = positions;
  model.max_position_embeddings = positions - k_padding_index - 1;
  model.token_types = 0;
  model.embedding_norm = layer_norm("embeddings.LayerNorm", hidden);
  model.has_lm_head = false;
  model.torch_dtype = read_torch_dtype(config);
  model.unspecified_dtype =
      "float32";  // mpnet-base, all-mpnet-base-v2 store F32 (configs without torch_dtype)
  // MPNetSelfAttention multiplies and softmaxes by hand to add the relative bias: there is no
  // SDPA / flash path, so training keeps every layer's score matrix.
  model.eager_attention_only = true;
  // Serving's score-sized tensors at once: the scores, their softmax, and the relative bias
  // MPNetEncoder expands to [batch, heads, T, T] once a forward and every layer adds.
  model.eager_score_tensors = 3;
  model.notes.push_back(
      "transformers' MPNet has no SDPA / flash attention: a training job keeps every layer's "
      "score matrix, whatever --attention says");
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  // BERT's layer shapes; MPNet names the attention's norm attention.LayerNorm.
  model.stacks.push_back(
      post_norm_encoder_stack(config, hidden, layers, intermediate, shape, "attention.LayerNorm"));

  const std::int64_t buckets =
      config.int_or({"relative_attention_num_buckets"}, 32, 1, k_max_positions);
  if (buckets != 32) {
    model.notes.push_back(fmt::format(
        "relative_attention_num_buckets = {}: transformers builds that many rows but buckets "
        "positions into 32 whatever the key says",
        buckets));
  }
  const auto add = [&](std::string name, const char* component, const char* op,
                       std::int64_t params) {
    model.extra_parameters.push_back({std::move(name), component, op, params});
  };
  // Per-head biases on the attention scores: counted with attention, as T5's table is.
  add("encoder.relative_attention_bias", "attention", "Embedding",
      checked_mul(buckets, shape.num_heads));

  std::string head = first_architecture(config);
  if (head.empty()) head = "MPNetForMaskedLM";  // what microsoft/mpnet-base names
  const std::int64_t dense = linear_params(hidden, hidden);
  const bool tied = config.bool_or("tie_word_embeddings", true);
  if (sentence_transformers_upload(config, head)) {
    const std::int64_t mlm_extra = 2 * hidden + vocab + (tied ? 0 : checked_mul(vocab, hidden));
    model.notes.push_back(fmt::format(
        "counted as MPNetModel (pooler, no lm_head): a config re-saved from microsoft/mpnet-base "
        "that names MPNetForMaskedLM is sentence-transformers' layout (all-mpnet-base-v2 stores "
        "MPNetModel's tensors); a true MLM fine-tune holds lm_head instead of the pooler, {} "
        "more parameters",
        mlm_extra));
    head = "MPNetModel";
  }
  // (A bare MPNetModel stores it without "mpnet.": set_head_class takes the prefix off.)
  model.stored_extras.push_back(StoredExtra{
      "mpnet.embeddings.position_ids", 1, positions, "I64", false,
      "a buffer saved by transformers < 4.31 (all-mpnet-base-v2 stores it); never a parameter"});

  if (head == "MPNetForMaskedLM") {
    model.tie_word_embeddings = tied;
    add("lm_head.dense", "head", "Linear", dense);
    add("lm_head.layer_norm", "norm", "LayerNorm", 2 * hidden);
    add("lm_head.bias", "head", "Bias", vocab);
    if (!tied) add("lm_head.decoder", "head", "Linear", checked_mul(vocab, hidden));
  } else if (head == "MPNetModel") {
    add("pooler.dense", "head", "Linear", dense);
  } else if (head == "MPNetForSequenceClassification") {
    add("classifier.dense", "head", "Linear", dense);
    add("classifier.out_proj", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (head == "MPNetForTokenClassification") {
    add("classifier", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (head == "MPNetForQuestionAnswering") {
    add("qa_outputs", "head", "Linear", linear_params(hidden, classifier_labels(config)));
  } else if (head == "MPNetForMultipleChoice") {
    add("pooler.dense", "head", "Linear", dense);
    add("classifier", "head", "Linear", linear_params(hidden, 1));
  } else {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: MPNetModel, "
                            "MPNetForMaskedLM, MPNetForSequenceClassification, "
                            "MPNetForTokenClassification, MPNetForQuestionAnswering, "
                            "MPNetForMultipleChoice",
                            head));
  }
  set_head_class(model, head, config, "mpnet.");
  return model;
}

}  // namespace trace::family
