// AFMoE (Arcee Trinity): gated GQA with an explicit head_dim, four norms per layer, two dense
// layers, then a sigmoid-routed MoE with one shared expert and an F32 expert_bias. Published:
// Trinity-Mini 26,123,974,400 and Trinity-Nano-Preview 6,120,003,328 parameters (12,240,020,480
// bytes); the tensor lists and sources are in tests/data/configs/SOURCES-afmoe.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr const char* k_mini = "arcee-ai--Trinity-Mini.reconstructed.json";
constexpr const char* k_nano = "arcee-ai--Trinity-Nano-Preview.reconstructed.json";

// Trinity-Mini: H 2048, 32 heads x 128 (4 KV heads), vocab 200,192, 32 layers (2 dense of 6144),
// 128 experts of 1024 (top 8) and one shared expert of 1024.
// Attention: q, gate_proj [4096, H], k, v [512, H], o [H, 4096], q_norm / k_norm [128].
constexpr std::int64_t k_mini_attention =
    4096LL * 2048 + 2 * 512LL * 2048 + 4096LL * 2048 + 2048LL * 4096 + 2 * 128;
constexpr std::int64_t k_mini_expert = 3LL * 1024 * 2048;
// Router [128, H], expert_bias [128], the shared expert and 128 routed experts.
constexpr std::int64_t k_mini_moe = 128LL * 2048 + 128 + k_mini_expert + 128 * k_mini_expert;
constexpr std::int64_t k_mini_dense = 3LL * 6144 * 2048;
constexpr std::int64_t k_mini_embedding = 200'192LL * 2048;

}  // namespace

TEST_CASE("Trinity-Mini (afmoe): the published 26,123,974,400", "[afmoe][golden]") {
  static_assert(k_mini_attention == 27'263'232);
  constexpr std::int64_t total = 32 * (k_mini_attention + 4 * 2048) + 2 * k_mini_dense +
                                 30 * k_mini_moe + 2 * k_mini_embedding + 2048;
  static_assert(total == 26'123'974'400);

  const trace::ModelDescription model = trace::test::fixture(k_mini);
  CHECK(model.model_type == "afmoe");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  // Active: 8 of 128 routed experts in the 30 MoE layers; embedding and head counted ("3B").
  CHECK(count.active == total - 30 * 120 * k_mini_expert);
  CHECK(count.active == 3'474'732'800);
  // The 30 expert_bias vectors are stored F32, the rest BF16.
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  CHECK(storage.bytes == 2 * total + 2 * 30 * 128);

  // Every layer: the gate doubles q's width in the description; four norms; head_dim 128 on a
  // 2048-wide residual (32 x 128 = 4096 query width).
  const trace::Block& first = model.stacks.front().blocks.front();
  CHECK(first.attention.output_gate);
  CHECK(first.attention.head_dim == 128);
  CHECK(first.norms.size() == 4);
  CHECK_FALSE(first.moe.has_value());
  CHECK(model.stacks.front().blocks.at(2).moe.has_value());
}

TEST_CASE("Trinity-Mini serving: 8 global layers, 24 sliding 2,048-token windows",
          "[afmoe][memory]") {
  const trace::ModelDescription model = trace::test::fixture(k_mini);
  // Per token, 32 layers x 2 x 4 KV heads x 128 x 2 bytes while no window is full.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 32 * 2 * 4 * 128 * 2);
  // At 100,000 tokens the 24 sliding layers hold 2,048 rows, the 8 global layers all of them.
  CHECK(trace::kv_cache_bytes(model, 100'000, trace::Dtype::bf16) ==
        (8LL * 100'000 + 24LL * 2048) * 2 * 4 * 128 * 2);
}

TEST_CASE("Trinity-Nano-Preview: 6,120,003,328 and the index's 12,240,020,480 bytes",
          "[afmoe][golden]") {
  // H 1024, 8 heads x 128 (2 KV), 56 layers (2 dense of 3072), 128 experts of 256, 1 shared.
  constexpr std::int64_t attention =
      1024LL * 1024 + 2 * 256LL * 1024 + 1024LL * 1024 + 1024LL * 1024 + 2 * 128;
  constexpr std::int64_t expert = 3LL * 256 * 1024;
  constexpr std::int64_t moe = 128LL * 1024 + 128 + expert + 128 * expert;
  constexpr std::int64_t total =
      56 * (attention + 4 * 1024) + 2 * 3LL * 3072 * 1024 + 54 * moe + 2 * 200'192LL * 1024 + 1024;
  static_assert(total == 6'120'003'328);
  const trace::ModelDescription model = trace::test::fixture(k_nano);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  CHECK(trace::estimate_storage(model, count).bytes == 12'240'020'480);
}

TEST_CASE("afmoe config errors and class defaults", "[afmoe][errors]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_mini));
  SECTION("num_dense_layers past the stack is refused by name") {
    config["num_dense_layers"] = 40;
    CHECK(trace::test::config_error(config.dump()).find("num_dense_layers") != std::string::npos);
  }
  SECTION("without head_dim the heads are AfmoeConfig's 128 wide, not hidden / heads") {
    config.erase("head_dim");
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    CHECK(model.stacks.front().blocks.front().attention.head_dim == 128);
    CHECK(trace::count_parameters(model).total == 26'123'974'400);
  }
  SECTION("without layer_types every fourth layer is global") {
    config.erase("layer_types");
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    CHECK(trace::kv_cache_bytes(model, 100'000, trace::Dtype::bf16) ==
          (8LL * 100'000 + 24LL * 2048) * 2 * 4 * 128 * 2);
  }
}
