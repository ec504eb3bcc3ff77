// Memory formulas against numbers derived by hand in each test (docs/memory.md).
#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::ModelDescription catalog_model(const char* repo) {
  return trace::parse_model_config(trace::test::catalog_text(repo));
}


}  // namespace

TEST_CASE("KV cache: 2 x layers x kv heads x head_dim x bytes per token", "[memory][kv]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  // 2 (K,V) x 32 layers x 8 kv heads x 128 dims x 2 bytes (bf16) = 131,072 bytes per token.
  CHECK(trace::kv_cache_bytes(llama, 1, trace::Dtype::bf16) == 131'072);
  CHECK(trace::kv_cache_bytes(llama, 4096, trace::Dtype::bf16) == 131'072LL * 4096);
  // Qwen3-8B with an fp8 cache: 2 x 36 x 8 x 128 x 1 byte.
  const trace::ModelDescription qwen3 = catalog_model("Qwen/Qwen3-8B");
  CHECK(trace::kv_cache_bytes(qwen3, 1, trace::Dtype::fp8) == 73'728);
}

TEST_CASE("KV cache: Gemma 2 sliding layers are capped at their window", "[memory][kv]") {
  const trace::ModelDescription gemma = catalog_model("google/gemma-2-9b");
  // 42 layers, even ones sliding (window 4096): 21 hold 8192 tokens, 21 hold 4096.
  // Per layer per token: 2 x 8 kv heads x 256 dims x 2 bytes = 8,192 bytes.
  CHECK(trace::kv_cache_bytes(gemma, 8192, trace::Dtype::bf16) ==
        8'192LL * (21 * 8'192 + 21 * 4'096));
  // Below the window, every layer holds the whole context.
  CHECK(trace::kv_cache_bytes(gemma, 1000, trace::Dtype::bf16) == 8'192LL * 42 * 1'000);
}

TEST_CASE("KV cache: encoders hold none, T5's decoder holds self + cross", "[memory][kv]") {
  CHECK(trace::kv_cache_bytes(trace::test::fixture("google-bert--bert-base-uncased.json"), 512,
                              trace::Dtype::bf16) == 0);
  // t5-small: 6 decoder layers, each 2 x 8 heads x 64 for self and again for cross attention.
  CHECK(trace::kv_cache_bytes(trace::test::fixture("google-t5--t5-small.json"), 512,
                              trace::Dtype::bf16) == 2LL * (2 * 8 * 64) * 6 * 512 * 2);
}

TEST_CASE("KV cache per tensor-parallel rank: heads split, then replicated", "[memory][kv]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  // 8 kv heads: TP 4 keeps 2 per rank (2 x 32 x 2 x 128 x 2 = 32,768 bytes per token); from
  // TP 8 on each rank keeps one head (16,384), as vLLM replicates KV heads past their count.
  CHECK(trace::kv_cache_bytes(llama, 1, trace::Dtype::bf16, {4}) == 32'768);
  CHECK(trace::kv_cache_bytes(llama, 1, trace::Dtype::bf16, {8}) == 16'384);
  CHECK(trace::kv_cache_bytes(llama, 1, trace::Dtype::bf16, {16}) == 16'384);
}

TEST_CASE("KV cache: an MLA layer as latent, per head, or per head with V padded", "[memory][kv]") {
  // DeepSeek-V2 (236B): 60 layers, 128 heads, qk_nope 128 + qk_rope 64 = 192, v_head_dim 128,
  // kv_lora_rank 512.
  const trace::ModelDescription v2 = trace::test::fixture("deepseek-ai--DeepSeek-V2.reconstructed.json");
  using trace::MlaCache;
  // Latent: (512 + 64) x 60 x 2 bytes = 69,120 per token, whole on every TP rank.
  CHECK(trace::kv_cache_bytes(v2, 1, trace::Dtype::bf16) == 69'120);
  CHECK(trace::kv_cache_bytes(v2, 1, trace::Dtype::bf16, {8, MlaCache::latent}) == 69'120);
  // transformers' cache: 128 x (192 + 128) x 60 x 2 = 4,915,200; at TP 8, 16 heads per rank.
  CHECK(trace::kv_cache_bytes(v2, 1, trace::Dtype::bf16, {1, MlaCache::per_head}) == 4'915'200);
  CHECK(trace::kv_cache_bytes(v2, 1, trace::Dtype::bf16, {8, MlaCache::per_head}) == 614'400);
  // vLLM before 0.7.1 (V padded to 192): 16 x 2 x 192 x 60 x 2 = 737,280 per token at TP 8.
  CHECK(trace::kv_cache_bytes(v2, 1, trace::Dtype::bf16, {8, MlaCache::per_head_padded}) ==
        737'280);
}

TEST_CASE("training activations: GPT-2 small by hand", "[memory][activations]") {
  const trace::ModelDescription gpt2 = catalog_model("gpt2");
  trace::MemoryAssumptions a;
  // Saved values per token per layer: attention 768 (input) + 768 (Q) + 2 x 768 (K, V) + 768
  // (attention output) = 3,840; MLP 768 + 2 x 3,072 = 6,912; two LayerNorm inputs 1,536.
  // 12 layers -> 147,456; final norm input + head input 1,536 -> 148,992 values per token.
  const std::int64_t hidden = 148'992LL * 1024 * 2;
  // Logits: 50,257 x 1,024 tokens x 12 bytes (fp32 upcast 4 + shifted fp32 copy 4 + fp32
  // log-softmax 4).
  const std::int64_t logits = 50'257LL * 1024 * 12;
  CHECK(trace::training_activation_bytes(gpt2, 1024, a) == hidden + logits);
}

TEST_CASE("full fine-tune: 18 bytes per parameter plus activations", "[memory][full]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  const trace::ParameterCount params = trace::count_parameters(llama);
  trace::MemoryAssumptions a;
  a.batch = 3;
  const trace::MemoryEstimate memory = trace::estimate_memory(llama, params, a);
  const trace::MemoryBreakdown& b = memory.full_finetune.breakdown;
  CHECK(b.weights == 8'030'261'248LL * 6);  // fp32 master + bf16 autocast copy
  CHECK(b.gradients == 8'030'261'248LL * 4);
  CHECK(b.optimizer == 8'030'261'248LL * 8);
  CHECK(b.activations == 3 * trace::training_activation_bytes(llama, 2048, a));
  CHECK(b.overhead == 512LL << 20);
  CHECK(b.total() == b.weights + b.gradients + b.optimizer + b.activations + b.overhead);
}

TEST_CASE("LoRA: adapters on every linear layer of the blocks", "[memory][lora]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  // r x (in + out) per linear: q 16 x 8192, k and v 16 x 5120, o 16 x 8192, gate/up/down
  // 16 x 18432 each -> 1,310,720 per layer x 32 layers.
  CHECK(trace::lora_parameters(llama, 16) == 41'943'040);
  // Phi-3 fuses qkv (3072 -> 9216) and gate_up (3072 -> 16384): r x (in + out) per fused matrix.
  const trace::ModelDescription phi3 = catalog_model("microsoft/Phi-3.5-mini-instruct");
  CHECK(trace::lora_parameters(phi3, 8) ==
        32LL * 8 * ((3072 + 9216) + (3072 + 3072) + (3072 + 16384) + (8192 + 3072)));
  const trace::ParameterCount params = trace::count_parameters(llama);
  trace::MemoryAssumptions a;
  const trace::MemoryEstimate memory = trace::estimate_memory(llama, params, a);
  const trace::MemoryBreakdown& b = memory.lora.breakdown;
  CHECK(b.weights == 8'030'261'248LL * 2 + 41'943'040LL * 4);
  CHECK(b.gradients == 41'943'040LL * 4);
  CHECK(b.optimizer == 41'943'040LL * 8);
}

TEST_CASE("serving: weights at the serving dtype plus KV x concurrency", "[memory][serve]") {
  const trace::ModelDescription llama = catalog_model("meta-llama/Llama-3.1-8B");
  const trace::ParameterCount params = trace::count_parameters(llama);
  trace::MemoryAssumptions a;
  a.context = 8192;
  a.concurrency = 4;
  a.serve_weight_dtype = trace::Dtype::int4;
  a.kv_dtype = trace::Dtype::fp8;
  const trace::MemoryEstimate memory = trace::estimate_memory(llama, params, a);
  const trace::MemoryBreakdown& b = memory.serve.breakdown;
  CHECK(b.weights == 8'030'261'248LL / 2);
  CHECK(b.kv_cache == 4LL * 8192 * 65'536);  // 2 x 32 x 8 x 128 x 1 byte per token
  CHECK(b.gradients == 0);
  CHECK(b.optimizer == 0);
}

TEST_CASE("memory grows with batch, sequence length and dtype width", "[memory][invariant]") {
  const trace::ModelDescription model = catalog_model("Qwen/Qwen2.5-7B");
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::MemoryAssumptions small;
  trace::MemoryAssumptions large = small;
  large.batch = 2;
  large.seq_len = 4096;
  large.concurrency = 2;
  large.serve_weight_dtype = trace::Dtype::fp32;
  const trace::MemoryEstimate a = trace::estimate_memory(model, params, small);
  const trace::MemoryEstimate b = trace::estimate_memory(model, params, large);
  CHECK(b.full_finetune.breakdown.total() > a.full_finetune.breakdown.total());
  CHECK(b.lora.breakdown.total() > a.lora.breakdown.total());
  CHECK(b.serve.breakdown.total() > a.serve.breakdown.total());
  CHECK(a.full_finetune.breakdown.total() > a.lora.breakdown.total());
  CHECK(a.lora.breakdown.total() > a.serve.breakdown.total());
}

TEST_CASE("absurd workloads are refused by name, huge ones stay exact", "[memory][limits]") {
  trace::MemoryAssumptions a;
  a.seq_len = 0;
  CHECK_THROWS_WITH(trace::validate_assumptions(a), Catch::Matchers::Contains("--seq-len"));
  a = {};
  a.context = -1;
  CHECK_THROWS_WITH(trace::validate_assumptions(a), Catch::Matchers::Contains("--context"));
  a = {};
  a.headroom_fraction = 1.5;
  CHECK_THROWS_WITH(trace::validate_assumptions(a), Catch::Matchers::Contains("--headroom"));
  a.headroom_fraction = -0.01;
  CHECK_THROWS_WITH(trace::validate_assumptions(a), Catch::Matchers::Contains("--headroom"));
  // Both ends of the range its message names are accepted (0.9 is --gpu-memory-utilization 0.1).
  a.headroom_fraction = 0.9;
  CHECK_NOTHROW(trace::validate_assumptions(a));
  a.headroom_fraction = 0.0;
  CHECK_NOTHROW(trace::validate_assumptions(a));
  // A one-million-token context on Llama-3.1-70B: 2 x 80 x 8 x 128 x 2 bytes x 2^20 tokens.
  const trace::ModelDescription big = catalog_model("meta-llama/Llama-3.1-70B");
  CHECK(trace::kv_cache_bytes(big, 1LL << 20, trace::Dtype::bf16) == 327'680LL << 20);
}
