// The job estimator's terms on a tiny Llama, each derived by hand below (docs/memory.md, "Jobs").
//
// Model: hidden h = 64, 2 layers, 4 heads x 16, 2 kv heads, intermediate I = 128, vocab V = 1000,
// untied head.
//   embedding V h = 64,000; per layer q 4,096 + k 2,048 + v 2,048 + o 4,096 + MLP 3 x 8,192 +
//   2 norms 128 = 36,992; x 2 = 73,984; final norm 64; head 64,000.  P = 202,048.
// Saved values per token (SDPA): per layer, attention input 64 + Q 64 + K, V 2 x 32 + o_proj
//   input 64 = 256; MLP input 64 + gate, act, up, product 4 x 128 = 576; norm inputs 2 x 64 = 128:
//   960 per layer, 1,920 for both, + final norm and head inputs 2 x 64 = 2,048 per token.

#include "trace/estimate/job.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"
#include "tiny_jobs.hpp"
#include "tiny_models.hpp"
#include "trace/error.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/model/model_config.hpp"
#include "trace/render/render.hpp"
#include "trace/validate/validation.hpp"

namespace {

constexpr std::int64_t k_params = 202'048;

const char* const k_tiny = trace::test::k_tiny_llama;

trace::JobEstimate estimate(const trace::Job& job) {
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  return trace::estimate_job(model, trace::count_parameters(model), job);
}

// 2 x 128 tokens under flash-attn, which keeps K and V grouped (2 kv heads): the saved values
// derived above. SDPA after transformers' repeat_kv keeps them at 4 heads: 2 x (64 - 32) = 64
// values more per layer. Norms as fused kernels: an eager RMSNorm's fp32 copies have their own
// test.
trace::Job full_job() { return trace::test::tiny_full_job(); }

// LoRA r = 8 on q and v in pure bf16, the rest as full_job.
trace::Job lora_qv_job() {
  trace::Job job = full_job();
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::bf16_pure;
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::attention_qv;
  return job;
}

}  // namespace

TEST_CASE("the tiny model has the parameters derived by hand", "[job]") {
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  CHECK(trace::count_parameters(model).total == k_params);
}

