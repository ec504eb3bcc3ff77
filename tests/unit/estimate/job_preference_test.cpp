// Preference training (--preference: DPO, ORPO / SimPO / CPO) on the tiny Llama of job_test.cpp
// (h = 64, 2 layers, 4 heads x 16, 2 kv heads, I = 128, V = 1,000, untied head; P = 202,048
// parameters; 2,048 saved values per token under flash-attn with fused norms). Every expected
// value is derived by hand in the comments (docs/memory.md, "Preference training").
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "tiny_jobs.hpp"
#include "tiny_models.hpp"
#include "trace/cost/flops.hpp"
#include "trace/cost/training.hpp"
#include "trace/error.hpp"
#include "trace/estimate/job.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr std::int64_t k_params = 202'048;

struct Tiny {
  trace::ModelDescription model = trace::parse_model_config(trace::test::k_tiny_llama);
  trace::ParameterCount params = trace::count_parameters(model);
};

trace::JobEstimate estimate(const trace::Job& job) {
  const Tiny tiny;
  return trace::estimate_job(tiny.model, tiny.params, job);
}

// 2 pairs of 128 tokens: 4 sequences, 512 tokens kept for backward.
trace::Job dpo_job() {
  trace::Job job = trace::test::tiny_full_job();
  job.preference = trace::Preference::dpo;
  return job;
}

}  // namespace

