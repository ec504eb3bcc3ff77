#pragma once
// Typed, range-checked access to a config.json object. Every error names the key (with its JSON
// path for nested configs) and what would fix it, so no family parser has to word messages.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace trace {

// Ranges every size must lie in. They are far beyond any real model and far below int64
// overflow when multiplied together a few times.
inline constexpr std::int64_t k_max_layers = 100'000;
inline constexpr std::int64_t k_max_width = 1LL << 24;   // hidden, intermediate, head_dim
inline constexpr std::int64_t k_max_vocab = 1LL << 28;
inline constexpr std::int64_t k_max_heads = 1LL << 16;
inline constexpr std::int64_t k_max_positions = 1LL << 30;

class ConfigReader {
public:
  ConfigReader(const nlohmann::json& object, std::string path, std::string model_type);

  const nlohmann::json& json() const { return m_object; }
  const std::string& model_type() const { return m_model_type; }
  /// Where this object sits in config.json: "" at top level, "text_config" for a nested one.
  const std::string& path() const { return m_path; }

  /// True when the key is present and not null.
  bool has(std::string_view key) const;
  /// The first present key among aliases; all present aliases must agree. Throws when none.
  std::int64_t require_int(std::initializer_list<std::string_view> keys, std::int64_t min,
                           std::int64_t max) const;
  std::optional<std::int64_t> optional_int(std::initializer_list<std::string_view> keys,
                                           std::int64_t min, std::int64_t max) const;
  std::int64_t int_or(std::initializer_list<std::string_view> keys, std::int64_t fallback,
                      std::int64_t min, std::int64_t max) const;
  std::optional<double> optional_number(std::string_view key) const;
  bool bool_or(std::string_view key, bool fallback) const;
  std::optional<std::string> optional_string(std::string_view key) const;
  /// A nested object such as text_config. Throws when missing or not an object.
  ConfigReader child(std::string_view key) const;
  /// Throws ConfigError "<key>: <problem>; <fix>".
  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;
  /// The full path of a key, e.g. "text_config.hidden_size".
  std::string key_path(std::string_view key) const;

private:
  std::optional<std::int64_t> read_int(std::string_view key, std::int64_t min,
                                       std::int64_t max) const;

  const nlohmann::json& m_object;
  std::string m_path;
  std::string m_model_type;
};

}  // namespace trace
