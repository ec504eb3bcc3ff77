// Serving an encoder-only model (docs/memory.md and docs/cost.md, "Encoder serving"): no KV
// cache, no sampling step, whole sequences in one forward pass. Every expected number is derived
// by hand below from the published configs of bert-base-uncased and deberta-v3-base.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "test_data.hpp"
#include "trace/cost/flops.hpp"
#include "trace/cost/serving.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::ModelDescription fixture_as(const char* name, const char* head) {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(name));
  config["architectures"] = {head};
  return trace::parse_model_config(config.dump());
}

// bert-base-uncased, per token of one layer at bf16: the MLP sub-layer (intermediate 3,072:
// fc1's output, its activation, fc2's output 768) is wider than attention (q 768, k and v
// 2 x 768, the attention output 768, o's output 768 = 3,840), and the layer's input and the
// residual add 2 x 768: 2 x 3,072 + 768 + 1,536 = 8,448 values.
constexpr std::int64_t k_bert_layer_values = 8'448;
// BertForMaskedLM's head scores the 30,522-token vocabulary at every position.
constexpr std::int64_t k_bert_mlm_bytes_512 = (k_bert_layer_values + 30'522) * 512 * 2;

}  // namespace

TEST_CASE("encoder-only: models whose text stacks are all bidirectional", "[memory][encoder]") {
  CHECK(trace::test::fixture("google-bert--bert-base-uncased.json").encoder_only());
  CHECK(trace::test::fixture("microsoft--deberta-v3-base.json").encoder_only());
  CHECK(trace::test::fixture("answerdotai--ModernBERT-base.reconstructed.json").encoder_only());
  // An encoder-decoder generates; so does a decoder.
  CHECK_FALSE(
      trace::test::fixture("facebook--nllb-200-distilled-600M.reconstructed.json").encoder_only());
  CHECK_FALSE(trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B"))
                  .encoder_only());
}

