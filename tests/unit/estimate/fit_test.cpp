// Card fits: hand-computed thresholds on simple numbers, then the real pipeline.
#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/model/model_config.hpp"

namespace {

// Llama-3.1-8B from the catalog with the default assumptions, and its memory estimate.
struct Llama8B {
  trace::ModelDescription model =
      trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B"));
  trace::ParameterCount params = trace::count_parameters(model);
  trace::MemoryAssumptions assumptions;
  trace::MemoryEstimate memory = trace::estimate_memory(model, params, assumptions);
};

std::vector<const trace::GpuSpec*> built_in_cards(std::initializer_list<const char*> ids) {
  std::vector<const trace::GpuSpec*> cards;
  for (const char* id : ids) cards.push_back(&trace::require_gpu(trace::builtin_gpu_catalog(), id));
  return cards;
}

}  // namespace

TEST_CASE("fit_mode: fits, largest batch, sharded floor", "[fit]") {
  trace::ModeMemory mode;
  mode.fixed_bytes = 1000;
  mode.shardable_bytes = 900;  // 100 bytes of overhead stay on every card
  mode.per_sequence_bytes = 50;
  // Budget 1200: 1000 + 50 x b <= 1200 -> b = 4.
  trace::ModeFit fit = trace::fit_mode(mode, 1200);
  CHECK(fit.fits);
  CHECK(fit.max_batch == 4);
  CHECK(fit.min_cards == 1);
  // Budget 600: one card cannot hold 1050; ZeRO-3 on n cards holds 100 + 900/n + 50.
  // n = 2: 600 <= 600 fits.
  fit = trace::fit_mode(mode, 600);
  CHECK_FALSE(fit.fits);
  CHECK(fit.max_batch == 0);
  REQUIRE(fit.min_cards);
  CHECK(*fit.min_cards == 2);
  CHECK(fit.bytes_per_card == 600);
  // Tensor parallel must divide the head count (6): 4 and 5 are skipped. Each card keeps
  // per_sequence_on(n) of a sequence, here 60 / n.
  const trace::PerSequenceOn split = [](std::int64_t cards) { return 60 / cards; };
  const trace::TensorParallelSplits divides_6 = [](std::int64_t cards) { return 6 % cards == 0; };
  // n = 2: 100 + 450 + 30 = 580 > 425; n = 3: 100 + 300 + 20 = 420 <= 425.
  fit = trace::fit_mode(mode, 425, divides_6, split);
  REQUIRE(fit.min_cards);
  CHECK(*fit.min_cards == 3);
  CHECK(fit.bytes_per_card == 420);
  // Budget 415: 3 cards hold 420; 4 and 5 do not divide 6; n = 6: 100 + 150 + 10 = 260.
  fit = trace::fit_mode(mode, 415, divides_6, split);
  REQUIRE(fit.min_cards);
  CHECK(*fit.min_cards == 6);
  CHECK(fit.bytes_per_card == 260);
  // Without a split the sequence stays whole: n = 3 holds 100 + 300 + 50 = 450 <= 460.
  fit = trace::fit_mode(mode, 460, divides_6);
  REQUIRE(fit.min_cards);
  CHECK(*fit.min_cards == 3);
  CHECK(fit.bytes_per_card == 450);
  // Overhead alone exceeds the budget: no card count helps.
  fit = trace::fit_mode(mode, 90);
  CHECK_FALSE(fit.min_cards);
}

