#pragma once
/// How long a training run takes and what it costs on each card: FLOPs / (GPUs x peak x MFU),
/// priced on the smallest number of cards the memory estimator says can hold the job.
/// Formulas, defaults and their sources: docs/cost.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/cost/flops.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/hardware/gpu_catalog.hpp"

namespace trace {

/// The efficiencies a roofline bound is scaled by to give an expected time. Each is a named,
/// overridable input (`--mfu`, `--moe-mfu`, `--serve-mfu`, `--mbu`); the defaults are the
/// medians of measured / bound over ../shared/reference/throughput.csv (docs/cost.md).
struct CostAssumptions {
  double training_mfu = 0.36;      ///< dense training: median of the dense training rows
  /// MoE training: dense x 0.54, Megatron-Core's MoE / dense TFLOP/s ratio on GB200 (cost.md)
  double training_moe_mfu = 0.20;
  double serve_compute_efficiency = 0.41;    ///< median of the saturated serving rows
  double serve_bandwidth_efficiency = 0.55;  ///< median of the batch-1 decode rows
  /// Training: the format the matrix multiplies run in; unset: from --precision (mixed and pure
  /// bf16 -> bf16, fp16 -> fp16, fp32 -> fp32).
  std::optional<ComputeDtype> training_compute;
};

/// Throws ConfigError naming the flag when an efficiency is outside (0, 1].
void validate_cost_assumptions(const CostAssumptions& assumptions);

/// How much a run trains on: tokens = samples x seq_len x epochs, or tokens given directly.
struct RunSize {
  std::int64_t tokens = 0;
  std::int64_t samples = 0;  ///< 0 when the run was given in tokens
  std::int64_t epochs = 0;
  /// Tokens per sequence (the FLOPs' attention term and the memory estimate use it).
  std::int64_t seq_len = 0;
  bool is_default = false;   ///< trace's default run, not the user's
};
/// 50,000 samples x 2,048 tokens x 10 epochs: docs/cost.md, "Default run".
RunSize default_run_size(std::int64_t seq_len);
/// `tokens` in sequences of `seq_len`; throws ConfigError when either is < 1.
RunSize run_size_from_tokens(std::int64_t tokens, std::int64_t seq_len);
/// samples x seq_len x epochs; throws ConfigError when a factor is < 1 or the product overflows.
RunSize run_size_from_samples(std::int64_t samples, std::int64_t seq_len, std::int64_t epochs);

/// The run on one card.
struct TrainingRun {
  std::string gpu;             ///< card id
  std::string name;
  std::int64_t gpus = 0;       ///< cards the job needs (0: no count up to the search limit fits)
  std::string strategy;        ///< "1 GPU", "ZeRO-3" or "FSDP"
  std::int64_t peak_bytes_per_gpu = 0;
  std::string compute_dtype;   ///< the peak used
  double peak_flops_per_s = 0; ///< per GPU
  double mfu = 0;
  double flops = 0;            ///< the whole run, recomputation included
  double hours = 0;
  std::optional<double> usd;   ///< absent when the card has no price
  double price_usd_per_hour = 0;
  /// GRPO: generating the completions, inside `hours` (docs/cost.md, "Online RL"): the run's
  /// generations per GPU, each completion_len decode steps of the generation batch, timed by
  /// the serving roofline.
  double generations = 0;
  double generation_step_seconds = 0;
  double generation_hours = 0;
  std::string blocker;         ///< why the card cannot run it (empty when it can)
  bool runs() const { return blocker.empty(); }
};

struct TrainingPlan {
  Job job;
  RunSize size;
  TrainingFlops flops;     ///< per token
  double total_flops = 0;  ///< size.tokens x flops.per_token
  bool moe = false;
  double mfu = 0;          ///< the one applied
  std::vector<TrainingRun> runs;  ///< one per card, those that cannot run it included
};

/// Peak used for a training job: CostAssumptions::training_compute, else from the precision.
ComputeDtype training_compute_dtype(const Job& job, const CostAssumptions& assumptions);

/// Time and cost of `size` on every card in `cards`.
TrainingPlan plan_training(const ModelDescription& model, const ParameterCount& params,
                           const Job& job, const RunSize& size, const MemoryAssumptions& memory,
                           const CostAssumptions& assumptions,
                           const std::vector<const GpuSpec*>& cards);
/// The same over an estimator the caller reuses (the memory assumptions are its).
TrainingPlan plan_training(const JobEstimator& estimator, const Job& job, const RunSize& size,
                           const CostAssumptions& assumptions,
                           const std::vector<const GpuSpec*>& cards);

}  // namespace trace