TEST_CASE("encoder serving: a sequence costs its forward pass and the head's output",
          "[memory][encoder]") {
  const trace::MemoryAssumptions a;
  const trace::ModelDescription mlm = trace::test::fixture("google-bert--bert-base-uncased.json");
  CHECK(trace::encoder_sequence_bytes(mlm, 512, 1, a) == k_bert_mlm_bytes_512);  // 39,905,280
  // A pooled head (sequence classification) adds nothing per token.
  const trace::ModelDescription classifier =
      fixture_as("google-bert--bert-base-uncased.json", "BertForSequenceClassification");
  CHECK(trace::encoder_sequence_bytes(classifier, 512, 1, a) == k_bert_layer_values * 512 * 2);
  // Tensor parallel 2: fc1's output and its activation halve (3,072 values), the rest do not:
  // 3,072 + 768 + 1,536 = 5,376.
  CHECK(trace::encoder_sequence_bytes(classifier, 512, 2, a) == 5'376LL * 512 * 2);

  // DeBERTa has no SDPA path: 5 score-sized tensors (scores, c2p and p2c gathered to s x s,
  // their running sum and its scaled temporary) of 12 heads x 512 x 512 at bf16, beside the same
  // 8,448 values a token as BERT (hidden 768, intermediate 3,072).
  const trace::ModelDescription deberta =
      fixture_as("microsoft--deberta-v3-base.json", "DebertaV2ForSequenceClassification");
  CHECK(deberta.eager_score_tensors == 5);
  CHECK(trace::encoder_sequence_bytes(deberta, 512, 1, a) ==
        k_bert_layer_values * 512 * 2 + 5LL * 12 * 512 * 512 * 2);  // 8,650,752 + 31,457,280
}

TEST_CASE("encoder serving: no KV cache, the batch encoded whole", "[memory][encoder][job]") {
  const trace::ModelDescription mlm = trace::test::fixture("google-bert--bert-base-uncased.json");
  const trace::ParameterCount params = trace::count_parameters(mlm);
  trace::MemoryAssumptions a;
  a.context = 512;
  a.concurrency = 3;
  const trace::MemoryEstimate estimate = trace::estimate_memory(mlm, params, a);
  const trace::ModeMemory& serve = estimate.serve;
  CHECK(serve.breakdown.kv_cache == 0);
  CHECK(serve.breakdown.ssm_state == 0);
  CHECK(serve.per_sequence_bytes == k_bert_mlm_bytes_512);
  CHECK(serve.breakdown.activations == 3 * k_bert_mlm_bytes_512);
  // The batch is what grows: fixed holds the weights and the overheads only.
  CHECK(serve.fixed_bytes == serve.breakdown.weights + serve.breakdown.overhead);

  // The job estimator: 32 sequences of 512 tokens are 16,384 tokens, past the 8,192-token
  // prefill chunk, and still one pass (a bidirectional sequence is not chunked); no sampler.
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 512;
  job.concurrency = 32;
  const trace::MemoryBreakdown b = trace::estimate_job(mlm, params, job, a).breakdown;
  CHECK(b.kv_cache == 0);
  CHECK(b.activations == 32 * k_bert_mlm_bytes_512);  // 1,276,968,960
}

TEST_CASE("encoder serving: the longest sequence and the largest batch that fit",
          "[memory][encoder][fit]") {
  const trace::ModelDescription mlm = trace::test::fixture("google-bert--bert-base-uncased.json");
  const trace::MemoryAssumptions a;
  // E(s) = 38,970 values x 2 bytes x s: two sequences in 1,000,000 + 2 x 77,940 x 300 bytes
  // above the fixed bytes are 300 tokens each.
  CHECK(trace::longest_context(mlm, a, 1'000'000 + 2 * 77'940 * 300, 1'000'000, 2) == 300);
  CHECK(trace::longest_context(mlm, a, 1'000'000 + 2 * 77'940 * 300 - 1, 1'000'000, 2) == 299);

  // DeBERTa's scores grow with s^2: E(s) = 16,896 s + 120 s^2 (5 x 12 heads x 2 bytes). At
  // s = 1,000 that is 16,896,000 + 120,000,000 = 136,896,000 bytes.
  const trace::ModelDescription deberta =
      fixture_as("microsoft--deberta-v3-base.json", "DebertaV2ForSequenceClassification");
  CHECK(trace::longest_context(deberta, a, 136'896'000, 0, 1) == 1'000);
  CHECK(trace::longest_context(deberta, a, 136'896'000 - 1, 0, 1) == 999);
}

TEST_CASE("encoder serving cost: one pass per batch, tokens encoded", "[cost][encoder]") {
  const trace::ModelDescription mlm = trace::test::fixture("google-bert--bert-base-uncased.json");
  const trace::ParameterCount params = trace::count_parameters(mlm);
  // 1 TiB usable, 1 TB/s, 100 TFLOP/s bf16, $2/h.
  trace::GpuSpec gpu;
  gpu.id = "test-card";
  gpu.name = "Test card";
  gpu.memory_bytes_marketed = gpu.memory_bytes_usable = 1LL << 40;
  gpu.memory_bandwidth_bytes_per_s = 1'000'000'000'000;
  gpu.bf16_tflops = 100;
  gpu.price_usd_per_hour = 2.0;
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.weight_bytes = 200'000'000;
  trace::ServingRequest request;
  request.context_in = 512;
  request.context_out = 64;  // an encoder generates nothing: not used
  trace::CostAssumptions efficiency;
  efficiency.serve_bandwidth_efficiency = 0.5;
  efficiency.serve_compute_efficiency = 0.5;
  const trace::ServingPlan plan =
      trace::plan_serving(mlm, params, job, trace::MemoryAssumptions{}, efficiency, request, gpu);
  REQUIRE(plan.blocker.empty());
  CHECK(plan.encoder);
  // Budget floor(2^40 x 0.95) = 1,044,536,046,387 less the weights, the CUDA context and the
  // CUDA graphs (512 MiB each): 1,043,262,304,563 bytes for batches of 39,905,280 a sequence
  // (the 64 output tokens add nothing): 26,143.46 -> 26,143 sequences.
  CHECK(plan.max_concurrency == 26'143);
  REQUIRE_FALSE(plan.points.empty());
  const trace::ServingPoint& one = plan.points.front();
  CHECK(one.concurrency == 1);
  // A pass reads the weights once (0.2 ms at 1 TB/s, 0.4 ms at half) and computes one
  // sequence's prefill FLOPs; the latency is the pass, a request's tokens are all out by its end.
  const double flops = trace::prefill_flops(mlm, params, 512);
  CHECK(one.flops_per_step == Approx(flops));
  CHECK(one.bytes_per_step == Approx(200'000'000.0));
  const double pass = std::max(200'000'000.0 / 1e12 / 0.5, flops / 100e12 / 0.5);
  CHECK(one.step_seconds == Approx(pass));
  CHECK(one.user_tokens_per_s == Approx(512 / pass));
  CHECK(plan.ttft_seconds == Approx(pass));
  // Batches share the weight read: at 1,024 sequences the FLOPs bound it.
  for (const trace::ServingPoint& point : plan.points) {
    if (point.concurrency != 1'024) continue;
    const double batch_pass = std::max(200'000'000.0 / 1e12 / 0.5, 1'024 * flops / 100e12 / 0.5);
    CHECK(point.step_seconds == Approx(batch_pass));
    CHECK(point.total_tokens_per_s == Approx(1'024 * 512 / batch_pass));
    CHECK_FALSE(point.memory_bound);
  }
  REQUIRE(plan.best);
  REQUIRE(plan.usd_per_million_tokens);
  CHECK(*plan.usd_per_million_tokens == Approx(2.0 / (plan.best->total_tokens_per_s * 3600) * 1e6));
}

TEST_CASE("encoder serving: when every batch is compute-bound, the best is the smallest",
          "[cost][encoder]") {
  // all-MiniLM-L6-v2 on an A10G: one 512-token pass is already bound by its FLOPs, so every
  // batch encodes the same tokens per second but for rounding, which once picked the largest
  // batch (4,971: each request waiting 2.3 s) as "best". A tie keeps the smallest, batch 1.
  const trace::test::CliResult result = trace::test::run_cli_offline(
      {"sentence-transformers/all-MiniLM-L6-v2", "--mode", "serve", "--gpu", "a10g", "--json"});
  REQUIRE(result.exit_code == 0);
  const nlohmann::json serving = nlohmann::json::parse(result.out)["serving"];
  const double first = serving["points"][0]["total_tokens_per_s"].get<double>();
  REQUIRE(serving["points"].size() > 3);
  for (const nlohmann::json& point : serving["points"]) {
    CHECK(point["limit"] == "compute");
    CHECK(point["total_tokens_per_s"].get<double>() == Approx(first).epsilon(1e-9));
  }
  CHECK(serving["best"]["concurrency"] == 1);
}
