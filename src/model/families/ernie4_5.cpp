// ERNIE 4.5 dense (model_type ernie4_5, transformers-native): baidu/ERNIE-4.5-0.3B-PT and
// ERNIE-4.5-0.3B-Base-PT. A Llama-layout decoder: q/k/v/o and gate/up/down_proj all biased per
// use_bias, heads head_dim wide (Ernie4_5Config defaults it to 128, not hidden / heads), GQA,
// full-width interleaved RoPE, pre-norm RMSNorm pair, final norm, embeddings tied by default.
// The head carries no bias in transformers (Ernie4_5ForCausalLM); Baidu's earlier remote code
// added one when use_bias and weight_share_add_bias, which no released checkpoint sets.
// Tensor list: transformers models/ernie4_5/modular_ernie4_5.py (modeling_ernie4_5.py) and
// configuration_ernie4_5.py; cross-read with Baidu's remote modeling_ernie4_5.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_ernie4_5(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  // Ernie4_5Config: an absent head_dim is 128 and an absent num_key_value_heads is 2; only an
  // explicit null falls back to hidden / heads and to one kv head per query head.
  const bool head_dim_given = config.json().contains("head_dim");
  const std::optional<std::int64_t> default_head_dim =
      head_dim_given ? std::nullopt : std::optional<std::int64_t>(128);
  HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"},
                                    {"num_key_value_heads"}, true, default_head_dim);
  if (!config.json().contains("num_key_value_heads")) {
    shape.num_kv_heads = 2;
    if (shape.num_heads % shape.num_kv_heads != 0) {
      throw ConfigError(fmt::format(
          "config.json ({}): 'num_attention_heads' = {} is not a multiple of Ernie4_5Config's "
          "default num_key_value_heads 2; set 'num_key_value_heads'",
          config.model_type(), shape.num_heads));
    }
  }
  fill_decoder_basics(model, config, vocab, hidden, true);
  model.position = PositionKind::rope;
  model.family = "ERNIE 4.5 dense (decoder-only, RoPE, RMSNorm, SwiGLU, GQA)";

  const bool bias = config.bool_or("use_bias", false);
  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = bias;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, bias, bias, false};
  layout.rotary_dim = shape.head_dim;
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));

  if (bias) {
    model.notes.push_back(
        "use_bias: every projection carries a bias; lm_head does not (transformers' "
        "Ernie4_5ForCausalLM; Baidu's remote code also adds one when weight_share_add_bias)");
  }
  // note_defaults takes a null key for an absent one; here the two differ, so say which applied.
  for (const char* key : {"num_key_value_heads", "head_dim"}) {
    if (config.json().contains(key) && !config.has(key)) {
      model.notes.push_back(fmt::format("{} is null: {} used", key,
                                        std::string_view(key) == "head_dim"
                                            ? "hidden_size / num_attention_heads"
                                            : "one kv head per query head"));
    }
  }
  if (!config.json().contains("num_key_value_heads")) {
    model.notes.push_back("Ernie4_5Config default used: num_key_value_heads = 2");
  }
  if (!head_dim_given) model.notes.push_back("Ernie4_5Config default used: head_dim = 128");
  note_defaults(model, config, "Ernie4_5Config",
                {{"use_bias", "false"}, {"hidden_act", "silu"}, {"tie_word_embeddings", "true"}});
  return model;
}

}  // namespace trace::family
