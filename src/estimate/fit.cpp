#include "trace/estimate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "trace/checked_math.hpp"
#include "trace/error.hpp"
#include "trace/estimate/parallel_layout.hpp"
#include "trace/monotone_search.hpp"

namespace trace {

namespace {

std::int64_t routed_experts(const ModelDescription& model) {
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (block.moe) return block.moe->num_experts;
    }
  }
  return 0;
}

// Peak on each of `cards` cards at batch 1.
std::int64_t per_card_bytes(const ModeMemory& mode, std::int64_t cards,
                            const PerSequenceOn& per_sequence_on) {
  const std::int64_t unsharded = mode.fixed_bytes - mode.shardable_bytes;  // overhead
  const std::int64_t sharded = ceil_div(mode.shardable_bytes, cards);
  return unsharded + sharded + (per_sequence_on ? per_sequence_on(cards) : mode.per_sequence_bytes);
}

}  // namespace

ModeFit fit_mode(const ModeMemory& mode, std::int64_t budget_bytes,
                 const TensorParallelSplits& tp_splits, const PerSequenceOn& per_sequence_on) {
  ModeFit fit;
  const std::int64_t at_one = checked_add(mode.fixed_bytes, mode.per_sequence_bytes);
  fit.fits = at_one <= budget_bytes;
  if (fit.fits) {
    fit.min_cards = 1;
    fit.bytes_per_card = at_one;
    fit.max_batch = mode.per_sequence_bytes > 0
                        ? std::min(k_max_reported_batch,
                                   (budget_bytes - mode.fixed_bytes) / mode.per_sequence_bytes)
                        : k_max_reported_batch;
    return fit;
  }
  const bool tensor_parallel = static_cast<bool>(tp_splits);
  fit.strategy = tensor_parallel ? "tensor parallel" : "ZeRO-3";
  for (std::int64_t cards = 2; cards <= k_max_cards; ++cards) {
    if (tensor_parallel && !tp_splits(cards)) continue;
    const std::int64_t bytes =
        per_card_bytes(mode, cards, tensor_parallel ? per_sequence_on : PerSequenceOn{});
    if (bytes <= budget_bytes) {
      fit.min_cards = cards;
      fit.bytes_per_card = bytes;
      break;
    }
  }
  return fit;
}

ModeFit fit_expert_parallel(const ModeMemory& mode, std::int64_t budget_bytes,
                            std::int64_t num_experts, std::int64_t comm_bytes) {
  ModeFit fit = fit_mode(mode, budget_bytes);
  if (fit.fits) return fit;
  fit.min_cards.reset();
  fit.bytes_per_card = 0;
  fit.strategy = "expert parallel";
  const std::int64_t replicated = mode.fixed_bytes - mode.expert_bytes;
  for (std::int64_t cards = 2; cards <= std::min(num_experts, k_max_cards); ++cards) {
    if (num_experts % cards != 0) continue;
    const std::int64_t bytes = replicated + ceil_div(mode.expert_bytes, cards) +
                               mode.per_sequence_bytes + comm_bytes;
    if (bytes <= budget_bytes) {
      fit.min_cards = cards;
      fit.bytes_per_card = bytes;
      break;
    }
  }
  return fit;
}

std::int64_t longest_context(const ModelDescription& model, const MemoryAssumptions& a,
                             std::int64_t budget_bytes, std::int64_t fixed_bytes,
                             std::int64_t concurrency) {
  if (concurrency < 1) return 0;
  const KvSplit one_gpu = serving_split(a);
  const std::int64_t state =
      ssm_state_bytes(model, effective_ssm_dtype(model, a), a.conv_state_bytes, one_gpu);
  const bool encoder = model.encoder_only();
  const auto fits = [&](std::int64_t context) {
    // An encoder's sequence costs its forward pass (quadratic with eager-only attention).
    std::int64_t per_request = 0;
    try {
      per_request = encoder
                        ? encoder_sequence_bytes(model, context, 1, a)
                        : checked_add(kv_cache_bytes(model, context, a.kv_dtype, one_gpu), state);
    } catch (const ConfigError&) {
      return false;  // an overflow at absurd lengths
    }
    // compare without overflow: fixed + concurrency x per_request <= budget
    if (budget_bytes < fixed_bytes) return false;
    return per_request <= (budget_bytes - fixed_bytes) / concurrency;
  };
  if (!fits(1)) return 0;
  if (fits(k_max_context_tokens)) return k_max_context_tokens;
  std::int64_t low = 1, high = k_max_context_tokens;  // fits(low), !fits(high)
  while (high - low > 1) {
    const std::int64_t mid = low + (high - low) / 2;
    (fits(mid) ? low : high) = mid;
  }
  return low;
}

