#pragma once
/// `trace validate`: runs measured jobs (a CSV with the columns of the shared measured.csv, read
/// from its machine-readable job_* columns) through the estimator and scores it: did-not-fit
/// recall, false "does not fit", relative error of the peak. Pure: the caller supplies the CSV
/// text and a way to read each row's config. Definitions: docs/validation.md.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/estimate/job.hpp"

namespace trace {

/// What the row's measured figure counts (docs/validation.md, "Counters").
enum class MemoryCounter {
  allocated,  ///< torch.cuda.max_memory_allocated / peak active bytes: what trace estimates
  reserved,   ///< max_memory_reserved: + the caching allocator's free blocks (not modelled)
  process,    ///< nvidia-smi / NVML: + the CUDA context and library workspaces
};

/// One CSV row as the validator reads it.
struct MeasuredRow {
  std::string row_id;
  std::string task;         ///< job_task: full, lora, qlora, serve, kv_capacity, activation_only
  std::string model_id;
  std::string config_file;  ///< resolved by the caller's loader; empty: no config
  Job job;
  std::string job_error;    ///< a job_* cell trace cannot read (the row is then unplanned)
  /// Only the job's floor is known: job_seq_len is empty (the job at one token), job_gpus is
  /// empty on a sharded job (the job over 1,024 GPUs), the optimizer is assumed (below). A
  /// floor can prove "does not fit", never "fits".
  bool seq_len_unknown = false;
  bool gpus_unknown = false;
  /// job_optimizer is marked "(assumed)" (the CSV's guess, not the source's): the floor is the
  /// job without optimizer state.
  bool optimizer_unknown = false;
  double usable_gib = 0;    ///< job_usable_gib: what a process can allocate on the card
  /// unit_basis nominal_card_GB: the job is the longest sequence that fit a VRAM tier, so its
  /// job_seq_len is a measured boundary (scored apart: RowResult::longest_seq_len).
  bool boundary = false;
  std::optional<double> measured_gib;  ///< per-GPU peak (kv_capacity: the engine's budget)
  /// How measured_gib was re-derived from the row's own logged values, when the row's
  /// derivation misread a log's unit (docs/validation.md, "Counters"); empty otherwise.
  std::string measured_rederived;
  bool oom = false;
  bool oom_known = true;                  ///< job_oom is empty, 0 or 1 (y / n)
  std::optional<double> kv_cache_gib;     ///< kv_capacity rows: KV pool the engine logged
  std::optional<std::int64_t> kv_tokens;  ///< kv_capacity rows: KV tokens the engine logged
  double gpu_memory_utilization = 0.9;
  /// Engine rows: the max_num_batched_tokens the row states, and whether the engine prefills in
  /// chunks (its profile run then feeds those tokens, not max_model_len).
  std::optional<std::int64_t> engine_batched_tokens;
  bool engine_chunked_prefill = false;
  /// Serve rows run by a serving engine (vLLM, SGLang, TGI, TensorRT-LLM, LMDeploy): chunked
  /// prefill and a sampler sized for max_num_seqs. Otherwise generate() (transformers, LitGPT,
  /// Accelerate): the whole prompt at once, sampling only the batch.
  bool serving_engine = false;
  /// Engine rows run in eager mode (--enforce-eager): no CUDA graphs captured.
  bool engine_eager = false;
  /// vLLM's V1 engine (0.8 on: its version, "V1", a "vX.Y" of 0.8 or later among the framework's
  /// words, or a date from April 2025 on): chunked prefill always on, hybrid models' blocks.
  bool engine_v1 = false;
  /// Engine rows that decode speculatively with the checkpoint's MTP layers, which the engine
  /// then loads (--serve-mtp); otherwise they are left out, as trace's serve plans do.
  bool engine_mtp = false;
  /// Engine rows: the max_num_seqs the row states (the profile run samples that many sequences).
  std::optional<std::int64_t> engine_max_num_seqs;
  /// How the engine caches MLA layers: per head, V padded, before vLLM 0.7.1 (or with
  /// VLLM_MLA_DISABLE); the latent otherwise.
  MlaCache engine_mla_cache = MlaCache::latent;
  /// vLLM before 0.3.0: AWQ Linears through the split-K awq_gemm (--awq-split-k 8) and Mixtral's
  /// experts run whole on every token of each rank (--moe-dense-experts).
  bool engine_vllm_before_0_3 = false;
  /// vLLM before 0.17 (or undated, or another engine): top-k/top-p by sorting the logits, which
  /// holds ValidationAssumptions::sort_sampler_bytes_per_logit a logit. From 0.17 (March 2026,
  /// PR #33538; a "vX.Y" of 0.17 or later, or a date from April 2026 on) Triton kernels mask them
  /// in place: MemoryAssumptions::sampler_bytes_per_logit.
  bool engine_sort_sampler = true;
  /// vLLM 0.21 on (a "vX.Y" of 0.21 or later, or a date from June 2026 on) estimates its CUDA
  /// graphs' memory before sizing the KV pool and takes it out of the pool (default since
  /// 0.21: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS); before, the graphs came after, outside it.
  bool engine_graphs_in_pool_budget = false;
  /// job_counter, else read from measure_method ("reserved", "pynvml" / "nvidia-smi").
  MemoryCounter counter = MemoryCounter::allocated;
  /// The CUDA context the row itself measured ("(1343 MiB context)", "context (~1343 MiB)"),
  /// which a whole-process counter includes; else trace's cuda_context_bytes.
  std::optional<std::int64_t> measured_context_bytes;
};

/// Parses the CSV. Throws ConfigError when a required column is missing or the text is not CSV.
std::vector<MeasuredRow> parse_measured_csv(std::string_view text);

/// Constants of the checks (docs/validation.md); every row gets the same.
struct ValidationAssumptions {
  MemoryAssumptions memory;  ///< the estimator's constants (docs/memory.md)
  /// vLLM's memory outside torch's allocator at TP 1 (NCCL, CUDA graphs' pools are inside its
  /// profile): 0.16-0.43 GiB in the logged runs.
  std::int64_t engine_non_torch_bytes = 384LL << 20;
  /// Bytes per logit of a sampling step that sorts the logits for top-k/top-p (vLLM before
  /// 0.17, docs/memory.md "Serve jobs"): bf16 logits 2, their fp32 copy 4, torch.sort's values 4
  /// and int64 indices 8, the int64 index input it builds 8, cub's alternate buffers 4 + 8.
  std::int64_t sort_sampler_bytes_per_logit = 38;
  /// vLLM's profile run feeds this many tokens (max_num_batched_tokens) when the row gives none
  /// and prefills in chunks (the V1 engine, or chunked prefill turned on).
  std::int64_t engine_profile_tokens = 8192;
  /// Without chunked prefill (the V0 engine's default) vLLM batches max(max_model_len, this)
  /// tokens: its _DEFAULT_MAX_NUM_BATCHED_TOKENS.
  std::int64_t engine_unchunked_min_tokens = 2048;
  /// What max_memory_reserved reads over max_memory_allocated at a training or generate()
  /// job's peak: the caching allocator's cached blocks and fragmentation. The median of
  /// trace's own 38 measured runs on an H200 (tests/data/measured-h200: 1.002-1.341).
  double reserved_over_allocated = 1.08;
};

struct RowResult {
  std::string row_id;
  std::string task;
  std::string model_id;
  bool planned = false;
  std::string reason;           ///< why not planned
  double estimate_gib = 0;      ///< per-GPU peak (kv_capacity: predicted KV pool)
  std::optional<double> measured_gib;  ///< what the estimate is compared with
  bool predicted_fit = true;
  /// A training or generate() row's verdict as trace check states it: the held peak with the
  /// CUDA context, against the card's budget (usable less headroom). 0: not such a row.
  std::int64_t verdict_bytes = 0;
  std::int64_t budget_bytes = 0;
  bool oom = false;
  bool label_known = true;  ///< false: job_oom is neither 0 nor 1; counted as neither kind
  std::optional<double> relative_error;  ///< (estimate - measured) / measured
  bool floor_only = false;  ///< planned from the job's floor (MeasuredRow::seq_len_unknown, ...)
  /// How trace read the row: the job (describe_job) or the engine's profile run, and the
  /// counter it compared with.
  std::string read_as;
  /// The per-GPU terms behind estimate_gib, as the estimator allocates them (no CUDA context,
  /// no reserve): the job's; an engine row's profile run (weights, activations), with a
  /// kv_capacity row's predicted cache pool as kv_cache and the engine's non-torch memory as
  /// overhead.
  std::optional<MemoryBreakdown> breakdown;
  /// A boundary row (MeasuredRow::boundary) of a training job: the longest sequence trace fits
  /// on the tier at the row's batch (largest_fitting; 0: none), against the row's.
  std::optional<std::int64_t> longest_seq_len;
  std::int64_t measured_seq_len = 0;
  /// (trace - measured) / measured for a boundary row.
  std::optional<double> seq_len_error() const {
    if (!longest_seq_len || measured_seq_len <= 0) return std::nullopt;
    return static_cast<double>(*longest_seq_len - measured_seq_len) /
           static_cast<double>(measured_seq_len);
  }
};

struct Scoreboard {
  std::int64_t rows = 0;
  std::int64_t planned = 0;
  std::int64_t oom_rows = 0;      ///< rows that ran out of memory (or the engine refused)
  std::int64_t oom_flagged = 0;   ///< of those, trace said "does not fit"
  std::int64_t fit_rows = 0;      ///< rows that ran
  std::int64_t fit_rejected = 0;  ///< of those, trace said "does not fit"
  std::int64_t error_rows = 0;    ///< rows with a measured peak that were planned
  double median_abs_rel_error = 0;
  double p90_abs_rel_error = 0;
  std::vector<RowResult> results;
  /// Boundary rows (longest sequence on a VRAM tier): how many were scored, and the median
  /// |seq_len_error| over them. Not one of the four targets.
  std::int64_t boundary_rows = 0;
  double boundary_median_abs_error = 0;
  /// Per task: the same counts over that task's rows.
  struct Task {
    std::string task;
    std::int64_t rows = 0, planned = 0, oom_rows = 0, oom_flagged = 0, fit_rows = 0,
                 fit_rejected = 0, error_rows = 0;
    double median_abs_rel_error = 0, p90_abs_rel_error = 0;
  };
  std::vector<Task> tasks;
};

/// Loads a row's config text (by its config_file, else by its model_id); nullopt when none.
using ConfigLoader = std::function<std::optional<std::string>(const MeasuredRow& row)>;

/// "bigcode/octocoder (GPTBigCode 15.5B, MQA)" -> "bigcode/octocoder": the repo id in a
/// model_id cell.
std::string repo_id_of(std::string_view model_id);

/// File names a row's config may have in a configs folder, in order: its config_file (and the
/// same name with `--` for `__` and with `.reconstructed`), then <org>--<name> / <org>__<name>
/// (.json, .reconstructed.json) for the repo id in its model_id.
std::vector<std::string> config_file_candidates(const MeasuredRow& row);

/// The model name a re-upload under another organisation carries (unsloth/Phi-4,
/// unsloth/codegemma-7b-bnb-4bit -> "phi-4", "codegemma-7b"): lower-case, without the
/// pre-quantized suffixes; the loader then looks for `*--<name>.json` (docs/validation.md).
std::string mirrored_model_name(std::string_view repo_id);

/// Thresholds a CI job can gate on (`trace validate --min-recall ...`); unset ones are not checked.
struct ScoreTargets {
  std::optional<double> min_recall;        ///< did-not-fit recall, a fraction
  std::optional<double> max_false_reject;  ///< false "does not fit" share, a fraction
  std::optional<double> max_median_error;  ///< median |relative error|
  std::optional<double> max_p90_error;     ///< 90th-percentile |relative error|
};

/// One line per target the scoreboard misses ("did-not-fit recall 57.4% < 95.0%"); empty when
/// all are met.
std::vector<std::string> missed_targets(const Scoreboard& board, const ScoreTargets& targets);

Scoreboard validate_rows(const std::vector<MeasuredRow>& rows, const ConfigLoader& load_config,
                         const ValidationAssumptions& assumptions = {});

}  // namespace trace
