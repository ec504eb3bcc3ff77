// BART-style encoder-decoders: bart, mbart, marian, pegasus, m2m_100 (also NLLB-200, whose
// model_type is m2m_100). Every one has two stacks of d_model-wide layers with biased q/k/v/out
// projections, a biased fc1 -> fc2 MLP and LayerNorms named self_attn_layer_norm,
// (decoder) encoder_attn_layer_norm and final_layer_norm; one vocab_size x d_model table
// (model.shared) is the encoder's and the decoder's embed_tokens and, unless tie_word_embeddings
// is false, the lm_head. They differ in:
//  - norm placement: post-LN (bart, marian) or pre-LN with a final layer_norm per stack (mbart,
//    pegasus, m2m_100); bart and mbart also normalise the embeddings (layernorm_embedding);
//  - positions: bart / mbart learn a table of max_position_embeddings + 2 rows per stack (two
//    rows reserved, as fairseq did). marian / pegasus hold a fixed sinusoidal table of
//    max_position_embeddings rows per stack as a frozen nn.Parameter, which transformers counts
//    in num_parameters(), so trace does too (as Whisper's); m2m_100 computes its sinusoids into a
//    non-persistent buffer: neither a parameter nor stored;
//  - the generation head: *ForConditionalGeneration / MarianMTModel register final_logits_bias
//    [1, vocab] as a buffer (stored, not a parameter); M2M100's has none.
// Heads by `architectures`: the generation class, the bare *Model, and for bart / mbart
// *ForSequenceClassification (classification_head.dense d -> d, out_proj d -> labels) and
// *ForQuestionAnswering (qa_outputs d -> 2).
// Tensor lists: transformers models/{bart,mbart,marian,pegasus,m2m_100}/modeling_*.py.
// Derivations and published totals: tests/data/configs/SOURCES-bart.md.
#include <fmt/format.h>

#include <cmath>

#include "family.hpp"

