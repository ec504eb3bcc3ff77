// Qwen2.5-Omni (qwen2_5_omni): Qwen2 thinker, Whisper-style audio tower, Qwen2.5-VL vision, talker
// and token2wav (DiT + BigVGAN, stored F32). Published for Qwen2.5-Omni-7B: 10,732,225,440
// parameters (the Hub's safetensors total, which includes the DiT's stored rotary inv_freq [32])
// and 21,327 MiB, which only BF16 thinker and talker beside an F32 token2wav make.
// Sources: tests/data/configs/SOURCES-qwen2_5_omni.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr std::int64_t linear(std::int64_t in, std::int64_t out, std::int64_t kernel = 1) {
  return in * out * kernel + out;
}

// token2wav, the same in both sizes. DiT: D 1024, 22 blocks of 16 x 64 heads, ff 2, emb 512,
// 8193 codes, mel 80, speaker 192, enc 128; ECAPA channels 256 x 4 + 768, kernels 5, 3, 3, 3, 1,
// Res2Net scale 2, SE 64, attention 64.
constexpr std::int64_t k_ecapa = linear(80, 256, 5) +
                                 3 * (linear(256, 256) + linear(128, 128, 3) + linear(256, 256) +
                                      linear(256, 64) + linear(64, 256)) +
                                 linear(768, 768) + linear(3 * 768, 64) + linear(64, 768) +
                                 linear(2 * 768, 128);
constexpr std::int64_t k_dit =
    linear(256, 1024) + linear(1024, 1024) + 8194LL * 512 + linear(80 + 128 + 192 + 512, 1024) +
    k_ecapa +
    22 * (linear(1024, 6144) + 4 * linear(1024, 1024) + linear(1024, 2048) + linear(2048, 1024)) +
    linear(1024, 2048) + linear(1024, 80);
// BigVGAN: conv_pre 80 -> 1536 (7 taps); six ConvTranspose1d halving 1536 (kernels 11, 7, 4, 4,
// 4, 4); per stage three AMP blocks (kernels 3, 7, 11) of 6 convs and 6 SnakeBeta; conv_post
// 24 -> 1 without bias.
constexpr auto k_bigvgan = [] {
  std::int64_t params = linear(80, 1536, 7);
  std::int64_t channels = 1536;
  for (const std::int64_t kernel : {11, 7, 4, 4, 4, 4}) {
    const std::int64_t out = channels / 2;
    params += linear(channels, out, kernel);
    for (const std::int64_t block : {3, 7, 11}) params += 6 * (linear(out, out, block) + 2 * out);
    channels = out;
  }
  return params + 2 * channels + channels * 7;
}();

// Audio: Whisper-style, d 1280, 32 layers (k_proj unbiased), FFN 5120, 128 mels, projected to
// the thinker's width `out`.
constexpr std::int64_t audio_tower(std::int64_t out) {
  return linear(128, 1280, 3) + linear(1280, 1280, 3) +
         32 * (4 * 1280LL * 1280 + 3 * 1280 + 4 * 1280 + linear(1280, 5120) + linear(5120, 1280)) +
         2 * 1280 + linear(1280, out) + 2 * out;
}

// Vision: Qwen2.5-VL's tower, 1280 wide, 32 blocks, MLP 3420, merged into `out`.
constexpr std::int64_t vision_tower(std::int64_t out) {
  return 1280LL * 3 * 2 * 14 * 14 +
         32 * (2 * 1280 + 4 * linear(1280, 1280) + 2 * linear(1280, 3420) + linear(3420, 1280)) +
         1280 + linear(5120, 5120) + linear(5120, out);
}

}  // namespace

