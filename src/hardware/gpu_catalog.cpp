#include "trace/hardware/gpu_catalog.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <algorithm>
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
      const nlohmann::json& peak = row["peak_tflops"];
      gpu.fp32_tflops = optional_positive(peak, "fp32");
      gpu.tf32_tflops = optional_positive(peak, "tf32");
      gpu.bf16_tflops = optional_positive(peak, "bf16");
      gpu.fp16_tflops = optional_positive(peak, "fp16");
      gpu.fp8_tflops = optional_positive(peak, "fp8");
      gpu.int8_tops = optional_positive(peak, "int8");
      gpu.fp4_tflops = optional_positive(peak, "fp4");
    }
    if (row.contains("fp4_formats") && row["fp4_formats"].is_array()) {
      for (const nlohmann::json& format : row["fp4_formats"]) {
        if (format.is_string()) gpu.fp4_formats.push_back(to_lower(format.get<std::string>()));
      }
    } else if (gpu.fp4_tflops) {
      // Tables written before fp4_formats: an fp4 figure was only ever given for Blackwell.
      gpu.fp4_formats = {"nvfp4", "mxfp4"};
    }
    if (row.contains("interconnect_bytes_per_s") && row["interconnect_bytes_per_s"].is_number()) {
      gpu.interconnect_bytes_per_s =
          std::max<std::int64_t>(0, row["interconnect_bytes_per_s"].get<std::int64_t>());
    }
    gpu.price_usd_per_hour = optional_positive(row, "price_usd_per_hour");
    gpu.price_date = string_or(row, "as_of", string_or(row, "price_date", "", where), where);
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

namespace {

struct ComputeDtypeName {
  ComputeDtype dtype;
  std::string_view name;
};
constexpr ComputeDtypeName k_compute_dtypes[] = {
    {ComputeDtype::fp32, "fp32"}, {ComputeDtype::tf32, "tf32"},   {ComputeDtype::bf16, "bf16"},
    {ComputeDtype::fp16, "fp16"}, {ComputeDtype::fp8, "fp8"},     {ComputeDtype::int8, "int8"},
    {ComputeDtype::nvfp4, "nvfp4"}, {ComputeDtype::mxfp4, "mxfp4"},
};

bool has_fp4_format(const GpuSpec& gpu, std::string_view format) {
  return std::find(gpu.fp4_formats.begin(), gpu.fp4_formats.end(), format) !=
         gpu.fp4_formats.end();
}

}  // namespace

std::string_view compute_dtype_name(ComputeDtype dtype) {
  for (const ComputeDtypeName& row : k_compute_dtypes) {
    if (row.dtype == dtype) return row.name;
  }
  return "?";
}

std::optional<ComputeDtype> parse_compute_dtype(std::string_view text) {
  const std::string lower = to_lower(text);
  for (const ComputeDtypeName& row : k_compute_dtypes) {
    if (row.name == lower) return row.dtype;
  }
  if (lower == "bfloat16") return ComputeDtype::bf16;
  if (lower == "float16") return ComputeDtype::fp16;
  if (lower == "float32") return ComputeDtype::fp32;
  return std::nullopt;
}

std::optional<double> peak_flops_per_s(const GpuSpec& gpu, ComputeDtype dtype) {
  std::optional<double> tflops;
  switch (dtype) {
    case ComputeDtype::fp32: tflops = gpu.fp32_tflops; break;
    case ComputeDtype::tf32: tflops = gpu.tf32_tflops; break;
    case ComputeDtype::bf16: tflops = gpu.bf16_tflops; break;
    case ComputeDtype::fp16: tflops = gpu.fp16_tflops; break;
    case ComputeDtype::fp8: tflops = gpu.fp8_tflops; break;
    case ComputeDtype::int8: tflops = gpu.int8_tops; break;
    case ComputeDtype::nvfp4:
      if (has_fp4_format(gpu, "nvfp4")) tflops = gpu.fp4_tflops;
      break;
    case ComputeDtype::mxfp4:
      if (has_fp4_format(gpu, "mxfp4")) tflops = gpu.fp4_tflops;
      break;
  }
  if (!tflops) return std::nullopt;
  return *tflops * 1e12;
}

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
