// DeepSeek-OCR (deepseek_vl_v2 with DeepEncoder: SAM ViT-B + CLIP-L) and dots.ocr (Qwen2 +
// dots_vit). Published: DeepSeek-OCR's safetensors 3,336,106,240 parameters in 2,710 tensors
// (BF16), dots.ocr the Hub's 3,039,179,264 (BF16). Sources:
// tests/data/configs/SOURCES-dots_ocr-deepseek_ocr.md.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

constexpr std::int64_t linear(std::int64_t in, std::int64_t out) {
  return in * out + out;
}

}  // namespace

TEST_CASE("DeepSeek-OCR: the published 3,336,106,240", "[deepseek_vl_v2][golden]") {
  // Language: DeepSeek-V2 MoE without MLA: H 1280, 12 layers of 10 heads x 128, layer 0 dense
  // (6848), 11 MoE layers of 64 experts (896) + 2 shared (1792) behind a greedy router, vocabulary
  // 129,280, untied.
  constexpr std::int64_t language = 12 * (4 * 1280LL * 1280 + 2 * 1280) + 3 * 1280LL * 6848 +
                                    11 * (64 * 1280LL + 64 * 3 * 1280LL * 896 + 3 * 1280LL * 1792) +
                                    2 * 129'280LL * 1280 + 1280;
  // SAM ViT-B: patch conv, 64 x 64 positions, 12 blocks (LayerNorms, qkv, proj, 3072-wide MLP),
  // relative positions [27, 64] x 2 on 8 windowed and [127, 64] x 2 on 4 global blocks, the neck
  // (1 x 1 and 3 x 3 convs without bias, two LayerNorm2d) and net_2 / net_3 (256 -> 512 -> 1024).
  constexpr std::int64_t sam_block =
      4 * 768 + linear(768, 3 * 768) + linear(768, 768) + linear(768, 3072) + linear(3072, 768);
  constexpr std::int64_t sam = linear(3 * 16 * 16, 768) + 64LL * 64 * 768 + 12 * sam_block +
                               2 * 64 * (8 * 27 + 4 * 127) + 256 * 768 + 256 * 256 * 9 + 4 * 256 +
                               512 * 256 * 9 + 1024LL * 512 * 9;
  // CLIP-L/14 at 224: class token, bias-free patch conv, 257 positions, pre_layrnorm, 24 layers.
  constexpr std::int64_t clip_layer = 4 * 1024 + linear(1024, 3 * 1024) + linear(1024, 1024) +
                                      linear(1024, 4096) + linear(4096, 1024);
  constexpr std::int64_t clip =
      1024 + 1024LL * 3 * 14 * 14 + 257 * 1024 + 2 * 1024 + 24 * clip_layer;
  // A linear projector from CLIP + SAM features (1024 + 1024) to 1280, image_newline and
  // view_seperator.
  constexpr std::int64_t projector = linear(2048, 1280) + 2 * 1280;
  static_assert(sam == 95'569'152);
  static_assert(clip == 303'177'728);
  static_assert(language + sam + clip + projector == 3'336'106'240);

  const trace::ModelDescription model = trace::test::fixture("deepseek-ai--DeepSeek-OCR.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == 3'336'106'240);
  CHECK(count.vision == sam + clip + projector);
  CHECK(trace::estimate_storage(model, count).bytes == 2 * 3'336'106'240);

  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("deepseek-ai--DeepSeek-OCR.json"));
  SECTION("an OCR architecture with a single-tower vision_config is refused") {
    config["vision_config"]["width"] = 1024;
    CHECK(trace::test::config_error(config.dump()).find("architectures") != std::string::npos);
  }
  SECTION("a projector input other than CLIP + SAM widths is refused by name") {
    config["projector_config"]["input_dim"] = 1024;
    CHECK(trace::test::config_error(config.dump()).find("input_dim") != std::string::npos);
  }
}

TEST_CASE("dots.ocr: the Hub's 3,039,179,264", "[dots_ocr][golden]") {
  // Qwen2 text at the top level: H 1536, 28 layers of 12 / 2 heads x 128 (q/k/v biased),
  // MLP 8960, vocabulary 151,936 untied.
  constexpr std::int64_t text = 28 * (linear(1536, 1536) + 2 * linear(1536, 256) + 1536LL * 1536 +
                                      3 * 1536LL * 8960 + 2 * 1536) +
                                2 * 151'936LL * 1536 + 1536;
  // dots_vit: biased 14 x 14 patch conv and its RMSNorm, 42 blocks (two RMSNorms, qkv and proj,
  // SwiGLU 4224, no biases), post_trunk_norm, merger (LayerNorm, 6144 -> 6144 -> 1536, biased).
  constexpr std::int64_t block = 2 * 1536 + 3 * 1536LL * 1536 + 1536LL * 1536 + 3 * 1536LL * 4224;
  constexpr std::int64_t vision = linear(3 * 14 * 14, 1536) + 1536 + 42 * block + 1536 + 2 * 1536 +
                                  linear(6144, 6144) + linear(6144, 1536);
  static_assert(text == 1'777'088'000);
  static_assert(text + vision == 3'039'179'264);
  const trace::ModelDescription model =
      trace::test::fixture("rednote-hilab--dots.ocr.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == text + vision);
  CHECK(count.vision == vision);
  SECTION("use_bias adds the blocks' biases, not the patch conv's (biased already)") {
    nlohmann::json config = nlohmann::json::parse(
        trace::test::config_text("rednote-hilab--dots.ocr.reconstructed.json"));
    config["vision_config"]["use_bias"] = true;
    CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
          text + vision + 42 * (3 * 1536 + 1536 + 2 * 4224 + 1536));
  }
}