TEST_CASE("Llama-3.1-8B on a T4: serving needs two cards tensor-parallel", "[fit]") {
  const Llama8B llama;
  const std::vector<trace::CardFit> fits = trace::fit_cards(
      llama.memory, llama.model, built_in_cards({"t4", "h100"}), llama.assumptions);
  // T4: 14.74 GiB usable x 0.95 = 14.0 GiB budget < 16.06 GB of bf16 weights.
  CHECK_FALSE(fits[0].serve.fits);
  // The engine's transient: sampling 256 sequences' 128,256 logits at 14 bytes, plus the
  // forward pass's 4,096 x 4,096 output (the 4,096-token prefill itself holds 4,096 x 55,296 x 2
  // on one card, 4,096 x 33,792 x 2 on each of two: less).
  const std::int64_t sampling = 256LL * 128'256 * 14 + 4'096LL * 4'096 * 2;
  // Two cards: 512 MiB of CUDA context + 8,030,261,248 bytes + 256 MiB of KV + the sampling
  // step + 1,843 MiB of tensor-parallel buffers + 512 MiB of CUDA graphs each.
  REQUIRE(fits[0].serve.min_cards);
  CHECK(*fits[0].serve.min_cards == 2);
  CHECK(fits[0].serve.bytes_per_card == (512LL << 20) + 8'030'261'248LL + (256LL << 20) +
                                            sampling + (1'843LL << 20) + (512LL << 20));
  // H100: (budget - weights - context - graphs - sampling) / 512 MiB of KV per 4096-token
  // sequence.
  CHECK(fits[1].serve.fits);
  const std::int64_t budget = fits[1].budget_bytes;
  CHECK(fits[1].serve.max_batch ==
        (budget - 16'060'522'496LL - (512LL << 20) - (512LL << 20) - sampling) / (512LL << 20));
  // Full fine-tune of 8B (18 bytes/param = 144.5 GB of state) does not fit one 80 GB card.
  CHECK_FALSE(fits[1].full_finetune.fits);
  REQUIRE(fits[1].full_finetune.min_cards);
  CHECK(*fits[1].full_finetune.min_cards >= 2);
}

TEST_CASE("expert parallel: experts split over cards dividing the expert count", "[fit][moe]") {
  trace::ModeMemory mode;
  mode.fixed_bytes = 1'100;     // 100 overhead + 1,000 weights
  mode.shardable_bytes = 1'000;
  mode.expert_bytes = 800;      // of the weights, 800 are routed experts
  mode.per_sequence_bytes = 50;
  // n cards: 1,100 - 800 (replicated part) + 800 / n + 50. Budget 560: n = 2 gives 750, n = 3
  // does not divide 8 experts, n = 4 gives 300 + 200 + 50 = 550.
  const trace::ModeFit fit = trace::fit_expert_parallel(mode, 560, 8);
  CHECK_FALSE(fit.fits);
  REQUIRE(fit.min_cards);
  CHECK(*fit.min_cards == 4);
  CHECK(fit.bytes_per_card == 550);
  CHECK(fit.strategy == "expert parallel");
  // The replicated part alone is over budget: no expert split helps.
  CHECK_FALSE(trace::fit_expert_parallel(mode, 340, 8).min_cards);
  // 40 bytes of all-to-all buffers on each of several cards: n = 4 needs 590, n = 8 gives
  // 300 + 100 + 50 + 40 = 490.
  const trace::ModeFit with_buffers = trace::fit_expert_parallel(mode, 560, 8, 40);
  REQUIRE(with_buffers.min_cards);
  CHECK(*with_buffers.min_cards == 8);
  CHECK(with_buffers.bytes_per_card == 490);
}

TEST_CASE("fit_cards: with a training job, sharded counts come from the job estimator", "[fit]") {
  const Llama8B llama;
  const trace::MemoryAssumptions& a = llama.assumptions;
  const trace::JobEstimator estimator(llama.model, llama.params, a);
  trace::Job job;  // mixed precision AdamW, the assumptions' sequence and batch
  const trace::TrainingCardSearch search{estimator, job};
  const trace::CardFit card =
      trace::fit_cards(llama.memory, llama.model, built_in_cards({"a10g"}), a, &search).at(0);
  // 8B at 16 bytes of states per parameter cannot train on one 22 GiB card.
  CHECK_FALSE(card.full_finetune.fits);
  REQUIRE(card.full_finetune.min_cards);
  const std::int64_t n = *card.full_finetune.min_cards;
  CHECK(card.full_finetune.strategy == "ZeRO-3");
  // The count is the estimator's: its peak on n ZeRO-3 cards fits the budget, on n - 1 not.
  job.mode = trace::JobMode::full;
  job.seq_len = a.seq_len;
  job.batch = a.batch;
  CHECK(card.full_finetune.bytes_per_card == trace::sharded_peak_bytes(estimator, job, n));
  CHECK(card.full_finetune.bytes_per_card <= card.budget_bytes);
  CHECK(*trace::sharded_peak_bytes(estimator, job, n - 1) > card.budget_bytes);
}

namespace {

// largest_fitting's answer for `knob` must be a boundary of the estimate itself: the value
// fits `budget` (peak + CUDA context), one more does not. Returns the value.
std::int64_t checked_boundary(const trace::JobEstimator& estimator, const trace::Job& job,
                              trace::JobKnob knob, std::int64_t limit, std::int64_t budget) {
  const std::int64_t value = trace::largest_fitting(estimator, job, knob, limit, budget);
  const auto peak_at = [&](std::int64_t v) {
    trace::Job at = job;
    trace::knob_value(at, knob) = v;
    return estimator.estimate(at).breakdown.total() +
           estimator.assumptions().cuda_context_bytes;
  };
  if (value > 0) CHECK(peak_at(value) <= budget);
  if (value < limit) CHECK(peak_at(value + 1) > budget);
  return value;
}

}  // namespace

TEST_CASE("largest_fitting: how far a card reaches for training and serving jobs", "[fit]") {
  const Llama8B llama;
  const trace::JobEstimator estimator(llama.model, llama.params, llama.assumptions);
  // LoRA with checkpointing on an 80 GiB budget; the search starts from the job's own value.
  trace::Job lora;
  lora.mode = trace::JobMode::lora;
  lora.checkpointing = trace::Checkpointing::full;
  lora.seq_len = 2048;
  const std::int64_t budget = 80LL << 30;
  CHECK(checked_boundary(estimator, lora, trace::JobKnob::batch, trace::k_max_training_batch,
                         budget) > 1);
  CHECK(checked_boundary(estimator, lora, trace::JobKnob::seq_len,
                         trace::k_max_training_seq_len, budget) > 2048);
  // Below the 15 GiB of bf16 weights nothing fits; the caps bound a budget nothing exhausts.
  CHECK(trace::largest_fitting(estimator, lora, trace::JobKnob::batch,
                               trace::k_max_training_batch, 10LL << 30) == 0);
  CHECK(trace::largest_fitting(estimator, lora, trace::JobKnob::batch, 3, budget) == 3);
  // Serving on 40 GiB: 16 GB of weights leave room for a few dozen 4,096-token requests
  // (512 MiB of KV each) and for one request far longer than 4,096 tokens.
  trace::Job serve;
  serve.mode = trace::JobMode::serve;
  serve.context = 4096;
  CHECK(checked_boundary(estimator, serve, trace::JobKnob::concurrency,
                         trace::k_max_concurrency, 40LL << 30) > 10);
  CHECK(checked_boundary(estimator, serve, trace::JobKnob::context,
                         trace::k_max_context_tokens, 40LL << 30) > 4096);
}