TEST_CASE("full fine-tune, mixed precision, AdamW: every term", "[job]") {
  const trace::JobEstimate e = estimate(full_job());
  CHECK(e.breakdown.weights == k_params * (4 + 2));  // fp32 master + bf16 autocast copies
  CHECK(e.breakdown.gradients == k_params * 4);
  CHECK(e.breakdown.optimizer == k_params * 8);       // two fp32 moments
  CHECK(e.breakdown.activations == 2'048 * 256 * 2);  // 1,048,576
  // transformers' loss: fp32 upcast 4 + shifted fp32 copy 4 + fp32 log-softmax 4
  CHECK(e.breakdown.logits == 1'000 * 256 * 12);
  // 202,048 x 18 = 3,636,864 + 1,048,576 + 3,072,000
  CHECK(e.breakdown.total() == 7'757'440);
  CHECK(e.trainable_params == k_params);
}

TEST_CASE("precision and optimizer change the per-parameter bytes", "[job]") {
  trace::Job job = full_job();
  job.precision = trace::Precision::bf16_pure;
  trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 2);
  CHECK(e.breakdown.gradients == k_params * 2);
  CHECK(e.breakdown.optimizer == k_params * 4);  // two bf16 moments
  job.precision = trace::Precision::fp32;
  e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 4);
  CHECK(e.breakdown.activations == 2'048 * 256 * 4);  // fp32 activations
  job.optimizer = trace::Optimizer::adamw_8bit;
  // two int8 states + an fp32 absmax per 2,048-value block for each: ceil(202,048 / 2,048) = 99
  CHECK(estimate(job).breakdown.optimizer == k_params * 2 + 99 * 2 * 4);
  job.optimizer = trace::Optimizer::paged_adamw_8bit;
  CHECK(estimate(job).breakdown.optimizer == 0);  // unified memory, pages out
  job.optimizer = trace::Optimizer::sgd;
  CHECK(estimate(job).breakdown.optimizer == 0);
  job.optimizer = trace::Optimizer::lion;
  CHECK(estimate(job).breakdown.optimizer == k_params * 4);
  job.optimizer = trace::Optimizer::adafactor;
  // rows + columns of each of the 15 matrices (7 per layer + head): per layer q 128, k 96,
  // v 96, o 128, gate 192, up 192, down 192 = 1,024; x 2 = 2,048; head 1,064. The rest full:
  // embedding 64,000 + norms 5 x 64 = 64,320 (P minus the matrices' 137,728 values).
  CHECK(estimate(job).breakdown.optimizer == (2'048 + 1'064 + 64'320) * 4);
}

TEST_CASE("a foreach AdamW step peaks above the forward pass when its temporary outweighs it",
          "[job]") {
  // PyTorch's foreach AdamW builds exp_avg_sq_sqrt, one fp32 state (202,048 x 4 = 808,192
  // bytes), after backward has freed the activations and logits. At 256 tokens these outweigh
  // it (1,048,576 + 3,072,000: the test above) and the peak is the forward pass's. At one token
  // the activations are 2,048 x 2 = 4,096 and the logits 1,000 x 12 = 12,000, so the step peaks
  // 808,192 - 16,096 = 792,096 bytes higher, counted with the optimizer.
  trace::Job job = full_job();
  job.seq_len = 1;
  job.batch = 1;
  trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.activations == 4'096);
  CHECK(e.breakdown.logits == 12'000);
  CHECK(e.breakdown.optimizer == k_params * 8 + 792'096);
  // A fused step, a step inside backward, and 8-bit states have no such temporary.
  job.foreach_step = false;
  CHECK(estimate(job).breakdown.optimizer == k_params * 8);
  job.foreach_step = true;
  job.optimizer_in_backward = true;
  CHECK(estimate(job).breakdown.optimizer == k_params * 8);
  job.optimizer_in_backward = false;
  job.optimizer = trace::Optimizer::adamw_8bit;
  CHECK(estimate(job).breakdown.optimizer == k_params * 2 + 99 * 2 * 4);
}

TEST_CASE("an eager RMSNorm keeps an fp32 copy of its input", "[job]") {
  // transformers', torchtune's and LitGPT's RMSNorm upcast the input to fp32 and keep that copy
  // for backward instead of the bf16 input (2 bytes more per value); a trained norm weight also
  // needs the normalised input (a bf16 copy, 2 more). The tiny model's RMSNorms: 2 per layer x
  // 2 layers x 64 + the final 64 = 320 values per token, 256 tokens.
  trace::Job job = full_job();
  const std::int64_t fused = estimate(job).breakdown.activations;
  job.eager_rms_norm = true;
  CHECK(estimate(job).breakdown.activations - fused == 320 * (2 + 2) * 256);
  // LoRA: the norms are frozen, only the fp32 copy.
  job = lora_qv_job();
  const std::int64_t lora_fused = estimate(job).breakdown.activations;
  job.eager_rms_norm = true;
  CHECK(estimate(job).breakdown.activations - lora_fused == 320 * 2 * 256);
  // Full checkpointing keeps the final norm's copies (64 x 4 bytes per token) and recomputes
  // one layer's two norms (128 x 4).
  job = full_job();
  job.checkpointing = trace::Checkpointing::full;
  const std::int64_t checkpointed = estimate(job).breakdown.activations;
  job.eager_rms_norm = true;
  CHECK(estimate(job).breakdown.activations - checkpointed == (64 + 128) * 4 * 256);
  // torch.compile fuses the norm; fp32 training has nothing to upcast (the weight's copy stays).
  job.compiled = true;
  const std::int64_t compiled_eager = estimate(job).breakdown.activations;
  job.eager_rms_norm = false;
  CHECK(estimate(job).breakdown.activations == compiled_eager);
  job.compiled = false;
  job.checkpointing = trace::Checkpointing::none;
  job.precision = trace::Precision::fp32;
  job.eager_rms_norm = false;
  const std::int64_t fp32_fused = estimate(job).breakdown.activations;
  job.eager_rms_norm = true;
  CHECK(estimate(job).breakdown.activations - fp32_fused == 320 * 4 * 256);
}

TEST_CASE("checkpointing and eager attention change the activations", "[job]") {
  trace::Job job = full_job();
  job.checkpointing = trace::Checkpointing::full;
  // layer inputs 2 x 64 + final/head inputs 128, plus one layer recomputed (960): 1,216 / token
  CHECK(estimate(job).breakdown.activations == 1'216 * 256 * 2);
  job.checkpointing = trace::Checkpointing::none;
  job.attention = trace::AttentionImpl::eager;
  // K and V repeated to 4 heads (+64 values per layer: 2,176 per token) + per layer 4 heads x
  // 128 x 128 scores x 2 sequences x 6 bytes = 786,432
  CHECK(estimate(job).breakdown.activations == 2'176 * 256 * 2 + 2 * 786'432);
  job.checkpointing = trace::Checkpointing::full;
  // the recomputed layer is 1,024 wide with the repeat: 128 + 128 + 1,024 = 1,280 per token
  CHECK(estimate(job).breakdown.activations == 1'280 * 256 * 2 + 786'432);
  job.attention = trace::AttentionImpl::sdpa;
  job.checkpointing = trace::Checkpointing::none;
  CHECK(estimate(job).breakdown.activations == 2'176 * 256 * 2);
}

TEST_CASE("eager attention's backward holds three fp32 score tensors at the widest layer",
          "[job]") {
  // The softmax backward of one layer: its saved fp32 output, the incoming gradient and the new
  // one, 3 x 4 = 12 bytes per score, 6 above the 6 the layer kept (fp32 softmax output + the
  // bf16 probabilities P.V saved): 6 x 131,072 scores (4 heads x 128 x 128 x 2 sequences) =
  // 786,432 bytes. Beside them the layer's backward holds three hidden-sized gradients of the
  // residual stream: 3 x 64 x 256 tokens x 2 bytes = 98,304. The loss's backward has freed the
  // logits by then, so only what exceeds them counts; with Cut Cross-Entropy (no logits) all.
  constexpr std::int64_t residual_gradients = 98'304;
  trace::Job job = full_job();
  job.attention = trace::AttentionImpl::eager;
  job.loss = trace::LossImpl::cut;
  CHECK(estimate(job).breakdown.activations ==
        2'176 * 256 * 2 + 2 * 786'432 + 786'432 + residual_gradients);
  job.checkpointing = trace::Checkpointing::full;
  CHECK(estimate(job).breakdown.activations ==
        1'280 * 256 * 2 + 786'432 + 786'432 + residual_gradients);
  // Selective checkpointing kept no scores and recomputes them: all 12 bytes per score.
  job.checkpointing = trace::Checkpointing::selective;
  const std::int64_t selective_eager = estimate(job).breakdown.activations;
  job.attention = trace::AttentionImpl::sdpa;
  CHECK(selective_eager - estimate(job).breakdown.activations == 12 * 131'072);
  // Unsloth's fused loss keeps the bf16 logits, 1,000 x 256 x 2 = 512,000 bytes, until the
  // loss's backward: the softmax backward and the residual gradients peak 372,736 above them.
  job.attention = trace::AttentionImpl::eager;
  job.checkpointing = trace::Checkpointing::full;
  job.loss = trace::LossImpl::fused;
  const trace::JobEstimate fused = estimate(job);
  CHECK(fused.breakdown.logits == 512'000);
  CHECK(fused.breakdown.activations ==
        1'280 * 256 * 2 + 786'432 + (786'432 + residual_gradients - 512'000));
}

TEST_CASE("a layer's backward holds three residual-stream gradients beyond the logits",
          "[job]") {
  // The tiny Llama (hidden 64), 256 tokens in bf16: the output's gradient, the residual
  // gradient between attention and MLP, and the branch gradient being added: 3 x 64 x 256 x 2
  // = 98,304 bytes while a layer runs backward. The loss's backward freed the logits first, so
  // they count only above the logits: all of them without logits (Cut Cross-Entropy), none
  // under the full loss (1,000 x 256 x 12 = 3,072,000 bytes of logits).
  // Full checkpointing keeps 1,280 values per token with K and V repeated (the eager case
  // above); flash-attn keeps them grouped, 2 x (4 - 2) x 16 = 64 fewer: 1,216.
  trace::Job job = full_job();
  job.checkpointing = trace::Checkpointing::full;
  job.loss = trace::LossImpl::cut;
  const trace::JobEstimate cut = estimate(job);
  CHECK(cut.breakdown.logits == 0);
  CHECK(cut.breakdown.activations == 1'216 * 256 * 2 + 98'304);
  job.loss = trace::LossImpl::full;
  const trace::JobEstimate full = estimate(job);
  CHECK(full.breakdown.logits == 3'072'000);
  CHECK(full.breakdown.activations == 1'216 * 256 * 2);
  // fp32 training (4-byte activations): the gradients are fp32 too, 196,608 bytes.
  job.loss = trace::LossImpl::cut;
  job.precision = trace::Precision::fp32;
  CHECK(estimate(job).breakdown.activations == 1'216 * 256 * 4 + 196'608);
}

TEST_CASE("FSDP's backward makes a unit's gradients whole before reduce-scattering them", "[job]") {
  // The tiny Llama under full checkpointing with Cut Cross-Entropy (no logits), on 2 GPUs: the
  // checkpoints and recomputed layer (1,216 values per token, 256 tokens in bf16) and the
  // residual-stream gradients (98,304 bytes) as on one GPU. Under PyTorch's FSDP the layer's
  // backward also makes its weights' gradients whole in bf16 before the reduce-scatter: the
  // largest block, one layer's 36,992 parameters (q and o 4,096 each, k and v 2,048 each, gate,
  // up and down 8,192 each, two norms of 64), 73,984 bytes. DeepSpeed's ZeRO-3 moves each
  // gradient into its bucket as autograd makes it: none.
  trace::Job job = full_job();
  job.checkpointing = trace::Checkpointing::full;
  job.loss = trace::LossImpl::cut;
  job.gpus = 2;
  job.sharding = trace::Sharding::zero3;
  CHECK(estimate(job).breakdown.activations == 1'216 * 256 * 2 + 98'304);
  job.fsdp = true;
  CHECK(estimate(job).breakdown.activations == 1'216 * 256 * 2 + 98'304 + 73'984);
  // The loss's backward freed the logits first: under the full loss (3,072,000 bytes) they
  // count only above it, so not at all here.
  job.loss = trace::LossImpl::full;
  CHECK(estimate(job).breakdown.activations == 1'216 * 256 * 2);
  // LoRA trains the adapters alone: no unit of frozen weights makes gradients.
  job.loss = trace::LossImpl::cut;
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::bf16_pure;
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::attention_qv;
  const std::int64_t lora_fsdp = estimate(job).breakdown.activations;
  job.fsdp = false;
  CHECK(estimate(job).breakdown.activations == lora_fsdp);
}

TEST_CASE("the allocated peak does not count the recomputed layer beside the logits", "[job]") {
  // Full checkpointing on the tiny Llama, 256 tokens in bf16: checkpoints (2 layer inputs + the
  // final norm's and head's inputs, 4 x 64 values) 256 x 256 x 2 = 131,072 bytes; the layer the
  // backward recomputes (960 values) 491,520; its residual-stream gradients 98,304. The loss's
  // backward frees the logits before that recompute: allocated memory holds the checkpoints and
  // the larger of the two sides; the held peak (the default) counts both.
  trace::Job job = full_job();
  job.checkpointing = trace::Checkpointing::full;
  CHECK(estimate(job).breakdown.activations == 131'072 + 491'520);  // logits 3,072,000 > 589,824
  job.allocated_peak = true;
  CHECK(estimate(job).breakdown.activations == 131'072);
  CHECK(estimate(job).breakdown.logits == 3'072'000);
  // Unsloth's fused loss keeps 512,000 bytes of bf16 logits: the layer side is 77,824 above.
  job.loss = trace::LossImpl::fused;
  CHECK(estimate(job).breakdown.activations == 131'072 + (491'520 + 98'304 - 512'000));
  job.allocated_peak = false;
  CHECK(estimate(job).breakdown.activations == 131'072 + 491'520);
  // No logits (Cut Cross-Entropy): the two peaks are one.
  job.loss = trace::LossImpl::cut;
  const std::int64_t held = estimate(job).breakdown.activations;
  job.allocated_peak = true;
  CHECK(estimate(job).breakdown.activations == held);
  CHECK(held == 131'072 + 491'520 + 98'304);
  // Without checkpointing the saved activations and the logits coexist: one peak too.
  job.loss = trace::LossImpl::full;
  job.checkpointing = trace::Checkpointing::none;
  const std::int64_t none_allocated = estimate(job).breakdown.total();
  job.allocated_peak = false;
  CHECK(estimate(job).breakdown.total() == none_allocated);
}

TEST_CASE("LoRA and QLoRA: adapters on q and v, the frozen base", "[job]") {
  trace::Job job = lora_qv_job();
  // per layer q 8 x (64 + 64) + v 8 x (64 + 32) = 1,792; x 2 layers
  const std::int64_t adapters = 3'584;
  trace::JobEstimate e = estimate(job);
  CHECK(e.trainable_params == adapters);
  CHECK(e.breakdown.weights == k_params * 2 + adapters * 2);
  CHECK(e.breakdown.gradients == adapters * 2);
  CHECK(e.breakdown.optimizer == adapters * 4);

  job.lora_targets = trace::LoraTargets::all_linear;
  // every Linear of the layers: q 1,024 + k 768 + v 768 + o 1,024 + gate, up, down 3 x 1,536
  // = 8,192 per layer (the head is not adapted)
  CHECK(estimate(job).trainable_params == 16'384);

  job.mode = trace::JobMode::qlora;
  job.lora_targets = trace::LoraTargets::attention_qv;
  // nf4 Linears: 2 x 36,864 = 73,728 values -> 36,864 bytes + U8 absmax per 64 (1,152); per
  // Linear (14 of them, each under 256 blocks) one F32 nested absmax, the 256-entry F32 nested
  // code book and the 16-entry F32 nf4 code book: 14 x (1 + 256 + 16) x 4 = 15,288 bytes (as a
  // bitsandbytes checkpoint stores them); the other 128,320 parameters stay bf16; and the bf16
  // copy each 4-bit matmul dequantizes its weight into, the largest (gate, up, down: 128 x 64)
  // counted: 8,192 x 2 = 16,384.
  e = estimate(job);
  CHECK(e.breakdown.weights == 36'864 + 1'152 + 15'288 + 128'320 * 2 + adapters * 2 + 16'384);
}

TEST_CASE("an nf4 base quantized in one pass peaks at model setup", "[job][qlora]") {
  trace::Job job = lora_qv_job();
  job.mode = trace::JobMode::qlora;
  job.seq_len = 1;  // one token: a step lighter than the setup
  const trace::MemoryBreakdown chunked = estimate(job).breakdown;
  CHECK(chunked.overhead == 0);
  job.nf4_quantized_in_one_pass = true;
  const trace::MemoryBreakdown one_pass = estimate(job).breakdown;
  // torchao 0.1 quantizes the largest weight (gate, up, down: 128 x 64 = 8,192 values) in one
  // pass: beside the stored weights (which count its bf16 copy), its scaled blocks (2 bytes a
  // value) and its differences from the 16 nf4 levels and their absolute values (2 x 16 x 2
  // bytes a value): 66 x 8,192 = 540,672 bytes, before any gradient, state or activation.
  const std::int64_t step =
      chunked.gradients + chunked.optimizer + chunked.activations + chunked.logits;
  REQUIRE(step < 540'672);
  CHECK(one_pass.weights == chunked.weights);
  CHECK(one_pass.overhead == 540'672 - step);
  CHECK(one_pass.total() == chunked.weights + 540'672);
  CHECK(trace::describe_job(job).find("nf4 base, quantized in one pass") != std::string::npos);
  // A step heavier than the setup sets the peak: nothing is added.
  job.seq_len = 2048;
  const trace::MemoryBreakdown long_step = estimate(job).breakdown;
  REQUIRE(long_step.gradients + long_step.optimizer + long_step.activations + long_step.logits >
          540'672);
  CHECK(long_step.overhead == 0);
  // A LoRA over a bf16 base quantizes nothing.
  job.mode = trace::JobMode::lora;
  job.seq_len = 16;
  CHECK(estimate(job).breakdown.overhead == 0);
}

TEST_CASE("ZeRO-3 and FSDP gather a QLoRA base as it is stored", "[job]") {
  // nf4 without double quantization: per tensor, n / 2 bytes of packed values and an F32
  // absmax per 64 values + a 16-value F32 code book. q and o (4,096 values): 2,048 + 4 x (64 +
  // 16) = 2,368 each; k and v (2,048): 1,024 + 4 x 48 = 1,216 each; gate, up, down (8,192):
  // 4,096 + 4 x 144 = 4,672 each. 21,184 bytes per layer for 36,864 values; 42,368 for both
  // layers' 73,728. A layer of 36,992 parameters is gathered at that mean: 36,992 x 42,368 /
  // 73,728 = 21,257.6, 21,258 bytes.
  trace::Job job = lora_qv_job();
  job.mode = trace::JobMode::qlora;
  job.nf4_double_quant = false;
  job.gpus = 2;
  job.sharding = trace::Sharding::zero3;
  job.cpu_offload = true;  // the GPU holds only what is gathered
  // DeepSpeed, the tiny model lying well within stage3_max_reuse_distance (1e9): both layers
  // at that mean (73,984 x 42,368 / 73,728 = 42,515.6, 42,516 bytes), the bf16 head and the
  // untied embedding (64,000 x 2 each) stay gathered into backward: 298,516
  CHECK(estimate(job).breakdown.weights == 42'516 + 128'000 + 128'000);
  // repartitioning every layer after it runs: the layer, then the bf16 head beside it
  job.zero_max_reuse_distance = 0;
  CHECK(estimate(job).breakdown.weights == 21'258 + 128'000);
  // FSDP: the bf16 root unit (128,064 x 2) held through backward, two layers gathered
  job.root_unit_gathered = true;
  CHECK(estimate(job).breakdown.weights == 128'064 * 2 + 2 * 21'258);
}

TEST_CASE("sharding divides the right terms", "[job]") {
  trace::Job job = full_job();
  job.gpus = 4;
  job.sharding = trace::Sharding::megatron;
  trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.optimizer == k_params * 8 / 4);
  // Megatron's distributed optimizer keeps its fp32 main gradients whole
  CHECK(e.breakdown.gradients == k_params * 4);
  // it shards the fp32 master copy with the moments; the bf16 copy stays whole
  CHECK(e.breakdown.weights == k_params * 2 + k_params * 4 / 4);
  // DeepSpeed ZeRO-1 likewise, but its gradients are the bf16 model's, whole until the
  // epilogue reduces them through the bucket (here 10,000 values, 20,000 bytes): 404,096 +
  // 20,000 = 424,096 beside the activations and logits. Its step comes after them: the bf16
  // partition (202,048 / 4 = 50,512 values, 101,024 bytes) with the fp64 norm copy of its
  // largest gradient (min(64,000, 50,512) x 8 = 404,096), 505,120, or the partition flattened
  // (a second 101,024) and cast to fp32 (202,048), 404,096: 505,120, less than the forward's
  // activations (1,048,576) and logits (3,072,000) with the backward's gradients.
  job.sharding = trace::Sharding::zero1;
  job.zero_reduce_bucket = 10'000;
  e = estimate(job);
  CHECK(e.breakdown.gradients == 424'096);
  CHECK(e.breakdown.optimizer == k_params * 8 / 4);
  CHECK(e.breakdown.weights == k_params * 2 + k_params * 4 / 4);
  job.zero_reduce_bucket = 500'000'000;
  job.sharding = trace::Sharding::zero2;
  // DeepSpeed ZeRO-2 keeps this rank's partition of the bf16 gradients, 101,024 bytes, and
  // beside it in backward the reduce bucket (here 10,000 values, 20,000 bytes) and the largest
  // gradient autograd makes, the head's (64,000 values, 128,000 bytes): 249,024. The step's
  // 505,120 (as under ZeRO-1) comes when the activations and logits are gone and is less than
  // they and backward's gradients hold.
  job.zero_reduce_bucket = 10'000;
  CHECK(estimate(job).breakdown.gradients == 249'024);
  // the weights and states as under ZeRO-1
  CHECK(estimate(job).breakdown.weights == k_params * 2 + k_params * 4 / 4);
  CHECK(estimate(job).breakdown.optimizer == k_params * 8 / 4);
  // one token: the forward holds 2,048 x 2 bytes of activations and 1,000 x 12 of logits,
  // 16,096, and the step's 505,120 is the peak: the gradients count 505,120 - 16,096
  {
    trace::Job one_token = job;
    one_token.seq_len = 1;
    one_token.batch = 1;
    const trace::JobEstimate step = estimate(one_token);
    CHECK(step.breakdown.activations + step.breakdown.logits == 4'096 + 12'000);
    CHECK(step.breakdown.gradients == 505'120 - 16'096);
  }
  // a 100,000-value bucket, two of them with overlap_comm: 101,024 + 400,000 + 128,000
  job.zero_reduce_bucket = 100'000;
  job.zero_overlap_comm = true;
  CHECK(estimate(job).breakdown.gradients == 629'024);
  // DeepSpeed's default bucket, 5e8 values (1e9 bytes, allocated whole whatever the model):
  // 101,024 + 1,000,000,000 + 128,000
  job.zero_reduce_bucket = 500'000'000;
  job.zero_overlap_comm = false;
  CHECK(estimate(job).breakdown.gradients == 1'000'229'024);
  // offloaded, the partitions live on the host: the bucket and the largest gradient in
  // flight, and the fp64 norm copy made in backward: 20,000 + 128,000 + 404,096
  job.zero_reduce_bucket = 10'000;
  job.cpu_offload = true;
  CHECK(estimate(job).breakdown.gradients == 552'096);
  job.cpu_offload = false;
  job.zero_reduce_bucket = 500'000'000;
  {
    // LoRA on q and v (r 8, pure bf16): 2 layers x (8 x (64 + 64) + 8 x (64 + 32)) = 3,584
    // adapter weights, their bf16 gradients 7,168 bytes; ZeRO-2 keeps a quarter, 1,792, ZeRO-1
    // all. DeepSpeed allocates the bucket whole all the same: 10,000 values, 20,000 bytes.
    trace::Job lora = lora_qv_job();
    lora.gpus = 4;
    lora.zero_reduce_bucket = 10'000;
    lora.sharding = trace::Sharding::zero2;
    CHECK(estimate(lora).trainable_params == 3'584);
    CHECK(estimate(lora).breakdown.gradients == 1'792 + 20'000);
    lora.sharding = trace::Sharding::zero1;
    CHECK(estimate(lora).breakdown.gradients == 7'168 + 20'000);
    // DeepSpeed's ZeRO-3 allocates its bucket at start too; PyTorch's FSDP has none
    lora.sharding = trace::Sharding::zero3;
    CHECK(estimate(lora).breakdown.gradients == 1'792 + 20'000);
    // by default Hugging Face's "auto": hidden_size squared, 64 x 64 values, 8,192 bytes
    lora.zero_reduce_bucket.reset();
    CHECK(estimate(lora).breakdown.gradients == 1'792 + 8'192);
    lora.fsdp = true;
    CHECK(estimate(lora).breakdown.gradients == 1'792);
    lora.fsdp = false;
    // PyTorch DDP's buckets: a second copy of the trained gradients, 7,168 x 2
    lora.sharding = trace::Sharding::ddp;
    CHECK(estimate(lora).breakdown.gradients == 14'336);
  }
  {
    // DDP of the full model: the fp32 gradients (202,048 x 4 = 808,192) and the reducer's
    // buckets, as many again; with gradient_as_bucket_view (or FSDP's NO_SHARD) once
    trace::Job ddp = full_job();
    ddp.gpus = 2;
    ddp.sharding = trace::Sharding::ddp;
    ddp.gradients_freed = false;
    CHECK(estimate(ddp).breakdown.gradients == 808'192 * 2);
    ddp.ddp_bucket_copy = false;
    CHECK(estimate(ddp).breakdown.gradients == 808'192);
  }
  job.sharding = trace::Sharding::zero3;
  job.zero_max_reuse_distance = 0;  // the tiny model would stay gathered whole (its own test)
  // a quarter of both copies + what is gathered in bf16: DeepSpeed's largest layer (36,992)
  // and, for the loss, the head (V h = 64,000), larger than a second layer here
  CHECK(estimate(job).breakdown.weights ==
        k_params * 2 / 4 + k_params * 4 / 4 + (36'992 + 64'000) * 2);
  // PyTorch's FSDP: the root unit (embedding 64,000 + final norm 64 + head 64,000 = 128,064)
  // stays gathered, beside the largest layer and the next, prefetched
  job.root_unit_gathered = true;
  CHECK(estimate(job).breakdown.weights ==
        k_params * 2 / 4 + k_params * 4 / 4 + 128'064 * 2 + 2 * 36'992 * 2);
  job.root_unit_gathered = false;
  job.cpu_offload = true;
  CHECK(estimate(job).breakdown.optimizer == 0);
  // offloaded: the shards, the master copy and the states live on the host; the GPU holds
  // what is gathered
  CHECK(estimate(job).breakdown.weights == (36'992 + 64'000) * 2);
  job.root_unit_gathered = true;
  CHECK(estimate(job).breakdown.weights == 128'064 * 2 + 2 * 36'992 * 2);

  job = full_job();
  job.gpus = 2;
  job.tp = 2;
  e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 6 / 2);
  CHECK(e.breakdown.activations == 2'048 * 256 * 2 / 2);
}

TEST_CASE("DeepSpeed's ZeRO-3 keeps a bf16 partition and steps it a sub-group at a time",
          "[job][zero3]") {
  // The tiny Llama's full fine-tune (bf16 mixed) over 4 GPUs under DeepSpeed's ZeRO-3: this
  // rank's partition is 202,048 / 4 = 50,512 gradients, kept in bf16 (101,024 bytes) in a buffer
  // allocated once. Beside it in backward: the reduce bucket, Hugging Face's "auto" by default
  // (hidden_size squared: 64 x 64 = 4,096 values, 8,192 bytes), and the gradient autograd has
  // just made, whole, the head's at most (64,000 values, 128,000 bytes): 237,216.
  trace::Job job = full_job();
  job.gpus = 4;
  job.sharding = trace::Sharding::zero3;
  job.zero_max_reuse_distance = 0;  // one layer and the head gathered, as in 7B-class models
  job.foreach_step = false;  // a fused AdamW step: no temporary (DeepSpeed's FusedAdam)
  CHECK(estimate(job).breakdown.gradients == 101'024 + 8'192 + 128'000);
  // DeepSpeed's own 5e8-value default bucket, when given: 1,000,000,000 bytes instead
  job.zero_reduce_bucket = 500'000'000;
  CHECK(estimate(job).breakdown.gradients == 101'024 + 1'000'000'000 + 128'000);
  job.zero_reduce_bucket.reset();
  // The step comes after the activations and logits are freed, and after every gathered
  // parameter is repartitioned (DeepSpeed's layer, 36,992, and the head, 64,000: 201,984 bytes);
  // the partition and the bucket stay. One sub-group (sub_group_size 1e9 > 50,512) is flattened
  // (101,024) and cast to fp32 (202,048): 109,216 + 303,072 = 412,288 (the fp64 norm copy of a
  // gradient's partition, 16,000 x 8 = 128,000, is less). At one token the forward held 4,096
  // bytes of activations and 12,000 of logits: 412,288 - 16,096 - 201,984 = 194,208 is below
  // backward's 237,216, which stays the peak.
  job.seq_len = 1;
  job.batch = 1;
  trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.activations + e.breakdown.logits == 4'096 + 12'000);
  CHECK(e.breakdown.gradients == 237'216);
  // A foreach AdamW step makes a temporary of one fp32 state, the whole partition's (202,048)
  // while one sub-group holds it: 109,216 + 202,048 + 202,048 = 513,312, and the step is the
  // peak: the gradients count 513,312 - 16,096 - 201,984.
  job.foreach_step = true;
  CHECK(estimate(job).breakdown.gradients == 513'312 - 16'096 - 201'984);
  // Sub-groups of 10,000 values close one parameter past it, 26,000 values here at most (a
  // head's partition is 16,000): the fp32 gradients and the temporary are 104,000 each,
  // 109,216 + 208,000 = 317,216, and backward is the peak again.
  job.zero_sub_group_size = 10'000;
  CHECK(estimate(job).breakdown.gradients == 237'216);
  // PyTorch's FSDP holds fp32 gradient shards instead: 50,512 x 4
  job.foreach_step = false;
  job.fsdp = true;
  CHECK(estimate(job).breakdown.gradients == 202'048);
}

TEST_CASE("DeepSpeed's ZeRO-3 keeps the layers it reuses within stage3_max_reuse_distance",
          "[job][zero3]") {
  // The tiny Llama's LoRA-free full fine-tune in pure bf16 on 4 GPUs, offloaded so that the
  // weights term is what is gathered alone: layers of 36,992 parameters, a head and an untied
  // embedding of V x h = 1,000 x 64 = 64,000 each. Without reuse (distance 0) DeepSpeed holds
  // the layer it runs and the head: (36,992 + 64,000) x 2 = 201,984 bytes.
  trace::Job job = full_job();
  job.precision = trace::Precision::bf16_pure;
  job.gpus = 4;
  job.sharding = trace::Sharding::zero3;
  job.cpu_offload = true;
  job.zero_max_reuse_distance = 0;
  CHECK(estimate(job).breakdown.weights == 201'984);
  // The walk from the last layer to its next use crosses the head twice: 128,000 values. From
  // the first, also the last layer in forward and in backward (no checkpointing): 128,000 +
  // 2 x 36,992 = 201,984. From the embedding, both layers twice: 128,000 + 4 x 36,992 =
  // 275,968. A distance of 128,001 keeps the last layer only (the formula without reuse).
  job.zero_max_reuse_distance = 128'001;
  CHECK(estimate(job).breakdown.weights == 201'984);
  // 201,985 keeps both layers beside the head: (64,000 + 73,984) x 2 = 275,968 bytes
  job.zero_max_reuse_distance = 201'985;
  CHECK(estimate(job).breakdown.weights == 275'968);
  // 275,969 and DeepSpeed's default 1e9 keep the embedding too: the whole model but the final
  // norm, (64,000 + 73,984 + 64,000) x 2 = 403,968 bytes
  job.zero_max_reuse_distance = 275'969;
  CHECK(estimate(job).breakdown.weights == 403'968);
  job.zero_max_reuse_distance = 1'000'000'000;
  CHECK(estimate(job).breakdown.weights == 403'968);
  // Checkpointed, the later layers are crossed twice in backward (recomputed, differentiated):
  // the first layer's walk is 128,000 + 3 x 36,992 = 238,976, so 201,985 keeps the last only
  job.checkpointing = trace::Checkpointing::full;
  job.zero_max_reuse_distance = 201'985;
  CHECK(estimate(job).breakdown.weights == 201'984);
  job.zero_max_reuse_distance = 238'977;
  CHECK(estimate(job).breakdown.weights == 275'968);
  // PyTorch's FSDP has no such rule: its root unit and two blocks, (128,064 + 2 x 36,992) x 2
  job.fsdp = true;
  job.root_unit_gathered = true;
  CHECK(estimate(job).breakdown.weights == 404'096);
}

TEST_CASE("pipeline stages hold the busiest stage's parameters", "[job][pp]") {
  // Two stages split the tiny Llama's 2 layers one each, as vLLM and Megatron split by count:
  // the first holds layer 0 (36,992) + the embedding and norms (64,000 + 64 = 64,064) =
  // 101,056; the last holds layer 1 + the head (64,000) = 100,992. Pure bf16 on 2 GPUs, pp 2:
  // the first stage's 101,056 x 2 bytes (202,112), not half the model (202,048).
  trace::Job job = full_job();
  job.precision = trace::Precision::bf16_pure;
  job.gpus = job.pp = 2;
  const auto weights = [](const trace::Job& j, const char* config) {
    const trace::ModelDescription model = trace::parse_model_config(config);
    return trace::estimate_job(model, trace::count_parameters(model), j).breakdown.weights;
  };
  CHECK(std::llabs(weights(job, k_tiny) - 202'112) <= 1);  // a ratio in double
  // Balanced by memory (Accelerate's device_map), each holds half: 202,048 x 2 / 2.
  job.pipeline_by_memory = true;
  CHECK(weights(job, k_tiny) == 202'048);
  // Tied: 138,048 parameters, but the last stage keeps its own copy of the 64,000-value head,
  // so both stages hold 101,056 / 100,992 as above: 202,112 bytes, not 138,048.
  std::string tied = k_tiny;
  const std::string untied_key = "\"tie_word_embeddings\": false";
  tied.replace(tied.find(untied_key), untied_key.size(), "\"tie_word_embeddings\": true");
  job.pipeline_by_memory = false;
  CHECK(std::llabs(weights(job, tied.c_str()) - 202'112) <= 1);
  job.pipeline_by_memory = true;
  CHECK(weights(job, tied.c_str()) == 138'048);
}

TEST_CASE("FSDP: no_sync accumulation and frozen weights in flat parameters", "[job][fsdp]") {
  // Pure bf16 full fine-tune over 4 GPUs, FSDP full shard: bf16 gradients, a quarter each.
  trace::Job job = full_job();
  job.precision = trace::Precision::bf16_pure;
  job.gpus = 4;
  job.sharding = trace::Sharding::zero3;
  job.fsdp = true;
  CHECK(estimate(job).breakdown.gradients == k_params * 2 / 4);
  // no_sync with one micro-batch per step changes nothing ...
  job.accumulate_unsharded = true;
  CHECK(estimate(job).breakdown.gradients == k_params * 2 / 4);
  // ... with 4, every GPU accumulates the whole model's bf16 gradients.
  job.grad_accum = 4;
  CHECK(estimate(job).breakdown.gradients == k_params * 2);
  // Accumulating with a reduce every micro-batch (torchtune, DeepSpeed) keeps the shards.
  job.accumulate_unsharded = false;
  CHECK(estimate(job).breakdown.gradients == k_params * 2 / 4);

  // LoRA r = 8 on q, v (3,584 adapters, bf16) over 2 GPUs.
  job = lora_qv_job();
  job.gpus = 2;
  job.sharding = trace::Sharding::zero3;
  job.fsdp = true;
  CHECK(estimate(job).breakdown.gradients == 3'584 * 2 / 2);
  // Frozen and trainable weights in one flat parameter: its gradient spans the frozen
  // 202,048 too (bf16), sharded in two; unsharded under no_sync accumulation.
  job.frozen_in_flat_params = true;
  CHECK(estimate(job).breakdown.gradients == (3'584 + k_params) * 2 / 2);
  job.grad_accum = 32;
  job.accumulate_unsharded = true;
  CHECK(estimate(job).breakdown.gradients == (3'584 + k_params) * 2);
  job.grad_accum = 0;
  CHECK_THROWS_AS(estimate(job), trace::ConfigError);
}

TEST_CASE("serving: weights, KV for the context, prefill", "[job]") {
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 100;
  job.concurrency = 3;
  const trace::JobEstimate e = estimate(job);
  CHECK(e.breakdown.weights == k_params * 2);
  // 2 layers x K,V x 2 kv heads x 16 x 2 bytes = 256 bytes per token
  CHECK(e.breakdown.kv_cache == 256 * 100 * 3);
  // the sampling step an engine reserves for 256 sequences (serving_working_set_test.cpp)
  CHECK(e.breakdown.activations == 256 * 1'000 * 14 + 300 * 64 * 2);
}

TEST_CASE("serving over tensor-parallel GPUs holds communication buffers on each", "[job][serve]") {
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 100;
  // one GPU: the engine's CUDA graphs (512 MiB); the caller adds the CUDA context
  CHECK(estimate(job).breakdown.overhead == 512LL << 20);
  job.gpus = job.tp = 2;
  // and NCCL / all-reduce buffers, per GPU
  CHECK(estimate(job).breakdown.overhead == (512LL << 20) + (1'843LL << 20));
  // The one rule the card table's tensor- and expert-parallel searches use too.
  trace::MemoryAssumptions a;
  CHECK(trace::serving_comm_bytes(1, a) == 0);
  CHECK(trace::serving_comm_bytes(8, a) == 1'843LL << 20);
  a.tp_comm_bytes = 0;  // --tp-comm-mib 0
  CHECK(trace::serving_comm_bytes(8, a) == 0);
}

TEST_CASE("serving under autocast keeps fp32 weights and their bf16 copies", "[job][serve]") {
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 100;
  job.base_dtype = trace::Dtype::fp32;
  CHECK(estimate(job).breakdown.weights == k_params * 4);
  // autocast caches the bf16 cast of every weight while its context is open: 4 + 2 bytes
  job.serve_autocast = true;
  CHECK(estimate(job).breakdown.weights == k_params * (4 + 2));
  // autocast over bf16 weights is no serving setup trace knows: bad input, not a guess
  job.base_dtype = trace::Dtype::bf16;
  CHECK_THROWS_WITH(estimate(job), Catch::Contains("--dtype fp32"));
}

TEST_CASE("job values out of range are bad input", "[job][bad_input]") {
  trace::Job job = full_job();
  job.gpus = 3;
  job.tp = 2;
  CHECK_THROWS_AS(estimate(job), trace::ConfigError);
  job = full_job();
  job.seq_len = 0;
  CHECK_THROWS_WITH(estimate(job), Catch::Contains("--seq-len"));
}

TEST_CASE("the validator scores a small CSV", "[validate]") {
  // Two runs of the tiny model on an imaginary 1 GiB card: one fits, one (huge batch) ran out.
  const std::string csv =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,job_tp,"
      "job_pp,job_grad_ckpt,job_attention,job_lora_rank,job_weights,job_precision,job_optimizer,"
      "job_usable_gib,job_measured_gib,job_oom\n"
      "1,org/tiny,tiny.json,full,128,2,1,single,1,1,none,sdpa,,n/a,mixed_fp32master,adamw,1,"
      "0.0075,0\n"
      "2,org/tiny,tiny.json,full,128,4096,1,single,1,1,none,sdpa,,n/a,mixed_fp32master,adamw,1,,1\n"
      "3,org/none,,lora,128,1,1,single,1,1,none,sdpa,8,bf16,bf16_pure,adamw,1,,1\n";
  const std::vector<trace::MeasuredRow> rows = trace::parse_measured_csv(csv);
  REQUIRE(rows.size() == 3);
  const trace::Scoreboard board = trace::validate_rows(
      rows, [](const trace::MeasuredRow& row) -> std::optional<std::string> {
        if (row.config_file == "tiny.json") return std::string(k_tiny);
        return std::nullopt;
      });
  CHECK(board.rows == 3);
  CHECK(board.planned == 2);
  CHECK(board.oom_rows == 2);
  CHECK(board.oom_flagged == 1);  // row 2; row 3 is unplanned and counts against trace
  CHECK(board.fit_rows == 1);
  CHECK(board.fit_rejected == 0);
  REQUIRE(board.error_rows == 1);
  // job_attention sdpa: K and V repeated, 2,176 values per token: 7,757,440 + 128 x 256 x 2
  // = 7,822,976 bytes; the row's framework runs eager RMSNorms, each keeping an fp32 copy of its
  // input and (the weights train) the normalised input in bf16: 4 more bytes than the input's
  // 2, on 2 x 2 x 64 + the final 64 = 320 values per token, + 327,680 = 8,150,656 bytes
  // with the gradients. One GPU, no accumulation: zero_grad(set_to_none=True) frees the
  // 202,048 x 4 bytes of fp32 gradients before the next forward, whose activations and logits
  // (8,150,656 - 202,048 x (6 + 4 + 8) = 4,513,792 bytes) outweigh the step's gradients and
  // foreach temporary (2 x 808,192): 8,150,656 - 808,192 = 7,342,464 bytes. Mixed precision
  // on one GPU is autocast over fp32 weights: each layer's q, k, v and gate, up cast the fp32
  // stream's normed values apart (2 + 1 copies of 64) and both RMSNorms keep their normalised
  // input in fp32 (2 x 64): 320 values x 2 bytes more a layer, and the final norm's 64 x 2:
  // (2 x 640 + 128) x 256 tokens = 360,448 -> 7,702,912 bytes = 0.007174 GiB against 0.0075
  // measured: -4.3%
  CHECK(board.median_abs_rel_error == Approx(1.0 - 7'702'912.0 / (0.0075 * 1073741824.0)));
  // The row keeps the terms behind its estimate (allocated, no CUDA context): they add up to it.
  REQUIRE(board.results[0].breakdown);
  CHECK(board.results[0].breakdown->total() == 7'702'912);
  CHECK(board.results[0].breakdown->gradients == 0);
  const nlohmann::json scored = nlohmann::json::parse(trace::render_scoreboard_json(board));
  CHECK(scored["results"][0]["breakdown"]["weights"] == board.results[0].breakdown->weights);
  CHECK(board.results[2].reason.find("org/none") != std::string::npos);
}

TEST_CASE("boundary rows set trace's longest sequence beside the measured one", "[validate]") {
  // The tiny model on a 0.02 GiB "tier": the row says 4,096 tokens was the longest that fit.
  // trace's answer is the boundary of its own verdict (peak + CUDA context within the budget).
  const std::string csv =
      "row_id,model_id,config_file,unit_basis,job_task,job_seq_len,job_batch,job_gpus,"
      "job_sharding,job_tp,job_pp,job_grad_ckpt,job_attention,job_lora_rank,job_weights,"
      "job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom\n"
      "1,org/tiny,tiny.json,nominal_card_GB,full,4096,1,1,single,1,1,none,sdpa,,n/a,"
      "mixed_fp32master,adamw,0.6,,0\n"
      "2,org/tiny,tiny.json,nominal_card_GB,full,1,1,1,single,1,1,none,sdpa,,n/a,"
      "mixed_fp32master,adamw,0.6,,1\n";
  const trace::ValidationAssumptions a;
  const std::vector<trace::MeasuredRow> rows = trace::parse_measured_csv(csv);
  const trace::Scoreboard board = trace::validate_rows(
      rows,
      [](const trace::MeasuredRow&) -> std::optional<std::string> { return std::string(k_tiny); },
      a);
  REQUIRE(board.results.size() == 2);
  const trace::RowResult& row = board.results[0];
  REQUIRE(row.longest_seq_len);
  CHECK(row.measured_seq_len == 4096);
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  const trace::ParameterCount params = trace::count_parameters(model);
  const std::int64_t budget = trace::budget_bytes(
      static_cast<std::int64_t>(0.6 * 1073741824.0), a.memory.headroom_fraction);
  const auto peak = [&](std::int64_t seq_len) {
    trace::Job job = rows[0].job;  // the job as the validator read the row
    job.seq_len = seq_len;
    return trace::estimate_job(model, params, job, a.memory).breakdown.total() +
           a.memory.cuda_context_bytes;
  };
  CHECK(peak(*row.longest_seq_len) <= budget);
  CHECK(peak(*row.longest_seq_len + 1) > budget);
  CHECK(*row.seq_len_error() ==
        Approx(static_cast<double>(*row.longest_seq_len - 4096) / 4096.0));
  // A row that ran out of memory is no boundary.
  CHECK_FALSE(board.results[1].longest_seq_len);
  CHECK(board.boundary_rows == 1);
  // The Markdown sets the row beside trace's answer; a CSV without boundary rows gets no section.
  const std::string markdown = trace::render_scoreboard_markdown(board);
  CHECK(markdown.find("### Boundary rows") != std::string::npos);
  CHECK(markdown.find(fmt::format("| 1 | org/tiny | 4,096 | {} |",
                                  trace::group_digits(*row.longest_seq_len))) != std::string::npos);
  const trace::Scoreboard oom_only = trace::validate_rows(
      {rows[1]},
      [](const trace::MeasuredRow&) -> std::optional<std::string> { return std::string(k_tiny); },
      a);
  CHECK(oom_only.boundary_rows == 0);
  CHECK(trace::render_scoreboard_markdown(oom_only).find("Boundary rows") == std::string::npos);
}

TEST_CASE("a CSV without the job columns is bad input", "[validate][bad_input]") {
  CHECK_THROWS_WITH(trace::parse_measured_csv("row_id,model_id\n1,x\n"),
                    Catch::Contains("config_file"));
  CHECK_THROWS_AS(trace::parse_measured_csv(""), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_measured_csv("\"unterminated"), Catch::Contains("quoted"));
}

TEST_CASE("a spreadsheet's byte-order mark does not hide the first column", "[validate]") {
  // Excel's "CSV UTF-8" starts with EF BB BF; the first header must still read as row_id.
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,job_tp,"
      "job_pp,job_grad_ckpt,job_attention,job_lora_rank,job_weights,job_precision,job_optimizer,"
      "job_usable_gib,job_measured_gib,job_oom\r\n";
  const std::string row =
      "7,org/tiny,tiny.json,full,128,2,1,single,1,1,none,sdpa,,n/a,mixed_fp32master,adamw,1,"
      "0.0075,0\r\n";
  const std::vector<trace::MeasuredRow> rows =
      trace::parse_measured_csv("\xEF\xBB\xBF" + header + row);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].row_id == "7");
  CHECK(rows[0].model_id == "org/tiny");
}

TEST_CASE("trace validate: configs by file, by repo id, from the catalog", "[validate][cli]") {
  const trace::test::TempDir dir;
  dir.write("configs/org--tiny.json", k_tiny);
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,job_tp,"
      "job_pp,job_grad_ckpt,job_attention,job_lora_rank,job_weights,job_precision,job_optimizer,"
      "job_usable_gib,job_measured_gib,job_oom\n";
  const std::string csv = dir.write(
      "runs.csv",
      header +
          // by repo id in --configs
          "1,org/tiny (a note),,full,128,2,1,single,1,1,none,sdpa,,n/a,mixed_fp32master,adamw,1,"
          "0.0075,0\n"
          // from the bundled catalog; 8B bf16 weights alone exceed a 1 GiB card
          "2,meta-llama/Llama-3.1-8B,,serve,100,1,1,single,1,1,none,sdpa,,bf16,bf16_pure,none,1,,1\n"
          // nowhere
          "3,org/missing,,full,128,1,1,single,1,1,none,sdpa,,n/a,mixed_fp32master,adamw,1,,0\n");
  trace::HubEnvironment env;
  env.hf_hub_cache = dir.make_dir("hub");
  const trace::test::CliResult result =
      trace::test::run_cli({"validate", csv, "--configs", dir.at("configs"), "--json"}, env);
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const nlohmann::json board = nlohmann::json::parse(result.out);
  CHECK(board["schema"] == "trace.validate/1");
  CHECK(board["rows"] == 3);
  CHECK(board["planned"] == 2);
  CHECK(board["oom_rows"] == 1);
  CHECK(board["oom_flagged"] == 1);
  CHECK(board["fit_rows"] == 2);
  CHECK(board["fit_rejected"] == 0);
  REQUIRE(board["unplanned"].size() == 1);
  CHECK(board["unplanned"][0]["row_id"] == "3");
  CHECK(board["unplanned"][0]["reason"].get<std::string>().find("org/missing") != std::string::npos);
  // A CSV that does not exist is bad input.
  CHECK(trace::test::run_cli({"validate", dir.at("nope.csv")}, env).exit_code == 2);
}

TEST_CASE("trace validate takes the verdict's assumptions as flags", "[validate][cli]") {
  const trace::test::TempDir dir;
  dir.write("configs/org--tiny.json", k_tiny);
  // Two fitting runs of the tiny model on a 1 GiB card, the second measured with
  // max_memory_reserved (job_counter).
  const std::string csv = dir.write(
      "runs.csv",
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,job_tp,"
      "job_pp,job_grad_ckpt,job_attention,job_lora_rank,job_weights,job_precision,job_optimizer,"
      "job_usable_gib,job_measured_gib,job_oom,job_counter\n"
      "1,org/tiny,,full,128,2,1,single,1,1,none,sdpa,,n/a,mixed_fp32master,adamw,1,,0,\n"
      "2,org/tiny,,full,128,2,1,single,1,1,none,sdpa,,n/a,mixed_fp32master,adamw,1,0.01,0,"
      "reserved\n");
  trace::HubEnvironment env;
  env.hf_hub_cache = dir.make_dir("hub");
  const auto board = [&](std::vector<std::string> flags) {
    std::vector<std::string> args{"validate", csv, "--configs", dir.at("configs"), "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    const trace::test::CliResult result = trace::test::run_cli(args, env);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out);
  };
  const nlohmann::json defaults = board({});
  CHECK(defaults["fit_rejected"] == 0);
  // Each row states its verdict: the held peak (its breakdown) + the 512 MiB CUDA context,
  // against 1 GiB less 5%: floor(1,073,741,824 x 0.95) = 1,020,054,732 bytes.
  for (const nlohmann::json& row : defaults["results"]) {
    std::int64_t held = 0;
    for (const auto& [term, bytes] : row["breakdown"].items()) held += bytes.get<std::int64_t>();
    CHECK(row["verdict_bytes"] == held + (512LL << 20));
    CHECK(row["budget_bytes"] == 1'020'054'732);
  }
  // 90% headroom leaves 0.1 GiB of the card, less than the 512 MiB CUDA context: both rejected;
  // without the context the tiny model's few MiB fit again.
  CHECK(board({"--headroom", "0.9"})["fit_rejected"] == 2);
  CHECK(board({"--headroom", "0.9", "--cuda-context-mib", "0"})["fit_rejected"] == 0);
  // A max_memory_reserved row is read as the held peak times the allocator's reserve: twice
  // the reserve, twice the reading (to a byte's rounding); the other row does not move.
  const auto reading = [](const nlohmann::json& scoreboard, std::size_t row) {
    return scoreboard["results"][row]["estimate_gib"].get<double>();
  };
  const nlohmann::json once = board({"--reserved-over-allocated", "1"});
  const nlohmann::json twice = board({"--reserved-over-allocated", "2"});
  CHECK(reading(twice, 1) == Approx(2 * reading(once, 1)).epsilon(1e-6));
  CHECK(reading(defaults, 1) == Approx(1.08 * reading(once, 1)).epsilon(1e-6));
  CHECK(reading(twice, 0) == reading(once, 0));
  // Out of range: bad input.
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--headroom", "0.95"},
                                              {"--cuda-context-mib", "-1"},
                                              {"--reserved-over-allocated", "0.5"}}) {
    std::vector<std::string> args{"validate", csv, "--configs", dir.at("configs")};
    args.insert(args.end(), bad.begin(), bad.end());
    CHECK(trace::test::run_cli(args, env).exit_code == 2);
  }
}

TEST_CASE("torch.compile recomputes the MLP's pointwise outputs", "[estimate][job]") {
  // Per layer the gated MLP saves act(gate) and act(gate) x up, 2 x 128 values per token, which
  // the compiled graph recomputes: 2 layers x 256 values x (16 tokens x batch 2) x 2 bytes (bf16)
  // = 32,768.
  trace::Job job = full_job();
  job.seq_len = 16;
  const std::int64_t eager = estimate(job).breakdown.activations;
  job.compiled = true;
  CHECK(eager - estimate(job).breakdown.activations == 32'768);
}

TEST_CASE("a reused JobEstimator answers as a fresh estimate for every job", "[estimate][job]") {
  // The cache is keyed by sequence length and LoRA rank / targets: a second job with other
  // values must not read the first one's entries.
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  const trace::ParameterCount params = trace::count_parameters(model);
  const trace::JobEstimator estimator(model, params);
  trace::Job job = full_job();
  job.mode = trace::JobMode::lora;
  for (const std::int64_t seq_len : {128, 64, 128}) {
    for (const std::int64_t rank : {8, 16}) {
      job.seq_len = seq_len;
      job.lora_rank = rank;
      INFO("seq " << seq_len << " rank " << rank);
      const trace::JobEstimate reused = estimator.estimate(job);
      const trace::JobEstimate fresh = trace::estimate_job(model, params, job);
      CHECK(reused.breakdown.total() == fresh.breakdown.total());
      CHECK(reused.trainable_params == fresh.trainable_params);
    }
  }
  // Rank 8 on every Linear of 2 layers: q 8 x 128 + k, v 8 x 96 each + o 8 x 128 + gate, up,
  // down 8 x 192 each = 8,192 per layer: 16,384.
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::all_linear;
  CHECK(estimator.estimate(job).trainable_params == 16'384);
}

TEST_CASE("describe_job names every setting that moves the estimate", "[job]") {
  trace::Job job = lora_qv_job();
  job.lora_dropout = 0.05;
  job.seq_len = 1304;
  job.batch = 1;
  job.checkpointing = trace::Checkpointing::full;
  job.loss = trace::LossImpl::chunked;
  job.gpus = 2;
  job.sharding = trace::Sharding::zero3;
  job.grad_accum = 32;
  job.accumulate_unsharded = true;
  job.frozen_in_flat_params = true;
  job.fsdp = true;  // PyTorch's FSDP (--shard-embeddings), not DeepSpeed's ZeRO-3
  CHECK(trace::describe_job(job) ==
        "lora r8 q,v, dropout 0.05, 1304 x 1 tokens, AdamW, bf16, checkpointing full, chunked "
        "loss, fused norms, foreach step, 2 GPUs fsdp, accum 32 no_sync, frozen grads");
  job.root_unit_gathered = true;  // its root unit gathered too (the default)
  CHECK(trace::describe_job(job).find(", 2 GPUs fsdp, accum 32") != std::string::npos);
  // DeepSpeed's ZeRO-3 names its reduce bucket: Hugging Face's "auto" unless one is given
  {
    trace::Job deepspeed = job;
    deepspeed.fsdp = deepspeed.root_unit_gathered = false;
    deepspeed.accumulate_unsharded = deepspeed.frozen_in_flat_params = false;
    CHECK(trace::describe_job(deepspeed).ends_with(", 2 GPUs zero3 bucket auto, accum 32"));
    deepspeed.zero_reduce_bucket = 500'000'000;
    deepspeed.zero_sub_group_size = 100'000'000;
    CHECK(trace::describe_job(deepspeed).ends_with(
        ", 2 GPUs zero3 bucket 500M sub-group 100000000, accum 32"));
    deepspeed.sharding = trace::Sharding::zero2;
    deepspeed.zero_reduce_bucket.reset();
    CHECK(trace::describe_job(deepspeed).ends_with(", 2 GPUs zero2 bucket 500M, accum 32"));
  }
  // the allocated peak, where it differs (under checkpointing)
  job.allocated_peak = true;
  CHECK(trace::describe_job(job).find("chunked loss, allocated peak, fused norms") !=
        std::string::npos);
  job.checkpointing = trace::Checkpointing::none;
  CHECK(trace::describe_job(job).find("allocated peak") == std::string::npos);
  job.checkpointing = trace::Checkpointing::full;
  job.allocated_peak = false;
  // one card says its strategy only when it has one (ZeRO-3 offload on a single GPU)
  trace::Job offload = full_job();
  offload.sharding = trace::Sharding::zero3;
  offload.cpu_offload = true;
  CHECK(trace::describe_job(offload).ends_with(", 1 GPU zero3 bucket auto, cpu offload"));
  CHECK(trace::describe_job(full_job()).find("GPU") == std::string::npos);
  // the plan's job line names a plain single GPU too
  CHECK(trace::describe_job(full_job(), trace::OneGpu::named).ends_with(", 1 GPU"));
  CHECK(trace::describe_job(offload, trace::OneGpu::named) == trace::describe_job(offload));
  trace::Job serve;
  serve.mode = trace::JobMode::serve;
  serve.context = 4096;
  serve.concurrency = 8;
  serve.gpus = serve.tp = 2;
  CHECK(trace::describe_job(serve) == "serve 4096 tokens x 8, 2 GPUs tp2");
  // training-only knobs (they shape the plan's training sections) are not the serve job's
  serve.cpu_offload = true;
  serve.grad_accum = 4;
  serve.frozen_in_flat_params = true;
  serve.optimizer_in_backward = true;
  CHECK(trace::describe_job(serve) == "serve 4096 tokens x 8, 2 GPUs tp2");
}

TEST_CASE("a training job neither holds nor runs the checkpoint's MTP layers", "[job]") {
  // transformers' GLM-4.5 leaves its MTP layer out: the same job with and without it in the
  // config holds the same weights and saves the same activations.
  const std::string with_text = trace::test::config_text("zai-org--GLM-4.5-Air.reconstructed.json");
  nlohmann::json config = nlohmann::json::parse(with_text);
  REQUIRE(config.value("num_nextn_predict_layers", 0) == 1);
  config["num_nextn_predict_layers"] = 0;
  const trace::ModelDescription with_mtp = trace::parse_model_config(with_text);
  const trace::ModelDescription without_mtp = trace::parse_model_config(config.dump());
  const trace::ParameterCount with_params = trace::count_parameters(with_mtp);
  REQUIRE(with_params.mtp > 0);
  for (const trace::Checkpointing checkpointing :
       {trace::Checkpointing::none, trace::Checkpointing::full}) {
    trace::Job job = lora_qv_job();
    job.checkpointing = checkpointing;
    const trace::MemoryBreakdown a = trace::estimate_job(with_mtp, with_params, job).breakdown;
    const trace::MemoryBreakdown b =
        trace::estimate_job(without_mtp, trace::count_parameters(without_mtp), job).breakdown;
    CHECK(a.weights == b.weights);
    CHECK(a.activations == b.activations);
    CHECK(a.total() == b.total());
  }
}

TEST_CASE("trained MTP layers (--train-mtp): their weights, activations and a loss per depth",
          "[job]") {
  // GLM-4.5-Air keeps one MTP depth (a full MoE layer with its projections and norms).
  const trace::ModelDescription model =
      trace::test::fixture("zai-org--GLM-4.5-Air.reconstructed.json");
  const trace::ParameterCount params = trace::count_parameters(model);
  REQUIRE(model.mtp_depths == 1);
  REQUIRE(params.mtp > 0);
  trace::Job job = lora_qv_job();  // bf16 base, one GPU
  const trace::MemoryBreakdown left_out = trace::estimate_job(model, params, job).breakdown;
  job.train_mtp = true;
  const trace::MemoryBreakdown trained = trace::estimate_job(model, params, job).breakdown;
  // the frozen MTP layers at 2 bytes a parameter, no adapters on them, without the embedding
  // and head copies GLM-4.5 stores with them (151,552 x 4,096 each): training shares the model's
  const std::int64_t trained_mtp = params.mtp - 2 * 151'552LL * 4'096;
  CHECK(trained.weights - left_out.weights == trained_mtp * 2);
  CHECK(trained.gradients == left_out.gradients);
  // one more loss over the vocabulary, alive beside the main one
  CHECK(trained.logits == 2 * left_out.logits);
  CHECK(trained.activations > left_out.activations);
  CHECK(trace::describe_job(job).find(", MTP trained") != std::string::npos);
  // a full fine-tune trains them: weights, gradients and states for params.mtp more
  trace::Job full = full_job();
  const trace::MemoryBreakdown full_left_out = trace::estimate_job(model, params, full).breakdown;
  full.train_mtp = true;
  const trace::MemoryBreakdown full_trained = trace::estimate_job(model, params, full).breakdown;
  CHECK(full_trained.gradients - full_left_out.gradients == trained_mtp * 4);  // fp32 gradients
  // Over 2 pipeline stages (by layer count) the trained MTP layers join the last stage. One
  // estimator asked both ways answers as fresh ones do: the stage split is kept per setting.
  trace::Job staged = full_job();
  staged.gpus = 2;
  staged.pp = 2;
  const trace::JobEstimator estimator(model, params);
  const std::int64_t staged_left_out = estimator.estimate(staged).breakdown.weights;
  staged.train_mtp = true;
  const std::int64_t staged_trained = estimator.estimate(staged).breakdown.weights;
  CHECK(staged_trained == trace::estimate_job(model, params, staged).breakdown.weights);
  CHECK(staged_trained > staged_left_out);
  staged.train_mtp = false;
  CHECK(estimator.estimate(staged).breakdown.weights == staged_left_out);
  // nothing to train, or a quantized base, or serving: refused
  const trace::ModelDescription tiny = trace::parse_model_config(k_tiny);
  CHECK_THROWS_AS(trace::estimate_job(tiny, trace::count_parameters(tiny), job),
                  trace::ConfigError);
  job.mode = trace::JobMode::qlora;
  CHECK_THROWS_AS(trace::estimate_job(model, params, job), trace::ConfigError);
}

