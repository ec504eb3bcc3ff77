// GPT-Neo (model_type gpt_neo: EleutherAI/gpt-neo-125m, gpt-neo-1.3B, gpt-neo-2.7B and their
// fine-tunes): GPT-2's layout with separate projections. Learned absolute positions (wpe),
// pre-LayerNorm (ln_1, ln_2, final ln_f), attention q/k/v_proj without bias and out_proj with
// one (under attn.attention), a plain GELU MLP c_fc -> c_proj with biases, the head tied to wte.
// attention_types expands to one "global" or "local" per layer; local layers see the last
// window_size tokens (themselves included).
// Tensor list: transformers models/gpt_neo/modeling_gpt_neo.py.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "family.hpp"

namespace trace::family {

namespace {

// attention_types is a list of [pattern, repeats] groups, e.g. [[["global", "local"], 12]]; the
// layers are the patterns repeated in order (GPTNeoConfig.expand_attention_types_params).
std::vector<std::string> expand_attention_types(const ConfigReader& config) {
  std::vector<std::string> kinds;
  if (!config.has("attention_types")) {
    // GPTNeoConfig's default, the 24-layer gpt-neo-1.3B pattern.
    for (int i = 0; i < 12; ++i) kinds.insert(kinds.end(), {"global", "local"});
    return kinds;
  }
  const auto bad = [&config]() {
    config.fail("attention_types",
                "must be a list of [[\"global\" | \"local\", ...], repeats] groups");
  };
  const nlohmann::json& groups = config.json().at("attention_types");
  if (!groups.is_array()) bad();
  for (const nlohmann::json& group : groups) {
    if (!group.is_array() || group.size() != 2 || !group[0].is_array() ||
        !group[1].is_number_integer()) {
      bad();
    }
    const std::int64_t repeats = group[1].get<std::int64_t>();
    if (repeats < 0 || repeats > k_max_layers) bad();
    for (std::int64_t r = 0; r < repeats; ++r) {
      for (const nlohmann::json& kind : group[0]) {
        if (!kind.is_string() || (kind != "global" && kind != "local")) bad();
        kinds.push_back(kind.get<std::string>());
        if (static_cast<std::int64_t>(kinds.size()) > k_max_layers) bad();
      }
    }
  }
  return kinds;
}

}  // namespace

ModelDescription build_gpt_neo(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  // attribute_map: num_hidden_layers -> num_layers, num_attention_heads -> num_heads.
  const std::int64_t layers =
      config.require_int({"num_layers", "num_hidden_layers"}, 1, k_max_layers);
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_heads", "num_attention_heads"}, {}, false);
  // intermediate_size null (every EleutherAI config) means 4 x hidden.
  const std::int64_t inner =
      config.optional_int({"intermediate_size"}, 1, k_max_width).value_or(4 * hidden);
  const std::int64_t positions =
      config.int_or({"max_position_embeddings"}, 2048, 1, k_max_positions);
  const std::int64_t window = config.int_or({"window_size"}, 256, 1, k_max_positions);

  const std::vector<std::string> kinds = expand_attention_types(config);
  if (static_cast<std::int64_t>(kinds.size()) != layers) {
    config.fail("attention_types",
                fmt::format("expands to {} layers but num_layers = {}; GPTNeoConfig requires one "
                            "attention type per layer",
                            kinds.size(), layers));
  }
  // attention_layers is the serialized expansion; transformers recomputes it, so a stale copy
  // means the config was edited by hand.
  if (config.has("attention_layers")) {
    const nlohmann::json& listed = config.json().at("attention_layers");
    bool same = listed.is_array() && listed.size() == kinds.size();
    for (std::size_t i = 0; same && i < kinds.size(); ++i) {
      same = listed[i].is_string() && listed[i].get<std::string>() == kinds[i];
    }
    if (!same) {
      config.fail("attention_layers",
                  "disagrees with the expansion of attention_types (which transformers uses)");
    }
  }

  fill_decoder_basics(model, config, vocab, hidden, true, {"max_position_embeddings"});
  model.unspecified_dtype =
      "float32";  // EleutherAI/gpt-neo-* store F32 (configs without torch_dtype)
  model.family = "GPT-Neo (decoder-only, learned positions, LayerNorm, global/local attention)";
  model.position = PositionKind::learned;
  model.learned_positions = positions;
  model.max_position_embeddings = positions;

  DecoderLayout layout;
  layout.norm_kind = NormKind::layer_norm;
  layout.o_bias = true;  // q/k/v_proj have none, out_proj has one
  const std::string activation = config.optional_string("activation_function").value_or("gelu_new");
  layout.mlp = Mlp{MlpKind::plain, activation, hidden, inner, true, true, false};
  // GPT-2-style module names: transformer.h.N.ln_1 / attn.attention / ln_2, transformer.ln_f.
  layout.attention_name = "attn.attention";
  layout.norm_names = {"ln_1", "ln_2"};
  layout.final_norm_name = "ln_f";
  std::int64_t global_layers = 0;
  for (const std::string& kind : kinds) {
    layout.windows.push_back(kind == "local" ? window : 0);
    if (kind == "global") ++global_layers;
  }
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));

  // The EleutherAI uploads were saved by transformers 4.5, whose global-attention module held a
  // persistent uint8 causal mask (local layers built theirs on the fly): model.safetensors is
  // 526 MB against 501 MB of F32 parameters for gpt-neo-125m, six 2048 x 2048 masks.
  if (global_layers > 0) {
    StoredExtra masks{
        "transformer.h.*.attn.attention.bias",
        global_layers,
        checked_mul(positions, positions, "the GPT-Neo mask size"),
        "U8",
        false,
        "causal-mask buffers (1 x 1 x max_positions^2) of the global layers in checkpoints saved "
        "by transformers 4.5 (the EleutherAI uploads); not parameters"};
    masks.shape = {1, 1, positions, positions};
    model.stored_extras.push_back(std::move(masks));
  }
  model.stored_extras.push_back(
      StoredExtra{"transformer.h.*.attn.attention.masked_bias", layers, 1, "F32", false,
                  "the -1e9 fill scalar of the same old checkpoints (at most one per layer); not a "
                  "parameter"});
  note_defaults(model, config, "GPTNeoConfig",
                {{"attention_types", "[[[\"global\", \"local\"], 12]]"},
                 {"intermediate_size", "4 x hidden_size"},
                 {"window_size", "256"},
                 {"max_position_embeddings", "2048"},
                 {"activation_function", "gelu_new"},
                 {"tie_word_embeddings", "true"}});
  return model;
}

}  // namespace trace::family
