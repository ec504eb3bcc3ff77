// Training time and serving throughput on hand-made cards, every number derived by hand below
// (docs/cost.md). The tiny dense Llama of flops_test.cpp: 202,048 parameters, matmul 276,096
// FLOPs per token, attention 256 FLOPs per key over 2 layers, KV 2 x 2 kv heads x 16 x 2 layers
// x 2 bytes = 256 bytes per token in bf16.

#include <cmath>

#include "catch.hpp"
#include "tiny_models.hpp"
#include "trace/cost/serving.hpp"
#include "trace/cost/training.hpp"
#include "trace/error.hpp"
#include "trace/model/model_config.hpp"

namespace {

const char* const k_dense = trace::test::k_tiny_llama;

// 1 TB/s, 100 TFLOP/s bf16, 900 GB/s links, 1 TiB usable, $2/h.
trace::GpuSpec test_card() {
  trace::GpuSpec gpu;
  gpu.id = "test-card";
  gpu.name = "Test card";
  gpu.memory_bytes_marketed = gpu.memory_bytes_usable = 1LL << 40;
  gpu.memory_bandwidth_bytes_per_s = 1'000'000'000'000;
  gpu.bf16_tflops = 100;
  gpu.interconnect_bytes_per_s = 900'000'000'000;
  gpu.price_usd_per_hour = 2.0;
  return gpu;
}

}  // namespace

TEST_CASE("expected distinct experts hit by a batch", "[cost][serving]") {
  // 8 experts, top-2: one token hits 2; two tokens miss an expert with (6/8)^2 = 0.5625.
  CHECK(trace::expected_experts_hit(8, 2, 1) == Approx(2.0));
  CHECK(trace::expected_experts_hit(8, 2, 2) == Approx(8 * (1 - 0.5625)));
  CHECK(trace::expected_experts_hit(8, 2, 1e6) == Approx(8.0));
  CHECK(trace::expected_experts_hit(0, 2, 4) == 0);
}

