// vLLM V1's hybrid KV cache blocks (docs/memory.md, "vLLM's hybrid blocks"), against the numbers
// vLLM itself logged, and on a tiny hybrid derived by hand.
#include "trace/estimate/engine_blocks.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "test_data.hpp"
#include "tiny_models.hpp"
#include "trace/cost/serving.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/job.hpp"
#include "trace/model/model_config.hpp"

TEST_CASE("Qwen3.5-27B's hybrid blocks give what vLLM logged (issue #40691)", "[engine][kv]") {
  // 64 layers: 48 Gated DeltaNet (48 value heads, 16 key heads of 128, conv kernel 4) and 16
  // full-attention layers (4 KV heads of 256), the recurrent state in fp32 (mamba_ssm_dtype).
  //   state page: conv 3 x (2 x 16 x 128 + 48 x 128) x 2 bytes = 61,440 + recurrent
  //   48 x 128 x 128 x 4 bytes = 3,145,728: 3,207,168 bytes;
  //   attention, one token, one layer: 2 x 4 x 256 x 2 bytes = 4,096;
  //   block: 16 x ceil(3,207,168 / (16 x 4,096)) = 16 x 49 = 784 tokens, page 3,211,264 bytes;
  //   groups: 16 layers each (48 is not under 1.5 x 16), 1 attention + 3 state.
  const trace::ModelDescription model = trace::test::fixture("Qwen--Qwen3.5-27B.json");
  const std::optional<trace::HybridBlocks> blocks =
      trace::vllm_hybrid_blocks(model, trace::Dtype::bf16, trace::Dtype::fp32, 2, {});
  REQUIRE(blocks.has_value());
  CHECK(blocks->block_tokens == 784);
  CHECK(blocks->page_bytes == 3'211'264);
  CHECK(blocks->group_layers == 16);
  CHECK(blocks->attention_groups == 1);
  CHECK(blocks->state_groups == 3);
  CHECK(blocks->block_bytes() == 16 * 3'211'264);
  // vLLM v0.19.0 at max_model_len 32,768 logged "290,864 tokens" and "33.04x" from 1,487
  // blocks: a request holds ceil(32,768 / 784) = 42 attention blocks + 3 state blocks = 45;
  // 1,487 / 45 = 33.04; its token line is blocks // groups x block size = 371 x 784.
  CHECK(blocks->blocks_per_request(32'768) == 45);
  CHECK(1'487.0 / static_cast<double>(blocks->blocks_per_request(32'768)) ==
        Approx(33.04).margin(0.005));
  CHECK(1'487 / (blocks->attention_groups + blocks->state_groups) * blocks->block_tokens ==
        290'864);

  // Over 4 tensor-parallel ranks each holds a quarter of the heads: state page 15,360 + 786,432
  // = 801,792; one token 2 x 1 x 256 x 2 = 1,024; block 16 x ceil(801,792 / 16,384) = 784.
  trace::KvSplit tp4;
  tp4.tp = 4;
  const std::optional<trace::HybridBlocks> split =
      trace::vllm_hybrid_blocks(model, trace::Dtype::bf16, trace::Dtype::fp32, 2, tp4);
  REQUIRE(split.has_value());
  CHECK(split->block_tokens == 784);
  CHECK(split->page_bytes == 802'816);
}

TEST_CASE("hybrid blocks: group sizes, sliding windows, models without both kinds",
          "[engine][kv]") {
  // A tiny Nemotron-H: 3 Mamba-2 layers, 2 attention layers, 2 MLPs. Mamba-2: 4 heads x 8,
  // d_state 16, 1 group, conv kernel 4: conv 3 x (32 + 2 x 16) x 2 = 384 bytes, state
  // 4 x 8 x 16 x 4 = 2,048: page 2,432. Attention: 2 KV heads x 8: 2 x 2 x 8 x 2 = 64 a token.
  // Block: 16 x ceil(2,432 / 1,024) = 48 tokens, page 3,072. Groups: 3 is not under 1.5 x 2,
  // so 2 layers each: 1 attention group, 2 state groups (the last padded).
  const char* const tiny = trace::test::k_tiny_nemotron_h;
  const trace::ModelDescription model = trace::parse_model_config(tiny);
  const std::optional<trace::HybridBlocks> blocks =
      trace::vllm_hybrid_blocks(model, trace::Dtype::bf16, trace::Dtype::fp32, 2, {});
  REQUIRE(blocks.has_value());
  CHECK(blocks->block_tokens == 48);
  CHECK(blocks->page_bytes == 3'072);
  CHECK(blocks->group_layers == 2);
  CHECK(blocks->attention_groups == 1);
  CHECK(blocks->state_groups == 2);
  CHECK(blocks->blocks_per_request(100) == 3 + 2);  // ceil(100 / 48) attention + 2 state

  // A model without state layers (or without attention) has no hybrid layout.
  const trace::ModelDescription dense =
      trace::test::fixture("Qwen--Qwen2.5-14B.reconstructed.json");
  CHECK_FALSE(
      trace::vllm_hybrid_blocks(dense, trace::Dtype::bf16, trace::Dtype::fp32, 2, {}).has_value());
}

TEST_CASE("the plan shows a hybrid's vLLM blocks and when max_num_seqs is refused",
          "[engine][kv][cli]") {
  const std::string qwen = trace::test::config_path("Qwen--Qwen3.5-27B.json");
  auto run = trace::test::run_cli_offline(
      {qwen, "--gpu", "h100-80gb", "--context", "32k", "--max-num-seqs", "1024", "--json"});
  REQUIRE(run.exit_code == 0);
  const nlohmann::json plan = nlohmann::json::parse(run.out);
  const nlohmann::json& blocks = plan["estimate"]["vllm_hybrid_blocks"];
  CHECK(blocks["block_tokens"] == 784);
  CHECK(blocks["group_layers"] == 16);
  CHECK(blocks["blocks_per_request"] == 45);  // as vLLM's 33.04x above: 42 + 3
  CHECK(blocks["block_bytes"] == 16 * 3'211'264);
  // the blocks the pool holds, and the requests they hold
  CHECK(blocks["blocks"] == blocks["pool_bytes"].get<std::int64_t>() / (16 * 3'211'264));
  CHECK(blocks["max_requests"] == blocks["blocks"].get<std::int64_t>() / 45);
  CHECK(blocks["max_num_seqs_starts"] == false);
  bool noted = false;
  for (const auto& note : plan["notes"]) {
    noted = noted || note.get<std::string>().find("vLLM V1 would refuse") != std::string::npos;
  }
  CHECK(noted);

  // A dense model has no hybrid layout.
  run = trace::test::run_cli_offline({"meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb", "--json"});
  REQUIRE(run.exit_code == 0);
  CHECK_FALSE(nlohmann::json::parse(run.out)["estimate"].contains("vllm_hybrid_blocks"));
}

TEST_CASE("trace check: a hybrid serve job that vLLM would refuse does not fit", "[engine][cli]") {
  const std::string qwen = trace::test::config_path("Qwen--Qwen3.5-27B.json");
  const auto check = [&](const std::string& max_num_seqs) {
    return trace::test::run_cli_offline(
        {"check", qwen, "--gpu", "h100-80gb", "--mode", "serve", "--max-num-seqs", max_num_seqs});
  };
  // 54 GB of bf16 weights leave a few hundred 784-token blocks on an 80 GB card: vLLM's 256
  // default starts, the 1,024 it defaults to on an H100 API server does not.
  auto run = check("256");
  CHECK(run.exit_code == 0);
  run = check("1024");
  CHECK(run.exit_code == 1);
  CHECK(trace::test::line_count(run.out) == 1);
  CHECK(run.out.find("vLLM V1 refuses max_num_seqs 1024 above the") != std::string::npos);
  run = check("0");  // an engine without the check (transformers' generate)
  CHECK(run.exit_code == 0);
}

TEST_CASE("the plan's JSON gives a hybrid serve job's own blocks and its refusal",
          "[engine][cli][json]") {
  // Qwen3.5-27B served on H100s with vLLM's API-server default of 1,024 sequences: one card's
  // few hundred blocks refuse it, so the job does not fit though its peak does; two cards at
  // TP 2 keep half of each state and KV page a rank, twice the blocks or more. The plan's job
  // fields and trace check must agree on both.
  const std::string qwen = trace::test::config_path("Qwen--Qwen3.5-27B.json");
  const auto plan = [&](const std::string& gpus) {
    const auto run =
        trace::test::run_cli_offline({qwen, "--gpu", "h100-80gb", "--mode", "serve", "--gpus", gpus,
                                      "--max-num-seqs", "1024", "--json"});
    REQUIRE(run.exit_code == 0);
    return nlohmann::json::parse(run.out)["estimate"];
  };
  const auto check = [&](const std::string& gpus) {
    const auto run =
        trace::test::run_cli_offline({"check", qwen, "--gpu", "h100-80gb", "--mode", "serve",
                                      "--gpus", gpus, "--max-num-seqs", "1024", "--json"});
    return nlohmann::json::parse(run.out);
  };
  const nlohmann::json one = plan("1");
  CHECK(one["fits"] == false);
  CHECK(one["peak_bytes"].get<std::int64_t>() <= one["job_budget_bytes"].get<std::int64_t>());
  CHECK(one["job_refusal"].get<std::string>().find("refuses max_num_seqs 1024") !=
        std::string::npos);
  CHECK(one["job_hybrid_blocks"] == check("1")["hybrid_blocks"]);
  CHECK(one["job_hybrid_blocks"].get<std::int64_t>() < 1024);
  const nlohmann::json two = plan("2");
  CHECK(two["job_hybrid_blocks"] == check("2")["hybrid_blocks"]);
  CHECK(two["job_hybrid_blocks"].get<std::int64_t>() >=
        2 * one["job_hybrid_blocks"].get<std::int64_t>());
  CHECK(two["fits"] == (two["job_hybrid_blocks"].get<std::int64_t>() >= 1024));
  CHECK(two.contains("job_refusal") == !two["fits"].get<bool>());
}

TEST_CASE("serving throughput holds a hybrid's requests in whole vLLM blocks", "[engine][cost]") {
  // Qwen3.5-27B on an 80 GB card at 1,024 + 1,024 tokens: a request holds ceil(2,048 / 784) = 3
  // attention blocks + 3 state blocks of 16 x 3,211,264 bytes (294 MiB), more than its bytes of
  // KV and state (275 MiB). The plan's most users are the most the blocks hold, one more not.
  const trace::ModelDescription model = trace::test::fixture("Qwen--Qwen3.5-27B.json");
  const trace::ParameterCount params = trace::count_parameters(model);
  const trace::MemoryAssumptions memory;
  const trace::JobEstimator estimator(model, params, memory);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.kv_dtype = trace::Dtype::bf16;
  trace::GpuSpec gpu;
  gpu.id = "card-80";
  gpu.memory_bytes_marketed = gpu.memory_bytes_usable = 85'000'000'000;
  gpu.memory_bandwidth_bytes_per_s = 3'350'000'000'000;
  gpu.bf16_tflops = 989;
  const trace::ServingRequest request;  // 1,024 in + 1,024 out
  const trace::ServingPlan plan =
      trace::plan_serving(estimator, job, trace::CostAssumptions{}, request, gpu);
  REQUIRE(plan.blocker.empty());
  const std::int64_t block_bytes = 16 * 3'211'264;
  const std::int64_t budget =
      trace::budget_bytes(gpu.memory_bytes_usable, memory.headroom_fraction);
  const auto blocks_at = [&](std::int64_t users) {
    job.concurrency = users;
    job.context = 2'048;
    const trace::MemoryBreakdown b = estimator.estimate(job).breakdown;
    const std::int64_t fixed = b.total() + memory.cuda_context_bytes - b.kv_cache - b.ssm_state;
    return (budget - fixed) / block_bytes;
  };
  REQUIRE(plan.max_concurrency > 1);
  CHECK(blocks_at(plan.max_concurrency) >= 6 * plan.max_concurrency);
  CHECK(blocks_at(plan.max_concurrency + 1) < 6 * (plan.max_concurrency + 1));
}
