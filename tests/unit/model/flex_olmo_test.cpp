// FlexOlmo-7x7B-1T: OLMo 2 post-norm layers with a 7-expert sparse FFN, stored in F32. Published:
// total_parameters 33,270,665,216 and total_size 133,082,660,864 bytes (4 per parameter); the
// derivation is in tests/data/configs/SOURCES-flex_olmo-ministral.md.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr const char* k_flex = "allenai--FlexOlmo-7x7B-1T.reconstructed.json";
// H 4096, 32 heads of 128 (no GQA), 7 experts of 11,008: q/k/v/o 4 x 4096^2, q_norm / k_norm
// over the full 4096 widths, router [7, H], 7 SwiGLU experts, two post-norms.
constexpr std::int64_t k_expert = 3 * 4096LL * 11'008;
constexpr std::int64_t k_layer = 4 * 4096LL * 4096 + 2 * 4096 + 7 * 4096 + 7 * k_expert + 2 * 4096;
constexpr std::int64_t k_embedding = 100'352LL * 4096;

}  // namespace

TEST_CASE("FlexOlmo-7x7B-1T: 33,270,665,216 in F32, every expert routed", "[flex_olmo][golden]") {
  constexpr std::int64_t total = 32 * k_layer + 2 * k_embedding + 4096;
  static_assert(total == 33'270'665'216);
  const trace::ModelDescription model = trace::test::fixture(k_flex);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  CHECK(count.active == total);  // num_experts_per_tok 7 of 7
  CHECK(trace::estimate_storage(model, count).bytes == 133'082'660'864);
  const trace::Block& block = model.stacks.front().blocks.front();
  REQUIRE(block.attention.q_norm.has_value());
  CHECK(block.attention.q_norm->dim == 4096);
  CHECK(block.norms.size() == 2);

  SECTION("FlexOlmoConfig's default top 5 leaves two experts idle per layer") {
    nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_flex));
    config.erase("num_experts_per_tok");
    const trace::ParameterCount five =
        trace::count_parameters(trace::parse_model_config(config.dump()));
    CHECK(five.active == total - 32 * 2 * k_expert);
  }
}
