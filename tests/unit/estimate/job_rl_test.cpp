// Online RL (--rl grpo: TRL's GRPOTrainer) on the tiny Llama of job_test.cpp (h = 64, 2 layers,
// 4 heads x 16, 2 kv heads, I = 128, V = 1,000, untied head; P = 202,048 parameters; 2,048
// saved values per token under flash-attn with fused norms). Every expected value is derived by
// hand in the comments (docs/memory.md, "Online RL").
//
// The step: 2 sequences of 128 tokens (96 prompt + 32 completion), full fine-tune, bf16 mixed,
// AdamW: weights 6 + gradients 4 + optimizer 8 bytes a parameter = 3,636,864 resident;
// activations 2,048 x 256 x 2 = 1,048,576; logits over the completions only, 1,000 x 64 tokens
// x 3 copies x 2 bytes = 384,000 (the residual-stream gradients of backward, 3 x 64 x 256 x 2 =
// 98,304, stay below them; AdamW's foreach temporary, 808,192, below activations + logits).
// Step total 5,069,440.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "tiny_jobs.hpp"
#include "tiny_models.hpp"
#include "trace/cost/flops.hpp"
#include "trace/cost/serving.hpp"
#include "trace/cost/training.hpp"
#include "trace/error.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/job.hpp"
#include "trace/hardware/gpu_catalog.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr std::int64_t k_params = 202'048;
constexpr std::int64_t k_resident = k_params * 18;                 // 3,636,864
constexpr std::int64_t k_step = k_resident + 1'048'576 + 384'000;  // 5,069,440

trace::JobEstimate estimate(const trace::Job& job) {
  const trace::ModelDescription model = trace::parse_model_config(trace::test::k_tiny_llama);
  return trace::estimate_job(model, trace::count_parameters(model), job);
}

trace::Job grpo_job() {
  trace::Job job = trace::test::tiny_full_job();
  job.rl = trace::OnlineRl{};
  job.rl->completion_len = 32;
  job.rl->generator = trace::Generator::vllm_server;
  return job;
}

}  // namespace

