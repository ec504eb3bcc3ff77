// Helpers shared by the family parsers.
#include <cmath>
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

Norm rms_norm(std::string name, std::int64_t dim) {
  return Norm{std::move(name), NormKind::rms_norm, dim};
}

Attention mla_attention(const MlaShape& mla, std::int64_t hidden, std::int64_t heads, bool bias) {
  Attention attention;
  attention.kind = AttentionKind::mla;
  attention.mla = mla;
  attention.input_dim = attention.kv_input_dim = attention.output_dim = hidden;
  attention.num_heads = attention.num_kv_heads = heads;
  attention.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  attention.rotary_dim = mla.qk_rope_head_dim;
  attention.q_bias = attention.k_bias = attention.o_bias = bias;
  return attention;
}

Norm layer_norm(std::string name, std::int64_t dim, bool bias) {
  return Norm{std::move(name), bias ? NormKind::layer_norm : NormKind::layer_norm_no_bias, dim};
}

HeadShape read_head_shape(const ConfigReader& config, std::int64_t hidden,
                          std::initializer_list<std::string_view> heads_keys,
                          std::initializer_list<std::string_view> kv_heads_keys,
                          bool explicit_head_dim_allowed,
                          std::optional<std::int64_t> default_head_dim) {
  HeadShape shape;
  shape.num_heads = config.require_int(heads_keys, 1, k_max_heads);
  shape.num_kv_heads = kv_heads_keys.size() == 0
                           ? shape.num_heads
                           : config.int_or(kv_heads_keys, shape.num_heads, 1, k_max_heads);
  const std::string heads_key(*heads_keys.begin());
  if (shape.num_kv_heads > shape.num_heads || shape.num_heads % shape.num_kv_heads != 0) {
    throw ConfigError(fmt::format(
        "config.json ({}): '{}' = {} is not a multiple of the key/value head count {}; grouped "
        "query attention needs num_attention_heads divisible by num_key_value_heads",
        config.model_type(), config.key_path(heads_key), shape.num_heads, shape.num_kv_heads));
  }
  const std::optional<std::int64_t> head_dim =
      explicit_head_dim_allowed ? config.optional_int({"head_dim"}, 1, k_max_width) : std::nullopt;
  if (head_dim) {
    shape.head_dim = *head_dim;
  } else if (default_head_dim) {
    shape.head_dim = *default_head_dim;
  } else {
    if (hidden % shape.num_heads != 0) {
      // Only a family that reads head_dim can be told to set it.
      throw ConfigError(fmt::format(
          "config.json ({}): hidden size {} is not divisible by '{}' = {}; {}",
          config.model_type(), hidden, config.key_path(heads_key), shape.num_heads,
          explicit_head_dim_allowed ? "set 'head_dim' explicitly"
                                    : "this architecture's heads are hidden_size / heads wide"));
    }
    shape.head_dim = hidden / shape.num_heads;
  }
  return shape;
}

Attention self_attention(std::int64_t hidden, const HeadShape& shape, bool qkv_bias, bool o_bias) {
  Attention attention;
  attention.input_dim = hidden;
  attention.kv_input_dim = hidden;
  attention.output_dim = hidden;
  attention.num_heads = shape.num_heads;
  attention.num_kv_heads = shape.num_kv_heads;
  attention.head_dim = shape.head_dim;
  attention.q_bias = qkv_bias;
  attention.k_bias = qkv_bias;
  attention.v_bias = qkv_bias;
  attention.o_bias = o_bias;
  return attention;
}

std::vector<std::int64_t> resolve_windows(const ConfigReader& config, std::int64_t layers,
                                          const WindowRule& rule) {
  std::vector<std::int64_t> windows(static_cast<std::size_t>(layers), 0);
  if (config.has("layer_types")) {
    const nlohmann::json& types = config.json().at("layer_types");
    if (!types.is_array() || static_cast<std::int64_t>(types.size()) != layers) {
      config.fail("layer_types", fmt::format("must be a list of {} entries (one per layer)", layers));
    }
    for (std::size_t i = 0; i < types.size(); ++i) {
      const std::string type = types[i].is_string() ? types[i].get<std::string>() : "";
      if (type == "full_attention") continue;
      if (type != "sliding_attention") {
        config.fail("layer_types",
                    fmt::format("entry {} is {}; expected \"full_attention\" or "
                                "\"sliding_attention\"",
                                i, types[i].dump()));
      }
      if (rule.window <= 0) {
        config.fail("sliding_window",
                    "is missing or null but layer_types names sliding_attention layers; set it");
      }
      windows[i] = rule.window;
    }
    return windows;
  }
  if (rule.window <= 0) return windows;
  for (std::int64_t i = 0; i < layers; ++i) {
    bool sliding = false;
    switch (rule.pattern) {
      case WindowRule::Pattern::none: break;
      case WindowRule::Pattern::all: sliding = true; break;
      case WindowRule::Pattern::alternate_even_sliding: sliding = i % 2 == 0; break;
      case WindowRule::Pattern::every_nth_global: sliding = (i + 1) % rule.parameter != 0; break;
      case WindowRule::Pattern::first_of_n_global:
        sliding = i % rule.parameter != 0;
        break;
      case WindowRule::Pattern::from_layer: sliding = i >= rule.parameter; break;
    }
    if (sliding) windows[static_cast<std::size_t>(i)] = rule.window;
  }
  return windows;
}

