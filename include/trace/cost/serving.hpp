#pragma once
/// Serving throughput on one card type: a roofline per decode step, max(bytes read / bandwidth,
/// FLOPs / peak), swept over concurrency up to what memory holds. Formulas: docs/cost.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/cost/training.hpp"
#include "trace/estimate/job.hpp"
#include "trace/hardware/gpu_catalog.hpp"

namespace trace {

struct ServingRequest {
  std::int64_t context_in = 1024;   ///< prompt tokens per request
  std::int64_t context_out = 1024;  ///< generated tokens per request
  std::int64_t gpus = 1;            ///< cards in the deployment (a node, or several)
  /// Tensor-parallel size of one replica (0: all `gpus`); gpus / tp replicas serve side by side.
  std::int64_t tp = 0;
  double min_user_tps = 0;          ///< "best" needs every user at least this fast
  /// Concurrencies evaluated besides the sweep, whether or not memory holds them
  /// (ServingPlan::requested_points; `trace throughput` reads a measured row's there).
  std::vector<std::int64_t> extra_concurrency;
};

/// Throws ConfigError naming the flag when a value is out of range.
void validate_serving_request(const ServingRequest& request);

/// One concurrency level: B requests decoding together at the mean context I + O/2, each
/// step also doing B/O requests' prefill (chunked prefill piggybacks on decode steps).
struct ServingPoint {
  std::int64_t concurrency = 0;
  double step_seconds = 0;        ///< expected (efficiencies applied)
  double user_tokens_per_s = 0;   ///< expected: 1 / step
  double total_tokens_per_s = 0;  ///< expected: concurrency / step
  double bound_user_tokens_per_s = 0;   ///< the roofline bound (peak bandwidth and FLOP/s)
  double bound_total_tokens_per_s = 0;
  double bytes_per_step = 0;  ///< per GPU: weights touched + KV read + SSM state read and written
  double flops_per_step = 0;  ///< per GPU
  bool memory_bound = true;   ///< the bandwidth side is the longer one
};

struct ServingPlan {
  std::string gpu;
  std::string name;
  std::int64_t gpus = 1;
  std::int64_t tp = 1;                ///< cards per replica
  std::int64_t replicas = 1;          ///< gpus / tp; concurrency and totals count all of them
  std::string compute_dtype;
  double peak_flops_per_s = 0;        ///< per GPU
  double bandwidth_bytes_per_s = 0;   ///< per GPU
  std::int64_t max_concurrency = 0;   ///< requests of I + O tokens that fit memory (0: none)
  double ttft_seconds = 0;            ///< expected prefill of one request alone
  std::vector<ServingPoint> points;
  std::vector<ServingPoint> requested_points;  ///< one per ServingRequest::extra_concurrency
  std::optional<ServingPoint> best;   ///< highest total with every user >= min_user_tps
  std::optional<double> usd_per_million_tokens;  ///< output tokens, at best
  double price_usd_per_hour = 0;      ///< per GPU
  std::string blocker;                ///< why nothing can be served (empty when something can)
  /// An encoder-only model: each request is one sequence of context_in tokens encoded in one
  /// forward pass over the batch; a point's concurrency is the batch, its step the batch's
  /// latency, tokens per second count the tokens encoded (no output tokens).
  bool encoder = false;
};

/// The weights, KV and SSM dtypes come from `serve_job` (weight_bytes, kv_dtype) and `memory`
/// (SSM dtype, CUDA context, headroom); `serve_job.mode` must be serve.
ServingPlan plan_serving(const ModelDescription& model, const ParameterCount& params,
                         const Job& serve_job, const MemoryAssumptions& memory,
                         const CostAssumptions& assumptions, const ServingRequest& request,
                         const GpuSpec& gpu);
/// The same over an estimator the caller reuses across cards (the memory assumptions are its).
ServingPlan plan_serving(const JobEstimator& estimator, const Job& serve_job,
                         const CostAssumptions& assumptions, const ServingRequest& request,
                         const GpuSpec& gpu);

/// The expected number of distinct routed experts (of `experts`, `top_k` per token) that
/// `tokens` tokens hit, routing uniform: experts x (1 - (1 - top_k / experts)^tokens).
double expected_experts_hit(std::int64_t experts, std::int64_t top_k, double tokens);

/// The compute format serving runs in: the checkpoint's low-precision format where the card
/// runs it natively (NVFP4 / MXFP4 on Blackwell, FP8 on Ada / Hopper and later), otherwise
/// bf16 (fp16 on cards without bf16), as weight-only kernels dequantize.
/// `memory`: serve_weight_bytes >= 0 means the checkpoint's own format, else
/// serve_weight_dtype (--dtype).
ComputeDtype serving_compute_dtype(const ModelDescription& model, const MemoryAssumptions& memory,
                                   const GpuSpec& gpu);

}  // namespace trace
