// `trace throughput` against hand-derived bounds: a Llama-2-7B-shaped fixture (lmsys/vicuna-7b-v1.5:
// hidden 4096, 32 layers, 32 heads of 128, 32 KV heads, MLP 11008, vocab 32000, untied head)
// and the GPU table's H100 SXM (3.35 TB/s, 989.5 bf16 / 1979 fp8 TFLOP/s) and RTX 4090
// (1.008 TB/s, 165.2 fp16 TFLOP/s).
#include "trace/cost/throughput.hpp"

#include <string>

#include "catch.hpp"
#include "test_data.hpp"

namespace {

using trace::ThroughputKind;

// The fixture's parameters, by hand: embedding and head 32000 x 4096 each; per layer attention
// 4 x 4096^2, MLP 3 x 4096 x 11008, two norms of 4096; one final norm.
constexpr double k_embedding = 32000.0 * 4096;
constexpr double k_layer = 4 * 4096.0 * 4096 + 3 * 4096.0 * 11008 + 2 * 4096;
constexpr double k_params = 2 * k_embedding + 32 * k_layer + 4096;  // 6,738,415,616
// Attention FLOPs per attended key, all 32 layers: 2 x 32 heads x (128 + 128).
constexpr double k_attention_per_key = 32 * 2.0 * 32 * (128 + 128);

const std::string k_header =
    "row_id,kind,model_id,gpu,n_gpus,parallelism,weight_dtype,kv_dtype,input_len,output_len,"
    "concurrency,seq_len,tokens_per_s_total,tokens_per_s_per_user,mfu,tflops_per_gpu,spec_decode,"
    "notes\n";

trace::ThroughputComparison compare(const std::string& rows) {
  const trace::ThroughputConfigLoader loader =
      [](const std::string& repo) -> std::optional<std::string> {
    if (repo == "lmsys/vicuna-7b-v1.5") {
      return trace::test::config_text("lmsys--vicuna-7b-v1.5.reconstructed.json");
    }
    return std::nullopt;
  };
  return trace::compare_throughput(trace::parse_throughput_csv(k_header + rows), loader,
                                   trace::builtin_gpu_catalog());
}

}  // namespace

TEST_CASE("the fixture's parameter count is the published Llama-2-7B count", "[throughput]") {
  REQUIRE(k_params == 6738415616.0);
}

TEST_CASE("batch-1 decode: bandwidth over the weights and KV read per step", "[throughput]") {
  // fp8 weights (1 byte each) on one H100; prompt 1, output 2: the KV read is at the mean
  // context 1 + 2/2 = 2 tokens, K and V of 32 layers x 32 heads x 128 in fp8 (unstated KV on an
  // fp8 row and an fp8 card reads as fp8).
  const auto result = compare(
      "1,serve,lmsys/vicuna-7b-v1.5,H100 SXM 80GB,1,TP1,fp8,,1,2,1,,300,300,,,n,test\n");
  REQUIRE(result.rows.size() == 1);
  const trace::ThroughputResult& row = result.rows[0];
  REQUIRE(row.planned);
  CHECK(row.kind == ThroughputKind::batch1_decode);
  CHECK(row.card == "h100-80gb");
  CHECK(row.compute_dtype == "fp8");
  const double kv_bytes = 2.0 * 2 * 32 * 32 * 128;
  const double bound = 3.35e12 / (k_params * 1 + kv_bytes);  // about 497.1 tokens/s
  CHECK(row.bound == Approx(bound).epsilon(1e-9));
  CHECK(row.measured == 300);
  CHECK(row.ratio == Approx(300 / bound).epsilon(1e-9));
  REQUIRE(row.bound_per_user);
  CHECK(*row.bound_per_user == Approx(bound).epsilon(1e-9));  // one user: total = per user
  CHECK(result.above_bound == 0);
}

