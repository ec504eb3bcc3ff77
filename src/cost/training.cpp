#include "trace/cost/training.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "trace/checked_math.hpp"
#include "trace/cost/serving.hpp"
#include "trace/error.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/monotone_search.hpp"

namespace trace {

namespace {

bool has_moe(const ModelDescription& model) {
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      if (block.moe) return true;
    }
  }
  return false;
}

// GRPO's generation on one card: each GPU generates its generation batch once per optimizer
// step, completion_len decode steps at that concurrency (prompts prefilled alongside), by the
// serving roofline of plan_serving on one GPU at the compute dtype. Sets run.generation_*;
// returns false with run.blocker set when the card cannot be timed.
bool time_generation(const JobEstimator& estimator, const TrainingPlan& plan,
                     const CostAssumptions& assumptions, const GpuSpec& gpu, TrainingRun& run) {
  const Job& job = plan.job;
  const std::int64_t sequences = generation_batch_of(job);
  Job serve;
  serve.mode = JobMode::serve;
  serve.base_dtype = job.precision == Precision::fp32 ? Dtype::fp32 : Dtype::bf16;
  serve.kv_dtype = *serve.base_dtype;
  serve.context = job.seq_len;
  serve.concurrency = sequences;
  ServingRequest request;
  request.context_in = std::max<std::int64_t>(job.seq_len - job.rl->completion_len, 1);
  request.context_out = job.rl->completion_len;
  request.gpus = 1;
  request.tp = 1;
  request.extra_concurrency = {sequences};
  const ServingPlan serving = plan_serving(estimator, serve, assumptions, request, gpu);
  if (serving.requested_points.empty() || !(serving.requested_points.front().step_seconds > 0)) {
    run.blocker = "its generation cannot be timed: " +
                  (serving.blocker.empty() ? std::string("no serving roofline") : serving.blocker);
    return false;
  }
  run.generation_step_seconds = serving.requested_points.front().step_seconds;
  run.generations = static_cast<double>(plan.size.tokens) /
                    (static_cast<double>(run.gpus) * static_cast<double>(sequences) *
                     static_cast<double>(job.seq_len));
  run.generation_hours = run.generations * static_cast<double>(job.rl->completion_len) *
                         run.generation_step_seconds / 3600;
  return true;
}

}  // namespace

void validate_cost_assumptions(const CostAssumptions& a) {
  const auto check = [](double value, const char* flag) {
    if (!(value > 0 && value <= 1)) {
      throw ConfigError(fmt::format("{} = {} must be a fraction in (0, 1]", flag, value));
    }
  };
  check(a.training_mfu, "--mfu");
  check(a.training_moe_mfu, "--moe-mfu");
  check(a.serve_compute_efficiency, "--serve-mfu");
  check(a.serve_bandwidth_efficiency, "--mbu");
}

