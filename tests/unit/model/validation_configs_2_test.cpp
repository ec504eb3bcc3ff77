// Fixtures for measured.csv rows of already-supported architectures (third batch), and the
// mistral3 wrapper (Mistral Small 3.1 / 3.2, Magistral Small 2509). Every expected number is a
// published parameter count or a hand derivation written down in
// tests/data/configs/SOURCES-validation-configs-2.md, never the program's own output.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::ParameterCount count_of(const char* name) {
  return trace::count_parameters(trace::parse_model_config(trace::test::config_text(name)));
}

const char* const k_magistral = "unsloth--Magistral-Small-2509-unsloth-bnb-4bit.reconstructed.json";

}  // namespace

TEST_CASE("Llama-3.1-405B: Hub safetensors.total 405,853,388,800", "[validation][golden]") {
  CHECK(count_of("meta-llama--Llama-3.1-405B.json").total == 405'853'388'800);
}

TEST_CASE("Mixtral-8x7B (v0.1 config): 46,702,792,704", "[validation][golden]") {
  CHECK(count_of("mistralai--Mixtral-8x7B.json").total == 46'702'792'704);
}

TEST_CASE("unsloth tinyllama (TinyLlama 1.1B 3T): 1,100,048,384", "[validation][golden]") {
  CHECK(count_of("unsloth--tinyllama-bnb-4bit.reconstructed.json").total == 1'100'048'384);
}

TEST_CASE("mamba2-8b-3t-4k (pure Mamba-2, untied 256K vocab): 8,236,999,680", "[validation][golden]") {
  const trace::ParameterCount count = count_of("nvidia--mamba2-8b-3t-4k.reconstructed.json");
  CHECK(count.total == 8'236'999'680);
  // by hand: 2 x 256000 x 4096 tables + final norm 4096 + 56 x 109,640,064 per layer
  CHECK(trace::component_count(count, "embedding") == 1'048'576'000);
  CHECK(trace::component_count(count, "head") == 1'048'576'000);
}

TEST_CASE("Magistral Small 2509 (mistral3): 24,011,361,280", "[validation][golden][mistral3]") {
  const trace::ParameterCount count = count_of(k_magistral);
  CHECK(count.total == 24'011'361'280);
  // The text stack alone is the text-only Magistral Small 2506 / Mistral Small 24B figure.
  CHECK(count.total - count.vision == 23'572'403'200);
  // Pixtral tower 403,305,472 + projector 35,652,608 (derived in SOURCES).
  CHECK(count.vision == 438'958'080);
  CHECK(count.active == count.total - count.vision);
}

TEST_CASE("mistral3: wrapper keys and errors", "[mistral3]") {
  const nlohmann::json base = nlohmann::json::parse(trace::test::config_text(k_magistral));
  const trace::ModelDescription model = trace::parse_model_config(base.dump());
  CHECK(model.model_type == "mistral3");
  CHECK(model.hidden_size == 5120);
  CHECK_FALSE(model.tie_word_embeddings);
  CHECK(model.torch_dtype == "bfloat16");

  SECTION("a second vision feature layer widens linear_1") {
    nlohmann::json config = base;
    config["vision_feature_layer"] = nlohmann::json::array({-1, -2});
    const std::int64_t total =
        trace::count_parameters(trace::parse_model_config(config.dump())).total;
    CHECK(total == 24'011'361'280 + 1024LL * 5120);
  }
  SECTION("projector biases") {
    nlohmann::json config = base;
    config["multimodal_projector_bias"] = true;
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
          24'011'361'280 + 2 * 5120);
  }
  SECTION("tied embeddings at the wrapper level reach the text model") {
    nlohmann::json config = base;
    config["tie_word_embeddings"] = true;
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
          24'011'361'280 - 131072LL * 5120);
  }
  SECTION("defaults are listed in the notes") {
    nlohmann::json config = base;
    config.erase("spatial_merge_size");
    config["vision_config"].erase("num_channels");
    const trace::ModelDescription defaulted = trace::parse_model_config(config.dump());
    CHECK(trace::count_parameters(defaulted).total == 24'011'361'280);
    std::string notes;
    for (const std::string& note : defaulted.notes) notes += note + "\n";
    CHECK(notes.find("spatial_merge_size = 2") != std::string::npos);
    CHECK(notes.find("num_channels = 3") != std::string::npos);
  }
  SECTION("an unsupported text model type is refused by name") {
    nlohmann::json config = base;
    config["text_config"]["model_type"] = "deepseek_v3";
    CHECK_THROWS_AS(trace::parse_model_config(config.dump()), trace::ConfigError);
    CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                      Catch::Contains("text_config.model_type"));
  }
  SECTION("a vision head_dim that contradicts hidden / heads is refused") {
    nlohmann::json config = base;
    config["vision_config"]["head_dim"] = 128;
    CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                      Catch::Contains("vision_config.head_dim"));
  }
  SECTION("a missing vision size is refused by name") {
    nlohmann::json config = base;
    config["vision_config"].erase("intermediate_size");
    CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                      Catch::Contains("vision_config.intermediate_size"));
  }
}

TEST_CASE("Qwen3.6-27B-FP8 (reconstructed): logical count = Qwen3.5-27B's 27,781,427,952", "[validation][golden]") {
  // Shape keys identical to the Qwen3.5-27B fixture (Hub total 27,781,427,952); the FP8 repo's own
  // Hub total (with its F32 block scales) was not found, so only the logical count is checked.
  const trace::ModelDescription model = trace::parse_model_config(
      trace::test::config_text("Qwen--Qwen3.6-27B-FP8.reconstructed.json"));
  CHECK(trace::count_parameters(model).total == 27'781'427'952);
  REQUIRE(model.quantization.has_value());
  CHECK(model.quantization->format == trace::QuantFormat::fp8_block);
}

TEST_CASE("Qwen3.8-27B: 27,781,427,952 parameters, its index's 55,562,855,904 BF16 bytes / 2",
          "[validation][golden]") {
  // The published config.json (SHA-256 191e0af2...;
  // tests/data/configs/SOURCES-validation-configs-2.md). Its model.safetensors.index.json gives
  // total_size 55,562,855,904 bytes, every tensor BF16: 27,781,427,952 parameters, of which the MTP
  // layer 424,699,392 and the vision tower 460,730,096.
  const trace::ModelDescription model =
      trace::parse_model_config(trace::test::config_text("Qwen--Qwen3.8-27B.json"));
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == 55'562'855'904 / 2);
  CHECK(count.mtp == 424'699'392);
  CHECK(count.vision == 460'730'096);
  CHECK_FALSE(model.quantization.has_value());
  // KV: only the 16 full-attention layers (every fourth, full_attention_interval 4) cache, 2 x 4
  // kv heads x 256 x 2 bytes each; state: the 48 gated-DeltaNet layers, 48 x 128 x 128 fp32 values
  // and a conv window of 3 x (2 x 16 x 128 + 48 x 128) bf16 values each.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 16 * 2 * 4 * 256 * 2);
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) ==
        48LL * (48 * 128 * 128 * 4 + 3 * 10'240 * 2));
}
