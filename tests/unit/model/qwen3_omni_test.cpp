// Qwen3-Omni-30B-A3B (qwen3_omni_moe): thinker (Qwen3-MoE text, AuT audio tower, Qwen3-VL vision),
// talker and code2wav. Published: 35,259,818,545 parameters for -Instruct (index total_size
// 70,519,637,090 bytes, BF16) and 31,719,205,488 for the thinker-only -Thinking (63,438,410,976
// bytes); a header-measured split per submodule. Sources: tests/data/configs/SOURCES-qwen3_omni.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr const char* k_instruct = "Qwen--Qwen3-Omni-30B-A3B-Instruct.reconstructed.json";
constexpr const char* k_thinking = "Qwen--Qwen3-Omni-30B-A3B-Thinking.reconstructed.json";

constexpr std::int64_t linear(std::int64_t in, std::int64_t out, bool bias) {
  return in * out + (bias ? out : 0);
}

// Thinker text: H 2048, 48 layers of 32 / 4 heads x 128 with QK-norm, 128 experts of 768 (top
// 8), vocabulary 152,064, untied.
constexpr std::int64_t k_text_attention = 2 * 2048LL * 4096 + 2 * 2048LL * 512 + 2 * 128;
constexpr std::int64_t k_text_expert = 3 * 2048LL * 768;
constexpr std::int64_t k_text =
    48 * (k_text_attention + 2 * 2048 + 128 * 2048 + 128 * k_text_expert) + 2 * 152'064LL * 2048 +
    2048;
// AuT: d 1280, 32 layers (FFN 5120), 480 conv channels, 128 mel bins -> F = 16, output 2048.
constexpr std::int64_t k_audio = (480 * 9 + 480) + 2 * (480LL * 480 * 9 + 480) + 480LL * 16 * 1280 +
                                 32 * (4 * linear(1280, 1280, true) + 4 * 1280 +
                                       linear(1280, 5120, true) + linear(5120, 1280, true)) +
                                 2 * 1280 + linear(1280, 1280, true) + linear(1280, 2048, true);
// Vision: 1152 wide, 27 blocks (MLP 4304), 16 x 16 x 2 patches, 2304 positions, merge 2 -> 4608,
// out 2048; the merger normalizes 1152, the three deepstack mergers 4608.
constexpr std::int64_t k_vision =
    (3LL * 2 * 16 * 16 * 1152 + 1152) + 2304LL * 1152 +
    27 * (4 * 1152 + linear(1152, 3456, true) + linear(1152, 1152, true) +
          linear(1152, 4304, true) + linear(4304, 1152, true)) +
    (2 * 1152 + linear(4608, 4608, true) + linear(4608, 2048, true)) +
    3 * (2 * 4608 + linear(4608, 4608, true) + linear(4608, 2048, true));

}  // namespace

