// LFM2-MoE (lfm2_moe): LFM2's short-conv / GQA layers with two dense SwiGLU layers, then a
// sigmoid-routed MoE of 32 experts and an F32 expert_bias per layer. Published for
// LiquidAI/LFM2-8B-A1B: 8,339,930,560 parameters (Hub: BF16 8,339,929,856 + F32 704) and
// 16,679,862,528 bytes; sources in tests/data/configs/SOURCES-lfm2_moe.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr const char* k_8b = "LiquidAI--LFM2-8B-A1B.reconstructed.json";

// H 2048, 32 heads x 64 (8 KV heads), vocab 65,536 (tied), 24 layers: 6 attention, 18 conv.
// Attention: q, out_proj [2048, 2048], k, v [512, 2048], q_layernorm / k_layernorm [64].
constexpr std::int64_t k_attention = 2 * 2048LL * 2048 + 2 * 512LL * 2048 + 2 * 64;
// Conv: in_proj [3 x 2048, 2048], conv [2048, 1, 3], out_proj [2048, 2048], no biases.
constexpr std::int64_t k_conv = 3 * 2048LL * 2048 + 2048 * 3 + 2048LL * 2048;
// Dense FFN of intermediate_size 7168 as written (no 2/3 rule), experts of 1792.
constexpr std::int64_t k_dense = 3 * 7168LL * 2048;
constexpr std::int64_t k_expert = 3 * 1792LL * 2048;
// Router [32, H], expert_bias [32], 32 experts; no shared expert.
constexpr std::int64_t k_moe = 32 * 2048 + 32 + 32 * k_expert;

}  // namespace

TEST_CASE("LFM2-8B-A1B: the published 8,339,930,560 and 16,679,862,528 bytes",
          "[lfm2_moe][golden]") {
  constexpr std::int64_t total = 6 * k_attention + 18 * k_conv + 24 * 2 * 2048 + 2 * k_dense +
                                 22 * k_moe + 65'536LL * 2048 + 2048;
  static_assert(total == 8'339'930'560);
  const trace::ModelDescription model = trace::test::fixture(k_8b);
  CHECK(model.model_type == "lfm2_moe");
  CHECK(model.tie_word_embeddings);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  // The Hub's split: BF16 8,339,929,856 + F32 704 (22 expert_bias vectors of 32).
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  CHECK(storage.bytes == 2 * (total - 22 * 32) + 4 * 22 * 32);
  CHECK(storage.bytes == 16'679'862'528);
  // Top 4 of 32 experts ("1.5B active"), the tied table counted once.
  CHECK(count.active == total - 22 * 28 * k_expert);
  CHECK(count.active == 1'557'740'992);
}

TEST_CASE("LFM2-8B-A1B serving: 6 layers of KV, 18 conv windows", "[lfm2_moe][memory]") {
  const trace::ModelDescription model = trace::test::fixture(k_8b);
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 6 * 2 * 8 * 64 * 2);
  // 18 conv layers keep conv_L_cache - 1 = 2 inputs of the 2048 convolved channels (B*x) per
  // sequence, at 2 bytes each; no recurrent state.
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 18 * 2 * 2048 * 2);
}

TEST_CASE("lfm2_moe config errors name the key", "[lfm2_moe][errors]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_8b));
  SECTION("layer_types is required") {
    config.erase("layer_types");
    CHECK(trace::test::config_error(config.dump()).find("layer_types") != std::string::npos);
  }
  SECTION("num_dense_layers past the stack") {
    config["num_dense_layers"] = 25;
    CHECK(trace::test::config_error(config.dump()).find("num_dense_layers") != std::string::npos);
  }
  SECTION("Lfm2MoeConfig's default KV heads are 8, not num_attention_heads") {
    config.erase("num_key_value_heads");
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    CHECK(trace::count_parameters(model).total == 8'339'930'560);
  }
  SECTION("use_expert_bias false drops the 22 vectors") {
    config["use_expert_bias"] = false;
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    CHECK(trace::count_parameters(model).total == 8'339'930'560 - 22 * 32);
  }
}
