// LongCat-Flash (longcat_flash: two MLA + SwiGLU sub-layers and a shortcut MoE with
// zero-computation experts per layer, one MTP layer with its own embedding): the published total
// and the card's activated range, derived by hand from the tensor lists in
// tests/data/configs/SOURCES-longcat.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"

namespace {

constexpr const char* k_chat = "meituan-longcat--LongCat-Flash-Chat.json";

// H 6144, 64 heads, q_lora 1536, kv_lora 512, qk 128 + 64, v 128.
constexpr std::int64_t k_mla = 1536LL * 6144 + 1536 + 64LL * 192 * 1536 + 576LL * 6144 + 512 +
                               64LL * 256 * 512 + 6144LL * 64 * 128;
constexpr std::int64_t k_dense = 3LL * 12288 * 6144;
constexpr std::int64_t k_expert = 3LL * 2048 * 6144;
// One layer: two attentions, two dense MLPs, four norms, 512 experts, the router's 768 rows
// (512 experts + 256 zero-computation) and correction biases.
constexpr std::int64_t k_layer =
    2 * k_mla + 2 * k_dense + 4 * 6144 + 512 * k_expert + 768LL * 6144 + 768;
constexpr std::int64_t k_embedding = 131072LL * 6144;
constexpr std::int64_t k_mtp = k_embedding + 6144LL * 2 * 6144 + 4 * 6144 + k_mla + k_dense + 6144;

}  // namespace

TEST_CASE("LongCat-Flash-Chat: the published 561,862,880,256 parameters",
          "[longcat_flash][golden]") {
  static_assert(k_mla == 90'572'800);
  static_assert(k_layer == 19'966'227'200);
  static_assert(k_mtp == 1'197'899'776);
  static_assert(28 * k_layer + 2 * k_embedding + 6144 + k_mtp == 561'862'880'256);

  const trace::ModelDescription model = trace::test::fixture(k_chat);
  CHECK(model.model_type == "longcat_flash");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == 561'862'880'256);
  CHECK(count.mtp == k_mtp);
  CHECK(trace::component_count(count, "experts") == 28LL * 512 * k_expert);
  CHECK(trace::component_count(count, "router") == 28LL * (768 * 6144 + 768));
  // Two blocks per layer; the shortcut MoE sits with the first.
  REQUIRE(model.stacks[0].blocks.size() == 56);
  CHECK(trace::block_params(model.stacks[0].blocks[0]) + 256LL * 6144 + 256 +
            trace::block_params(model.stacks[0].blocks[1]) ==
        k_layer);
  CHECK_FALSE(model.stacks[0].blocks[1].moe);

  // The card: 18.6B - 31.3B activated (truncated), without the input embedding. All 12 picks
  // real experts is the most; all 12 zero-computation ones the least.
  constexpr std::int64_t most =
      28 * k_layer + 2 * k_embedding + 6144 - k_embedding - 28LL * 500 * k_expert;
  static_assert(most == 31'377'370'112);
  static_assert(most - 28LL * 12 * k_expert == 18'693'794'816);
  CHECK(count.active_without_embedding == most);
  CHECK(count.active_without_embedding / 100'000'000 == 313);
  CHECK((count.active_without_embedding - 28LL * 12 * k_expert) / 100'000'000 == 186);
}

TEST_CASE("LongCat-Flash serving: 56 MLA latents per token", "[longcat_flash][memory]") {
  const trace::ModelDescription model = trace::test::fixture(k_chat);
  // 2 x 28 attentions x (kv_lora 512 + rope 64) x 2 bytes; the MTP layer's only when served.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 56 * 576 * 2);
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 64'512);
  trace::KvSplit with_mtp;
  with_mtp.mtp = true;
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16, with_mtp) == 57 * 576 * 2);
}

TEST_CASE("LongCat-Flash config errors name the key", "[longcat_flash][errors]") {
  const nlohmann::json chat = nlohmann::json::parse(trace::test::config_text(k_chat));
  nlohmann::json config = chat;
  config.erase("num_layers");
  config["num_hidden_layers"] = 56;
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("num_layers"));
  config = chat;
  config["zero_expert_type"] = "const";
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("zero_expert_type") &&
                 Catch::Matchers::Contains("not supported yet"));
  config = chat;
  config["attention_method"] = "GQA";
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("attention_method"));
  config = chat;
  config["moe_topk"] = 2000;
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("moe_topk"));
  // Without the MTP layer: the model less mtp.*.
  config = chat;
  config["num_nextn_predict_layers"] = 0;
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        561'862'880'256 - k_mtp);
}
