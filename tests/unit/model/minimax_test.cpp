// MiniMax-M1 (minimax_m1; also minimax_text_01 and transformers' minimax): 70 lightning-attention
// and 10 softmax layers, a 32-expert MoE in every layer. Published: 456,089,655,296 parameters
// and the index's 912,210,767,872 bytes; the tensor lists and derivations are in
// tests/data/configs/SOURCES-minimax.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"

namespace {

constexpr const char* k_m1 = "MiniMaxAI--MiniMax-M1-80k.json";

// H 6144, 64 heads x 128 (8 KV heads), 32 experts of 9216, vocab 200,064.
// Lightning: qkv_proj [3 x 8192, H] + output_gate [8192, H] + norm [8192] + out_proj [H, 8192].
constexpr std::int64_t k_lightning = 3LL * 8192 * 6144 + 8192LL * 6144 + 8192 + 6144LL * 8192;
// Softmax: q [8192, H], k, v [1024, H], o [H, 8192].
constexpr std::int64_t k_softmax = 8192LL * 6144 + 2 * 1024LL * 6144 + 6144LL * 8192;
constexpr std::int64_t k_expert = 3LL * 9216 * 6144;
constexpr std::int64_t k_router = 32LL * 6144;
constexpr std::int64_t k_moe = 32 * k_expert + k_router;
constexpr std::int64_t k_embedding = 200'064LL * 6144;

}  // namespace

TEST_CASE("MiniMax-M1: the published 456,089,655,296 parameters and 912,210,767,872 bytes",
          "[minimax][golden]") {
  static_assert(k_lightning == 251'666'432);
  static_assert(k_softmax == 113'246'208);
  constexpr std::int64_t total =
      70 * k_lightning + 10 * k_softmax + 80 * (k_moe + 2 * 6144) + 2 * k_embedding + 6144;
  static_assert(total == 456'089'655'296);

  const trace::ModelDescription model = trace::test::fixture(k_m1);
  CHECK(model.model_type == "minimax_m1");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  CHECK(trace::component_count(count, "ssm") == 70 * k_lightning);
  CHECK(trace::component_count(count, "attention") == 10 * k_softmax);
  // "45.9B activated": top-2 of 32 experts, neither the embedding nor the head.
  CHECK(count.active - 2 * k_embedding == total - 80LL * 30 * k_expert - 2 * k_embedding);
  CHECK((count.active - 2 * k_embedding) / 100'000'000 == 459);

  // The index's total_size: every tensor BF16 but the 80 routers, F32 (the only set of tensors
  // whose size the 15,728,640 extra elements match).
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  CHECK(storage.bytes == 2 * (total - 80 * k_router) + 4 * 80 * k_router);
  CHECK(storage.bytes == 912'210'767'872);
}

TEST_CASE("MiniMax-M1 serving: 10 layers of KV, 70 lightning states", "[minimax][memory]") {
  const trace::ModelDescription model = trace::test::fixture(k_m1);
  // 10 softmax layers x 2 x 8 KV heads x 128 x 2 bytes.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 10 * 2 * 8 * 128 * 2);
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 40'960);
  // 70 layers x 64 heads x 128 x 128, no convolution state; heads split by tensor parallelism.
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 70LL * 64 * 128 * 128 * 4);
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::bf16, 2) == 70LL * 64 * 128 * 128 * 2);
  trace::KvSplit tp8;
  tp8.tp = 8;
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::bf16, 2, tp8) == 70LL * 8 * 128 * 128 * 2);
}

TEST_CASE("MiniMax: transformers' layer_types spelling, and errors that name the key",
          "[minimax][errors]") {
  const nlohmann::json m1 = nlohmann::json::parse(trace::test::config_text(k_m1));
  // transformers' port: model_type minimax, layer_types instead of attn_type_list.
  nlohmann::json config = m1;
  config["model_type"] = "minimax";
  nlohmann::json types = nlohmann::json::array();
  for (const nlohmann::json& value : m1["attn_type_list"]) {
    types.push_back(value.get<int>() == 1 ? "full_attention" : "linear_attention");
  }
  config.erase("attn_type_list");
  config["layer_types"] = types;
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total == 456'089'655'296);

  config = m1;
  config.erase("attn_type_list");
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("attn_type_list"));
  config = m1;
  config["attn_type_list"][3] = 2;
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("attn_type_list"));
  config = m1;
  config["attn_type_list"].erase(0);
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("attn_type_list"));
  config = m1;
  config["shared_intermediate_size"] = 1024;
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("shared_intermediate_size") &&
                 Catch::Matchers::Contains("not supported yet"));
}