TEST_CASE("dense training: peak over the model FLOPs per token", "[throughput]") {
  // Full fine-tune, bf16, sequences of 2048 on 4 H100s, 16,000 tokens/s in all.
  // Per token: 3 x (2 x non-embedding weights + attention over (2048 + 1) / 2 keys on average).
  const auto result = compare(
      "2,train,lmsys/vicuna-7b-v1.5,H100 SXM 80GB (DGX-H100),4,FSDP4,bf16,,,,,2048,16000,,0.35,,,"
      "full pre-training\n");
  const trace::ThroughputResult& row = result.rows.at(0);
  REQUIRE(row.planned);
  CHECK(row.kind == ThroughputKind::dense_training);
  CHECK(row.unit == "tokens/s/GPU");
  const double per_token = 3 * (2 * (k_params - k_embedding) + k_attention_per_key * 1024.5);
  const double bound = 989.5e12 / per_token;  // about 23,985 tokens/s/GPU
  CHECK(row.bound == Approx(bound).epsilon(1e-9));
  CHECK(row.measured == 4000);
  CHECK(row.ratio == Approx(4000 / bound).epsilon(1e-9));  // trace's implied MFU, about 0.167
  REQUIRE(row.source_mfu);
  CHECK(*row.source_mfu == 0.35);
}

TEST_CASE("prefill rows: the prompt's FLOPs over the peak, the weight read as a floor",
          "[throughput]") {
  // fp16 on an RTX 4090, one 512-token prompt: 512 x (2 x non-embedding weights + attention over
  // (512 + 1) / 2 keys) = 6.83 TFLOP at 165.2 TFLOP/s (41 ms) beats the 13.5 GB weight read at
  // 1.008 TB/s (13 ms).
  const auto result = compare(
      "3,serve,lmsys/vicuna-7b-v1.5 (GGUF),RTX 4090 24GB,1,single GPU,fp16 (GGUF F16),f16,512,0,1,,"
      "11000,,,,n,metric=PREFILL tok/s\n");
  const trace::ThroughputResult& row = result.rows.at(0);
  REQUIRE(row.planned);
  CHECK(row.kind == ThroughputKind::prefill);
  const double flops = 512 * (2 * (k_params - k_embedding) + k_attention_per_key * 256.5);
  const double bound = 512 / (flops / 165.2e12);  // about 12,375 prompt tokens/s
  CHECK(row.bound == Approx(bound).epsilon(1e-9));
  CHECK(row.ratio == Approx(11000 / bound).epsilon(1e-9));
}

TEST_CASE("a bound below the measurement is counted", "[throughput]") {
  // The batch-1 row above, measured at twice its bound.
  const auto result = compare(
      "1,serve,lmsys/vicuna-7b-v1.5,H100 SXM 80GB,1,TP1,fp8,,1,2,1,,1000,,,,n,test\n");
  REQUIRE(result.rows.at(0).planned);
  CHECK(result.rows.at(0).ratio > 1);
  CHECK(result.above_bound == 1);
}

TEST_CASE("rows trace cannot plan carry their reason", "[throughput]") {
  const auto result = compare(
      "4,serve,lmsys/vicuna-7b-v1.5,TPU v9000,1,TP1,bf16,,128,128,1,,50,,,,n,test\n"
      "5,train,lmsys/vicuna-7b-v1.5,GB300 (NVL72),8,FSDP8,fp8,,,,,4096,1000,,,,,full\n"
      "6,train,MosaicML MPT-7b (yaml),H100 80GB,8,FSDP8,amp_bf16,,,,,2048,1000,,,,,full\n"
      "7,serve,some-org/unknown-model,H100 80GB,1,TP1,bf16,,128,128,1,,50,,,,n,test\n"
      "8,serve,lmsys/vicuna-7b-v1.5,H100 80GB,1,TP1,bf16,,5,,1,,48,48,,,y (draft),test\n");
  REQUIRE(result.rows.size() == 5);
  for (const trace::ThroughputResult& row : result.rows) CHECK_FALSE(row.planned);
  CHECK(result.rows[0].reason == "unknown card 'TPU v9000'");
  CHECK(result.rows[1].reason ==
        "card 'GB300 (NVL72)' reads as gb300, which the GPU table does not list");
  CHECK(result.rows[2].reason ==
        "'MosaicML MPT-7b (yaml)' names no Hugging Face repo, so trace has no config for it");
  CHECK(result.rows[3].reason == "no config for some-org/unknown-model");
  CHECK(result.rows[4].reason.starts_with("speculative decoding"));
  for (const auto& [kind, summary] : result.summary) CHECK(summary.count == 0);
}

