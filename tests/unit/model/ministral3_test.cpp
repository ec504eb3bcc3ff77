// Ministral 3 (a ministral3 text_config inside the mistral3 wrapper, Pixtral vision tower):
// Ministral-3-14B-Instruct-2512 holds 13,506,073,600 text and 438,958,080 vision + projector
// parameters (published, measured); the 3B ties its head. The Instruct uploads are FP8 with a
// static activation scheme: an F32 weight_scale_inv and activation_scale per quantized Linear.
// Sources: tests/data/configs/SOURCES-ministral3.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr const char* k_14b = "mistralai--Ministral-3-14B-Instruct-2512.reconstructed.json";
constexpr const char* k_3b = "mistralai--Ministral-3-3B-Instruct-2512.reconstructed.json";

// Pixtral tower of Ministral 3 (1024 wide, 24 layers, MLP 4096, 14 x 14 patches): patch_conv,
// ln_pre, per layer q/k/v/o [1024, 1024] + gate/up/down 4096 x 1024 + two RMSNorms.
constexpr std::int64_t k_tower =
    1024LL * 3 * 14 * 14 + 1024 + 24 * (4 * 1024LL * 1024 + 3 * 4096LL * 1024 + 2 * 1024);
// Projector: norm, patch_merger [1024, 4 x 1024], linear_1 [H, 1024], linear_2 [H, H]; no biases.
constexpr std::int64_t projector(std::int64_t text_hidden) {
  return 1024 + 4 * 1024LL * 1024 + 1024 * text_hidden + text_hidden * text_hidden;
}
// A Ministral 3 layer: q [32 x 128, H], k / v [8 x 128, H], o [H, 4096], gate / up / down of I,
// two RMSNorms.
constexpr std::int64_t text_layer(std::int64_t hidden, std::int64_t intermediate) {
  return 2 * 4096 * hidden + 2 * 1024 * hidden + 3 * intermediate * hidden + 2 * hidden;
}

}  // namespace

TEST_CASE("Ministral-3-14B: the published 13,506,073,600 text + 438,958,080 vision",
          "[ministral3][golden]") {
  constexpr std::int64_t text = 40 * text_layer(5120, 16384) + 2 * 131'072LL * 5120 + 5120;
  static_assert(text == 13'506'073'600);
  static_assert(k_tower + projector(5120) == 438'958'080);

  const trace::ModelDescription model = trace::test::fixture(k_14b);
  CHECK(model.model_type == "mistral3");
  CHECK_FALSE(model.tie_word_embeddings);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == text + k_tower + projector(5120));
  CHECK(count.vision == k_tower + projector(5120));

  // FP8, static activations: 7 Linears a layer as F8_E4M3, each with two F32 scalars; vision,
  // projector, embedding, head and norms at BF16.
  const std::int64_t linears = 40 * 7;
  const std::int64_t fp8 = 40 * (text_layer(5120, 16384) - 2 * 5120);
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  CHECK(storage.bytes == fp8 + 2 * (count.total - fp8) + 4 * 2 * linears);
}

TEST_CASE("Ministral-3-3B ties its head by text_config, whatever the wrapper says",
          "[ministral3][golden]") {
  // H 3072 with 32 heads of head_dim 128 (not 3072 / 32 = 96), 26 layers, I 9216, tied.
  constexpr std::int64_t text = 26 * text_layer(3072, 9216) + 131'072LL * 3072 + 3072;
  const trace::ModelDescription model = trace::test::fixture(k_3b);
  CHECK(model.tie_word_embeddings);
  CHECK(trace::count_parameters(model).total == text + k_tower + projector(3072));
  CHECK(trace::count_parameters(model).total == 3'849'090'048);

  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_3b));
  SECTION("the wrapper's own tie_word_embeddings does not untie it") {
    config["tie_word_embeddings"] = false;
    CHECK(trace::parse_model_config(config.dump()).tie_word_embeddings);
  }
  SECTION("Ministral3Config's head_dim default is 128, not hidden / heads") {
    config["text_config"].erase("head_dim");
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total == 3'849'090'048);
  }
  SECTION("an explicit null head_dim is hidden / heads = 96") {
    config["text_config"]["head_dim"] = nullptr;
    const trace::ModelDescription narrow = trace::parse_model_config(config.dump());
    CHECK(narrow.stacks.front().blocks.front().attention.head_dim == 96);
  }
  SECTION("a ministral3 text model alone counts the text only") {
    const nlohmann::json alone = config["text_config"];
    CHECK(trace::count_parameters(trace::parse_model_config(alone.dump())).total == text);
  }
  SECTION("an unknown activation_scheme is refused by name") {
    config["quantization_config"]["activation_scheme"] = "sometimes";
    CHECK(trace::test::config_error(config.dump()).find("activation_scheme") != std::string::npos);
  }
}
