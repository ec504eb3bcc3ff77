#pragma once
/// The accelerator table: data/gpus.json (embedded in the binary) or a user's --gpu-table file.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trace {

struct GpuSpec {
  std::string id;  ///< lowercase, stable: "h100-80gb"
  std::vector<std::string> aliases;
  std::string name;
  std::string vendor;
  std::int64_t memory_bytes_marketed = 0;
  std::int64_t memory_bytes_usable = 0;  ///< what a framework can allocate
  std::int64_t memory_bandwidth_bytes_per_s = 0;
  std::optional<double> bf16_tflops;  ///< dense
  std::optional<double> fp8_tflops;
  std::optional<double> price_usd_per_hour;
  std::string source;
};

struct GpuCatalog {
  std::string as_of;
  std::vector<GpuSpec> gpus;
};

/// Parses a gpus.json text (schema trace.gpus/1). Throws ConfigError naming the row and key.
GpuCatalog parse_gpu_catalog(std::string_view json_text, std::string_view origin);
/// The table compiled into the binary.
const GpuCatalog& builtin_gpu_catalog();
/// The card whose id or alias equals `name` (case-insensitive); nullptr when none.
const GpuSpec* find_gpu(const GpuCatalog& catalog, std::string_view name);
/// Resolves a card or throws ConfigError with a "did you mean" suggestion.
const GpuSpec& require_gpu(const GpuCatalog& catalog, std::string_view name);
/// The ids that are the default "what fits" set in reports.
std::vector<std::string> default_report_gpus();

}  // namespace trace
