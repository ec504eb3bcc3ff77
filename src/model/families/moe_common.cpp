// Helpers for the mixture-of-experts families.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

Moe routed_experts(const ConfigReader& config, std::int64_t hidden,
                   std::initializer_list<std::string_view> experts_keys,
                   std::initializer_list<std::string_view> top_k_keys, std::int64_t expert_width,
                   std::optional<ExpertDefaults> defaults) {
  Moe moe;
  moe.num_experts = defaults ? config.int_or(experts_keys, defaults->num_experts, 1, 1 << 20)
                             : config.require_int(experts_keys, 1, 1 << 20);
  moe.top_k = defaults ? config.int_or(top_k_keys, defaults->top_k, 1, 1 << 20)
                       : config.require_int(top_k_keys, 1, 1 << 20);
  if (moe.top_k > moe.num_experts) {
    throw ConfigError(fmt::format(
        "config.json ({}): '{}' = {} routes each token to more experts than the {} there are",
        config.model_type(), config.key_path(*top_k_keys.begin()), moe.top_k, moe.num_experts));
  }
  moe.expert = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"), hidden,
                   expert_width, false, false, false};
  moe.hidden_dim = hidden;
  return moe;
}

void set_shared_experts(Moe& moe, std::int64_t count, bool bias) {
  moe.num_shared_experts = count;
  if (count == 0) return;
  moe.shared = Mlp{MlpKind::gated, moe.expert.activation, moe.expert.input_dim,
                   checked_mul(count, moe.expert.intermediate), bias, bias, false};
}

std::vector<std::int64_t> read_layer_list(const ConfigReader& config, std::string_view key,
                                          std::int64_t layers) {
  std::vector<std::int64_t> list;
  if (!config.has(key)) return list;
  const nlohmann::json& value = config.json().at(key);
  if (!value.is_array()) config.fail(key, "must be a list of layer indices");
  for (const nlohmann::json& item : value) {
    if (!item.is_number_integer() || item.get<std::int64_t>() < 0 ||
        item.get<std::int64_t>() >= layers) {
      config.fail(key, fmt::format("holds {}, not a layer index in 0..{}", item.dump(), layers - 1));
    }
    list.push_back(item.get<std::int64_t>());
  }
  return list;
}

std::vector<std::int64_t> read_size_list(const ConfigReader& config, std::string_view key,
                                         std::int64_t max) {
  const nlohmann::json& value =
      config.json().contains(key) ? config.json().at(key) : nlohmann::json();
  if (!value.is_array() || value.empty()) config.fail(key, "must be a non-empty list of sizes");
  std::vector<std::int64_t> list;
  for (const nlohmann::json& item : value) {
    if (!item.is_number_integer() || item.get<std::int64_t>() < 1 ||
        item.get<std::int64_t>() > max) {
      config.fail(key, fmt::format("holds {}, not a size in 1..{}", item.dump(), max));
    }
    list.push_back(item.get<std::int64_t>());
  }
  return list;
}

std::vector<std::string> read_string_list(const ConfigReader& config, std::string_view key,
                                         std::int64_t layers,
                                         std::initializer_list<std::string_view> allowed) {
  std::vector<std::string> list;
  if (!config.has(key)) return list;
  const nlohmann::json& value = config.json().at(key);
  if (!value.is_array() || static_cast<std::int64_t>(value.size()) != layers) {
    config.fail(key, fmt::format("must list {} entries (one per layer)", layers));
  }
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string entry = value[i].is_string() ? value[i].get<std::string>() : value[i].dump();
    bool known = false;
    for (const std::string_view option : allowed) known = known || option == entry;
    if (!known) {
      std::string options;
      for (const std::string_view option : allowed) {
        options += (options.empty() ? "\"" : ", \"") + std::string(option) + "\"";
      }
      config.fail(key, fmt::format("entry {} is {}; expected one of {}", i, value[i].dump(), options));
    }
    list.push_back(entry);
  }
  return list;
}

void add_mtp_extras(ModelDescription& model, std::int64_t layer, std::int64_t vocab,
                    std::int64_t hidden, bool embedding_and_head_copies) {
  const std::string prefix = fmt::format("model.layers.{}", layer);
  model.extra_parameters.push_back({prefix + ".enorm", "mtp", "RMSNorm", hidden});
  model.extra_parameters.push_back({prefix + ".hnorm", "mtp", "RMSNorm", hidden});
  model.extra_parameters.push_back(
      {prefix + ".eh_proj", "mtp", "Linear", checked_mul(2 * hidden, hidden)});
  model.extra_parameters.push_back({prefix + ".shared_head.norm", "mtp", "RMSNorm", hidden});
  if (embedding_and_head_copies) {
    const std::int64_t embedding = checked_mul(vocab, hidden);
    model.extra_parameters.push_back({prefix + ".shared_head.head", "mtp", "Linear", embedding});
    model.extra_parameters.push_back({prefix + ".embed_tokens", "mtp", "Embedding", embedding});
  }
}

}  // namespace trace::family
