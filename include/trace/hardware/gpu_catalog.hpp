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
  /// Dense peak tensor throughput per compute dtype, 10^12 op/s; absent where the chip has no
  /// native support or the figure is unpublished (data/gpus.json `peak_tflops`).
  std::optional<double> fp32_tflops;
  std::optional<double> tf32_tflops;
  std::optional<double> bf16_tflops;
  std::optional<double> fp16_tflops;
  std::optional<double> fp8_tflops;
  std::optional<double> int8_tops;
  std::optional<double> fp4_tflops;
  /// The 4-bit float formats the tensor cores run natively ("nvfp4", "mxfp4"); fp4_tflops
  /// applies to these only.
  std::vector<std::string> fp4_formats;
  std::int64_t interconnect_bytes_per_s = 0;  ///< scale-up link, bidirectional (0: none)
  std::optional<double> price_usd_per_hour;   ///< on-demand, low end of the listings
  std::string price_date;
  std::string source;
};

/// Compute formats a job's matrix multiplies run in (docs/cost.md, "Peak by dtype").
enum class ComputeDtype { fp32, tf32, bf16, fp16, fp8, int8, nvfp4, mxfp4 };

/// "bf16", "nvfp4", ...
std::string_view compute_dtype_name(ComputeDtype dtype);
std::optional<ComputeDtype> parse_compute_dtype(std::string_view text);
/// The card's dense peak in FLOP/s (op/s) for `dtype`; nullopt when it has no native support.
std::optional<double> peak_flops_per_s(const GpuSpec& gpu, ComputeDtype dtype);

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