std::int64_t rotary_dims(const ConfigReader& config, std::int64_t head_dim) {
  if (const std::optional<std::int64_t> dims = config.optional_int({"rotary_dim"}, 0, head_dim)) {
    return *dims;
  }
  std::optional<double> factor = config.optional_number("partial_rotary_factor");
  if (!factor) factor = config.optional_number("rotary_pct");
  if (factor) {
    if (*factor <= 0.0 || *factor > 1.0) {
      config.fail("partial_rotary_factor", "must lie in (0, 1]");
    }
    return static_cast<std::int64_t>(std::floor(static_cast<double>(head_dim) * *factor));
  }
  return head_dim;
}

StoredExtra rotary_inv_freq_extra(std::int64_t layers, std::int64_t rotary_dim,
                                  std::string name) {
  return StoredExtra{std::move(name), layers, rotary_dim / 2, "F32",
                     false,
                     "RoPE frequency buffers; stored only by checkpoints saved with transformers "
                     "< 4.31 (e.g. Llama-2), never parameters"};
}

DecoderDims read_decoder_dims(const ConfigReader& config, ModelDescription& model,
                              bool tie_default) {
  DecoderDims dims;
  dims.vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  dims.hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  dims.layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  dims.heads =
      read_head_shape(config, dims.hidden, {"num_attention_heads"}, {"num_key_value_heads"});
  fill_decoder_basics(model, config, dims.vocab, dims.hidden, tie_default);
  model.position = PositionKind::rope;
  return dims;
}

std::vector<Norm> pre_norm_pair(std::int64_t hidden) {
  return {rms_norm("input_layernorm", hidden), rms_norm("post_attention_layernorm", hidden)};
}

std::int64_t sliding_window_with_default(const ConfigReader& config, std::int64_t class_default,
                                         std::int64_t min) {
  if (config.json().contains("sliding_window") && config.json().at("sliding_window").is_null()) {
    return 0;
  }
  return config.int_or({"sliding_window"}, class_default, min, k_max_positions);
}

std::string fill_absent_keys(nlohmann::json& object, std::span<const KeyDefault> defaults,
                             std::string_view separator) {
  std::string used;
  for (const KeyDefault& fallback : defaults) {
    if (object.contains(fallback.key) && !object.at(fallback.key).is_null()) continue;
    object[fallback.key] = fallback.value;
    used += fmt::format("{}{}{}{}", used.empty() ? "" : ", ", fallback.key, separator,
                        fallback.value);
  }
  return used;
}

std::string read_torch_dtype(const ConfigReader& config) {
  return config.optional_string("torch_dtype")
      .value_or(config.optional_string("dtype").value_or(""));
}

std::string first_architecture(const ConfigReader& config) {
  if (!config.has("architectures")) return "";
  const nlohmann::json& list = config.json().at("architectures");
  if (!list.is_array()) config.fail("architectures", "must be a list of class names");
  if (list.empty()) return "";
  if (!list[0].is_string()) config.fail("architectures", "must be a list of class names");
  return list[0].get<std::string>();
}

void set_moe(Block& block, const Moe& moe, std::int64_t hidden) {
  block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
  block.moe = moe;
}

void fill_decoder_basics(ModelDescription& model, const ConfigReader& config, std::int64_t vocab,
                         std::int64_t hidden, bool tie_default,
                         std::initializer_list<std::string_view> position_keys) {
  model.architecture = "decoder-only";
  model.vocab_size = vocab;
  model.hidden_size = hidden;
  model.embedding_dim = hidden;
  model.tie_word_embeddings = config.bool_or("tie_word_embeddings", tie_default);
  model.max_position_embeddings = config.int_or(position_keys, 0, 0, k_max_positions);
  model.torch_dtype = read_torch_dtype(config);
}

// A note naming the keys this config leaves out and the config class's defaults that stand in.
void note_defaults(ModelDescription& model, const ConfigReader& config, const char* config_class,
                   std::initializer_list<std::pair<const char*, const char*>> defaults) {
  std::string taken;
  for (const auto& [key, value] : defaults) {
    if (config.has(key)) continue;
    taken += fmt::format("{}{} = {}", taken.empty() ? "" : ", ", key, value);
  }
  if (!taken.empty()) model.notes.push_back(fmt::format("{} defaults used: {}", config_class, taken));
}

}  // namespace trace::family
