#include "trace/hardware/gpu_catalog.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

#include "trace/embedded_data.hpp"
#include "trace/error.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

std::int64_t positive_int(const nlohmann::json& row, const char* key, std::string_view where) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0) {
    throw ConfigError(fmt::format("{}: key '{}' must be a positive integer (bytes)", where, key));
  }
  return it->get<std::int64_t>();
}

std::optional<double> optional_positive(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  return value > 0 ? std::optional<double>(value) : std::nullopt;
}

std::string string_or(const nlohmann::json& object, const char* key, std::string fallback,
                      std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw ConfigError(fmt::format("{}: key '{}' must be a string", where, key));
  return it->get<std::string>();
}

GpuCatalog parse_gpu_catalog_document(const nlohmann::json& document, std::string_view origin);

}  // namespace

GpuCatalog parse_gpu_catalog(std::string_view json_text, std::string_view origin) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& error) {
    throw ConfigError(fmt::format("GPU table {} is not valid JSON: {}", origin, error.what()));
  }
  return parse_gpu_catalog_document(document, origin);
}

namespace {

GpuCatalog parse_gpu_catalog_document(const nlohmann::json& document, std::string_view origin) {
  if (!document.is_object() || !document.contains("gpus") || !document["gpus"].is_array()) {
    throw ConfigError(fmt::format("GPU table {} must be an object with a 'gpus' list", origin));
  }
  GpuCatalog catalog;
  catalog.as_of = string_or(document, "as_of", "", fmt::format("GPU table {}", origin));
  std::set<std::string> names;
  std::size_t index = 0;
  for (const nlohmann::json& row : document["gpus"]) {
    const std::string where = fmt::format("GPU table {}, entry {}", origin, index++);
    if (!row.is_object() || !row.contains("id") || !row["id"].is_string()) {
      throw ConfigError(fmt::format("{}: needs a string 'id'", where));
    }
    GpuSpec gpu;
    gpu.id = to_lower(row["id"].get<std::string>());
    gpu.name = string_or(row, "name", gpu.id, where);
    gpu.vendor = string_or(row, "vendor", "", where);
    gpu.memory_bytes_marketed = positive_int(row, "memory_bytes_marketed", where);
    gpu.memory_bytes_usable = positive_int(row, "memory_bytes_usable", where);
    if (gpu.memory_bytes_usable > gpu.memory_bytes_marketed) {
      throw ConfigError(fmt::format("{} ({}): usable memory exceeds the marketed capacity", where,
                                    gpu.id));
    }
    if (row.contains("memory_bandwidth_bytes_per_s") &&
        row["memory_bandwidth_bytes_per_s"].is_number_integer()) {
      gpu.memory_bandwidth_bytes_per_s = row["memory_bandwidth_bytes_per_s"].get<std::int64_t>();
    }
    if (row.contains("peak_tflops") && row["peak_tflops"].is_object()) {
      gpu.bf16_tflops = optional_positive(row["peak_tflops"], "bf16");
      if (!gpu.bf16_tflops) gpu.bf16_tflops = optional_positive(row["peak_tflops"], "fp16");
      gpu.fp8_tflops = optional_positive(row["peak_tflops"], "fp8");
    }
    gpu.price_usd_per_hour = optional_positive(row, "price_usd_per_hour");
    gpu.source = string_or(row, "source", "", where);
    if (row.contains("aliases") && row["aliases"].is_array()) {
      for (const nlohmann::json& alias : row["aliases"]) {
        if (alias.is_string()) gpu.aliases.push_back(to_lower(alias.get<std::string>()));
      }
    }
    std::set<std::string> own{gpu.id};
    own.insert(gpu.aliases.begin(), gpu.aliases.end());  // an alias may repeat its own id
    for (const std::string& name : own) {
      if (!names.insert(name).second) {
        throw ConfigError(fmt::format("{}: name '{}' is used by two cards", where, name));
      }
    }
    catalog.gpus.push_back(std::move(gpu));
  }
  if (catalog.gpus.empty()) throw ConfigError(fmt::format("GPU table {} lists no GPUs", origin));
  return catalog;
}

}  // namespace

const GpuCatalog& builtin_gpu_catalog() {
  static const GpuCatalog catalog = [] {
    for (const EmbeddedFile& file : embedded_data_files()) {
      if (file.path == "data/gpus.json") return parse_gpu_catalog(file.text, file.path);
    }
    throw ConfigError("the built-in GPU table data/gpus.json is missing from this build");
  }();
  return catalog;
}

const GpuSpec* find_gpu(const GpuCatalog& catalog, std::string_view name) {
  const std::string lower = to_lower(name);
  for (const GpuSpec& gpu : catalog.gpus) {
    if (gpu.id == lower) return &gpu;
    for (const std::string& alias : gpu.aliases) {
      if (alias == lower) return &gpu;
    }
  }
  return nullptr;
}

const GpuSpec& require_gpu(const GpuCatalog& catalog, std::string_view name) {
  if (const GpuSpec* gpu = find_gpu(catalog, name)) return *gpu;
  std::vector<std::string> candidates;
  for (const GpuSpec& gpu : catalog.gpus) {
    candidates.push_back(gpu.id);
    candidates.insert(candidates.end(), gpu.aliases.begin(), gpu.aliases.end());
  }
  const std::string suggestion = closest_match(name, candidates);
  std::string ids;
  for (const GpuSpec& gpu : catalog.gpus) ids += (ids.empty() ? "" : ", ") + gpu.id;
  if (!suggestion.empty()) {
    const GpuSpec* match = find_gpu(catalog, suggestion);
    throw ConfigError(fmt::format("unknown GPU '{}'; did you mean '{}'? (`trace gpus` lists all)",
                                  name, match ? match->id : suggestion));
  }
  throw ConfigError(fmt::format("unknown GPU '{}'; known GPUs: {}", name, ids));
}

std::vector<std::string> default_report_gpus() {
  return {"t4", "l4", "a10g", "rtx-4090", "a100-40gb", "a100-80gb", "h100-80gb", "h200", "b200"};
}

}  // namespace trace
