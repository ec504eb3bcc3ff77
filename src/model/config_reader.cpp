#include "config_reader.hpp"

#include <cmath>
#include <fmt/format.h>

#include "trace/error.hpp"

namespace trace {

ConfigReader::ConfigReader(const nlohmann::json& object, std::string path, std::string model_type)
    : m_object(object), m_path(std::move(path)), m_model_type(std::move(model_type)) {}

std::string ConfigReader::key_path(std::string_view key) const {
  return m_path.empty() ? std::string(key) : fmt::format("{}.{}", m_path, key);
}

void ConfigReader::fail(std::string_view key, std::string_view problem) const {
  throw ConfigError(fmt::format("config.json ({}): key '{}' {}", m_model_type, key_path(key),
                                problem));
}

bool ConfigReader::has(std::string_view key) const {
  const auto it = m_object.find(key);
  return it != m_object.end() && !it->is_null();
}

std::optional<std::int64_t> ConfigReader::read_int(std::string_view key, std::int64_t min,
                                                   std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& value = m_object.at(key);
  std::int64_t result = 0;
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      fail(key, fmt::format("= {} is out of range ({}..{}); fix the value in config.json",
                            value.dump(), min, max));
    }
    result = value.get<std::int64_t>();
  } else if (value.is_number_float()) {
    // Some exporters write 4096.0; accept exact integers only.
    const double number = value.get<double>();
    if (!std::isfinite(number) || std::floor(number) != number) {
      fail(key, fmt::format("must be an integer, got {}", value.dump()));
    }
    if (number < static_cast<double>(min) || number > static_cast<double>(max)) {
      fail(key, fmt::format("= {} is out of range ({}..{}); fix the value in config.json",
                            value.dump(), min, max));
    }
    result = static_cast<std::int64_t>(number);
  } else {
    fail(key, fmt::format("must be an integer, got {} {}", value.type_name(), value.dump()));
  }
  if (result < min || result > max) {
    fail(key, fmt::format("= {} is out of range ({}..{}); fix the value in config.json", result,
                          min, max));
  }
  return result;
}

std::optional<std::int64_t> ConfigReader::optional_int(std::initializer_list<std::string_view> keys,
                                                       std::int64_t min, std::int64_t max) const {
  std::optional<std::int64_t> found;
  std::string_view found_key;
  for (const std::string_view key : keys) {
    const std::optional<std::int64_t> value = read_int(key, min, max);
    if (!value) continue;
    if (found && *found != *value) {
      throw ConfigError(fmt::format(
          "config.json ({}): keys '{}' = {} and '{}' = {} contradict each other; keep one",
          m_model_type, key_path(found_key), *found, key_path(key), *value));
    }
    found = value;
    found_key = key;
  }
  return found;
}

std::int64_t ConfigReader::require_int(std::initializer_list<std::string_view> keys,
                                       std::int64_t min, std::int64_t max) const {
  if (const std::optional<std::int64_t> value = optional_int(keys, min, max)) return *value;
  std::string names;
  for (const std::string_view key : keys) {
    if (!names.empty()) names += "' or '";
    names += key_path(key);
  }
  throw ConfigError(fmt::format(
      "config.json ({}): required key '{}' is missing; add it to the config (see the model's "
      "published config.json)",
      m_model_type, names));
}

std::int64_t ConfigReader::int_or(std::initializer_list<std::string_view> keys,
                                  std::int64_t fallback, std::int64_t min, std::int64_t max) const {
  return optional_int(keys, min, max).value_or(fallback);
}

std::optional<double> ConfigReader::optional_number(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& value = m_object.at(key);
  if (!value.is_number()) fail(key, fmt::format("must be a number, got {}", value.dump()));
  const double number = value.get<double>();
  if (!std::isfinite(number)) fail(key, "must be a finite number");
  return number;
}

bool ConfigReader::bool_or(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& value = m_object.at(key);
  if (!value.is_boolean()) fail(key, fmt::format("must be true or false, got {}", value.dump()));
  return value.get<bool>();
}

std::optional<std::string> ConfigReader::optional_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& value = m_object.at(key);
  if (!value.is_string()) fail(key, fmt::format("must be a string, got {}", value.dump()));
  return value.get<std::string>();
}

ConfigReader ConfigReader::child(std::string_view key) const {
  if (!has(key)) {
    throw ConfigError(fmt::format(
        "config.json ({}): required key '{}' is missing; a {} config nests that part of the "
        "model's settings there (see the model's published config.json)",
        m_model_type, key_path(key), m_model_type));
  }
  const nlohmann::json& value = m_object.at(key);
  if (!value.is_object()) fail(key, "must be a JSON object");
  return ConfigReader(value, key_path(key), m_model_type);
}

}  // namespace trace