TEST_CASE("GRPO's step: the loss over the completion tokens only", "[job][rl]") {
  trace::Job job = grpo_job();
  const trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 6);
  CHECK(e.breakdown.activations == 2'048 * 256 * 2);  // prompt and completion kept for backward
  CHECK(e.breakdown.logits == 1'000 * 64 * 3 * 2);
  CHECK(e.breakdown.generation == 0);  // a vLLM server on GPUs of its own
  CHECK(trace::describe_rl(job) ==
        "GRPO 32-token completions, vLLM server (its GPUs planned apart)");
  CHECK(e.breakdown.total() == k_step);

  // fp32 training: fp32 logits (4 bytes); Liger's fused GRPO loss: none
  job.precision = trace::Precision::fp32;
  CHECK(estimate(job).breakdown.logits == 1'000 * 64 * 3 * 4);
  job.precision = trace::Precision::mixed;
  job.loss = trace::LossImpl::cut;
  CHECK(estimate(job).breakdown.logits == 0);
  job.loss = trace::LossImpl::full;

  // beta > 0: a reference model, held as DPO's: an fp32 copy under mixed precision
  job.rl->reference = true;
  CHECK(estimate(job).breakdown.weights == k_params * 10);
  CHECK(estimate(job).breakdown.logits == 1'000 * 64 * 3 * 2);  // its forward is not in the step
  // LoRA: the base without adapters (q, v at r8: 3,584 adapter parameters in bf16)
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::bf16_pure;
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::attention_qv;
  CHECK(estimate(job).breakdown.weights == k_params * 2 + 3'584 * 2);
}

TEST_CASE("GRPO generating with transformers: the generation batch's cache and prefill",
          "[job][rl]") {
  trace::Job job = grpo_job();
  job.rl->generator = trace::Generator::transformers;
  // One generation batch per optimizer step: batch 2 x accumulation 16 = 32 sequences.
  job.grad_accum = 16;
  // Cache: 2 layers x K, V x 2 kv heads x 16 x 2 bytes = 256 bytes a token, x 128 tokens x 32
  // sequences = 1,048,576. Prefill over 32 x 96 = 3,072 prompt tokens: the MLP's gate, up and
  // product (3 x 128) and output (64) beside the layer's input and residual (2 x 64), 576
  // values x 2 bytes x 3,072 = 3,538,944 (the sampler, 32 x 1,000 x 14 + 32 x 64 x 2 =
  // 452,096, is smaller). The phase: resident + 4,587,520, above the step by 3,154,944.
  const trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.generation == 3'154'944);
  CHECK(e.breakdown.total() == k_resident + 1'048'576 + 3'538'944);
  // an explicit generation batch of 2: the phase (resident + 65,536 + 221,184) stays below
  job.rl->generation_batch = 2;
  CHECK(estimate(job).breakdown.generation == 0);
  job.rl->generation_batch = 0;

  // DeepSpeed ZeRO-3 over 4 GPUs: generate() on every parameter gathered (404,096 bytes in
  // bf16) beside the shards. Resident: weights 101,024 + 202,048 + the largest layer and head
  // gathered (36,992 + 64,000) x 2 = 505,056, gradients 202,048, optimizer 404,096. The step
  // above it: 1,432,576; the phase: 4,587,520 + 404,096.
  job.gpus = 4;
  job.sharding = trace::Sharding::zero3;
  CHECK(estimate(job).breakdown.generation == 4'587'520 + 404'096 - 1'432'576);
  job.rl->zero3_gathers = false;  // ds3_gather_for_generation False, or FSDP
  CHECK(estimate(job).breakdown.generation == 4'587'520 - 1'432'576);
}

TEST_CASE("GRPO's LoRA under DeepSpeed ZeRO-3 gathers the model to merge adapters for vLLM",
          "[job][rl]") {
  // LoRA r8 on q, v in pure bf16, one sequence of 8 tokens (4 of them completion), 4 GPUs.
  // The step above what stays resident: activations 1,664 x 8 x 2 = 26,624 (the full
  // fine-tune's 2,048 values a token less, in each of the 2 layers, the frozen MLP's input 64
  // and down input 128 that no adapter reads) and the logits 1,000 x 4 x 3 x 2 = 24,000 (the
  // adapters' step temporary and backward's residual-stream gradients, 3 x 64 x 8 x 2 = 3,072,
  // below them): 50,624. Syncing into vLLM merges the adapters with every parameter gathered,
  // 202,048 x 2 = 404,096 bytes: 353,472 above the step.
  trace::Job job = grpo_job();
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::bf16_pure;
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::attention_qv;
  job.seq_len = 8;
  job.batch = 1;
  job.rl->completion_len = 4;
  job.gpus = 4;
  job.sharding = trace::Sharding::zero3;
  CHECK(estimate(job).breakdown.generation == 404'096 - 50'624);
  job.rl->zero3_gathers = false;  // FSDP: module by module
  CHECK(estimate(job).breakdown.generation == 0);
  // QLoRA (fused 4-bit kernels, keeping what LoRA keeps): the base gathered stays packed, its
  // nf4 Linears 36,864 bytes + absmax 1,152 + code books 15,288 (job_test.cpp) and the other
  // 128,320 parameters in bf16: 309,944 bytes, 253,176 above the step
  job.rl->zero3_gathers = true;
  job.mode = trace::JobMode::qlora;
  job.bnb_matmul_keeps_inputs = false;
  CHECK(estimate(job).breakdown.generation == 309'944 - 56'768);
  job.mode = trace::JobMode::lora;
  job.bnb_matmul_keeps_inputs = true;
  // a full fine-tune syncs parameter by parameter: nothing gathered whole
  job.rl->zero3_gathers = true;
  job.mode = trace::JobMode::full;
  job.precision = trace::Precision::mixed;
  CHECK(estimate(job).breakdown.generation == 0);
}

TEST_CASE("GRPO with a colocated vLLM engine: its share of the card, awake or asleep",
          "[job][rl]") {
  trace::Job job = grpo_job();
  job.rl->generator = trace::Generator::vllm_colocate;
  job.rl->engine_bytes = 10'000'000;
  // awake through the step: the engine's share on top of it
  CHECK(estimate(job).breakdown.generation == 10'000'000);
  CHECK(estimate(job).breakdown.total() == k_step + 10'000'000);
  // asleep while the policy trains: the generation phase, resident + engine, above the step by
  // 3,636,864 + 10,000,000 - 5,069,440 = 8,567,424
  job.rl->engine_sleeps = true;
  CHECK(estimate(job).breakdown.generation == 8'567'424);
  CHECK(estimate(job).breakdown.total() == k_resident + 10'000'000);
}

TEST_CASE("the longest GRPO sequence that fits is searched from the completion up",
          "[job][rl][fit]") {
  const trace::ModelDescription model = trace::parse_model_config(trace::test::k_tiny_llama);
  const trace::ParameterCount params = trace::count_parameters(model);
  const trace::JobEstimator estimator(model, params);
  const std::int64_t context = estimator.assumptions().cuda_context_bytes;
  trace::Job job = grpo_job();  // 32-token completions
  const auto peak_at = [&](std::int64_t seq_len) {
    trace::Job at = job;
    at.seq_len = seq_len;
    return estimator.estimate(at).breakdown.total() + context;
  };
  // A budget that holds 64 tokens, not the job's 4,096: the answer lies between, and is exact.
  job.seq_len = 4'096;
  const std::int64_t budget = peak_at(64);
  const std::int64_t longest = trace::largest_fitting(estimator, job, trace::JobKnob::seq_len,
                                                      trace::k_max_training_seq_len, budget);
  CHECK(longest >= 64);
  CHECK(longest < 4'096);
  CHECK(peak_at(longest) <= budget);
  CHECK(peak_at(longest + 1) > budget);
  // Below the completion no sequence exists: a budget short of 32 tokens' peak gives 0.
  CHECK(trace::largest_fitting(estimator, job, trace::JobKnob::seq_len,
                               trace::k_max_training_seq_len, peak_at(32) - 1) == 0);
}

TEST_CASE("GRPO's run: the training FLOPs, and the generation timed by the serving roofline",
          "[cost][rl]") {
  const trace::ModelDescription model = trace::parse_model_config(trace::test::k_tiny_llama);
  const trace::ParameterCount params = trace::count_parameters(model);
  // At 8 tokens (flops_test.cpp): forward 278,400 per token, a full step 3 x = 835,200; beta > 0
  // adds the reference's forward over every generated sequence: 1,113,600.
  trace::Job job = grpo_job();
  job.seq_len = 8;
  job.rl->completion_len = 4;
  CHECK(trace::training_flops(model, params, job).per_token == Approx(835'200));
  job.rl->reference = true;
  CHECK(trace::training_flops(model, params, job).per_token == Approx(1'113'600));
  CHECK(trace::training_flops(model, params, job).reference_per_token == Approx(278'400));

  // 1,000 completions of 128 tokens (96 prompt + 32 completion), one epoch: 128,000 tokens. One
  // H100 holds the tiny job; it generates 2 x 16 = 32 sequences per optimizer step: 128,000 /
  // (32 x 128) = 31.25 generations of 32 decode steps each.
  const trace::GpuCatalog& catalog = trace::builtin_gpu_catalog();
  const trace::GpuSpec* h100 = trace::find_gpu(catalog, "h100-80gb");
  REQUIRE(h100 != nullptr);
  job = grpo_job();
  job.grad_accum = 16;
  job.rl->generator = trace::Generator::vllm_colocate;
  job.rl->engine_bytes = 1LL << 30;
  const trace::RunSize size = trace::run_size_from_samples(1'000, 128, 1);
  const trace::MemoryAssumptions memory;
  const trace::CostAssumptions cost;
  const trace::TrainingPlan grpo =
      trace::plan_training(model, params, job, size, memory, cost, {h100});
  REQUIRE(grpo.runs.size() == 1);
  const trace::TrainingRun& run = grpo.runs.front();
  REQUIRE(run.runs());
  CHECK(run.gpus == 1);
  CHECK(run.generations == Approx(31.25));
  // the step: the serving roofline at 32 sequences of 96 + 32 tokens, on one GPU in bf16
  trace::Job serve;
  serve.mode = trace::JobMode::serve;
  serve.base_dtype = trace::Dtype::bf16;
  serve.context = 128;
  serve.concurrency = 32;
  trace::ServingRequest request;
  request.context_in = 96;
  request.context_out = 32;
  request.extra_concurrency = {32};
  const trace::ServingPlan serving =
      trace::plan_serving(model, params, serve, memory, cost, request, *h100);
  REQUIRE(serving.requested_points.size() == 1);
  const double step = serving.requested_points.front().step_seconds;
  CHECK(run.generation_step_seconds == Approx(step));
  CHECK(run.generation_hours == Approx(31.25 * 32 * step / 3600));
  // on top of the training FLOPs' time, which is the supervised job's
  trace::Job supervised = job;
  supervised.rl.reset();
  const trace::TrainingPlan sft =
      trace::plan_training(model, params, supervised, size, memory, cost, {h100});
  CHECK(run.hours == Approx(sft.runs.front().hours + run.generation_hours));
}

TEST_CASE("GRPO settings out of place are bad input", "[job][rl][bad_input]") {
  CHECK(trace::parse_generator("vllm-colocate") == trace::Generator::vllm_colocate);
  CHECK(trace::parse_generator("server") == trace::Generator::vllm_server);
  CHECK(trace::parse_generator("HF") == trace::Generator::transformers);
  CHECK_FALSE(trace::parse_generator("sglang").has_value());

  trace::Job job = grpo_job();
  job.rl->completion_len = 129;  // longer than prompt + completion
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job.rl->completion_len = 0;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job = grpo_job();
  job.mode = trace::JobMode::serve;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job = grpo_job();
  job.preference = trace::Preference::dpo;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job = grpo_job();
  job.rl->generator = trace::Generator::vllm_colocate;  // no card, no share
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job.rl->generator = trace::Generator::transformers;
  job.rl->engine_sleeps = true;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job = grpo_job();
  job.reference_dtype = trace::Dtype::bf16;  // no reference without beta
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job.rl->reference = true;
  CHECK_NOTHROW(trace::validate_job(job));
}

TEST_CASE("trace --rl grpo: the job line, JSON and check", "[cli][rl]") {
  // Llama-3.1-8B (vocabulary 128,256), LoRA, 4 sequences of 1,024 tokens with 256-token
  // completions: logits 128,256 x 256 x 4 x 3 copies x 2 bytes = 788,004,864. A colocated
  // engine takes 0.3 of the H100's 85,040,352,461 usable bytes: 25,512,105,738.
  auto run = trace::test::run_cli_offline(
      {"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb", "--mode", "lora", "--seq-len",
       "1024", "--batch", "4", "--rl", "grpo", "--generator", "vllm-colocate", "--json"});
  INFO(run.err);
  REQUIRE((run.exit_code == 0 || run.exit_code == 1));
  const nlohmann::json check = nlohmann::json::parse(run.out);
  CHECK(check["breakdown"]["logits"] == 788'004'864LL);
  CHECK(check["breakdown"]["generation"] == 25'512'105'738LL);
  CHECK(check["rl"]["kind"] == "grpo");
  CHECK(check["rl"]["generator"] == "vllm-colocate");
  CHECK(check["rl"]["completion_tokens"] == 256);
  CHECK(check["rl"]["engine_bytes"] == 25'512'105'738LL);
  CHECK(check["read_as"].get<std::string>().find("GRPO 256-token completions, vLLM colocated") !=
        std::string::npos);

  // the same share asleep through the step costs nothing there: the step is the peak
  run = trace::test::run_cli_offline({"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb",
                                      "--mode", "lora", "--seq-len", "1024", "--batch", "4", "--rl",
                                      "grpo", "--generator", "vllm-colocate", "--vllm-sleep",
                                      "--json"});
  CHECK(nlohmann::json::parse(run.out)["breakdown"]["generation"] == 0);

  // At 0.15 the engine's share, 12,756,052,869 bytes, is below its bf16 weights alone
  // (8,030,261,248 x 2 = 16,060,522,496): vLLM would not start, whatever the step needs.
  run = trace::test::run_cli_offline({"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb",
                                      "--mode", "lora", "--seq-len", "1024", "--batch", "4", "--rl",
                                      "grpo", "--generator", "vllm-colocate",
                                      "--vllm-memory-utilization", "0.15", "--json"});
  CHECK(run.exit_code == 1);
  const nlohmann::json refused = nlohmann::json::parse(run.out);
  CHECK(refused["fits"] == false);
  CHECK(refused["rl"]["engine_bytes"] == 12'756'052'869LL);
  CHECK(refused["refusal"].get<std::string>().find("raise --vllm-memory-utilization") !=
        std::string::npos);
  CHECK(check.value("refusal", std::string()).empty());  // 0.3: 25.5 GB holds it

  // the plan's table gets a generation column, and the run its generation time
  run = trace::test::run_cli_offline({"meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb", "--rl",
                                      "grpo", "--generator", "vllm-colocate"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("| generation") == std::string::npos);  // a text table, not Markdown
  CHECK(run.out.find(" generation\n") != std::string::npos);  // the memory table's last column
  CHECK(run.out.find("TRAINING RUN (LoRA r16, GRPO)") != std::string::npos);
  CHECK(run.out.find("h100-80gb generation: ") != std::string::npos);
  // a vLLM server's GPUs set the generation time: the run is not priced
  run = trace::test::run_cli_offline({"meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb", "--rl",
                                      "grpo", "--generator", "vllm-server"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("TRAINING RUN") == std::string::npos);
  CHECK(run.out.find("GRPO with a vLLM server: no training-run time or cost") !=
        std::string::npos);

  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--mode", "full", "--rl", "ppo"},
           {"--mode", "full", "--generator", "vllm-server"},  // GRPO's flag without --rl
           {"--mode", "serve", "--rl", "grpo"},
           {"--mode", "full", "--rl", "grpo", "--preference", "dpo"},
           {"--mode", "full", "--rl", "grpo", "--completion-len", "4096"},
           {"--mode", "full", "--rl", "grpo", "--generator", "sglang"},
           {"--mode", "full", "--rl", "grpo", "--vllm-sleep"},
           {"--mode", "full", "--rl", "grpo", "--beta", "-1"},
           {"--mode", "full", "--rl", "grpo", "--generator", "vllm-colocate",
            "--vllm-memory-utilization", "1.5"}}) {
    std::vector<std::string> args = {"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb"};
    args.insert(args.end(), bad.begin(), bad.end());
    run = trace::test::run_cli_offline(args);
    INFO(run.err);
    CHECK(run.exit_code == 2);
  }
  // a colocated engine without one card to take its share of
  run = trace::test::run_cli_offline({"meta-llama/Llama-3.1-8B", "--mode", "full", "--rl", "grpo",
                                      "--generator", "vllm-colocate"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("give one --gpu") != std::string::npos);
}