TEST_CASE("Qwen3-Omni-30B-A3B-Thinking: the thinker's published 31,719,205,488",
          "[qwen3_omni][golden]") {
  static_assert(k_text == 30'532'646'912);
  static_assert(k_audio == 647'927'168);
  static_assert(k_vision == 538'631'408);
  const trace::ModelDescription model = trace::test::fixture(k_thinking);
  CHECK(model.model_type == "qwen3_omni_moe");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == k_text + k_audio + k_vision);
  CHECK(count.total == 31'719'205'488);
  CHECK(count.vision == k_audio + k_vision);
  CHECK(trace::estimate_storage(model, count).bytes == 63'438'410'976);
  // "3B active": 8 of 128 experts, embedding and head included.
  CHECK(count.active == k_text - 48 * 120 * k_text_expert);
  CHECK(count.active == 3'353'556'992);
}

TEST_CASE("Qwen3-Omni-30B-A3B-Instruct: 35,259,818,545 with the talker and code2wav",
          "[qwen3_omni][golden]") {
  // Talker: H 1024, 20 layers of 16 / 2 heads x 128 with QK-norm, 128 experts of 384 (top 6)
  // and a gated shared expert of 768; codec vocabulary 3072 (embedding and head untied); two
  // projections 2048 -> 2048 -> 1024.
  constexpr std::int64_t talker_layer = (2 * 1024LL * 2048 + 2 * 1024LL * 256 + 2 * 128) +
                                        2 * 1024 + 128 * 1024 + 128 * 3 * 1024LL * 384 +
                                        3 * 1024LL * 768 + 1024;
  constexpr std::int64_t projections = 2 * (linear(2048, 2048, true) + linear(2048, 1024, true));
  // Code predictor: 5 dense Qwen3 layers (16 / 8 heads x 128, MLP 3072), 15 codec embeddings and
  // 15 heads of [2048, 1024].
  constexpr std::int64_t predictor =
      5 * (2 * 1024LL * 2048 + 2 * 1024LL * 1024 + 2 * 128 + 3 * 1024LL * 3072 + 2 * 1024) + 1024 +
      2 * 15 * 2048LL * 1024;
  constexpr std::int64_t talker =
      20 * talker_layer + 1024 + 2 * 3072LL * 1024 + projections + predictor;
  static_assert(talker == 3'324'596'480);
  // code2wav's pre-transformer: 8 layers, 16 heads x 64, MLP 3072, no QK-norm, two LayerScales.
  constexpr std::int64_t pre = 8 * (4 * 1024LL * 1024 + 3 * 1024LL * 3072 + 4 * 1024) + 1024;
  static_assert(pre == 109'085'696);
  // code_embedding [2048 x 16, 1024]; per upsampling ratio (2, 2) a ConvTranspose1d(1024, 1024, 2)
  // and a ConvNeXt block (depthwise 7 taps, LayerNorm, 4096-wide pointwise MLP, gamma).
  constexpr std::int64_t upsample =
      2 * ((1024LL * 1024 * 2 + 1024) + (1024 * 7 + 1024) + 2 * 1024 + linear(1024, 4096, true) +
           linear(4096, 1024, true) + 1024);
  static_assert(upsample == 21'006'336);
  // Decoder: a 7-tap conv 1024 -> 1536, then for rates 8, 5, 4, 3 SnakeBeta, a ConvTranspose1d
  // halving the channels (kernel 2r) and three residual units; SnakeBeta and a conv to 1 channel.
  constexpr auto decoder = [] {
    std::int64_t params = 1024LL * 1536 * 7 + 1536;
    std::int64_t in = 1536;
    for (const std::int64_t rate : {8, 5, 4, 3}) {
      const std::int64_t out = in / 2;
      params += 2 * in + in * out * 2 * rate + out;
      params += 3 * (4 * out + out * out * 7 + out + out * out + out);
      in = out;
    }
    return params + 2 * in + in * 7 + 1;
  }();
  constexpr std::int64_t code2wav = pre + 2048LL * 16 * 1024 + upsample + decoder;
  // The header-measured split: code2wav 0.216B, the rest of the published total.
  static_assert(code2wav == 35'259'818'545 - 31'719'205'488 - talker);

  const trace::ModelDescription model = trace::test::fixture(k_instruct);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == k_text + k_audio + k_vision + talker + code2wav);
  CHECK(count.total == 35'259'818'545);
  CHECK(trace::estimate_storage(model, count).bytes == 70'519'637'090);
  // Only the thinker's text model is on the text path.
  CHECK(count.active == 3'353'556'992);
  // A serving engine loads the thinker alone (vLLM registers the model as its thinker).
  CHECK(count.not_served == talker + code2wav);
  CHECK(trace::served_params(count, false) == 31'719'205'488);

  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_instruct));
  SECTION("enable_audio_output false keeps the thinker alone") {
    config["enable_audio_output"] = false;
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
          31'719'205'488);
  }
  SECTION("a talker without code2wav_config is refused by name") {
    config.erase("code2wav_config");
    CHECK(trace::test::config_error(config.dump()).find("code2wav_config") != std::string::npos);
  }
  SECTION("a decoder_dim that does not halve evenly is refused by name") {
    config["code2wav_config"]["decoder_dim"] = 1000;
    CHECK(trace::test::config_error(config.dump()).find("decoder_dim") != std::string::npos);
  }
}