// Per-card peak of `job` on `gpus` cards (ZeRO-3 beyond one), or nullopt when the job's own
// checks refuse the split.
std::optional<std::int64_t> sharded_peak_bytes(const JobEstimator& estimator, Job job, std::int64_t gpus) {
  job.gpus = gpus;
  job.tp = job.pp = job.ep = 1;
  job.sharding = gpus > 1 ? Sharding::zero3 : Sharding::single;
  // Spread over cards, the job runs as `--strategy zero3` (or fsdp) reads it: the model cast to
  // bf16 (no autocast over fp32 weights) and, under DeepSpeed, its gradient partitions kept.
  job.autocast_fp32_weights = job.autocast_fp32_weights && autocasts_fp32_weights_by_default(job);
  job.gradients_freed =
      job.gradients_freed && frees_gradients_by_default(job, job.root_unit_gathered);
  try {
    const JobEstimate estimate = estimator.estimate(job);
    return checked_add(estimate.breakdown.total(), estimator.assumptions().cuda_context_bytes);
  } catch (const ConfigError&) {
    return std::nullopt;  // an overflow at absurd sizes: treat as "does not fit"
  }
}

std::optional<std::int64_t> smallest_fitting_gpus(const JobEstimator& estimator, const Job& job,
                                                  std::int64_t budget_bytes,
                                                  std::int64_t* peak_bytes) {
  const auto fits = [&](std::int64_t gpus) {
    const std::optional<std::int64_t> peak = sharded_peak_bytes(estimator, job, gpus);
    return peak && *peak <= budget_bytes;
  };
  const std::optional<std::int64_t> on_one = sharded_peak_bytes(estimator, job, 1);
  if (on_one && *on_one <= budget_bytes) {
    if (peak_bytes) *peak_bytes = *on_one;
    return 1;
  }
  const std::optional<std::int64_t> on_two = sharded_peak_bytes(estimator, job, 2);
  if (!on_two || !fits(k_max_cards)) return std::nullopt;
  // Per-card bytes fall as ZeRO-3 adds cards, close to unsharded + sharded / n: guess n from
  // n = 2 (sharded = 2 x (p1 - p2)), then search outwards from the guess.
  std::int64_t guess = 2;
  if (on_one) {
    const double sharded = 2.0 * static_cast<double>(*on_one - *on_two);
    const double unsharded = static_cast<double>(*on_one) - sharded;
    const double room = static_cast<double>(budget_bytes) - unsharded;
    if (room > 0) guess = static_cast<std::int64_t>(std::min(std::ceil(sharded / room), 1e9));
  }
  const std::int64_t answer = search::first_true(fits, guess, 2, k_max_cards);
  if (peak_bytes) *peak_bytes = sharded_peak_bytes(estimator, job, answer).value_or(0);
  return answer;
}

std::int64_t& knob_value(Job& job, JobKnob knob) {
  switch (knob) {
    case JobKnob::batch: return job.batch;
    case JobKnob::seq_len: return job.seq_len;
    case JobKnob::concurrency: return job.concurrency;
    case JobKnob::context: return job.context;
  }
  return job.context;
}

std::int64_t largest_fitting(const JobEstimator& estimator, Job job, JobKnob knob,
                             std::int64_t limit, std::int64_t budget_bytes) {
  std::int64_t& value = knob_value(job, knob);
  const std::int64_t given = value;
  const auto too_big = [&](std::int64_t v) {
    if (v > limit) return true;
    value = v;
    try {
      const JobEstimate estimate = estimator.estimate(job);
      return checked_add(estimate.breakdown.total(), estimator.assumptions().cuda_context_bytes) >
             budget_bytes;
    } catch (const ConfigError&) {
      return true;  // an overflow at absurd sizes
    }
  };
  // The peak is close to fixed + per-unit x value: start from the job's own value. A GRPO
  // sequence holds at least its completion: shorter ones are not jobs, so the search starts
  // there (0 when even that does not fit).
  const std::int64_t low = knob == JobKnob::seq_len && job.rl ? job.rl->completion_len : 1;
  if (low > limit) return 0;
  const std::int64_t first = search::first_true(too_big, given, low, limit + 1);
  return first > low ? first - 1 : 0;
}