TEST_CASE("decode bound: bandwidth arithmetic at one user", "[cost][serving]") {
  const trace::ModelDescription model = trace::parse_model_config(k_dense);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.weight_bytes = 404'096;  // 202,048 x 2 bytes
  job.kv_dtype = trace::Dtype::bf16;
  trace::ServingRequest request;
  request.context_in = 8;
  request.context_out = 8;
  const trace::GpuSpec gpu = test_card();
  trace::CostAssumptions efficiency;
  efficiency.serve_bandwidth_efficiency = 0.5;
  efficiency.serve_compute_efficiency = 0.5;
  const trace::ServingPlan plan =
      trace::plan_serving(model, params, job, trace::MemoryAssumptions{}, efficiency, request, gpu);
  REQUIRE(plan.blocker.empty());
  REQUIRE_FALSE(plan.points.empty());
  const trace::ServingPoint& one = plan.points.front();
  CHECK(one.concurrency == 1);
  // Bytes per step: weights 404,096 + KV at the mean context 8 + 8/2 = 12 tokens x 256 = 3,072.
  CHECK(one.bytes_per_step == Approx(407'168));
  // FLOPs per step: decode at 12 = 276,096 + 2 x 256 x 12 = 282,240, plus one-eighth of the
  // prompt's prefill 8 x (276,096 + 2 x 256 x 4.5) / 8 = 278,400: 560,640.
  CHECK(one.flops_per_step == Approx(560'640));
  // Memory time 407,168 / 1e12 s beats compute time 560,640 / 1e14 s: the bound is 1 / 4.07168e-7.
  CHECK(one.bound_user_tokens_per_s == Approx(1e12 / 407'168.0));
  CHECK(one.memory_bound);
  // Expected: half the bandwidth.
  CHECK(one.user_tokens_per_s == Approx(0.5e12 / 407'168.0));
  // With 1 TiB the memory cap is far away: the sweep stops at the 2^20 concurrency limit.
  CHECK(plan.max_concurrency == (1 << 20));
  REQUIRE(plan.best);
  // Past the ridge every user adds 560,640 FLOPs per step: the total saturates at
  // 0.5 x 1e14 / 560,640 tokens/s, and the best point is the first to reach it.
  CHECK(plan.best->total_tokens_per_s == Approx(0.5e14 / 560'640.0));
  CHECK_FALSE(plan.best->memory_bound);
  CHECK(plan.points.back().total_tokens_per_s == Approx(plan.best->total_tokens_per_s));
  // $2 per hour / (tokens per second x 3,600) x 10^6.
  CHECK(*plan.usd_per_million_tokens ==
        Approx(2.0 / (plan.best->total_tokens_per_s * 3600) * 1e6));
}

TEST_CASE("serving: the memory cap and --min-user-tps pick the best point", "[cost][serving]") {
  const trace::ModelDescription model = trace::parse_model_config(k_dense);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.weight_bytes = 404'096;
  trace::MemoryAssumptions memory;
  memory.cuda_context_bytes = 0;
  memory.headroom_fraction = 0;
  memory.prefill_chunk_tokens = 0;
  memory.max_num_seqs = 0;  // generate(): the sampler covers only the running requests
  memory.cuda_graph_bytes = 0;  // and captures no CUDA graphs
  trace::GpuSpec gpu = test_card();
  // A card with room for the weights, the logits and a handful of requests; the cap must be the
  // largest count whose estimate fits, and the next one must not.
  gpu.memory_bytes_usable = gpu.memory_bytes_marketed = 1'000'000;
  trace::ServingRequest request;
  request.context_in = 8;
  request.context_out = 8;
  const trace::ServingPlan plan =
      trace::plan_serving(model, params, job, memory, trace::CostAssumptions{}, request, gpu);
  REQUIRE(plan.blocker.empty());
  const auto peak = [&](std::int64_t concurrency) {
    trace::Job at = job;
    at.context = 16;
    at.concurrency = concurrency;
    return trace::estimate_job(model, params, at, memory).breakdown.total();
  };
  CHECK(peak(plan.max_concurrency) <= 1'000'000);
  CHECK(peak(plan.max_concurrency + 1) > 1'000'000);
  // The sweep is 1, 2, 4, ... and the cap; throughput grows with users, speed per user falls.
  REQUIRE(plan.points.size() >= 2);
  CHECK(plan.points.back().concurrency == plan.max_concurrency);
  CHECK(plan.points.back().total_tokens_per_s > plan.points.front().total_tokens_per_s);
  // Demanding more per-user speed than the single-user point gives leaves no best point.
  request.min_user_tps = plan.points.front().user_tokens_per_s * 2;
  const trace::ServingPlan strict =
      trace::plan_serving(model, params, job, memory, trace::CostAssumptions{}, request, gpu);
  CHECK_FALSE(strict.best);
  CHECK_FALSE(strict.usd_per_million_tokens);
}

TEST_CASE("training run: hours and dollars from FLOPs, peak and MFU", "[cost][training]") {
  const trace::ModelDescription model = trace::parse_model_config(k_dense);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::Job job;
  job.mode = trace::JobMode::full;
  const trace::RunSize size = trace::run_size_from_samples(1'000'000, 8, 3);
  CHECK(size.tokens == 24'000'000);
  const trace::GpuSpec gpu = test_card();
  trace::CostAssumptions cost;
  cost.training_mfu = 0.5;
  const trace::TrainingPlan plan = trace::plan_training(
      model, params, job, size, trace::MemoryAssumptions{}, cost, {&gpu});
  REQUIRE(plan.runs.size() == 1);
  const trace::TrainingRun& run = plan.runs.front();
  REQUIRE(run.runs());
  CHECK(run.gpus == 1);
  // 24e6 tokens x 835,200 FLOPs = 2.00448e13 FLOPs; / (1e14 x 0.5) = 0.400896 s.
  CHECK(run.flops == Approx(2.00448e13));
  CHECK(run.hours == Approx(0.400896 / 3600));
  CHECK(*run.usd == Approx(0.400896 / 3600 * 2.0));
}

TEST_CASE("training run: cards without the compute dtype or the memory are named", "[cost][training]") {
  const trace::ModelDescription model = trace::parse_model_config(k_dense);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::Job job;
  job.mode = trace::JobMode::full;
  trace::GpuSpec fp16_only = test_card();
  fp16_only.id = "fp16-only";
  fp16_only.bf16_tflops.reset();
  fp16_only.fp16_tflops = 50;
  trace::GpuSpec tiny = test_card();
  tiny.id = "tiny";
  tiny.memory_bytes_usable = tiny.memory_bytes_marketed = 1 << 20;  // below the CUDA context
  const trace::TrainingPlan plan =
      trace::plan_training(model, params, job, trace::default_run_size(8),
                           trace::MemoryAssumptions{}, trace::CostAssumptions{}, {&fp16_only, &tiny});
  REQUIRE(plan.runs.size() == 2);
  CHECK_FALSE(plan.runs[0].runs());
  CHECK(plan.runs[0].blocker.find("no native bf16") != std::string::npos);
  CHECK_FALSE(plan.runs[1].runs());
  CHECK(plan.runs[1].blocker.find("even on 4096 cards") != std::string::npos);
  // A card without an interconnect (Apple's) runs what fits one card, nothing sharded.
  trace::GpuSpec island = test_card();
  island.id = "island";
  island.interconnect_bytes_per_s = 0;
  trace::MemoryAssumptions no_context;
  no_context.cuda_context_bytes = 0;
  const trace::JobEstimator estimator(model, params, no_context);
  trace::Job two = job;
  two.seq_len = 8;
  two.gpus = 2;
  two.sharding = trace::Sharding::zero3;
  // Usable memory between the 2-card and the 1-card peak: fits only sharded.
  trace::Job one = two;
  one.gpus = 1;
  one.sharding = trace::Sharding::single;
  island.memory_bytes_usable = island.memory_bytes_marketed =
      (estimator.estimate(two).breakdown.total() + estimator.estimate(one).breakdown.total()) / 2;
  trace::MemoryAssumptions exact = no_context;
  exact.headroom_fraction = 0;
  const trace::TrainingPlan sharded = trace::plan_training(
      model, params, job, trace::run_size_from_tokens(1000, 8), exact, trace::CostAssumptions{},
      {&island});
  REQUIRE(sharded.runs.size() == 1);
  CHECK_FALSE(sharded.runs[0].runs());
  CHECK(sharded.runs[0].blocker.find("no interconnect") != std::string::npos);
  // The default run: 50,000 x 8 x 10.
  CHECK(plan.size.tokens == 4'000'000);
  CHECK(plan.size.is_default);
}

TEST_CASE("training: ZeRO-3 card count is the first that fits", "[cost][training]") {
  const trace::ModelDescription model = trace::parse_model_config(k_dense);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::Job job;
  job.mode = trace::JobMode::full;
  job.seq_len = 8;
  trace::MemoryAssumptions memory;
  memory.cuda_context_bytes = 0;
  const auto peak = [&](std::int64_t gpus) {
    trace::Job at = job;
    at.gpus = gpus;
    at.sharding = gpus > 1 ? trace::Sharding::zero3 : trace::Sharding::single;
    return trace::estimate_job(model, params, at, memory).breakdown.total();
  };
  // A budget between the 3-card and the 2-card peaks must answer 3.
  const std::int64_t budget = (peak(2) + peak(3)) / 2;
  REQUIRE(peak(3) <= budget);
  REQUIRE(peak(2) > budget);
  std::int64_t at_answer = 0;
  const trace::JobEstimator estimator(model, params, memory);
  CHECK(trace::smallest_fitting_gpus(estimator, job, budget, &at_answer) == 3);
  CHECK(at_answer == peak(3));
  // Nothing fits a budget below the per-card floor.
  CHECK_FALSE(trace::smallest_fitting_gpus(estimator, job, 1000));
}

TEST_CASE("cost inputs out of range are refused", "[cost]") {
  trace::CostAssumptions cost;
  cost.training_mfu = 0;
  CHECK_THROWS_AS(trace::validate_cost_assumptions(cost), trace::ConfigError);
  cost.training_mfu = 1.5;
  CHECK_THROWS_AS(trace::validate_cost_assumptions(cost), trace::ConfigError);
  trace::ServingRequest request;
  request.context_out = 0;
  CHECK_THROWS_AS(trace::validate_serving_request(request), trace::ConfigError);
  CHECK_THROWS_AS(trace::run_size_from_samples(1LL << 40, 1LL << 20, 1LL << 20), trace::ConfigError);
  CHECK_THROWS_AS(trace::run_size_from_samples(0, 8, 1), trace::ConfigError);
}

TEST_CASE("MoE decode reads the experts a step's tokens hit", "[cost][serving]") {
  // Tiny Mixtral: hidden 64, 1 layer, 4 heads x 16 (4 kv heads), 8 experts top-2 of width 32,
  // vocab 100, untied. Parameters: embedding 6,400 + attention 16,384 + router 512 + experts
  // 8 x 3 x 64 x 32 = 49,152 + norms 128 + final norm 64 + head 6,400 = 79,040.
  const trace::ModelDescription model = trace::parse_model_config(trace::test::k_tiny_mixtral);
  const trace::ParameterCount params = trace::count_parameters(model);
  REQUIRE(params.total == 79'040);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.weight_bytes = 158'080;  // bf16
  trace::ServingRequest request;
  request.context_in = 8;
  request.context_out = 8;
  const trace::ServingPlan plan = trace::plan_serving(
      model, params, job, trace::MemoryAssumptions{}, trace::CostAssumptions{}, request,
      test_card());
  REQUIRE_FALSE(plan.points.empty());
  // One user: a prompt every 8 steps. 7 of 8 steps decode one token (2 of 8 experts: share
  // 0.25); 1 of 8 carries the 8-token prompt too, 9 tokens: share 1 - 0.75^9 = 0.924915.
  // Mean share 0.875 x 0.25 + 0.125 x 0.924915 = 0.334364.
  // Routed bytes 158,080 x 49,152 / 79,040 = 98,304; the rest 59,776 is read whole.
  // KV: 2 x 4 heads x 16 x 2 bytes = 256 bytes per token x the mean context 12 = 3,072.
  const double share = 0.875 * 0.25 + 0.125 * (1 - std::pow(0.75, 9));
  CHECK(plan.points.front().bytes_per_step == Approx(59'776 + 98'304 * share + 3'072));
}
