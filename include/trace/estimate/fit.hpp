#pragma once
/// "What fits on which card": compares each mode's peak with a card's usable memory after the
/// headroom, finds the largest batch, and the fewest cards when one is not enough (ZeRO-3/FSDP
/// for training, tensor parallelism for serving). Formulas: docs/memory.md.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trace/estimate/job.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/hardware/gpu_catalog.hpp"

namespace trace {

/// Largest batch reported; beyond it the answer is "at least this many".
inline constexpr std::int64_t k_max_reported_batch = 1'000'000;
/// Largest card count searched for sharded plans.
inline constexpr std::int64_t k_max_cards = 4096;

/// What a card offers a job: its usable memory less the headroom share (floored).
std::int64_t budget_bytes(std::int64_t usable_bytes, double headroom_fraction);

struct ModeFit {
  bool fits = false;           ///< batch 1 fits on one card
  std::int64_t max_batch = 0;  ///< largest batch on one card (0 when batch 1 does not fit)
  std::optional<std::int64_t> min_cards;  ///< fewest cards holding batch 1 (1 when it fits)
  std::int64_t bytes_per_card = 0;        ///< peak per card at batch 1 on min_cards cards
  std::string strategy;                   ///< the split min_cards assumes
};

struct CardFit {
  std::string id;
  std::string name;
  std::int64_t memory_bytes = 0;  ///< usable
  std::int64_t budget_bytes = 0;  ///< usable x (1 - headroom)
  ModeFit full_finetune;
  ModeFit lora;
  ModeFit serve;
};

/// What one sequence holds on each of `cards` tensor-parallel cards.
using PerSequenceOn = std::function<std::int64_t(std::int64_t cards)>;

/// Card counts tensor parallelism can use (tensor_parallel_problem finds none).
using TensorParallelSplits = std::function<bool(std::int64_t cards)>;

/// Fit of one mode on a card with `budget_bytes` to spend. `tp_splits` set: serving shards
/// tensor-parallel, only over card counts it accepts, each card holding
/// `per_sequence_on(cards)` per sequence (unset: mode.per_sequence_bytes); unset: any count
/// (ZeRO-3), the per-sequence bytes whole on every card.
ModeFit fit_mode(const ModeMemory& mode, std::int64_t budget_bytes,
                 const TensorParallelSplits& tp_splits = {},
                 const PerSequenceOn& per_sequence_on = {});
/// Serving fit with expert parallelism: routed experts split over n cards (n divides
/// num_experts), everything else replicated, each card holding its own sequences' KV cache
/// and, past one card, `comm_bytes` of all-to-all buffers.
ModeFit fit_expert_parallel(const ModeMemory& mode, std::int64_t budget_bytes,
                            std::int64_t num_experts, std::int64_t comm_bytes = 0);

/// The longest context (tokens per request) with which `concurrency` requests fit in
/// `budget_bytes` beside `fixed_bytes` (weights + CUDA context): the largest c with
/// fixed + concurrency x (KV(c) + SSM state) <= budget, KV(c) window-aware (kv_cache_bytes).
/// 0 when not even one token fits; capped at 2^27 tokens.
std::int64_t longest_context(const ModelDescription& model, const MemoryAssumptions& assumptions,
                             std::int64_t budget_bytes, std::int64_t fixed_bytes,
                             std::int64_t concurrency);

/// Per-card peak of `job` (with the estimator's CUDA context) on `gpus` cards, ZeRO-3 beyond
/// one; nullopt when the job's own checks refuse the split.
std::optional<std::int64_t> sharded_peak_bytes(const JobEstimator& estimator, Job job,
                                               std::int64_t gpus);

/// Fewest cards (1..4096) on which the job fits `budget_bytes` per card: one card as the job
/// says, more with ZeRO-3 data parallelism (parameters, gradients, optimizer states
/// sharded). nullopt when none does. `peak_bytes` gets the per-card peak of the answer.
/// The per-card peak adds the estimator's CUDA context.
std::optional<std::int64_t> smallest_fitting_gpus(const JobEstimator& estimator, const Job& job,
                                                  std::int64_t budget_bytes,
                                                  std::int64_t* peak_bytes = nullptr);

/// A job's knob that a card bounds, every other setting held: a training job's micro-batch or
/// sequence length, a serve job's concurrent requests or context per request.
enum class JobKnob { batch, seq_len, concurrency, context };

/// The field of `job` that `knob` names.
std::int64_t& knob_value(Job& job, JobKnob knob);

/// The largest value of `knob` (1..limit, every other setting as `job` says) with which the
/// job's per-GPU peak plus the estimator's CUDA context stays within `budget_bytes`; 0 when
/// not even 1 does. The peak grows with both knobs, so the answer is a boundary: value fits,
/// value + 1 does not (or value = limit). A value whose estimate overflows does not fit.
std::int64_t largest_fitting(const JobEstimator& estimator, Job job, JobKnob knob,
                             std::int64_t limit, std::int64_t budget_bytes);

/// The training job a card table reports (`--mode` and the job flags), for the fewest-cards
/// search: a training mode that does not fit one card is searched over ZeRO-3 card counts with
/// the job estimator itself (gathered layers and all), at the assumptions' seq_len and batch.
struct TrainingCardSearch {
  const JobEstimator& estimator;
  Job job;
};

/// Each card's fit for the three modes. Without `training`, a training mode's card count comes
/// from the ModeMemory split (sharded bytes / n).
std::vector<CardFit> fit_cards(const MemoryEstimate& memory, const ModelDescription& model,
                               const std::vector<const GpuSpec*>& gpus,
                               const MemoryAssumptions& assumptions,
                               const TrainingCardSearch* training = nullptr);

}  // namespace trace