namespace {

// A training mode that does not fit one card: the fewest ZeRO-3 cards by the job estimator, so
// the table and the training run's card count agree.
void shard_training(ModeFit& fit, const TrainingCardSearch& training, JobMode mode,
                    std::int64_t budget) {
  if (fit.fits) return;
  Job job = training.job;
  job.mode = mode;
  job.seq_len = training.estimator.assumptions().seq_len;
  job.batch = training.estimator.assumptions().batch;
  std::int64_t peak = 0;
  const std::optional<std::int64_t> gpus =
      smallest_fitting_gpus(training.estimator, job, budget, &peak);
  fit.min_cards = gpus;
  fit.bytes_per_card = gpus ? peak : 0;
  fit.strategy = data_parallel_label(job);
}

// A training mode that fits one card: its largest batch searched with the job estimator, as
// `--mode` reports it. The peak is not linear in the batch where the step's phase sets it at
// small batches (gradients freed between steps: docs/memory.md, "Phases of a step").
void exact_batch(ModeFit& fit, const TrainingCardSearch& training, JobMode mode,
                 std::int64_t budget) {
  if (!fit.fits) return;
  Job job = one_card_job(training.job, training.estimator.assumptions());
  job.mode = mode;
  fit.max_batch =
      largest_fitting(training.estimator, job, JobKnob::batch, k_max_reported_batch, budget);
}

}  // namespace

std::vector<CardFit> fit_cards(const MemoryEstimate& memory, const ModelDescription& model,
                               const std::vector<const GpuSpec*>& gpus,
                               const MemoryAssumptions& assumptions,
                               const TrainingCardSearch* training) {
  // Tensor parallelism splits over the sizes every layer allows (checked once each).
  std::map<std::int64_t, bool> splits_checked;
  const TensorParallelSplits tp_splits = [&](std::int64_t cards) {
    const auto [at, inserted] = splits_checked.try_emplace(cards, false);
    if (inserted) at->second = !tensor_parallel_problem(model, cards);
    return at->second;
  };
  // Serving over n tensor-parallel cards: each keeps its share of a sequence's KV cache
  // (kv_cache_bytes: heads split, replicated past their count, an MLA latent whole) and of its
  // SSM state (ssm_state_bytes: heads and conv channels split); the forward pass's working set
  // shrinks with n, the sampling step on rank 0 does not (serving_transient_bytes, counted in
  // fixed_bytes at n = 1).
  const Dtype kv_dtype = assumptions.kv_dtype;
  const Dtype ssm_dtype = effective_ssm_dtype(model, assumptions);
  // One sequence's KV cache and SSM state on each of `cards` tensor-parallel GPUs.
  const auto cache_on = [&](std::int64_t cards) {
    const KvSplit split = serving_split(assumptions, cards);
    return sequence_cache_bytes(model, assumptions.context, kv_dtype, ssm_dtype,
                                assumptions.conv_state_bytes, split);
  };
  const std::int64_t cache_on_one = cache_on(1);
  const PerSequenceOn serve_per_sequence = [&](std::int64_t cards) {
    if (model.encoder_only()) {
      return checked_add(encoder_sequence_bytes(model, assumptions.context, cards, assumptions),
                         serving_comm_bytes(cards, assumptions));
    }
    return memory.serve.per_sequence_bytes - cache_on_one + cache_on(cards) +
           serving_transient_bytes(model, assumptions.context, assumptions.concurrency, cards,
                                   assumptions) -
           memory.serve.breakdown.activations + serving_comm_bytes(cards, assumptions);
  };
  std::vector<CardFit> fits;
  for (const GpuSpec* gpu : gpus) {
    CardFit card;
    card.id = gpu->id;
    card.name = gpu->name;
    card.memory_bytes = gpu->memory_bytes_usable;
    card.budget_bytes = budget_bytes(gpu->memory_bytes_usable, assumptions.headroom_fraction);
    card.full_finetune = fit_mode(memory.full_finetune, card.budget_bytes);
    card.lora = fit_mode(memory.lora, card.budget_bytes);
    if (training) {
      exact_batch(card.full_finetune, *training, JobMode::full, card.budget_bytes);
      shard_training(card.full_finetune, *training, JobMode::full, card.budget_bytes);
      shard_training(card.lora, *training, JobMode::lora, card.budget_bytes);
    }
    const std::int64_t experts = routed_experts(model);
    card.serve = assumptions.expert_parallel && experts > 1
                     ? fit_expert_parallel(memory.serve, card.budget_bytes, experts,
                                           serving_comm_bytes(2, assumptions))
                     : fit_mode(memory.serve, card.budget_bytes, tp_splits, serve_per_sequence);
    fits.push_back(std::move(card));
  }
  return fits;
}

std::int64_t budget_bytes(std::int64_t usable_bytes, double headroom_fraction) {
  const double headroom = std::clamp(headroom_fraction, 0.0, 0.99);
  return static_cast<std::int64_t>(
      std::floor(static_cast<double>(usable_bytes) * (1.0 - headroom)));
}

}  // namespace trace
