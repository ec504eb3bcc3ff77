// T5's relatives: umT5 (a relative-position table in every self-attention), the *EncoderModel text
// encoders (FLUX's T5-v1.1-XXL, Wan's umT5-XXL: the encoder and the shared table alone) and
// T5Gemma (Gemma 2 encoder-decoders). Published: Wan 2.2's text_encoder index 11,361,820,672
// bytes (BF16), FLUX.1's text_encoder_2 9,524,621,312 bytes (BF16), keras-hub's T5Gemma preset
// counts. Sources and derivations: tests/data/configs/SOURCES-t5.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

// An XXL T5 / umT5 encoder block: q/k/v/o 4096 x (64 x 64), gated FFN 3 x 4096 x 10240, two
// RMSNorms.
constexpr std::int64_t k_xxl_block = 4 * 4096LL * 4096 + 3 * 4096LL * 10'240 + 2 * 4096;
constexpr std::int64_t k_bias_table = 32 * 64;  // [buckets, heads]

std::int64_t total_of(const char* fixture) {
  return trace::count_parameters(trace::test::fixture(fixture)).total;
}

}  // namespace

TEST_CASE("Wan 2.2's umT5-XXL text encoder: 5,680,910,336, its index's 11,361,820,672 bytes",
          "[t5][umt5][golden]") {
  // Shared table 256,384 x 4096, 24 blocks each with its own bias table, the final norm.
  constexpr std::int64_t total = 256'384LL * 4096 + 24 * (k_xxl_block + k_bias_table) + 4096;
  static_assert(2 * total == 11'361'820'672);
  const trace::ModelDescription model =
      trace::test::fixture("Wan-AI--Wan2.2-T2V-A14B-Diffusers--text_encoder.reconstructed.json");
  CHECK(model.model_type == "umt5");
  CHECK_FALSE(model.has_lm_head);
  REQUIRE(model.stacks.size() == 1);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  CHECK(trace::estimate_storage(model, count).bytes == 11'361'820'672);
}

TEST_CASE("FLUX.1's T5-v1.1-XXL text encoder: 4,762,310,656 (9,524,621,312 BF16 bytes)",
          "[t5][golden]") {
  // T5 keeps one bias table, in block 0; vocabulary 32,128.
  constexpr std::int64_t total = 32'128LL * 4096 + 24 * k_xxl_block + k_bias_table + 4096;
  static_assert(2 * total == 9'524'621'312);
  const trace::ModelDescription model =
      trace::test::fixture("black-forest-labs--FLUX.1-dev--text_encoder_2.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  CHECK(trace::estimate_storage(model, count).bytes == 9'524'621'312);
  SECTION("the same config as T5ForConditionalGeneration adds the decoder and the head") {
    nlohmann::json config = nlohmann::json::parse(trace::test::config_text(
        "black-forest-labs--FLUX.1-dev--text_encoder_2.reconstructed.json"));
    config["architectures"] = {"T5ForConditionalGeneration"};
    // Decoder blocks: self + cross attention, three norms; one more bias table; final norm; head.
    constexpr std::int64_t decoder_block = 8 * 4096LL * 4096 + 3 * 4096LL * 10'240 + 3 * 4096;
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
          total + 24 * decoder_block + k_bias_table + 4096 + 32'128LL * 4096);
  }
}

TEST_CASE("umT5-small: every block of both stacks has its own bias table", "[t5][umt5]") {
  // d 512, 8 + 8 blocks, 6 heads x 64, d_ff 1024 gated, vocabulary 256,384, untied head.
  constexpr std::int64_t inner = 6 * 64;
  constexpr std::int64_t encoder_block = 4 * 512LL * inner + 3 * 512LL * 1024 + 2 * 512 + 32 * 6;
  constexpr std::int64_t decoder_block = 8 * 512LL * inner + 3 * 512LL * 1024 + 3 * 512 + 32 * 6;
  constexpr std::int64_t total =
      2 * 256'384LL * 512 + 8 * encoder_block + 8 * decoder_block + 2 * 512;
  static_assert(total == 306'601'984);  // the Hub's "307M"
  CHECK(total_of("google--umt5-small.reconstructed.json") == total);

  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("google--umt5-small.reconstructed.json"));
  SECTION("without feed_forward_proj, UMT5Config's gated-gelu") {
    config.erase("feed_forward_proj");
    config.erase("is_gated_act");
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total == total);
  }
  SECTION("a transformers-5 config claiming a tied head is counted tied, with a note") {
    config["tie_word_embeddings"] = true;
    config["transformers_version"] = "5.3.0";
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    CHECK(trace::count_parameters(model).total == total - 256'384LL * 512);
    bool noted = false;
    for (const std::string& note : model.notes)
      noted |= note.find("lm_head apart") != std::string::npos;
    CHECK(noted);
  }
}

TEST_CASE("T5Gemma: keras-hub's 5,596,853,760 (2B-2B) and 12,292,375,296 (9B-2B)",
          "[t5gemma][golden]") {
  // 2B modules: d 2304, 8 heads / 4 KV x 256, MLP 9216, 26 layers; vocabulary 256,000.
  constexpr std::int64_t q2 = 8 * 256;
  constexpr std::int64_t kv2 = 4 * 256;
  constexpr std::int64_t layer2 = 2 * 2304LL * q2 + 2 * 2304LL * kv2 + 3 * 2304LL * 9216 + 4 * 2304;
  // A decoder layer adds cross-attention (k / v from the encoder's width) and two norms.
  constexpr std::int64_t cross2 = 2 * 2304LL * q2 + 2 * 2304LL * kv2 + 2 * 2304;
  constexpr std::int64_t two_two =
      2 * 256'000LL * 2304 + 26 * layer2 + 26 * (layer2 + cross2) + 2 * 2304;
  static_assert(two_two == 5'596'853'760);
  CHECK(total_of("google--t5gemma-2b-2b-ul2.reconstructed.json") == two_two);

  // 9B encoder: d 3584, 16 heads / 8 KV x 256, MLP 14336, 42 layers.
  constexpr std::int64_t q9 = 16 * 256;
  constexpr std::int64_t kv9 = 8 * 256;
  constexpr std::int64_t layer9 =
      2 * 3584LL * q9 + 2 * 3584LL * kv9 + 3 * 3584LL * 14'336 + 4 * 3584;
  constexpr std::int64_t cross_from_9b = 2 * 2304LL * q2 + 2 * 3584LL * kv2 + 2 * 2304;
  constexpr std::int64_t nine_two = 256'000LL * 3584 + 256'000LL * 2304 + 42 * layer9 +
                                    26 * (layer2 + cross_from_9b) + 3584 + 2304;
  static_assert(nine_two == 12'292'375'296);
  const trace::ModelDescription model =
      trace::test::fixture("google--t5gemma-9b-2b-ul2.reconstructed.json");
  CHECK(trace::count_parameters(model).total == nine_two);
  CHECK(model.tie_word_embeddings);

  SECTION("T5GemmaEncoderModel keeps the encoder and its table") {
    nlohmann::json config = nlohmann::json::parse(
        trace::test::config_text("google--t5gemma-9b-2b-ul2.reconstructed.json"));
    config["architectures"] = {"T5GemmaEncoderModel"};
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
          256'000LL * 3584 + 42 * layer9 + 3584);
  }
  SECTION("a cross_attention_hidden_size other than the encoder's width is refused") {
    nlohmann::json config = nlohmann::json::parse(
        trace::test::config_text("google--t5gemma-9b-2b-ul2.reconstructed.json"));
    config["decoder"]["cross_attention_hidden_size"] = 2304;
    CHECK(trace::test::config_error(config.dump()).find("cross_attention_hidden_size") !=
          std::string::npos);
  }
}