TEST_CASE("Qwen2.5-Omni-7B: the Hub's 10,732,225,440 and its 21,327 MiB",
          "[qwen2_5_omni][golden]") {
  static_assert(k_dit == 333'607'760);
  static_assert(k_bigvgan == 115'443'504);
  // Thinker text: Qwen2, H 3584, 28 layers of 28 / 4 heads x 128, MLP 18944, vocabulary 152,064
  // untied.
  constexpr std::int64_t text = 28 * (linear(3584, 3584) + 2 * linear(3584, 512) + 3584LL * 3584 +
                                      3 * 3584LL * 18'944 + 2 * 3584) +
                                2 * 152'064LL * 3584 + 3584;
  constexpr std::int64_t audio = audio_tower(3584);
  constexpr std::int64_t vision = vision_tower(3584);
  // Talker: proj 3584 -> 896, embed [8448, 3584], 24 Qwen2 layers of 12 / 4 heads x 128
  // (q 896 -> 1536), MLP 18944, norm, codec_head [8448, 896].
  constexpr std::int64_t talker = linear(3584, 896) + 8448LL * 3584 +
                                  24 * (linear(896, 1536) + 2 * linear(896, 512) + 1536LL * 896 +
                                        3 * 896LL * 18'944 + 2 * 896) +
                                  896 + 896LL * 8448;
  constexpr std::int64_t total = text + audio + vision + talker + k_dit + k_bigvgan;
  static_assert(total + 32 == 10'732'225'440);  // + the stored inv_freq

  const trace::ModelDescription model =
      trace::test::fixture("Qwen--Qwen2.5-Omni-7B.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == total);
  CHECK(count.active == text);
  REQUIRE(model.stored_extras.size() == 1);
  CHECK(model.stored_extras.front().elements_each == 32);
  // BF16 thinker and talker, F32 token2wav (and the F32 inv_freq beside it): 22,362,553,472
  // bytes, MTEB's round(bytes / 2^20) = 21,327.
  const std::int64_t bytes = trace::estimate_storage(model, count).bytes;
  CHECK(bytes == 2 * (total - k_dit - k_bigvgan) + 4 * (k_dit + k_bigvgan));
  CHECK((bytes + 4 * 32 + (1 << 19)) / (1 << 20) == 21'327);
  // Serving loads the thinker alone (vLLM registers Qwen2_5OmniModel as its thinker): 8,931,813,888
  // parameters, 17,863,627,776 bytes (16.64 GiB) at bf16, where vLLM logged "16.74 GiB for
  // weight" serving this model on an A100-40GB (vLLM issue #25970).
  CHECK(count.not_served == talker + k_dit + k_bigvgan);
  CHECK(trace::served_params(count, false) == text + audio + vision);
  trace::Job serve;
  serve.mode = trace::JobMode::serve;
  serve.context = 1'024;
  static_assert(2 * (text + audio + vision) == 17'863'627'776LL);
  CHECK(trace::estimate_job(model, count, serve).breakdown.weights == 17'863'627'776LL);

  SECTION("enable_audio_output false keeps the thinker") {
    nlohmann::json config =
        nlohmann::json::parse(trace::test::config_text("Qwen--Qwen2.5-Omni-7B.reconstructed.json"));
    config["enable_audio_output"] = false;
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
          text + audio + vision);
  }
}

TEST_CASE("Qwen2.5-Omni-3B: the 7B's token2wav beside a 2048-wide thinker", "[qwen2_5_omni]") {
  // No exact published total; the tensor counts match a re-save's weight map (SOURCES).
  const trace::ParameterCount count =
      trace::count_parameters(trace::test::fixture("Qwen--Qwen2.5-Omni-3B.reconstructed.json"));
  // Thinker text: H 2048, 36 layers of 16 / 2 heads x 128, MLP 11008, vocabulary 151,936 untied.
  constexpr std::int64_t text = 36 * (linear(2048, 2048) + 2 * linear(2048, 256) + 2048LL * 2048 +
                                      3 * 2048LL * 11'008 + 2 * 2048) +
                                2 * 151'936LL * 2048 + 2048;
  // Audio and vision as the 7B's but projecting to 2048.
  constexpr std::int64_t audio = audio_tower(2048);
  constexpr std::int64_t vision = vision_tower(2048);
  // Talker: proj 2048 -> 896, embed [8448, 2048], 24 Qwen2 layers of 14 / 2 heads x 64, MLP 4864,
  // norm, codec_head [8448, 896].
  constexpr std::int64_t talker =
      linear(2048, 896) + 8448LL * 2048 +
      24 * (linear(896, 896) + 2 * linear(896, 128) + 896LL * 896 + 3 * 896LL * 4864 + 2 * 896) +
      896 + 896LL * 8448;
  CHECK(count.active == text);
  CHECK(count.total == text + audio + vision + talker + k_dit + k_bigvgan);
  // The research note's 5,537,120,672 for the upload, its inv_freq included.
  static_assert(text + audio + vision + talker + k_dit + k_bigvgan + 32 == 5'537'120'672);
}
