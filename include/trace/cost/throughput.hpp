#pragma once
/// `trace throughput`: measured serving and training throughput (a CSV with the columns of the
/// shared throughput.csv) set beside trace's roofline bound, row by row, and summarised per kind
/// of work as measured / bound. Pure: the caller supplies the CSV text and a way to read a
/// model's config. Reading rules and definitions: docs/cost.md, "Measured throughput".
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace/dtype.hpp"
#include "trace/hardware/gpu_catalog.hpp"

namespace trace {

/// What a row measures, and so which bound it is set against.
enum class ThroughputKind {
  batch1_decode,      ///< serving at concurrency 1: output tokens/s of one stream
  saturated_serving,  ///< serving at concurrency > 1 or "max load": output tokens/s of all streams
  prefill,            ///< serving rows whose notes start `metric=PREFILL`: prompt tokens/s
  dense_training,     ///< training tokens/s per GPU, dense model
  moe_training,       ///< training tokens/s per GPU, mixture-of-experts model
};
inline constexpr ThroughputKind k_throughput_kinds[] = {
    ThroughputKind::batch1_decode, ThroughputKind::saturated_serving, ThroughputKind::prefill,
    ThroughputKind::dense_training, ThroughputKind::moe_training};
/// "batch-1 decode", "saturated serving", "prefill", "dense training", "MoE training".
std::string_view throughput_kind_name(ThroughputKind kind);

/// One CSV row, its cells as written (numbers parsed where the column holds one).
struct ThroughputRow {
  std::string row_id;
  std::string kind;  ///< "serve" or "train"
  std::string model_id;
  std::string gpu;
  std::optional<std::int64_t> n_gpus;
  std::string parallelism;
  std::string weight_dtype;
  std::string kv_dtype;
  std::optional<std::int64_t> input_len;
  std::optional<std::int64_t> output_len;
  std::string concurrency;
  std::optional<std::int64_t> seq_len;
  std::optional<double> tokens_per_s_total;
  std::optional<double> tokens_per_s_per_user;
  std::optional<double> mfu;
  std::optional<double> tflops_per_gpu;
  std::string spec_decode;
  std::string notes;
};

/// Parses the CSV. Throws ConfigError when a required column is missing or the text is not CSV.
std::vector<ThroughputRow> parse_throughput_csv(std::string_view text);

// ---- reading rules (docs/cost.md, "Measured throughput") ----

/// The card a `gpu` cell names: a GPU table id by substring ("H100 SXM 80GB (DGX-H100)" ->
/// "h100-80gb"), with the share of the package a row used (0.5 for "one GCD" of an MI250X).
struct CardReading {
  std::string gpu_id;
  double package_share = 1.0;
};
/// nullopt when no rule names the card; `gpu_id` may still be absent from the table (GB300).
std::optional<CardReading> read_card(std::string_view gpu_cell);

/// How a `weight_dtype` cell's weights are stored and which format the matmuls run in.
struct WeightReading {
  double bits_per_param = 16;  ///< stored bits per parameter, block scales included
  Dtype serve_dtype = Dtype::bf16;  ///< what serving's compute format is derived from
  bool nvfp4 = false;  ///< NVFP4 (the served checkpoint is a ModelOpt NVFP4 export)
  bool fp8_compute = false;  ///< training: the matmuls run in FP8 (any fp8 / mxfp8 recipe)
};
/// nullopt when the cell names no format trace knows.
std::optional<WeightReading> read_weight_dtype(std::string_view cell);

/// The KV cache dtype: the `kv_dtype` cell, or when empty fp8 for rows whose weights are fp8 or
/// 4-bit float on a card with an fp8 peak (the smallest the engine could use), else 16-bit as
/// the weights.
std::optional<Dtype> read_kv_dtype(std::string_view cell, const WeightReading& weights,
                                   bool card_has_fp8);

/// A serving row's concurrency cell: a number, "batch N", or "max load ..." (nullopt inside:
/// the memory-bound maximum). Outer nullopt: unreadable.
std::optional<std::optional<std::int64_t>> read_concurrency(std::string_view cell);

/// TPn and PPm in a `parallelism` cell ("single ..." = 1 x 1); nullopt when neither is there.
struct ParallelReading {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
};
std::optional<ParallelReading> read_parallelism(std::string_view cell);

/// The repo id in a `model_id` cell: the text before " (", without a "(GGUF)" tag.
std::string normalize_model_id(std::string_view model_id);

/// A repository whose architecture is another's: re-exports in another format, instruct/chat
/// tunes, transformers conversions. Every alias carries its reason (docs/cost.md).
struct ModelAlias {
  std::string_view repo_id;
  std::string_view same_architecture_as;
  std::string_view reason;
};
std::span<const ModelAlias> model_aliases();

// ---- comparison ----

struct ThroughputResult {
  std::string row_id;
  std::string row_kind;  ///< "serve" / "train" as the CSV says
  std::string model;     ///< the model_id cell
  std::string gpu;       ///< the gpu cell
  std::int64_t gpus = 0;
  bool planned = false;
  std::string reason;     ///< why not planned
  ThroughputKind kind = ThroughputKind::saturated_serving;
  std::string config;     ///< the repo id whose config was read
  std::string card;       ///< the GPU table id used
  std::string compute_dtype;
  std::optional<std::int64_t> concurrency;  ///< serving: the concurrency the bound is taken at
  double measured = 0;
  double bound = 0;
  double ratio = 0;  ///< measured / bound
  std::string unit;
  std::optional<double> measured_per_user;  ///< serving rows that give a per-user figure
  std::optional<double> bound_per_user;
  std::optional<double> per_user_ratio;
  /// Training: trace's implied MFU (measured tokens/s/GPU x model FLOPs per token / peak, which
  /// is `ratio`) beside the source's own: its mfu, else its TFLOP/s/GPU over the same peak.
  std::optional<double> source_mfu;
  std::vector<std::string> notes;  ///< how the row was read where a rule applied
};

/// count, median, p10, p90, min, max of measured / bound (nearest-rank percentiles).
struct RatioSummary {
  std::int64_t count = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
};
RatioSummary summarize_ratios(std::vector<double> ratios);

struct ThroughputComparison {
  std::vector<ThroughputResult> rows;  ///< every CSV row, in order, planned or not
  std::vector<std::pair<ThroughputKind, RatioSummary>> summary;  ///< every kind, in order
  std::int64_t above_bound = 0;  ///< planned rows with ratio > 1 (or per-user ratio > 1)
};

/// Reads a repo id's config text; nullopt when it has none.
using ThroughputConfigLoader = std::function<std::optional<std::string>(const std::string&)>;

ThroughputComparison compare_throughput(const std::vector<ThroughputRow>& rows,
                                        const ThroughputConfigLoader& load_config,
                                        const GpuCatalog& gpus);

}  // namespace trace
