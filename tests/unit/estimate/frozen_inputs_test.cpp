// What a frozen base keeps for backward (docs/memory.md, "Frozen Linears keep no input"):
// autograd keeps a matmul's input only for its weight's gradient, so over a frozen base a Linear
// input is kept only where an adapter reads it; a MoE keeps each routed copy's output for the
// routing weight's gradient, and its gathered input where the experts train. Every expected
// value is counted by hand below.
#include <cstdint>

#include "catch.hpp"
#include "tiny_jobs.hpp"
#include "tiny_models.hpp"
#include "trace/estimate/job.hpp"
#include "trace/model/model_config.hpp"

namespace {

std::int64_t activations(const char* config, const trace::Job& job) {
  const trace::ModelDescription model = trace::parse_model_config(config);
  return trace::estimate_job(model, trace::count_parameters(model), job).breakdown.activations;
}

// 256 tokens (128 x 2), flash attention, fused norms, pure bf16 (2 bytes a value), no dropout.
trace::Job lora_job(trace::LoraTargets targets) {
  trace::Job job = trace::test::tiny_full_job();
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::bf16_pure;
  job.lora_rank = 8;
  job.lora_targets = targets;
  return job;
}

constexpr std::int64_t k_bytes_per_token_value = 256 * 2;  // 256 tokens, bf16

}  // namespace

TEST_CASE("a frozen Linear keeps no input: LoRA keeps only what its adapters read",
          "[job][lora][frozen]") {
  // Tiny Llama (hidden 64, 2 layers, 4 heads x 16, 2 kv heads, MLP 128). A layer as a full
  // fine-tune keeps it: attention input 64 + Q 64 + K, V 2 x 32 + output 64 = 256; MLP input 64
  // + gate, act, up, product 4 x 128 = 576; two norms' inputs 128: 960. Two layers and the final
  // norm's and head's inputs (128): 2,048 values a token.
  CHECK(activations(trace::test::k_tiny_llama, lora_job(trace::LoraTargets::all_linear)) ==
        2'048 * k_bytes_per_token_value);
  // Attention-only targets: the frozen MLP keeps neither its input (64) nor its down input (the
  // act x up product, 128); act's input and output and up's output stay (silu and the product
  // keep them): 2,048 - 2 x 192 = 1,664.
  CHECK(activations(trace::test::k_tiny_llama, lora_job(trace::LoraTargets::attention)) ==
        1'664 * k_bytes_per_token_value);
  // q, v: the same, since flash attention keeps its output (o_proj's input) itself.
  CHECK(activations(trace::test::k_tiny_llama, lora_job(trace::LoraTargets::attention_qv)) ==
        1'664 * k_bytes_per_token_value);
  // Eager attention keeps no output of its own: under q, v the frozen o_proj does not keep it
  // either, 64 values a layer fewer than under attention targets.
  trace::Job eager = lora_job(trace::LoraTargets::attention);
  eager.attention = trace::AttentionImpl::eager;
  const std::int64_t eager_attention = activations(trace::test::k_tiny_llama, eager);
  eager.lora_targets = trace::LoraTargets::attention_qv;
  CHECK(eager_attention - activations(trace::test::k_tiny_llama, eager) ==
        2 * 64 * k_bytes_per_token_value);
}

TEST_CASE("fp32 adapters under autocast keep a bf16 copy of their input each",
          "[job][lora][frozen]") {
  // PEFT casts the input to the fp32 adapter's dtype and autocast casts it back to bf16 for
  // lora_A: under q, v each layer keeps q's and v's copy (2 x 64) and no shared input: the
  // attention input 64, the MLP input 64 and down input 128 go, the attention output stays:
  // 2,048 - 2 x (256 - 128) = 1,792 values a token.
  trace::Job job = lora_job(trace::LoraTargets::attention_qv);
  job.precision = trace::Precision::mixed;
  job.autocast_fp32_weights = true;
  CHECK(activations(trace::test::k_tiny_llama, job) == 1'792 * k_bytes_per_token_value);
  // Not where the adapters are bf16 (pure bf16): they share the input, as above.
  job.precision = trace::Precision::bf16_pure;
  CHECK(activations(trace::test::k_tiny_llama, job) == 1'664 * k_bytes_per_token_value);
}

TEST_CASE("a MoE keeps each routed copy's output, and its gathered input where experts train",
          "[job][moe][frozen]") {
  // Tiny Mixtral (hidden 64, 1 layer, 4 heads x 16, 4 kv heads, 8 experts of 32, top-2). As a
  // full fine-tune: attention 64 + 64 + 2 x 64 + 64 = 320; the MoE's input 64, router logits 8,
  // per routed copy gate, act, up, product 4 x 32 and the output the routing weight multiplies
  // 64: 64 + 8 + 2 x 192 = 456; the two routed copies' gathered inputs, kept by the experts'
  // matmuls, 2 x 64 = 128; two norms 128; the final norm and head 128: 1,160 values a token.
  trace::Job full = trace::test::tiny_full_job();
  CHECK(activations(trace::test::k_tiny_mixtral, full) == 1'160 * k_bytes_per_token_value);
  // LoRA on every Linear (bf16 adapters): the experts' adapters keep the gathered inputs; the
  // router is frozen, so the MoE input is kept by nothing (no shared experts): 1,160 - 64.
  CHECK(activations(trace::test::k_tiny_mixtral, lora_job(trace::LoraTargets::all_linear)) ==
        1'096 * k_bytes_per_token_value);
  // Attention targets: the frozen experts keep no gathered input and no down input (2 x 32), and
  // the MoE input goes too: 1,160 - 128 - 64 - 64 = 904.
  CHECK(activations(trace::test::k_tiny_mixtral, lora_job(trace::LoraTargets::attention)) ==
        904 * k_bytes_per_token_value);
}

TEST_CASE("parse_lora_targets takes PEFT's module lists of the three modelled sets",
          "[job][lora]") {
  CHECK(trace::parse_lora_targets("qv") == trace::LoraTargets::attention_qv);
  CHECK(trace::parse_lora_targets("v_proj,q_proj") == trace::LoraTargets::attention_qv);
  CHECK(trace::parse_lora_targets("q_proj, k_proj, v_proj, o_proj") ==
        trace::LoraTargets::attention);
  CHECK(trace::parse_lora_targets("All-Linear") == trace::LoraTargets::all_linear);
  CHECK(trace::parse_lora_targets("q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj") ==
        trace::LoraTargets::all_linear);
  // a set the estimate does not model is refused, not read as the nearest one
  CHECK_FALSE(trace::parse_lora_targets("gate_proj,up_proj,down_proj").has_value());
  CHECK_FALSE(trace::parse_lora_targets("q_proj,k_proj").has_value());
  CHECK_FALSE(trace::parse_lora_targets("").has_value());
}
