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
  // LoRA over a bf16 base: the embedding is bf16, no fp32 stream. But PEFT casts each adapter's
  // input to the fp32 adapter's dtype and autocast casts it back for lora_A: every adapted Linear
  // keeps a bf16 copy of its own (q, k, v, o 4 x 64, gate, up 2 x 64, down 128 = 512 values a
  // layer), in place of the one copy of each input the frozen base would share (its input 64,
  // the MLP's 64 and down input 128; the attention output stays, SDPA keeps it): +256 values a
  // layer, 2 layers x 256 tokens x 2 bytes.
  job = trace::test::tiny_full_job();
  job.mode = trace::JobMode::lora;
  job.lora_rank = 8;
  const std::int64_t lora = estimate(job).breakdown.activations;
  job.autocast_fp32_weights = true;
  CHECK(estimate(job).breakdown.activations - lora == 256 * 2 * 256 * 2);
}

TEST_CASE("transformers' gelu_new saves its intermediates / autocast makes them fp32",
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

TEST_CASE("autocast's bf16 weight copies are gone when backward ends", "[job][phases][autocast]") {
  // Mixed precision under autocast over fp32 weights, fused step, one token, gradients freed.
  // The forward holds the fp32 weights (202,048 x 4), their bf16 copies (x 2: autocast's cache,
  // saved by the matmuls), two moments (x 8) and a few KB of activations and logits: 2,846,176.
  // Backward frees each layer's saved copy and the cache went when the forward left autocast,
  // so the step holds weights, moments and gradients only: 202,048 x (4 + 8 + 4) = 3,232,768,
  // the peak (with the copies counted there too it read 3,636,864).
  trace::Job job = one_token_job();
  job.foreach_step = false;
  job.gradients_freed = true;
  job.autocast_fp32_weights = true;
  CHECK(estimate(job).breakdown.total() == k_params * 16);
  // A bf16 model cast by DeepSpeed or FSDP (no autocast) keeps its bf16 weights: + 404,096.
  job.autocast_fp32_weights = false;
  CHECK(estimate(job).breakdown.total() == k_params * 18);
}

TEST_CASE("under full checkpointing autocast's layer copies meet only the loss's forward",
          "[job][phases][autocast]") {
  // Checkpointed layers save no bf16 weight copy, so at the loss's backward only the head's is
  // held (1,000 x 64 x 2 = 128,000); the layers' (404,096 - 128,000 = 276,096) are in the cache
  // at the loss's forward, when the logits hold 10 bytes a value, not the backward's 12: they
  // count by what they exceed the 2 bytes x 1,000 values a token there. Gradients kept, so the
  // weights term reads it: fp32 weights 808,192 + the copies held.
  trace::Job job = trace::test::tiny_full_job();
  job.autocast_fp32_weights = true;
  job.checkpointing = trace::Checkpointing::full;
  // 256 tokens: 512,000 bytes of logits more at the backward; only the head's copy counts.
  CHECK(estimate(job).breakdown.weights == 808'192 + 128'000);
  // 16 tokens: 32,000 more; 276,096 - 32,000 = 244,096 of the layers' copies count.
  job.seq_len = 16;
  job.batch = 1;
  CHECK(estimate(job).breakdown.weights == 808'192 + 128'000 + 244'096);
  // A loss with no forward level of its own (chunked) counts every copy, as does no
  // checkpointing (the matmuls save them for backward).
  job.loss = trace::LossImpl::chunked;
  CHECK(estimate(job).breakdown.weights == 808'192 + 404'096);
  job.loss = trace::LossImpl::full;
  job.checkpointing = trace::Checkpointing::none;
  CHECK(estimate(job).breakdown.weights == 808'192 + 404'096);
}

TEST_CASE("fp32 weights tied to the head: the embedding's gradient is added into the head's",
          "[job][phases]") {
  // The tiny Llama with its head tied: 202,048 - 64,000 = 138,048 parameters. The head's
  // backward made the shared gradient; the embedding's backward, the last op, makes a second
  // 1,000 x 64 x 4 = 256,000 bytes and adds it in place. Fused step, one token, gradients
  // freed: weights 552,192 + moments 1,104,384 + gradients 552,192 + 256,000 = 2,464,768, in
  // fp32 and under autocast over fp32 weights alike.
  std::string tied = trace::test::k_tiny_llama;
  tied.replace(tied.find("\"tie_word_embeddings\": false"), 28, "\"tie_word_embeddings\": true");
  trace::Job job = one_token_job();
  job.foreach_step = false;
  job.gradients_freed = true;
  job.precision = trace::Precision::fp32;
  CHECK(estimate(tied.c_str(), job).breakdown.total() == 2'464'768);
  job.precision = trace::Precision::mixed;
  job.autocast_fp32_weights = true;
  CHECK(estimate(tied.c_str(), job).breakdown.total() == 2'464'768);
  // Untied, the embedding's gradient is the parameter's own: no second table.
  CHECK(estimate(job).breakdown.total() == k_params * 16);
}
