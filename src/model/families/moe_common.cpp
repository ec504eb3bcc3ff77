// Helpers for the mixture-of-experts families.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

Moe routed_experts(const ConfigReader& config, std::int64_t hidden,
                   std::initializer_list<std::string_view> experts_keys,
                   std::initializer_list<std::string_view> top_k_keys, std::int64_t expert_width) {
  Moe moe;
  moe.num_experts = config.require_int(experts_keys, 1, 1 << 20);
  moe.top_k = config.require_int(top_k_keys, 1, 1 << 20);
  if (moe.top_k > moe.num_experts) {
    throw ConfigError(fmt::format(
        "config.json ({}): '{}' = {} routes each token to more experts than the {} there are",
        config.model_type(), config.key_path(*top_k_keys.begin()), moe.top_k, moe.num_experts));
  }
  moe.expert = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"), hidden,
                   expert_width, false, false, false};
  return moe;
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

}  // namespace trace::family
