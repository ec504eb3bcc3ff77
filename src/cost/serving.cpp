#include "trace/cost/serving.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trace/checked_math.hpp"
#include "trace/error.hpp"
#include "trace/estimate/engine_blocks.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/monotone_search.hpp"

namespace trace {

namespace {

// Routed-expert parameters per MoE layer with its (experts, top_k), text path only.
struct MoeLayer {
  double routed_params = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
};

std::vector<MoeLayer> moe_layers(const ModelDescription& model) {
  std::vector<MoeLayer> layers;
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      if (!block.moe || block.shared_weights) continue;
      layers.push_back({static_cast<double>(moe_params(*block.moe).routed), block.moe->num_experts,
                        block.moe->top_k});
    }
  }
  return layers;
}

// The share of the routed experts' weights a step over `tokens` tokens reads (1 for dense).
double routed_share_touched(const std::vector<MoeLayer>& layers, double tokens) {
  double all = 0, touched = 0;
  for (const MoeLayer& layer : layers) {
    all += layer.routed_params;
    touched += layer.routed_params *
               expected_experts_hit(layer.experts, layer.top_k, tokens) /
               static_cast<double>(std::max<std::int64_t>(layer.experts, 1));
  }
  return all > 0 ? touched / all : 1.0;
}


// A serve job at `concurrency`: its per-GPU peak (CUDA context included) and the KV cache and
// SSM state inside it; nullopt when the job is out of range (it then fits no card).
struct ServePeak {
  std::int64_t peak = 0;
  std::int64_t caches = 0;  ///< KV cache + SSM state
};