namespace trace::family {

namespace {

enum class Positions {
  learned,               // max_position_embeddings + 2 learned rows per stack
  sinusoidal_parameter,  // max_position_embeddings fixed rows per stack, a frozen parameter
  sinusoidal_buffer,     // computed at run time, grows with the input; not stored
};

struct Dialect {
  const char* config_class;  // for messages
  const char* prefix;        // class-name prefix: "Bart", "MBart", ...
  const char* generation;    // the generation class
  const char* family;
  bool pre_norm;
  bool embedding_norms;  // layernorm_embedding in each stack
  Positions positions;
  bool final_logits_bias;  // the generation class registers it
  bool task_heads;         // *ForSequenceClassification / *ForQuestionAnswering exist
  bool decoder_vocab;      // share_encoder_decoder_embeddings / decoder_vocab_size (Marian)
  bool scale_default;      // the config class's scale_embedding default
  const char* activation;  // the config class's activation_function default
};

constexpr Dialect k_bart{.config_class = "BartConfig",
                         .prefix = "Bart",
                         .generation = "BartForConditionalGeneration",
                         .family = "BART (encoder-decoder, learned positions, post-LayerNorm)",
                         .pre_norm = false,
                         .embedding_norms = true,
                         .positions = Positions::learned,
                         .final_logits_bias = true,
                         .task_heads = true,
                         .decoder_vocab = false,
                         .scale_default = false,
                         .activation = "gelu"};
constexpr Dialect k_mbart{.config_class = "MBartConfig",
                          .prefix = "MBart",
                          .generation = "MBartForConditionalGeneration",
                          .family = "mBART (encoder-decoder, learned positions, pre-LayerNorm)",
                          .pre_norm = true,
                          .embedding_norms = true,
                          .positions = Positions::learned,
                          .final_logits_bias = true,
                          .task_heads = true,
                          .decoder_vocab = false,
                          .scale_default = false,
                          .activation = "gelu"};
constexpr Dialect k_marian{
    .config_class = "MarianConfig",
    .prefix = "Marian",
    .generation = "MarianMTModel",
    .family = "Marian (encoder-decoder, sinusoidal positions, post-LayerNorm)",
    .pre_norm = false,
    .embedding_norms = false,
    .positions = Positions::sinusoidal_parameter,
    .final_logits_bias = true,
    .task_heads = false,
    .decoder_vocab = true,
    .scale_default = false,
    .activation = "gelu"};
constexpr Dialect k_pegasus{
    .config_class = "PegasusConfig",
    .prefix = "Pegasus",
    .generation = "PegasusForConditionalGeneration",
    .family = "Pegasus (encoder-decoder, sinusoidal positions, pre-LayerNorm)",
    .pre_norm = true,
    .embedding_norms = false,
    .positions = Positions::sinusoidal_parameter,
    .final_logits_bias = true,
    .task_heads = false,
    .decoder_vocab = false,
    .scale_default = false,
    .activation = "gelu"};
// M2M100Config is the only one of these classes whose scale_embedding defaults to true.
constexpr Dialect k_m2m_100{
    .config_class = "M2M100Config",
    .prefix = "M2M100",
    .generation = "M2M100ForConditionalGeneration",
    .family = "M2M100 / NLLB (encoder-decoder, sinusoidal positions, pre-LayerNorm)",
    .pre_norm = true,
    .embedding_norms = false,
    .positions = Positions::sinusoidal_buffer,
    .final_logits_bias = false,
    .task_heads = false,
    .decoder_vocab = false,
    .scale_default = true,
    .activation = "relu"};

enum class Head { generation, bare, classification, question_answering };

Head read_head(const ConfigReader& config, const Dialect& dialect, ModelDescription& model) {
  const std::string architecture = first_architecture(config);
  const std::string prefix = dialect.prefix;
  if (architecture.empty()) {
    model.notes.push_back(fmt::format(
        "architectures is absent: counted as {} (tied lm_head, final_logits_bias buffer)",
        dialect.generation));
    return Head::generation;
  }
  set_head_class(model, architecture, config);
  if (architecture == dialect.generation) return Head::generation;
  if (architecture == prefix + "Model") return Head::bare;
  if (dialect.task_heads && architecture == prefix + "ForSequenceClassification") {
    return Head::classification;
  }
  if (dialect.task_heads && architecture == prefix + "ForQuestionAnswering") {
    return Head::question_answering;
  }
  std::string supported = fmt::format("{}, {}Model", dialect.generation, prefix);
  if (dialect.task_heads) {
    supported += fmt::format(", {0}ForSequenceClassification, {0}ForQuestionAnswering", prefix);
  }
  config.fail("architectures",
              fmt::format("names {}, whose heads trace does not know (a *ForCausalLM is the "
                          "decoder alone, not modelled); supported: {}",
                          architecture, supported));
}

// The classifier's labels: id2label (save_pretrained always writes it), else num_labels.
std::int64_t read_labels(const ConfigReader& config) {
  if (config.has("id2label") && config.json().at("id2label").is_object() &&
      !config.json().at("id2label").empty()) {
    return static_cast<std::int64_t>(config.json().at("id2label").size());
  }
  const std::optional<std::int64_t> labels =
      config.optional_int({"num_labels", "_num_labels"}, 1, k_max_vocab);
  if (!labels) {
    config.fail("id2label",
                "is absent, and so is num_labels: the classification head's width is "
                "unknown; add the label map the checkpoint was trained with");
  }
  return *labels;
}

std::string buffer_dtype(const std::string& torch_dtype) {
  if (torch_dtype == "float16") return "F16";
  if (torch_dtype == "bfloat16") return "BF16";
  return "F32";
}

Attention bart_attention(std::int64_t width, const HeadShape& heads, const char* name, bool cross) {
  Attention attention = self_attention(width, heads, true, true);
  attention.name = name;
  attention.is_cross = cross;
  return attention;
}

ModelDescription build_seq2seq(const ConfigReader& config, const Dialect& dialect) {
  // The sizes are required: the config classes' defaults changed across releases (MarianConfig's
  // vocab_size was 50265, now 58101). The aliases are the classes' attribute_map / the
  // num_hidden_layers attribute they write, and must agree when both are present.
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t d = config.require_int({"d_model", "hidden_size"}, 1, k_max_width);
  const std::int64_t encoder_layers =
      config.require_int({"encoder_layers", "num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t decoder_layers = config.require_int({"decoder_layers"}, 1, k_max_layers);
  const std::int64_t encoder_ffn = config.require_int({"encoder_ffn_dim"}, 1, k_max_width);
  const std::int64_t decoder_ffn = config.require_int({"decoder_ffn_dim"}, 1, k_max_width);
  const HeadShape encoder_heads =
      read_head_shape(config, d, {"encoder_attention_heads", "num_attention_heads"}, {}, false);
  const HeadShape decoder_heads =
      read_head_shape(config, d, {"decoder_attention_heads"}, {}, false);
  const std::int64_t positions =
      config.require_int({"max_position_embeddings"}, 1, k_max_positions);
  const std::string activation =
      config.optional_string("activation_function").value_or(dialect.activation);

  ModelDescription model;
  model.architecture = "encoder-decoder";
  model.family = dialect.family;
  model.vocab_size = vocab;
  model.hidden_size = d;
  model.embedding_dim = d;
  model.max_position_embeddings = positions;
  model.tie_word_embeddings = config.bool_or("tie_word_embeddings", true);
  model.torch_dtype = read_torch_dtype(config);
  // bart-*, mbart-large-*, opus-mt-*, pegasus-*, m2m100 / nllb-200 store F32 (configs without
  // torch_dtype)
  model.unspecified_dtype = "float32";
  if (config.bool_or("scale_embedding", dialect.scale_default)) {
    model.embedding_scale = std::sqrt(static_cast<double>(d));
  }
  note_defaults(model, config, dialect.config_class,
                {{"activation_function", dialect.activation},
                 {"scale_embedding", dialect.scale_default ? "true" : "false"},
                 {"tie_word_embeddings", "true"}});

  const Head head = read_head(config, dialect, model);
  model.has_lm_head = head == Head::generation;

  // Marian may give the decoder its own vocabulary (share_encoder_decoder_embeddings false): the
  // encoder and the decoder then each hold a copy of model.shared's shape, vocab_size rows, and
  // the head has decoder_vocab_size rows, tied to the decoder's table. transformers builds that
  // copy with vocab_size rows whatever decoder_vocab_size says, so only equal sizes load.
  if (dialect.decoder_vocab && !config.bool_or("share_encoder_decoder_embeddings", true)) {
    const std::int64_t decoder_vocab = config.int_or({"decoder_vocab_size"}, vocab, 1, k_max_vocab);
    if (decoder_vocab != vocab) {
      config.fail("decoder_vocab_size",
                  fmt::format("= {} differs from vocab_size {} with separate embeddings: "
                              "transformers' MarianModel copies a vocab_size-row table for the "
                              "decoder, so such a checkpoint does not load; not supported",
                              decoder_vocab, vocab));
    }
    model.extra_parameters.push_back(
        {"model.decoder.embed_tokens", "embedding", "Embedding", checked_mul(vocab, d)});
    model.notes.push_back(
        "share_encoder_decoder_embeddings is false: the encoder and the decoder hold separate "
        "token tables; the lm_head is tied to the decoder's");
  }

  // Positions: one table per stack. The decoder's is the model's learned_positions (the one the
  // sequence length is checked against); the encoder's is an extra of the same shape.
  if (dialect.positions == Positions::sinusoidal_buffer) {
    model.position = PositionKind::none;
    model.notes.push_back(fmt::format(
        "positions are sinusoids computed into a non-persistent buffer ({} + 2 rows per stack, "
        "regrown for longer inputs): neither parameters nor stored",
        positions));
  } else {
    const bool learned = dialect.positions == Positions::learned;
    const std::int64_t rows = learned ? checked_add(positions, 2) : positions;
    model.position = PositionKind::learned;
    model.learned_positions = rows;
    model.extra_parameters.push_back(
        {"model.encoder.embed_positions", "position_embedding", "Embedding", checked_mul(rows, d)});
    if (!learned) {
      // _init_weight fills both tables with sinusoids and sets requires_grad = False.
      model.sinusoidal_position_table = true;
      model.frozen_parameters = checked_mul(2, checked_mul(rows, d));
    }
    if (learned) {
      model.notes.push_back(fmt::format(
          "embed_positions hold max_position_embeddings + 2 = {} rows per stack (two reserved, "
          "as in fairseq): at most {} tokens per sequence in each stack",
          rows, positions));
    } else {
      model.notes.push_back(fmt::format(
          "embed_positions [{}, {}] per stack are fixed sinusoidal tables kept as frozen "
          "parameters: counted, as transformers' num_parameters() does, but never trained (no "
          "gradients or optimizer state); they are indexed by position, so at most {} tokens "
          "per sequence",
          rows, d, positions));
    }
  }

  const auto norm = [&](const char* name) { return layer_norm(name, d); };
  Stack encoder;
  encoder.name = "encoder";
  encoder.causal = false;
  Stack decoder;
  decoder.name = "decoder";
  for (std::int64_t i = 0; i < encoder_layers; ++i) {
    Block block;
    block.attention = bart_attention(d, encoder_heads, "self_attn", false);
    block.mlp = Mlp{MlpKind::plain, activation, d, encoder_ffn, true, true, false};
    block.norms = {norm("self_attn_layer_norm"), norm("final_layer_norm")};
    block.post_norm = !dialect.pre_norm;
    encoder.blocks.push_back(std::move(block));
  }
  for (std::int64_t i = 0; i < decoder_layers; ++i) {
    Block block;
    block.attention = bart_attention(d, decoder_heads, "self_attn", false);
    block.cross_attention = bart_attention(d, decoder_heads, "encoder_attn", true);
    block.mlp = Mlp{MlpKind::plain, activation, d, decoder_ffn, true, true, false};
    block.norms = {norm("self_attn_layer_norm"), norm("encoder_attn_layer_norm"),
                   norm("final_layer_norm")};
    block.post_norm = !dialect.pre_norm;
    decoder.blocks.push_back(std::move(block));
  }
  if (dialect.pre_norm) {
    encoder.final_norm = norm("layer_norm");
    decoder.final_norm = norm("layer_norm");
  }
  if (dialect.embedding_norms) {
    // Both stacks normalise their embeddings; the decoder's is the model's embedding_norm.
    model.embedding_norm = norm("decoder.layernorm_embedding");
    model.extra_parameters.push_back(
        {"model.encoder.layernorm_embedding", "norm", "LayerNorm", checked_mul(2, d)});
  }
  model.stacks.push_back(std::move(encoder));
  model.stacks.push_back(std::move(decoder));

  if (head == Head::generation && dialect.final_logits_bias) {
    model.stored_extras.push_back(StoredExtra{
        "final_logits_bias", 1, vocab, buffer_dtype(model.torch_dtype), true,
        "a [1, vocab] buffer added to the logits (zeros in released checkpoints); not a "
        "parameter"});
  } else if (head == Head::classification) {
    const std::int64_t labels = read_labels(config);
    model.extra_parameters.push_back(
        {"classification_head.dense", "head", "Linear", linear_params(d, d)});
    model.extra_parameters.push_back(
        {"classification_head.out_proj", "head", "Linear", linear_params(d, labels)});
  } else if (head == Head::question_answering) {
    model.extra_parameters.push_back({"qa_outputs", "head", "Linear", linear_params(d, 2)});
  }
  return model;
}

}  // namespace

ModelDescription build_bart(const ConfigReader& config) {
  return build_seq2seq(config, k_bart);
}

ModelDescription build_mbart(const ConfigReader& config) {
  return build_seq2seq(config, k_mbart);
}

ModelDescription build_marian(const ConfigReader& config) {
  return build_seq2seq(config, k_marian);
}

ModelDescription build_pegasus(const ConfigReader& config) {
  return build_seq2seq(config, k_pegasus);
}

ModelDescription build_m2m_100(const ConfigReader& config) {
  return build_seq2seq(config, k_m2m_100);
}

}  // namespace trace::family