TEST_CASE("DPO: the pairs double the sequences, the reference is held as the policy",
          "[job][preference]") {
  trace::Job job = dpo_job();
  const trace::JobEstimate e = estimate(job);
  // fp32 master 4 + bf16 compute copy 2 + the reference as the policy's parameters are held
  // under mixed precision, fp32: 4 bytes per parameter
  CHECK(e.breakdown.weights == k_params * 10);
  CHECK(e.breakdown.gradients == k_params * 4);  // the reference trains nothing
  CHECK(e.breakdown.optimizer == k_params * 8);
  CHECK(e.trainable_params == k_params);
  // 2 pairs = 4 sequences x 128 = 512 tokens x 2,048 values x 2 bytes
  CHECK(e.breakdown.activations == 2'048 * 512 * 2);
  // transformers' loss buffers (12 bytes a logit) over 512 tokens, and the reference's bf16
  // logits over the same 512 tokens beside them (2 bytes)
  CHECK(e.breakdown.logits == 1'000 * 512 * (12 + 2));
  // 202,048 x 22 = 4,445,056 + 2,097,152 + 7,168,000
  CHECK(e.breakdown.total() == 13'710'208);

  // fp32 training: an fp32 reference; pure bf16: a bf16 one; --ref-dtype sets it
  job.precision = trace::Precision::fp32;
  CHECK(estimate(job).breakdown.weights == k_params * (4 + 4));
  CHECK(estimate(job).breakdown.logits == 1'000 * 512 * (12 + 4));  // fp32 reference logits
  job.precision = trace::Precision::bf16_pure;
  CHECK(estimate(job).breakdown.weights == k_params * (2 + 2));
  job.precision = trace::Precision::mixed;
  job.reference_dtype = trace::Dtype::bf16;  // DeepSpeed's cast
  CHECK(estimate(job).breakdown.weights == k_params * (6 + 2));
  job.reference_dtype.reset();

  // precomputed log-probabilities: no reference during the steps, the pairs still
  job.reference_precomputed = true;
  CHECK(estimate(job).breakdown.weights == k_params * 6);
  CHECK(estimate(job).breakdown.activations == 2'048 * 512 * 2);
  CHECK(estimate(job).breakdown.logits == 1'000 * 512 * 12);
}

TEST_CASE("ORPO, SimPO, CPO: pairs without a reference", "[job][preference]") {
  trace::Job job = dpo_job();
  job.preference = trace::Preference::paired;
  const trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 6);
  CHECK(e.breakdown.activations == 2'048 * 512 * 2);
  CHECK(e.breakdown.logits == 1'000 * 512 * 12);
  // eager attention keeps each pair's scores twice over: per layer 4 heads x 128 x 128 x
  // 4 sequences x 6 bytes (fp32 softmax + its bf16 cast) = 1,572,864, and K, V repeated to the
  // 4 heads (2,176 values per token)
  job.attention = trace::AttentionImpl::eager;
  CHECK(estimate(job).breakdown.activations == 2'176 * 512 * 2 + 2 * 1'572'864);
}

TEST_CASE("LoRA's DPO reference is the base without adapters", "[job][preference]") {
  trace::Job job = dpo_job();
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::bf16_pure;
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::attention_qv;
  // adapters: per layer q 8 x (64 + 64) + v 8 x (64 + 32) = 1,792; x 2 layers = 3,584
  const trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 2 + 3'584 * 2);  // no second copy of the base
  // the base's forward without adapters still makes its logits beside the policy's
  CHECK(e.breakdown.logits == 1'000 * 512 * (12 + 2));
  // the same activations as 4 sequences without preference
  trace::Job four = job;
  four.preference = trace::Preference::none;
  four.batch = 4;
  CHECK(e.breakdown.activations == estimate(four).breakdown.activations);
}

TEST_CASE("DPO's reference shards as the policy's weights do", "[job][preference]") {
  trace::Job job = dpo_job();
  job.gpus = 4;
  job.sharding = trace::Sharding::zero1;
  // ZeRO-1 (and DDP, ZeRO-2): the bf16 copy and the fp32 reference whole, the master a quarter
  CHECK(estimate(job).breakdown.weights == k_params * 2 + k_params * 4 + k_params * 4 / 4);
  job.sharding = trace::Sharding::zero3;
  job.zero_max_reuse_distance = 0;  // the tiny model would stay gathered whole (job_test.cpp)
  // ZeRO-3: a quarter of each, and the largest layer (36,992) and head (64,000) gathered in bf16
  CHECK(estimate(job).breakdown.weights ==
        k_params * 2 / 4 + k_params * 4 / 4 + k_params * 4 / 4 + (36'992 + 64'000) * 2);
  job = dpo_job();
  job.gpus = 2;
  job.tp = 2;
  CHECK(estimate(job).breakdown.weights == k_params * 10 / 2);
  CHECK(estimate(job).breakdown.logits == 1'000 * 512 * (12 + 2) / 2);
}

TEST_CASE("KTO: unpaired completions and DPO's reference", "[job][preference]") {
  trace::Job job = dpo_job();
  job.preference = trace::Preference::kto;
  const trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 10);  // fp32 master, bf16 copy, fp32 reference
  // 2 completions x 128 = 256 tokens kept (the KL batch runs under no_grad)
  CHECK(e.breakdown.activations == 2'048 * 256 * 2);
  // the policy's loss buffers and the reference's bf16 logits, one batch of 256 tokens at a time
  CHECK(e.breakdown.logits == 1'000 * 256 * (12 + 2));
  job.reference_precomputed = true;
  CHECK(estimate(job).breakdown.weights == k_params * 6);
  CHECK(estimate(job).breakdown.logits == 1'000 * 256 * 12);
}

TEST_CASE("preference flags out of place are bad input", "[job][preference][bad_input]") {
  CHECK(trace::parse_preference("DPO") == trace::Preference::dpo);
  CHECK(trace::parse_preference("ipo") == trace::Preference::dpo);
  CHECK(trace::parse_preference("simpo") == trace::Preference::paired);
  CHECK(trace::parse_preference("orpo") == trace::Preference::paired);
  CHECK(trace::parse_preference("cpo") == trace::Preference::paired);
  CHECK(trace::parse_preference("kto") == trace::Preference::kto);
  CHECK_FALSE(trace::parse_preference("grpo").has_value());  // not modelled

  trace::Job job = dpo_job();
  job.mode = trace::JobMode::serve;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job = dpo_job();
  job.preference = trace::Preference::paired;
  job.reference_precomputed = true;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job.reference_precomputed = false;
  job.reference_dtype = trace::Dtype::fp32;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
  job = dpo_job();
  job.mode = trace::JobMode::lora;
  job.reference_dtype = trace::Dtype::fp32;
  CHECK_THROWS_AS(trace::validate_job(job), trace::ConfigError);
}

TEST_CASE("preference FLOPs: both sequences, and DPO's reference forward", "[cost][preference]") {
  const Tiny tiny;
  // At 8 tokens (flops_test.cpp): forward 276,096 + 2,304 = 278,400; full 3 x = 835,200;
  // LoRA rank 2 on every Linear 583,680.
  trace::Job job;
  job.mode = trace::JobMode::full;
  job.seq_len = 8;
  job.preference = trace::Preference::paired;
  CHECK(trace::training_flops(tiny.model, tiny.params, job).per_token == Approx(2 * 835'200));
  job.preference = trace::Preference::dpo;
  // + the reference's forward over both: 2 x 278,400
  trace::TrainingFlops dpo = trace::training_flops(tiny.model, tiny.params, job);
  CHECK(dpo.per_token == Approx(2 * 835'200 + 2 * 278'400));
  CHECK(dpo.model_per_token == Approx(2'227'200));
  CHECK(dpo.sequences == 2);
  job.mode = trace::JobMode::lora;
  job.lora_rank = 2;
  job.lora_targets = trace::LoraTargets::all_linear;
  CHECK(trace::training_flops(tiny.model, tiny.params, job).per_token ==
        Approx(2 * 583'680 + 2 * 278'400));

  // KTO: the policy trains on the completions (835,200), runs the KL batch forward under
  // no_grad (278,400), and the reference runs both (2 x 278,400): 1,670,400.
  job.mode = trace::JobMode::full;
  job.preference = trace::Preference::kto;
  const trace::TrainingFlops kto = trace::training_flops(tiny.model, tiny.params, job);
  CHECK(kto.per_token == Approx(1'670'400));
  CHECK(kto.reference_per_token == Approx(556'800));
  CHECK(kto.sequences == 1);
  job.preference = trace::Preference::dpo;

  // Precomputed: the reference runs once over one epoch's tokens, not in every step. 10 pairs
  // of 8 tokens x 2 epochs = 160 tokens: 160 x 1,670,400 + 80 x 556,800 = 311,808,000.
  job.mode = trace::JobMode::full;
  job.reference_precomputed = true;
  const trace::TrainingPlan plan =
      trace::plan_training(tiny.model, tiny.params, job, trace::run_size_from_samples(10, 8, 2),
                           trace::MemoryAssumptions{}, trace::CostAssumptions{}, {});
  CHECK(plan.flops.per_token == Approx(1'670'400));
  CHECK(plan.total_flops == Approx(311'808'000));
}

TEST_CASE("trace --preference: the job line, JSON and check", "[cli][preference]") {
  // Llama-3.1-8B, 8,030,261,248 parameters: a DPO full fine-tune under mixed precision holds
  // the fp32 master (4), the bf16 compute copy (2) and the fp32 reference (4) of each:
  // 80,302,612,480 bytes.
  auto run = trace::test::run_cli_offline({"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb",
                                           "--mode", "full", "--preference", "dpo", "--json"});
  REQUIRE(run.exit_code == 1);  // 8B with AdamW on one 80 GB card does not fit
  const nlohmann::json check = nlohmann::json::parse(run.out);
  CHECK(check["breakdown"]["weights"] == 80'302'612'480LL);
  CHECK(check["preference"]["kind"] == "dpo");
  CHECK(check["preference"]["reference"] == "copy");
  CHECK(check["preference"]["sequences_per_step"] == 2);
  CHECK(check["read_as"].get<std::string>().find("DPO pairs, reference copy fp32") !=
        std::string::npos);

  run = trace::test::run_cli_offline({"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb",
                                      "--mode", "lora", "--preference", "orpo"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("lora (preference pairs, no reference) on 1x h100-80gb") != std::string::npos);

  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--mode", "serve", "--preference", "dpo"},
           {"--mode", "full", "--preference", "grpo"},
           {"--mode", "full", "--precompute-ref-log-probs"},
           {"--mode", "lora", "--preference", "dpo", "--ref-dtype", "fp32"},
           {"--mode", "full", "--preference", "dpo", "--ref-dtype", "fp7"}}) {
    std::vector<std::string> args = {"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100-80gb"};
    args.insert(args.end(), bad.begin(), bad.end());
    run = trace::test::run_cli_offline(args);
    INFO(run.err);
    CHECK(run.exit_code == 2);
  }
}
