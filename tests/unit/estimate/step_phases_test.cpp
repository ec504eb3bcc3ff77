// The phases of a training step (docs/memory.md, "Phases of a step"), autocast's fp32 residual
// stream and transformers' composed activations, on the tiny Llama (tests/support/
// tiny_models.hpp: hidden 64, 2 layers, intermediate 128, vocab 1,000, untied; 202,048
// parameters) and a tiny GPT-2, every expected number derived by hand in the comments.
#include <string>

#include "catch.hpp"
#include "tiny_jobs.hpp"
#include "tiny_models.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr std::int64_t k_params = 202'048;

trace::JobEstimate estimate(const char* config, const trace::Job& job) {
  const trace::ModelDescription model = trace::parse_model_config(config);
  return trace::estimate_job(model, trace::count_parameters(model), job);
}

trace::JobEstimate estimate(const trace::Job& job) {
  return estimate(trace::test::k_tiny_llama, job);
}

// One token: the forward's activations and logits (a few KB) are far below the gradients.
trace::Job one_token_job() {
  trace::Job job = trace::test::tiny_full_job();
  job.seq_len = 1;
  job.batch = 1;
  return job;
}

}  // namespace

TEST_CASE("gradients freed between steps: the forward's peak or the step's", "[job][phases]") {
  // 256 tokens, mixed precision: the forward's activations (1,048,576) and logits (3,072,000)
  // outweigh the gradients (202,048 x 4 = 808,192) and the foreach step's temporary (one fp32
  // moment, 808,192): freed gradients add nothing. Kept, the 7,757,440 of the every-term test.
  trace::Job job = trace::test::tiny_full_job();
  CHECK(estimate(job).breakdown.total() == 7'757'440);
  job.gradients_freed = true;
  trace::JobEstimate freed = estimate(job);
  CHECK(freed.breakdown.gradients == 0);
  CHECK(freed.breakdown.total() == 7'757'440 - 808'192);
  // Accumulating micro-batches keep them whatever zero_grad does.
  job.grad_accum = 2;
  CHECK(estimate(job).breakdown.total() == 7'757'440);
  // One token: the step sets the peak, gradients + temporary = 1,616,384 over the weights
  // (202,048 x 6) and two moments (202,048 x 8): 1,212,288 + 1,616,384 + 1,616,384.
  job = one_token_job();
  job.gradients_freed = true;
  freed = estimate(job);
  CHECK(freed.breakdown.total() == 4'445'056);
  CHECK(freed.breakdown.gradients == k_params * 4);
}

TEST_CASE("a half-precision embedding's backward holds an fp32 buffer of its table",
          "[job][phases]") {
  // Pure bf16, fused step (no temporary), one token: embedding_dense_backward accumulates the
  // 1,000 x 64 table's gradient in fp32 (256,000 bytes) when the other gradients (202,048 x 2
  // = 404,096) exist: weights 404,096 + moments 808,192 + 660,096 = 1,872,384, freed or kept.
  trace::Job job = one_token_job();
  job.precision = trace::Precision::bf16_pure;
  job.foreach_step = false;
  CHECK(estimate(job).breakdown.total() == 1'872'384);
  job.gradients_freed = true;
  CHECK(estimate(job).breakdown.total() == 1'872'384);
  // fp32 weights accumulate into their own fp32 gradient: no buffer. Mixed, kept, one token:
  // 1,212,288 + 808,192 + 1,616,384 + the forward (4,096 + 12,000) = 3,652,960.
  job.precision = trace::Precision::mixed;
  job.gradients_freed = false;
  CHECK(estimate(job).breakdown.total() == 3'652'960);
}

TEST_CASE("autocast over fp32 weights: the fp32 residual stream's saved values",
          "[job][autocast]") {
  // Each layer: q, k, v and gate, up each cast the fp32 stream's normed values to bf16 apart
  // (2 + 1 copies more of 64) and both RMSNorms hold an fp32 value more (fused norms: their
  // input; 2 x 64): 320 values x 2 bytes; the final norm 64 x 2: (2 x 640 + 128) x 256 tokens.
  trace::Job job = trace::test::tiny_full_job();
  const std::int64_t plain = estimate(job).breakdown.activations;
  job.autocast_fp32_weights = true;
  CHECK(estimate(job).breakdown.activations - plain == 360'448);
  // Pure bf16 has no fp32 stream; neither does a model DeepSpeed or FSDP cast to bf16.
  job.precision = trace::Precision::bf16_pure;
  const std::int64_t pure = estimate(job).breakdown.activations;
  job.autocast_fp32_weights = false;
  CHECK(estimate(job).breakdown.activations == pure);
  // LoRA over a bf16 base: the embedding is bf16, no fp32 stream, whatever autocast does.
  job = trace::test::tiny_full_job();
  job.mode = trace::JobMode::lora;
  job.lora_rank = 8;
  const std::int64_t lora = estimate(job).breakdown.activations;
  job.autocast_fp32_weights = true;
  CHECK(estimate(job).breakdown.activations == lora);
}

TEST_CASE("transformers' gelu_new saves its intermediates; autocast makes them fp32",
          "[job][activation]") {
  // GPT-2 of hidden 64 (inner 256), 2 layers, 4 heads, vocab 1,000. gelu_new is
  // 0.5x (1 + tanh(k (x + 0.044715 x^3))): tanh's output, 1 + tanh and 0.5x are saved, 3 x 256
  // values a layer more than a fused gelu: 3 x 256 x 2 bytes x 2 layers x 256 tokens.
  const std::string gelu_new = R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2,
    "n_head": 4, "vocab_size": 1000, "n_positions": 128, "activation_function": "gelu_new"})";
  const std::string gelu = R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2,
    "n_head": 4, "vocab_size": 1000, "n_positions": 128, "activation_function": "gelu"})";
  trace::Job job = trace::test::tiny_full_job();
  job.precision = trace::Precision::bf16_pure;
  job.composed_activations = true;
  CHECK(estimate(gelu_new.c_str(), job).breakdown.activations -
            estimate(gelu.c_str(), job).breakdown.activations ==
        786'432);
  // Under autocast torch.pow runs in fp32: its input copy, tanh's output and 1 + tanh take 2
  // bytes more each (3 x 256 values a layer): 786,432 more again.
  job.precision = trace::Precision::mixed;
  job.autocast_fp32_weights = true;
  CHECK(estimate(gelu_new.c_str(), job).breakdown.activations -
            estimate(gelu.c_str(), job).breakdown.activations ==
        2 * 786'432);
  // A fused kernel (LitGPT's, torchtune's, Megatron's models) or torch.compile: none of it.
  job.composed_activations = false;
  CHECK(estimate(gelu_new.c_str(), job).breakdown.activations ==
        estimate(gelu.c_str(), job).breakdown.activations);
}
