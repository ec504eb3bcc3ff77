// FLOPs per token on a tiny dense Llama and a tiny Mixtral, each term derived by hand below
// (docs/cost.md, "FLOPs").
//
// Dense model: hidden h = 64, 2 layers, 4 heads x 16 (head_dim 16), 2 kv heads, intermediate 128,
// vocab 1000, untied head (the same model as job_test.cpp).
//   per layer: q 4,096 + k 2,048 + v 2,048 + o 4,096 + MLP 3 x 8,192 = 24,576 + norms 128
//   = 36,992; x 2 = 73,984; final norm 64; head 64,000; embedding 64,000 (a lookup, no FLOPs).
//   Weights multiplied per token: 73,984 + 64 + 64,000 = 138,048 -> matmul 276,096 FLOPs.
//   Attention per key and layer: 2 x 4 heads x (16 + 16) = 256 FLOPs.
//
// MoE model (mixtral): hidden 64, 1 layer, 4 heads x 16, 4 kv heads, 8 experts top-2 of
// intermediate 32, vocab 100, untied.
//   attention 4 x 4,096 = 16,384; router 64 x 8 = 512; two experts 2 x 3 x 64 x 32 = 12,288;
//   norms 128 + final 64; head 6,400 -> 35,776 weights per token -> matmul 71,552 FLOPs.

#include "trace/cost/flops.hpp"

#include <cmath>

#include "catch.hpp"
#include "test_data.hpp"
#include "tiny_models.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/model/model_config.hpp"

namespace {

const char* const k_dense = trace::test::k_tiny_llama;

const char* const k_moe = trace::test::k_tiny_mixtral;

struct Model {
  trace::ModelDescription description;
  trace::ParameterCount params;
};

Model load(const char* text) {
  Model model{trace::parse_model_config(text), {}};
  model.params = trace::count_parameters(model.description);
  return model;
}

trace::Job job_of(trace::JobMode mode, std::int64_t seq_len) {
  trace::Job job;
  job.mode = mode;
  job.seq_len = seq_len;
  job.lora_rank = 2;
  job.lora_targets = trace::LoraTargets::all_linear;
  return job;
}

}  // namespace

TEST_CASE("average causal keys: full prefix and sliding window", "[cost][flops]") {
  // Without a window position p sees p keys: mean (L + 1) / 2.
  CHECK(trace::average_causal_keys(8, 0) == Approx(4.5));
  CHECK(trace::average_causal_keys(8, 100) == Approx(4.5));
  // Window 4 over 8 positions: 1 + 2 + 3 + 4 + 4 x 4 = 26 keys, / 8 = 3.25.
  CHECK(trace::average_causal_keys(8, 4) == Approx(3.25));
  CHECK(trace::average_causal_keys(0, 0) == 0);
}

TEST_CASE("dense model: forward FLOPs per token by term", "[cost][flops]") {
  const Model m = load(k_dense);
  REQUIRE(m.params.total == 202'048);
  const trace::TokenFlops train = trace::training_token_flops(m.description, m.params, 8);
  CHECK(train.matmul == Approx(276'096));
  // 2 layers x 256 FLOPs per key x 4.5 keys on average = 2,304.
  CHECK(train.attention == Approx(2'304));
  CHECK(train.ssm == 0);
  // Decoding at position 12: every layer attends to 12 keys: 2 x 256 x 12 = 6,144.
  const trace::TokenFlops decode = trace::decode_token_flops(m.description, m.params, 12);
  CHECK(decode.matmul == Approx(276'096));
  CHECK(decode.attention == Approx(6'144));
  // A prompt of 8 tokens: 8 x (276,096 + 2,304) = 2,227,200.
  CHECK(trace::prefill_flops(m.description, m.params, 8) == Approx(2'227'200));
}

TEST_CASE("dense model: training FLOPs for full, LoRA and recomputation", "[cost][flops]") {
  const Model m = load(k_dense);
  // Full: 3 x (276,096 + 2,304) = 835,200.
  const trace::TrainingFlops full =
      trace::training_flops(m.description, m.params, job_of(trace::JobMode::full, 8));
  CHECK(full.model_per_token == Approx(835'200));
  CHECK(full.per_token == Approx(835'200));
  // Full checkpointing recomputes the forward: + 278,400.
  trace::Job checkpointed = job_of(trace::JobMode::full, 8);
  checkpointed.checkpointing = trace::Checkpointing::full;
  const trace::TrainingFlops recomputed =
      trace::training_flops(m.description, m.params, checkpointed);
  CHECK(recomputed.per_token == Approx(1'113'600));
  CHECK(recomputed.model_per_token == Approx(835'200));
  // Selective: only the attention forward again: 835,200 + 2,304.
  checkpointed.checkpointing = trace::Checkpointing::selective;
  CHECK(trace::training_flops(m.description, m.params, checkpointed).per_token == Approx(837'504));
  // LoRA rank 2 on every Linear: per layer q 2 x (64 + 64) = 256, k and v 2 x (64 + 32) = 192
  // each, o 256, gate and up 2 x (64 + 128) = 384 each, down 384: 2,048; x 2 layers = 4,096.
  // 2 x 276,096 + 3 x 2,304 + 6 x 4,096 = 583,680.
  const trace::TrainingFlops lora =
      trace::training_flops(m.description, m.params, job_of(trace::JobMode::lora, 8));
  CHECK(lora.adapter_params == 4'096);
  CHECK(lora.model_per_token == Approx(583'680));
}

TEST_CASE("MoE model: only the routed top-k experts count", "[cost][flops]") {
  const Model m = load(k_moe);
  const trace::TokenFlops train = trace::training_token_flops(m.description, m.params, 4);
  CHECK(train.matmul == Approx(71'552));
  // 1 layer x 2 x 4 heads x 32 x 2.5 keys = 640.
  CHECK(train.attention == Approx(640));
  const trace::TrainingFlops full =
      trace::training_flops(m.description, m.params, job_of(trace::JobMode::full, 4));
  CHECK(full.model_per_token == Approx(3 * (71'552 + 640)));
}

TEST_CASE("sliding-window layers cap the keys of a decoded token", "[cost][flops]") {
  const char* windowed = R"({
    "model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
    "sliding_window": 16, "tie_word_embeddings": false, "torch_dtype": "bfloat16"
  })";
  const Model m = load(windowed);
  // Position 1,000 attends to 16 keys in both layers: 2 x 256 x 16 = 8,192.
  CHECK(trace::decode_token_flops(m.description, m.params, 1000).attention == Approx(8'192));
}

TEST_CASE("a layer that runs an earlier layer's weights again costs its FLOPs every time",
          "[cost][flops]") {
  // ALBERT-base-v2: one stored BERT layer (h 768, MLP 3072) run 12 times. Its weights:
  // q, k, v, o 4 x (768^2 + 768) = 2,362,368; MLP 768 x 3072 + 3072 + 3072 x 768 + 768 =
  // 4,722,432; two LayerNorms 3,072 -> 7,087,872, stored once and multiplied 12 times.
  const Model albert =
      load(trace::test::config_text("albert--albert-base-v2.reconstructed.json").c_str());
  const trace::TokenFlops flops =
      trace::training_token_flops(albert.description, albert.params, 512);
  const double once = static_cast<double>(albert.params.active_without_embedding);
  CHECK(flops.matmul == Approx(2.0 * (once + 11.0 * 7'087'872)));
  CHECK(flops.matmul > 2.0 * 12 * 7'087'872);
}
