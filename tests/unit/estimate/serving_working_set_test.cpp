// The serving forward pass and the sampling step (docs/memory.md, "Serve jobs"), against numbers
// derived by hand here and vLLM's own memory-profiling logs.
#include "catch.hpp"
#include "test_data.hpp"
#include "tiny_models.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::ModelDescription catalog_model(const char* repo) {
  return trace::parse_model_config(trace::test::catalog_text(repo));
}

}  // namespace

TEST_CASE("forward pass: Llama-3.1-8B's MLP holds 3h + 3i per token, as vLLM measured",
          "[memory][serve]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  const trace::MemoryAssumptions a;
  // The block's input and residual (2 x 4,096), then gate_up's output (2 x 14,336), act(gate) x
  // up (14,336) and down's output (4,096) while all are alive: 3 x 4,096 + 3 x 14,336 = 55,296
  // bf16 values per token. vLLM 0.6 on an RTX 3090 (vLLM issue #10517) logged a torch peak of
  // 17.06 GiB at max_model_len 20,000 and 17.98 GiB at 29,000 over weights of "14.9888 GB"
  // (vLLM divides by 2^30 there): 2.07 and 2.99 GiB.
  CHECK(trace::forward_working_bytes(llama, 20'000, 1, a) == 55'296LL * 20'000 * 2);  // 2.06 GiB
  CHECK(trace::forward_working_bytes(llama, 29'000, 1, a) == 55'296LL * 29'000 * 2);  // 2.99 GiB
  // Attention is narrower: qkv 4,096 + 2 x 1,024, its output 4,096 and o_proj's 4,096.
  // Tensor parallel 2: the MLP's inner values halve, its output and the residual do not:
  // 2 x 4,096 + 21,504 + 4,096 = 33,792.
  CHECK(trace::forward_working_bytes(llama, 1'000, 2, a) == 33'792LL * 1'000 * 2);
}

TEST_CASE("sampling: full-vocabulary logits of each sequence at 38 bytes each under vLLM's sort",
          "[memory][serve]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  trace::MemoryAssumptions a;
  a.sampler_bytes_per_logit = 38;  // vLLM before 0.17 sorted the logits for top-k/top-p
  // vLLM's profile run at 8,192 tokens samples max_num_seqs = 256 sequences over 128,256 logits:
  // 256 x 128,256 x 38 = 1,247,674,368, plus the forward's 8,192 x 4,096 bf16 output it still
  // holds, 67,108,864: 1.2245 GiB. vLLM v0.6.5 logged an activation peak of 1.26 GiB for
  // Llama-3-8B (same shapes) at 8,192 tokens, on TP 1 and TP 2 alike (vLLM PR #10511): the
  // sampler, not the forward pass (0.84 / 0.50 GiB), sets it.
  CHECK(trace::sampling_bytes(llama, 256, 8'192, a) == 1'247'674'368LL + 67'108'864LL);
  CHECK(trace::forward_working_bytes(llama, 8'192, 1, a) < trace::sampling_bytes(llama, 256, 8'192, a));
}

TEST_CASE("sampling: 14 bytes a logit since vLLM 0.17 masks top-k/top-p in place",
          "[memory][serve]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  const trace::MemoryAssumptions a;
  // The bf16 logits 2, their fp32 copy 4, the fp32 probabilities 4 and the exponential noise
  // they are divided by 4. vLLM 0.19's profile on an H100 samples max_num_seqs = 1,024
  // sequences: 1,024 x 128,256 x 14 = 1,838,678,016, plus the forward's 8,192 x 4,096 bf16
  // output, 67,108,864: 1.775 GiB, where vLLM 0.19 logged a torch peak increase of 1.89 GiB for
  // Llama-3.1-8B-Instruct (llm-d-planner's sweep, tests/data/measured-vllm019-h100/ row 16).
  CHECK(trace::sampling_bytes(llama, 1'024, 8'192, a) == 1'838'678'016LL + 67'108'864LL);
  CHECK(trace::forward_working_bytes(llama, 8'192, 1, a) <
        trace::sampling_bytes(llama, 1'024, 8'192, a));
  // 256 sequences (max_num_seqs on cards under 70 GiB and A100s): 459,669,504 + 67,108,864.
  CHECK(trace::sampling_bytes(llama, 256, 8'192, a) == 459'669'504LL + 67'108'864LL);
}

TEST_CASE("serve jobs: the larger of the forward pass and the sampling step", "[job][serve]") {
  const trace::ModelDescription model = trace::parse_model_config(trace::test::k_tiny_llama);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 100;
  job.concurrency = 3;
  // As transformers' generate (sampling only its batch): hidden 64, 4 heads x 16, 2 kv heads,
  // intermediate 128: the MLP holds 3 x 128 + 64 values per token, the block's input and
  // residual 2 x 64: 576 over 300 prompt tokens, more than sampling 3 x 1,000 x 14 + 300 x 64 x 2.
  trace::MemoryAssumptions a;
  a.max_num_seqs = 0;
  trace::MemoryBreakdown b = trace::estimate_job(model, params, job, a).breakdown;
  CHECK(b.activations == 576 * 300 * 2);
  CHECK(b.logits == 0);
  // 1,000 one-token sequences: sampling 1,000 x 1,000 x 14 + 1,000 x 64 x 2 beats the forward
  // pass's 576 x 1,000 x 2.
  job.context = 1;
  job.concurrency = 1'000;
  b = trace::estimate_job(model, params, job, a).breakdown;
  CHECK(b.activations == 1'000LL * 1'000 * 14 + 1'000 * 64 * 2);
  // An engine (vLLM's default max_num_seqs, 256) reserves its sampler for 256 sequences however
  // few are running: 256 x 1,000 x 14 + 300 x 64 x 2 for the 3 x 100-token prompts.
  job.context = 100;
  job.concurrency = 3;
  CHECK(trace::estimate_job(model, params, job).breakdown.activations ==
        256LL * 1'000 * 14 + 300 * 64 * 2);
}

TEST_CASE("forward pass: fused MoE caches per routed token, chunked", "[memory][serve][moe]") {
  const trace::ModelDescription mixtral = trace::parse_model_config(trace::test::k_tiny_mixtral);
  trace::MemoryAssumptions a;
  // hidden 64; attention 4 heads x 16 with 4 kv heads: qkv 192 + output 64 + o_proj 64 = 320.
  // MoE: 8 router logits + the 64-wide output per token, and per routed copy (top 2) w13's
  // 2 x 32, act 32 and w2's 64: 2 x 160 = 320. Plus the input and residual, 128.
  // 100 tokens: 72 x 100 + 320 x 100 = 39,200 beats attention's 32,000.
  CHECK(trace::forward_working_bytes(mixtral, 100, 1, a) == (39'200 + 128 * 100) * 2);
  // Caches sized for 50 tokens at most: 72 x 100 + 320 x 50 = 23,200, so attention is wider.
  a.moe_chunk_tokens = 50;
  CHECK(trace::forward_working_bytes(mixtral, 100, 1, a) == (32'000 + 128 * 100) * 2);
}

TEST_CASE("forward pass: a Mamba-1 mixer by hand (mamba-130m)", "[memory][serve][ssm]") {
  const trace::ModelDescription mamba = trace::test::fixture("state-spaces--mamba-130m-hf.json");
  const trace::MemoryAssumptions a;
  // hidden 768, d_inner 1,536, d_state 16, dt_rank 48: in_proj's x and z 3,072, the conv output
  // 1,536, x_proj's dt, B, C 48 + 32, dt_proj's output and the scan's 2 x 1,536, out_proj's 768:
  // 8,528, plus the block's input and residual 1,536.
  CHECK(trace::forward_working_bytes(mamba, 1'000, 1, a) == 10'064LL * 1'000 * 2);
}

TEST_CASE("forward pass: DeepSeek-V3's MLA and routed experts by hand", "[memory][serve][moe]") {
  const trace::ModelDescription deepseek = catalog_model("deepseek-ai/DeepSeek-V3");
  const trace::MemoryAssumptions a;
  // MLA: q latent 1,536, Q 128 x 192, kv latent 512 + rope key 64, K/V expanded 128 x (128 +
  // 128), the attention output 128 x 128, o_proj's 7,168: 83,008. MoE: 256 router logits, the
  // output and the shared expert's output 2 x 7,168, and per routed copy (top 8) w13 2 x 2,048,
  // act 2,048 and w2's 7,168: 14,592 + 8 x 13,312 = 121,088, the widest; plus 2 x 7,168.
  CHECK(trace::forward_working_bytes(deepseek, 1'000, 1, a) == 135'424LL * 1'000 * 2);
  // TP 8 splits the heads and the experts' inner widths, not the latents or the outputs:
  // MLA 1,536 + 3,072 + 576 + 4,096 + 2,048 + 7,168 = 18,496; MoE 14,592 + 8 x (768 + 7,168)
  // = 78,080.
  CHECK(trace::forward_working_bytes(deepseek, 1'000, 8, a) == (78'080LL + 14'336) * 1'000 * 2);
}

TEST_CASE("forward pass: the chunked scans' states by hand (Mamba-2, Gated DeltaNet)",
          "[memory][serve][ssm]") {
  const trace::MemoryAssumptions a;
  // mamba2-8b: hidden 4,096, 128 heads x 64 (d_inner 8,192), d_state 128, 8 groups, chunks of
  // 128. Values per token: in_proj (z 8,192, xBC 8,192 + 2 x 8 x 128, dt 128) 18,560, the conv
  // output 10,240, the scan's and the gated norm's outputs 2 x 8,192, out_proj's 4,096; plus the
  // block's input and residual 2 x 4,096: 57,472. The scan's states: ceil(1,000 / 128) = 8
  // chunks x 128 heads x 64 x 128, in fp32 and as the bf16 copy the state passing writes (6 B).
  const trace::ModelDescription mamba2 =
      trace::test::fixture("nvidia--mamba2-8b-3t-4k.reconstructed.json");
  CHECK(trace::forward_working_bytes(mamba2, 1'000, 1, a) ==
        57'472LL * 1'000 * 2 + 8LL * 128 * 64 * 128 * 6);
  // TP 2 halves the heads and the inner widths, not the output: 9,280 + 5,120 + 2 x 4,096 +
  // 4,096 + 8,192 = 34,880 per token; 64 heads' states.
  CHECK(trace::forward_working_bytes(mamba2, 1'000, 2, a) ==
        34'880LL * 1'000 * 2 + 8LL * 64 * 64 * 128 * 6);

  // Qwen3-Next's Gated DeltaNet: hidden 2,048, 32 value heads x 128 (inner 4,096), 16 key heads
  // x 128, chunks of 64. in_proj (z 4,096, qkv 4,096 + 2 x 2,048, b and a 2 x 32) 12,352, conv
  // 8,192, scan and norm outputs 2 x 4,096, out_proj 2,048: 30,784 per token, and h, one bf16
  // state per chunk and value head: ceil(100 / 64) = 2 chunks x 32 x 128 x 128 x 2 B. At 100
  // tokens that outweighs the MoE (512 router logits, output and shared output 2 x 2,048, top 10
  // x (3 x 512 + 2,048)): 40,448 x 200 B = 8,089,600 < 30,784 x 200 + 2,097,152 = 8,253,952.
  const trace::ModelDescription next =
      trace::test::fixture("Qwen--Qwen3-Next-80B-A3B-Instruct.reconstructed.json");
  CHECK(trace::forward_working_bytes(next, 100, 1, a) ==
        30'784LL * 100 * 2 + 2LL * 32 * 128 * 128 * 2 + 2LL * 2'048 * 100 * 2);
}

TEST_CASE("pipeline-parallel serving: each GPU caches its stage's layers", "[memory][serve][pp]") {
  // vLLM's get_pp_indices: layers / pp each, the remainder one each to the stages before the
  // last. 80 layers over 3 stages: 27, 27, 26; 7 over 4: 2, 2, 2, 1.
  CHECK(trace::pipeline_stage_of(26, 80, 3) == 0);
  CHECK(trace::pipeline_stage_of(27, 80, 3) == 1);
  CHECK(trace::pipeline_stage_of(53, 80, 3) == 1);
  CHECK(trace::pipeline_stage_of(54, 80, 3) == 2);
  CHECK(trace::pipeline_stage_of(79, 80, 3) == 2);
  CHECK(trace::pipeline_stage_of(5, 7, 4) == 2);
  CHECK(trace::pipeline_stage_of(6, 7, 4) == 3);
  CHECK(trace::pipeline_stage_of(0, 1, 1) == 0);

  // Llama-3.1-70B, 80 layers of 2 x 8 x 128 x 2 bytes per token: 40 per stage at PP 2, the
  // first 27 at PP 3.
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-70B");
  CHECK(trace::kv_cache_bytes(llama, 1, trace::Dtype::bf16) == 80 * 4'096);
  CHECK(trace::kv_cache_bytes(llama, 1, trace::Dtype::bf16, {1, trace::MlaCache::latent, 2}) ==
        40 * 4'096);
  CHECK(trace::kv_cache_bytes(llama, 1, trace::Dtype::bf16, {1, trace::MlaCache::latent, 3}) ==
        27 * 4'096);

  // Qwen3-Next: full attention at layers 3, 7, ..., 47 (2,048 bytes per token each), gated
  // DeltaNet elsewhere. Five stages of 9, 10, 10, 10, 9 layers hold 2, 2, 3, 2, 3 attention
  // layers and 7, 8, 7, 8, 6 DeltaNet layers: KV and state each at their busiest stage.
  const trace::ModelDescription next =
      trace::test::fixture("Qwen--Qwen3-Next-80B-A3B-Instruct.reconstructed.json");
  CHECK(trace::kv_cache_bytes(next, 1, trace::Dtype::bf16, {1, trace::MlaCache::latent, 5}) ==
        3 * 2'048);
  CHECK(trace::ssm_state_bytes(next, trace::Dtype::fp32, 2, {1, trace::MlaCache::latent, 5}) ==
        8LL * (32 * 128 * 128 * 4 + 3 * 8'192 * 2));

  // The serve job at PP 2: half the layers' KV per GPU.
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 1'000;
  job.gpus = job.pp = 2;
  const trace::JobEstimate estimate =
      trace::estimate_job(llama, trace::count_parameters(llama), job);
  CHECK(estimate.breakdown.kv_cache == 40LL * 4'096 * 1'000);
}

TEST_CASE("tensor-parallel serving: each rank holds its heads' share of the SSM state",
          "[memory][serve][ssm]") {
  // mamba2-8b: 56 layers of 128 heads x 64 x 128 (d_state), conv over 8,192 + 2 x 8 x 128 =
  // 10,240 channels x 3 taps x 2 bytes. One GPU: 56 x (4,194,304 + 61,440).
  const trace::ModelDescription mamba2 =
      trace::test::fixture("nvidia--mamba2-8b-3t-4k.reconstructed.json");
  CHECK(trace::ssm_state_bytes(mamba2, trace::Dtype::fp32, 2) == 56LL * (4'194'304 + 61'440));
  // TP 2: 64 heads and 5,120 conv channels per rank.
  CHECK(trace::ssm_state_bytes(mamba2, trace::Dtype::fp32, 2, {2}) ==
        56LL * (64 * 64 * 128 * 4 + 5'120 * 3 * 2));
  // TP 16: the 8 groups do not divide among 16 ranks, so they are replicated to 16 (conv over
  // 8,192 + 2 x 16 x 128 = 12,288 channels, 768 per rank); 8 heads per rank.
  CHECK(trace::ssm_state_bytes(mamba2, trace::Dtype::fp32, 2, {16}) ==
        56LL * (8 * 64 * 128 * 4 + 768 * 3 * 2));
  // Qwen3-Next at TP 2: 16 of 32 value heads x 128 x 128, conv 8,192 / 2 channels, 36 layers.
  const trace::ModelDescription next =
      trace::test::fixture("Qwen--Qwen3-Next-80B-A3B-Instruct.reconstructed.json");
  CHECK(trace::ssm_state_bytes(next, trace::Dtype::fp32, 2, {2}) ==
        36LL * (16 * 128 * 128 * 4 + 4'096 * 3 * 2));
}

TEST_CASE("speculative decoding caches the MTP layers' K/V too", "[memory][serve][mtp]") {
  // DeepSeek-V3: 61 MLA layers of 512 + 64 latent values per token, and one MTP layer of the
  // same kind that caches only when --serve-mtp loads it.
  const trace::ModelDescription deepseek = catalog_model("deepseek-ai/DeepSeek-V3");
  CHECK(trace::kv_cache_bytes(deepseek, 1, trace::Dtype::bf16) == 61 * 576 * 2);
  CHECK(trace::kv_cache_bytes(deepseek, 1, trace::Dtype::bf16,
                              {1, trace::MlaCache::latent, 1, true}) == 62 * 576 * 2);
  trace::MemoryAssumptions a;
  a.context = 1'000;
  a.serve_mtp = true;
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 1'000;
  const trace::ParameterCount params = trace::count_parameters(deepseek);
  CHECK(trace::estimate_job(deepseek, params, job, a).breakdown.kv_cache == 62LL * 576 * 2 * 1'000);
  CHECK(trace::estimate_memory(deepseek, params, a).kv_cache_bytes_per_token == 62 * 576 * 2);
}

TEST_CASE("forward pass: vLLM 0.2's AWQ split-K GEMM and whole experts (Mixtral-8x7B AWQ)",
          "[memory][serve][moe]") {
  const trace::ModelDescription mixtral =
      trace::test::fixture("TheBloke--Mixtral-8x7B-Instruct-v0.1-AWQ.reconstructed.json");
  trace::MemoryAssumptions a;
  // Today's engines: attention 4,096 + 2 x 1,024 (qkv), 4,096, 4,096 = 14,336; the fused MoE's
  // 8 router logits + 4,096 per token and, per routed copy (top 2), w13 28,672, act 14,336 and
  // w2 4,096: 4,104 + 2 x 47,104 = 98,312; plus the input and residual, 8,192.
  CHECK(trace::forward_working_bytes(mixtral, 1'000, 1, a) == (98'312LL + 8'192) * 1'000 * 2);
  // vLLM 0.2.7 (the profile run of vLLM issue #2382): every expert whole on every token: the
  // router logits 8, the running sum 4,096, and MixtralMLP's act(w1) 14,336 beside w3's output
  // 14,336 and awq_gemm's 8 partial sums of it (8 x 14,336), the widest moment: 143,360 (w2's
  // partial sums beside the three: 3 x 14,336 + 9 x 4,096 = 79,872, less). 147,464 + 8,192.
  a.moe_dense_experts = true;
  a.awq_split_k = 8;
  CHECK(trace::forward_working_bytes(mixtral, 32'768, 2, a) == 155'656LL * 32'768 * 2);  // 9.50 GiB
  // Whole experts without split-K: act(w1), w3's output, their product and w2's output,
  // 3 x 14,336 + 4,096, + 8 + 4,096 + 8,192 = 59,400.
  a.awq_split_k = 0;
  CHECK(trace::forward_working_bytes(mixtral, 1'000, 2, a) == 59'400LL * 1'000 * 2);
  // Split-K on an unquantized checkpoint changes nothing: no AWQ Linear runs awq_gemm.
  a.awq_split_k = 8;
  a.moe_dense_experts = false;
  const trace::ModelDescription bf16 = trace::test::fixture("mistralai--Mixtral-8x7B.json");
  CHECK(trace::forward_working_bytes(bf16, 1'000, 1, a) == (98'312LL + 8'192) * 1'000 * 2);
}

TEST_CASE("forward pass: AWQ's split-K partial sums beside attention and a gated MLP",
          "[memory][serve]") {
  // Qwen2.5-7B served as --quantize awq at TP 2: hidden 3,584, 28 heads x 128, 4 KV heads,
  // intermediate 18,944.
  const trace::ModelDescription qwen = catalog_model("Qwen/Qwen2.5-7B");
  trace::MemoryAssumptions a;
  a.serve_quantization = trace::parse_serve_quantization("awq");
  REQUIRE(a.serve_quantization);
  // Without split-K the MLP is widest: 3 x 18,944 / 2 + 3,584 = 32,000, + 2 x 3,584.
  CHECK(trace::forward_working_bytes(qwen, 100, 2, a) == (32'000LL + 7'168) * 100 * 2);
  // Split-K 8: gate_up's 18,944 values per token (2 x 18,944 / 2) and its 8 partial sums:
  // 9 x 18,944 = 170,496, more than down's partial sums beside the MLP's values (32,000 +
  // 8 x 3,584 = 60,672) and than qkv's (9 x (1,792 + 2 x 256) = 20,736).
  a.awq_split_k = 8;
  CHECK(trace::forward_working_bytes(qwen, 100, 2, a) == (170'496LL + 7'168) * 100 * 2);
}