RunSize default_run_size(std::int64_t seq_len) {
  RunSize size = run_size_from_samples(50'000, seq_len, 10);
  size.is_default = true;
  return size;
}

RunSize run_size_from_tokens(std::int64_t tokens, std::int64_t seq_len) {
  if (tokens < 1) throw ConfigError(fmt::format("--tokens = {} must be at least 1", tokens));
  if (seq_len < 1) throw ConfigError(fmt::format("--seq-len = {} must be at least 1", seq_len));
  RunSize size;
  size.tokens = tokens;
  size.seq_len = seq_len;
  return size;
}

RunSize run_size_from_samples(std::int64_t samples, std::int64_t seq_len, std::int64_t epochs) {
  if (samples < 1) throw ConfigError(fmt::format("--samples = {} must be at least 1", samples));
  if (seq_len < 1) throw ConfigError(fmt::format("--seq-len = {} must be at least 1", seq_len));
  if (epochs < 1) throw ConfigError(fmt::format("--epochs = {} must be at least 1", epochs));
  RunSize size;
  size.samples = samples;
  size.seq_len = seq_len;
  size.epochs = epochs;
  size.tokens = checked_mul(checked_mul(samples, seq_len, "the run's tokens"), epochs,
                            "the run's tokens");
  return size;
}


ComputeDtype training_compute_dtype(const Job& job, const CostAssumptions& assumptions) {
  if (assumptions.training_compute) return *assumptions.training_compute;
  switch (job.precision) {
    case Precision::fp32: return ComputeDtype::fp32;
    case Precision::fp16_pure: return ComputeDtype::fp16;
    case Precision::mixed:
    case Precision::bf16_pure: return ComputeDtype::bf16;
  }
  return ComputeDtype::bf16;
}

TrainingPlan plan_training(const ModelDescription& model, const ParameterCount& params,
                           const Job& job, const RunSize& size, const MemoryAssumptions& memory,
                           const CostAssumptions& assumptions,
                           const std::vector<const GpuSpec*>& cards) {
  return plan_training(JobEstimator(model, params, memory), job, size, assumptions, cards);
}

TrainingPlan plan_training(const JobEstimator& estimator, const Job& job, const RunSize& size,
                           const CostAssumptions& assumptions,
                           const std::vector<const GpuSpec*>& cards) {
  const ModelDescription& model = estimator.model();
  const ParameterCount& params = estimator.params();
  const MemoryAssumptions& memory = estimator.assumptions();
  validate_cost_assumptions(assumptions);
  TrainingPlan plan;
  plan.job = job;
  plan.job.seq_len = size.seq_len;
  plan.size = size;
  plan.flops = training_flops(model, params, plan.job);
  plan.total_flops = static_cast<double>(size.tokens) * plan.flops.per_token;
  if (has_reference(plan.job.preference) && plan.job.reference_precomputed) {
    // The reference's log-probabilities, computed once over the dataset: one epoch's tokens
    // (the whole run's when it was given in --tokens, which says no epochs).
    plan.total_flops += static_cast<double>(size.tokens) /
                        static_cast<double>(std::max<std::int64_t>(size.epochs, 1)) *
                        plan.flops.reference_per_token;
  }
  plan.moe = has_moe(model);
  plan.mfu = plan.moe ? assumptions.training_moe_mfu : assumptions.training_mfu;
  const ComputeDtype compute = training_compute_dtype(plan.job, assumptions);
  for (const GpuSpec* gpu : cards) {
    TrainingRun run;
    run.gpu = gpu->id;
    run.name = gpu->name;
    run.compute_dtype = std::string(compute_dtype_name(compute));
    run.mfu = plan.mfu;
    run.flops = plan.total_flops;
    const std::optional<double> peak = peak_flops_per_s(*gpu, compute);
    const std::int64_t budget = budget_bytes(gpu->memory_bytes_usable, memory.headroom_fraction);
    const std::optional<std::int64_t> gpus =
        smallest_fitting_gpus(estimator, plan.job, budget, &run.peak_bytes_per_gpu);
    if (!peak) {
      run.blocker = fmt::format("no native {} peak in the GPU table{}", run.compute_dtype,
                                compute == ComputeDtype::bf16 && gpu->fp16_tflops
                                    ? " (--precision fp16 uses its fp16 peak)"
                                    : "");
    } else if (!gpus) {
      const std::int64_t floor = sharded_peak_bytes(estimator, plan.job, k_max_cards).value_or(0);
      run.blocker = fmt::format(
          "{:.2f} GiB per GPU even on {} cards (activations and gathered layers do not shard; "
          "--grad-checkpointing full lowers them)",
          static_cast<double>(floor) / static_cast<double>(k_gib), k_max_cards);
    } else if (*gpus > 1 && gpu->interconnect_bytes_per_s <= 0) {
      run.blocker = fmt::format(
          "needs {} cards, and the GPU table lists no interconnect to shard a job over", *gpus);
    } else {
      run.gpus = *gpus;
      run.strategy = *gpus == 1 ? "1 GPU" : data_parallel_label(plan.job);
      run.peak_flops_per_s = *peak;
      const double seconds =
          plan.total_flops / (static_cast<double>(run.gpus) * run.peak_flops_per_s * run.mfu);
      run.hours = seconds / 3600;
      if (plan.job.rl && !time_generation(estimator, plan, assumptions, *gpu, run)) {
        run.gpus = 0;
        plan.runs.push_back(std::move(run));
        continue;
      }
      run.hours += run.generation_hours;
      if (gpu->price_usd_per_hour) {
        run.price_usd_per_hour = *gpu->price_usd_per_hour;
        run.usd = run.hours * static_cast<double>(run.gpus) * run.price_usd_per_hour;
      }
    }
    plan.runs.push_back(std::move(run));
  }
  return plan;
}

}  // namespace trace