std::optional<ServePeak> serve_peak_of(const JobEstimator& estimator, Job job,
                                       std::int64_t concurrency) {
  job.concurrency = concurrency;
  try {
    const MemoryBreakdown b = estimator.estimate(job).breakdown;
    return ServePeak{checked_add(b.total(), estimator.assumptions().cuda_context_bytes),
                     checked_add(b.kv_cache, b.ssm_state)};
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

std::optional<std::int64_t> serve_peak(const JobEstimator& estimator, const Job& job,
                                       std::int64_t concurrency) {
  const std::optional<ServePeak> at = serve_peak_of(estimator, job, concurrency);
  return at ? std::optional<std::int64_t>(at->peak) : std::nullopt;
}

}  // namespace

void validate_serving_request(const ServingRequest& r) {
  const auto check = [](std::int64_t value, std::int64_t min, std::int64_t max, const char* flag) {
    if (value < min || value > max) {
      throw ConfigError(fmt::format("{} = {} is out of range ({}..{})", flag, value, min, max));
    }
  };
  check(r.context_in, 0, 1LL << 26, "--context-in");
  check(r.context_out, 1, 1LL << 26, "--context-out");
  check(r.gpus, 1, 1LL << 10, "--gpus");
  check(r.tp, 0, r.gpus, "--tp");
  if (r.tp > 0 && r.gpus % r.tp != 0) {
    throw ConfigError(fmt::format("--gpus {} is not a multiple of --tp {}", r.gpus, r.tp));
  }
  if (!(r.min_user_tps >= 0) || !std::isfinite(r.min_user_tps)) {
    throw ConfigError(fmt::format("--min-user-tps = {} must be a number >= 0", r.min_user_tps));
  }
}

double expected_experts_hit(std::int64_t experts, std::int64_t top_k, double tokens) {
  if (experts <= 0 || top_k <= 0 || !(tokens > 0)) return 0;
  const double e = static_cast<double>(experts);
  const double miss = 1.0 - std::min(1.0, static_cast<double>(top_k) / e);
  return e * (1.0 - std::pow(miss, tokens));
}

ComputeDtype serving_compute_dtype(const ModelDescription& model, const MemoryAssumptions& memory,
                                   const GpuSpec& gpu) {
  std::optional<ComputeDtype> wanted;
  // A ModelOpt map that stores any module in NVFP4 (Nemotron's MoE experts, most of the bytes)
  // runs those matmuls in FP4 where the card can.
  const auto modelopt_has = [](const ModeloptScheme& scheme, ModuleFormat format) {
    if (scheme.default_format == format) return true;
    for (const auto& [name, module] : scheme.module_formats) {
      if (module == format) return true;
    }
    for (const auto& [pattern, module] : scheme.module_patterns) {
      if (module == format) return true;
    }
    return false;
  };
  // The format the weights are served in: a --quantize scheme, else the checkpoint's own.
  const Quantization* served = memory.serve_quantization ? &memory.serve_quantization->scheme
                               : model.quantization    ? &*model.quantization
                                                       : nullptr;
  if (memory.serve_weight_bytes >= 0 && served) {
    const Quantization& q = *served;
    switch (q.format) {
      case QuantFormat::fp8_block:
      case QuantFormat::fp8_tensor: wanted = ComputeDtype::fp8; break;
      case QuantFormat::mxfp4: wanted = ComputeDtype::mxfp4; break;
      case QuantFormat::modelopt:
        if (q.modelopt && modelopt_has(*q.modelopt, ModuleFormat::nvfp4)) {
          wanted = ComputeDtype::nvfp4;
        } else if (q.modelopt && modelopt_has(*q.modelopt, ModuleFormat::fp8)) {
          wanted = ComputeDtype::fp8;
        }
        break;
      default: break;  // GPTQ, AWQ, bitsandbytes: weight-only, the matmul runs in 16 bits
    }
  } else if (memory.serve_weight_dtype == Dtype::fp8) {
    wanted = ComputeDtype::fp8;
  } else if (memory.serve_weight_dtype == Dtype::fp16) {
    wanted = ComputeDtype::fp16;
  }
  // An NVFP4 checkpoint whose card lacks FP4 still runs its FP8 parts natively on FP8 cards
  // (vLLM's Marlin / FP8 paths); the 16-bit peak is the honest floor.
  if (wanted && peak_flops_per_s(gpu, *wanted)) return *wanted;
  if (wanted == ComputeDtype::nvfp4 || wanted == ComputeDtype::mxfp4) {
    if (peak_flops_per_s(gpu, ComputeDtype::fp8)) return ComputeDtype::fp8;
  }
  if (peak_flops_per_s(gpu, ComputeDtype::bf16)) return ComputeDtype::bf16;
  return ComputeDtype::fp16;
}

namespace {

// The sweep both workloads share: points at 1, 2, 4, ... and the memory cap (per replica), the
// requested ones, the best point and its price per million tokens.
template <typename PointAt>
void sweep_points(ServingPlan& plan, const PointAt& point_at, const ServingRequest& request,
                  std::optional<double> price_usd_per_hour) {
  for (std::int64_t c = 1; c < plan.max_concurrency; c *= 2) plan.points.push_back(point_at(c));
  plan.points.push_back(point_at(plan.max_concurrency));
  for (const std::int64_t c : request.extra_concurrency) {
    plan.requested_points.push_back(point_at(std::max<std::int64_t>(c, 1)));
  }
  plan.max_concurrency *= plan.replicas;
  for (const ServingPoint& point : plan.points) {
    if (point.user_tokens_per_s < request.min_user_tps) continue;
    // A compute-bound sweep gives every point the same tokens/s up to rounding: a tie keeps the
    // smaller batch, which serves each request sooner.
    if (!plan.best || point.total_tokens_per_s > plan.best->total_tokens_per_s * (1 + 1e-9)) {
      plan.best = point;
    }
  }
  if (plan.best && price_usd_per_hour) {
    plan.usd_per_million_tokens = *price_usd_per_hour * static_cast<double>(plan.gpus) /
                                  (plan.best->total_tokens_per_s * 3600) * 1e6;
  }
}

// An encoder's points: a batch of `concurrency` sequences of `tokens` tokens per replica, one
// forward pass each, bound by its FLOPs (bidirectional attention over every key) or by reading
// the weights once (docs/cost.md, "Encoder serving"). plan.max_concurrency is per replica here.
void plan_encoding(ServingPlan& plan, const ModelDescription& model, const ParameterCount& params,
                   double weights, std::int64_t tokens, const CostAssumptions& assumptions,
                   const ServingRequest& request, std::optional<double> price_usd_per_hour) {
  const double tp = static_cast<double>(plan.tp);
  const double replicas = static_cast<double>(plan.replicas);
  const double sequence_flops = prefill_flops(model, params, tokens);
  const double length = static_cast<double>(tokens);
  const auto point_at = [&](std::int64_t concurrency) {
    ServingPoint point;
    point.concurrency = concurrency * plan.replicas;
    const double b = static_cast<double>(concurrency);
    point.bytes_per_step = weights / tp;
    point.flops_per_step = b * sequence_flops / tp;
    const double memory_time = point.bytes_per_step / plan.bandwidth_bytes_per_s;
    const double compute_time = point.flops_per_step / plan.peak_flops_per_s;
    const double bound = std::max(memory_time, compute_time);
    point.step_seconds = std::max(memory_time / assumptions.serve_bandwidth_efficiency,
                                  compute_time / assumptions.serve_compute_efficiency);
    point.memory_bound = memory_time / assumptions.serve_bandwidth_efficiency >=
                         compute_time / assumptions.serve_compute_efficiency;
    // A request's tokens are all encoded by the end of its batch's pass.
    point.bound_user_tokens_per_s = length / bound;
    point.bound_total_tokens_per_s = replicas * b * length / bound;
    point.user_tokens_per_s = length / point.step_seconds;
    point.total_tokens_per_s = replicas * b * length / point.step_seconds;
    return point;
  };
  sweep_points(plan, point_at, request, price_usd_per_hour);
  plan.ttft_seconds = point_at(1).step_seconds;
}

}  // namespace

ServingPlan plan_serving(const ModelDescription& model, const ParameterCount& params,
                         const Job& serve_job, const MemoryAssumptions& memory,
                         const CostAssumptions& assumptions, const ServingRequest& request,
                         const GpuSpec& gpu) {
  return plan_serving(JobEstimator(model, params, memory), serve_job, assumptions, request, gpu);
}

ServingPlan plan_serving(const JobEstimator& estimator, const Job& serve_job,
                         const CostAssumptions& assumptions, const ServingRequest& request,
                         const GpuSpec& gpu) {
  const ModelDescription& model = estimator.model();
  const ParameterCount& params = estimator.params();
  const MemoryAssumptions& memory = estimator.assumptions();
  validate_cost_assumptions(assumptions);
  validate_serving_request(request);
  ServingPlan plan;
  plan.gpu = gpu.id;
  plan.name = gpu.name;
  plan.gpus = request.gpus;
  plan.tp = request.tp > 0 ? request.tp : request.gpus;
  plan.replicas = request.gpus / plan.tp;
  const ComputeDtype compute = serving_compute_dtype(model, memory, gpu);
  plan.compute_dtype = std::string(compute_dtype_name(compute));
  plan.peak_flops_per_s = peak_flops_per_s(gpu, compute).value_or(0);
  plan.bandwidth_bytes_per_s = static_cast<double>(gpu.memory_bandwidth_bytes_per_s);
  plan.price_usd_per_hour = gpu.price_usd_per_hour.value_or(0);
  if (plan.peak_flops_per_s <= 0 || plan.bandwidth_bytes_per_s <= 0) {
    plan.blocker = "the GPU table has no peak FLOP/s or bandwidth for this card";
    return plan;
  }

  if (plan.tp > 1 && gpu.interconnect_bytes_per_s <= 0) {
    plan.blocker = fmt::format(
        "tensor parallel over {} cards, and the GPU table lists no interconnect for them", plan.tp);
    return plan;
  }
  Job job = serve_job;
  job.mode = JobMode::serve;
  job.gpus = job.tp = plan.tp;
  job.pp = 1;
  job.sharding = Sharding::single;
  // An encoder reads its request and generates nothing.
  plan.encoder = model.encoder_only();
  job.context = std::max<std::int64_t>(
      1, plan.encoder ? request.context_in : request.context_in + request.context_out);
  const std::int64_t budget = budget_bytes(gpu.memory_bytes_usable, memory.headroom_fraction);
  // A hybrid model's requests also need vLLM V1's blocks: each holds its tokens' attention
  // blocks and a state block per group, from the pool its GPU leaves for caches (docs/memory.md,
  // "vLLM's hybrid blocks"), which rounds each request up to whole blocks.
  const std::optional<HybridBlocks> hybrid =
      vllm_hybrid_blocks(model, job.kv_dtype, memory, serving_split(memory, plan.tp));
  const auto fits = [&](std::int64_t concurrency) {
    const std::optional<ServePeak> at = serve_peak_of(estimator, job, concurrency);
    if (!at || at->peak > budget) return false;
    return !hybrid ||
           hybrid->blocks_in(budget - (at->peak - at->caches)) >=
               checked_mul(concurrency, hybrid->blocks_per_request(job.context), "the KV cache");
  };
  const std::optional<std::int64_t> one = serve_peak(estimator, job, 1);
  if (!one || *one > budget) {
    plan.blocker = fmt::format("one request of {} tokens does not fit {} x {}", job.context,
                               plan.tp, gpu.id);
    return plan;
  }
  if (fits(k_max_concurrency)) {
    plan.max_concurrency = k_max_concurrency;
  } else {
    // Memory grows about linearly with requests: guess from requests 1 and 2, then search.
    const std::optional<std::int64_t> two = serve_peak(estimator, job, 2);
    std::int64_t guess = 2;
    if (two && *two > *one) {
      guess = 1 + static_cast<std::int64_t>(std::min(
                      static_cast<double>(budget - *one) / static_cast<double>(*two - *one), 1e9));
    }
    plan.max_concurrency =
        search::first_true([&](std::int64_t c) { return !fits(c); }, guess + 1, 2,
                           k_max_concurrency) -
        1;
  }

  // Per-GPU quantities of one replica's step.
  const double tp = static_cast<double>(plan.tp);
  const double replicas = static_cast<double>(plan.replicas);
  const double weights = static_cast<double>(
      job.weight_bytes ? *job.weight_bytes
                       : estimator.estimate(job).breakdown.weights * plan.tp);
  const double routed_params = static_cast<double>(component_count(params, "experts"));
  const double text_params =
      static_cast<double>(std::max<std::int64_t>(1, served_params(params, false)));
  const double routed_bytes = memory.serve_expert_bytes >= 0
                                  ? static_cast<double>(memory.serve_expert_bytes)
                                  : weights * routed_params / text_params;
  if (plan.encoder) {
    plan_encoding(plan, model, params, weights, job.context, assumptions, request,
                  gpu.price_usd_per_hour);
    return plan;
  }
  const std::vector<MoeLayer> layers = moe_layers(model);
  const std::int64_t mean_context = request.context_in + request.context_out / 2;
  // One tensor-parallel rank's share of a request's cache (kv_cache_bytes: heads split, and
  // replicated past their count; an MLA latent whole on every rank).
  const KvSplit split = serving_split(memory, plan.tp);
  const double kv_per_request = static_cast<double>(
      kv_cache_bytes(model, std::max<std::int64_t>(1, mean_context), job.kv_dtype, split));
  const double state_per_request = static_cast<double>(
      ssm_state_bytes(model, effective_ssm_dtype(model, memory), memory.conv_state_bytes, split));
  const double decode_flops = decode_token_flops(model, params, std::max<std::int64_t>(1, mean_context)).total();
  const double prompt_flops = prefill_flops(model, params, request.context_in);
  const double out = static_cast<double>(request.context_out);

  // `concurrency` requests on each replica; the point reports every replica's together.
  const auto point_at = [&](std::int64_t concurrency) {
    ServingPoint point;
    point.concurrency = concurrency * plan.replicas;
    const double b = static_cast<double>(concurrency);
    // B/O prompts start per step on average. Below one per step, a share f = B/O of the steps
    // carries a whole prompt (its chunk hits nearly every expert) and the rest decode only;
    // above, every step carries B/O prompts' tokens.
    const double prompts = b / out;
    const double prompt_tokens = static_cast<double>(request.context_in);
    const double with_prompt = std::min(1.0, prompts);
    const double prompt_step_tokens = b + prompt_tokens * prompts / std::max(with_prompt, 1e-300);
    const double share = (1 - with_prompt) * routed_share_touched(layers, b) +
                         with_prompt * routed_share_touched(layers, prompt_step_tokens);
    const double touched = weights - routed_bytes + routed_bytes * share;
    point.bytes_per_step = touched / tp + b * kv_per_request + 2 * b * state_per_request / tp;
    point.flops_per_step = (b * decode_flops + b / out * prompt_flops) / tp;
    const double memory_time = point.bytes_per_step / plan.bandwidth_bytes_per_s;
    const double compute_time = point.flops_per_step / plan.peak_flops_per_s;
    const double bound = std::max(memory_time, compute_time);
    point.step_seconds = std::max(memory_time / assumptions.serve_bandwidth_efficiency,
                                  compute_time / assumptions.serve_compute_efficiency);
    point.memory_bound = memory_time / assumptions.serve_bandwidth_efficiency >=
                         compute_time / assumptions.serve_compute_efficiency;
    point.bound_user_tokens_per_s = 1 / bound;
    point.bound_total_tokens_per_s = replicas * b / bound;
    point.user_tokens_per_s = 1 / point.step_seconds;
    point.total_tokens_per_s = replicas * b / point.step_seconds;
    return point;
  };
  sweep_points(plan, point_at, request, gpu.price_usd_per_hour);
  const double prefill_compute =
      prompt_flops / tp / (plan.peak_flops_per_s * assumptions.serve_compute_efficiency);
  const double prefill_memory =
      weights / tp / (plan.bandwidth_bytes_per_s * assumptions.serve_bandwidth_efficiency);
  plan.ttft_seconds = std::max(prefill_compute, prefill_memory);
  return plan;
}

}  // namespace trace
