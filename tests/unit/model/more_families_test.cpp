// The second set of added families (gpt_neo, mpt, codegen, exaone4, llava, paligemma, idefics3):
// what each layout changes besides the golden totals (families_test.cpp). Every expected number
// is derived by hand in its comment from the fixture's hyperparameters.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::ModelDescription model_of(const std::string& fixture) {
  return trace::parse_model_config(trace::test::config_text(fixture));
}

nlohmann::json fixture_json(const std::string& name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

std::int64_t total_of(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}

}  // namespace

TEST_CASE("GPT-Neo: alternating global and 256-token local layers, learned positions",
          "[families][gpt_neo]") {
  // gpt-neo-125m: 12 layers [global, local] x 6; 12 heads x 64 = 768 values each for K and V,
  // 2 x 768 x 2 bytes = 3,072 bytes per layer-token in fp16/bf16. At 2,048 tokens the 6 global
  // layers hold 2,048 tokens, the 6 local ones 256.
  const trace::ModelDescription model = model_of("EleutherAI--gpt-neo-125m.reconstructed.json");
  CHECK(model.position == trace::PositionKind::learned);
  for (std::size_t i = 0; i < model.stacks[0].blocks.size(); ++i) {
    CHECK(model.stacks[0].blocks[i].attention.sliding_window == (i % 2 == 0 ? 0 : 256));
  }
  CHECK(trace::kv_cache_bytes(model, 2048, trace::Dtype::bf16) ==
        6LL * 3'072 * 2'048 + 6LL * 3'072 * 256);
  // The 2,048 x 768 position table is a parameter: 1,572,864 of the 125,198,592.
  nlohmann::json shorter = fixture_json("EleutherAI--gpt-neo-125m.reconstructed.json");
  shorter["max_position_embeddings"] = 1024;
  CHECK(total_of(shorter) == 125'198'592 - 1'024LL * 768);
}

TEST_CASE("MPT-7B: ALiBi and no biases anywhere", "[families][mpt]") {
  // no_bias true: 32 layers x (Wqkv 3 x 4,096 + out 4,096 + up 16,384 + down 4,096 + two
  // LayerNorm biases 2 x 4,096) + norm_f 4,096 = 32 x 45,056 + 4,096 would be added with biases.
  const trace::ModelDescription model = model_of("mosaicml--mpt-7b-instruct.json");
  CHECK(model.position == trace::PositionKind::alibi);
  CHECK(model.stacks[0].blocks[0].attention.rotary_dim == 0);
  nlohmann::json biased = fixture_json("mosaicml--mpt-7b-instruct.json");
  biased["no_bias"] = false;
  CHECK(total_of(biased) == 6'649'286'656 + 32LL * 45'056 + 4'096);
}

TEST_CASE("CodeGen: GPT-J's parallel block with 32 of 64 head dims rotated",
          "[families][codegen]") {
  // codegen-350M-mono: 16 heads of 1,024 / 16 = 64, rotary_dim 32; one ln_1 per layer.
  const trace::ModelDescription model =
      model_of("Salesforce--codegen-350M-mono.reconstructed.json");
  const trace::Block& block = model.stacks[0].blocks[0];
  CHECK(block.parallel_residual);
  CHECK(block.norms.size() == 1);
  CHECK(block.attention.rotary_dim == 32);
  CHECK(block.attention.fused_qkv);
}

TEST_CASE("EXAONE 4.0: LLLG pattern, global layers without RoPE", "[families][exaone4]") {
  // EXAONE-4.0-32B: 64 layers, every 4th global; 8 kv heads x 128 x 2 x 2 bytes = 4,096 bytes
  // per layer-token. At 16,384 tokens: 16 global layers hold 16,384, 48 sliding ones 4,096.
  const trace::ModelDescription model = model_of("LGAI-EXAONE--EXAONE-4.0-32B.reconstructed.json");
  int global = 0;
  for (const trace::Block& block : model.stacks[0].blocks) {
    const bool sliding = block.attention.sliding_window > 0;
    CHECK(block.attention.rotary_dim == (sliding ? 128 : 0));
    CHECK(block.post_norm);
    if (!sliding) ++global;
  }
  CHECK(global == 16);
  CHECK(trace::kv_cache_bytes(model, 16'384, trace::Dtype::bf16) ==
        16LL * 4'096 * 16'384 + 48LL * 4'096 * 4'096);
}

TEST_CASE("LLaVA-1.5: the CLIP tower and projector are vision, not active", "[families][vlm]") {
  // CLIP ViT-L/14-336: conv 1,024 x 3 x 14 x 14 (no bias) = 602,112; class embedding 1,024;
  // 577 positions x 1,024 = 590,848; pre_layrnorm 2,048; 24 layers x (4 x (1,024^2 + 1,024) +
  // 2 x 1,024 x 4,096 + 4,096 + 1,024 + 2 x 2,048) = 24 x 12,596,224 = 302,309,376;
  // post_layernorm 2,048: 303,507,456. Projector 1,024 x 4,096 + 4,096 + 4,096^2 + 4,096 =
  // 20,979,712.
  const trace::ParameterCount count =
      trace::count_parameters(model_of("llava-hf--llava-1.5-7b-hf.json"));
  CHECK(count.vision == 303'507'456 + 20'979'712);
  CHECK(count.active == count.total - count.vision);
}

TEST_CASE("PaliGemma: the SigLIP pooling head is counted only when the config builds it",
          "[families][vlm]") {
  // So400m (d 1,152, I 4,304): probe + layernorm 3d = 3,456; attention 4 d^2 + 4 d =
  // 5,313,024; MLP 2 d I + I + d = 9,921,872: 15,238,352 when vision_use_head is absent.
  nlohmann::json config = fixture_json("google--paligemma-3b-pt-224.json");
  config["vision_config"].erase("vision_use_head");
  CHECK(total_of(config) == 2'923'466'480 + 15'238'352);
  // A projection_dim that is not the text width cannot feed the text embeddings.
  config["projection_dim"] = 1024;
  CHECK_THROWS_AS(total_of(config), trace::ConfigError);
}

TEST_CASE("SmolVLM: the pixel-shuffle connector is vision x scale^2 wide", "[families][vlm]") {
  // SmolVLM-256M: vision 768, scale_factor 4, text 576: 768 x 16 x 576 = 7,077,888 weights.
  // With scale_factor 2 (512 / 16 = 32 patches per side still divides) the connector shrinks to
  // 768 x 4 x 576 = 1,769,472.
  nlohmann::json config = fixture_json("HuggingFaceTB--SmolVLM-256M-Instruct.reconstructed.json");
  config["scale_factor"] = 2;
  CHECK(total_of(config) == 256'484'928 - 7'077'888 + 1'769'472);
  // 3 does not divide 32 patches per side: pixel shuffle cannot regroup them.
  config["scale_factor"] = 3;
  CHECK_THROWS_AS(total_of(config), trace::ConfigError);
}

TEST_CASE("Bamba-9B: 3 attention layers cache KV, 29 Mamba-2 layers hold a fixed state",
          "[families][bamba]") {
  // attn_layer_indices 9, 18, 27: 3 x 2 x 8 kv heads x 128 x 2 bytes = 12,288 bytes per token.
  // Each Mamba-2 layer: conv (4 - 1) x (8,192 + 2 x 1 x 128) = 25,344 values at 2 bytes, and
  // 128 heads x 64 x 128 = 1,048,576 state values at 4 bytes (fp32): 4,244,992 bytes; x 29.
  const trace::ModelDescription model = model_of("ibm-ai-platform--Bamba-9B.reconstructed.json");
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 12'288);
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 29LL * 4'244'992);
}