TEST_CASE("summary statistics are nearest-rank", "[throughput]") {
  const trace::RatioSummary ten =
      trace::summarize_ratios({0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.4, 0.6, 0.8, 1.0});
  CHECK(ten.count == 10);
  CHECK(ten.median == 0.5);  // rank ceil(0.5 x 10) = 5
  CHECK(ten.p10 == 0.1);     // rank 1
  CHECK(ten.p90 == 0.9);     // rank 9
  CHECK(ten.min == 0.1);
  CHECK(ten.max == 1.0);
  const trace::RatioSummary three = trace::summarize_ratios({3, 1, 2});
  CHECK(three.median == 2);  // rank ceil(1.5) = 2
  CHECK(three.p10 == 1);     // rank ceil(0.3) = 1
  CHECK(three.p90 == 3);     // rank ceil(2.7) = 3
  CHECK(trace::summarize_ratios({}).count == 0);
}

TEST_CASE("reading rules", "[throughput]") {
  CHECK(trace::read_card("H100 SXM 80GB (DGX-H100)")->gpu_id == "h100-80gb");
  CHECK(trace::read_card("GB200 192GB (NVL72)")->gpu_id == "gb200");
  CHECK(trace::read_card("B200 180GB")->gpu_id == "b200");
  CHECK(trace::read_card("A100 40GB")->gpu_id == "a100-40gb");
  CHECK(trace::read_card("RTX PRO 6000 Blackwell Server Edition 96GB")->gpu_id == "rtx-pro-6000");
  CHECK(trace::read_card("MI250X (one GCD)")->package_share == 0.5);
  CHECK_FALSE(trace::read_card("TPU v9000"));

  CHECK(trace::read_weight_dtype("nvfp4")->bits_per_param == 4.5);  // 4 + an 8-bit scale per 16
  CHECK(trace::read_weight_dtype("int4 (weight-only, group 32)")->bits_per_param == 5);
  CHECK(trace::read_weight_dtype("int8 (GGUF Q8_0)")->bits_per_param == 8.5);
  CHECK(trace::read_weight_dtype("fp8 (TE FP8 compute, bf16 master)")->fp8_compute);
  CHECK_FALSE(trace::read_weight_dtype("nf4 base + bf16 adapters")->fp8_compute);
  CHECK_FALSE(trace::read_weight_dtype("mystery"));

  const auto max_load = trace::read_concurrency("max load (infinite rate)");
  REQUIRE(max_load);
  CHECK_FALSE(*max_load);  // read, and left to trace's memory-bound maximum
  CHECK(*trace::read_concurrency("batch 1024 (largest power-of-2 batch that fit)") == 1024);
  CHECK(*trace::read_concurrency("25") == 25);
  CHECK_FALSE(trace::read_concurrency("lots"));

  CHECK(trace::read_parallelism("TP1 PP8")->pp == 8);
  CHECK(trace::read_parallelism("FSDP32 TP8 + AsyncTP + compile")->tp == 8);
  CHECK(trace::read_parallelism("single GPU, all layers offloaded")->tp == 1);
  CHECK_FALSE(trace::read_parallelism("FSDP8"));

  CHECK(trace::normalize_model_id("codellama/CodeLlama-7b-hf (GGUF)") == "codellama/CodeLlama-7b-hf");
  CHECK(trace::normalize_model_id("meta-llama/Llama-2-13b (doc: llama_13b)") ==
        "meta-llama/Llama-2-13b");
}
