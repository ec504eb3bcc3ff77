// Qwen3-Next and Qwen3.5 (gated DeltaNet + gated attention hybrids): exact totals against the
// published checkpoint counts, MTP and vision shares, active parameters derived by hand, the
// DeltaNet state and KV cache per sequence derived by hand, and the schedule errors. Sources and
// derivations: tests/data/configs/SOURCES-qwen3-next.md.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::test::fixture;

constexpr const char* k_next = "Qwen--Qwen3-Next-80B-A3B-Instruct.reconstructed.json";

}  // namespace

TEST_CASE("Qwen3-Next-80B-A3B: Hub total 81,324,862,720 with one MTP layer", "[qwen3_next][golden]") {
  const trace::ModelDescription model = fixture(k_next);
  const trace::ParameterCount count = trace::count_parameters(model);
  // model.safetensors.index.json total_size 162,649,725,440 bytes, all BF16.
  CHECK(count.total == 81'324'862'720);
  // mtp.fc [2048, 4096] + 3 norms [2048] + one gated-attention MoE layer 1,642,076,672.
  CHECK(count.mtp == 1'650'471'424);
  CHECK(count.total - count.mtp == 79'674'391'296);
  // Active: without MTP, 48 layers x 502 unused experts x 3 x 2048 x 512 left out.
  CHECK(count.active == 79'674'391'296 - 48LL * 502 * 3 * 2048 * 512);
  CHECK(count.active == 3'874'929'408);
  CHECK(count.vision == 0);

  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 48);
  int delta = 0;
  int attention = 0;
  for (const trace::Block& block : blocks) {
    delta += block.ssm ? 1 : 0;
    attention += block.attention.kind == trace::AttentionKind::standard ? 1 : 0;
    CHECK(block.moe);
    CHECK_FALSE(block.single_mixer);
  }
  CHECK(delta == 36);
  CHECK(attention == 12);
  CHECK(blocks[3].attention.output_gate);
  CHECK(blocks[3].attention.rotary_dim == 64);
  CHECK_FALSE(blocks[2].ssm->conv_bias);
  // One DeltaNet: in_proj_qkvz 2048 x 12288 + in_proj_ba 2048 x 64 + conv 8192 x 4 + A_log, dt_bias
  // 32 + 32 + norm 128 + out_proj 4096 x 2048.
  CHECK(trace::ssm_params(*blocks[0].ssm) ==
        2048LL * 12288 + 2048 * 64 + 8192 * 4 + 64 + 128 + 4096LL * 2048);
  REQUIRE(model.stacks.size() == 2);
  CHECK(model.stacks[1].mtp);
  CHECK(model.stacks[1].blocks.size() == 1);
}

TEST_CASE("Qwen3-Next serving: DeltaNet state per sequence, KV only on full attention",
          "[qwen3_next][memory]") {
  const trace::ModelDescription model = fixture(k_next);
  // 36 linear layers x (recurrent 32 value heads x 128 key dim x 128 value dim x 4 bytes + conv
  // (4 - 1) x (2 x 16 x 128 + 32 x 128 = 8,192 channels) x 2 bytes).
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) ==
        36LL * (32 * 128 * 128 * 4 + 3 * 8'192 * 2));
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 77'266'944);
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::bf16, 2) == 36LL * (32 * 128 * 128 * 2 + 3 * 8'192 * 2));
  // 12 full-attention layers x 2 (K, V) x 2 kv heads x 256 x 2 bytes; the MTP layer caches nothing
  // here (speculative decoding only).
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 12 * 2 * 2 * 256 * 2);
  CHECK(trace::kv_cache_bytes(model, 1LL << 18, trace::Dtype::bf16) == 24'576LL << 18);
}

TEST_CASE("Qwen3.5-27B: 27,781,427,952 with MTP and vision tower", "[qwen3_5][golden]") {
  const trace::ModelDescription model = fixture("Qwen--Qwen3.5-27B.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == 27'781'427'952);
  // mtp.fc 5120 x 10240 + 3 norms + one gated-attention SwiGLU layer.
  CHECK(count.mtp == 424'699'392);
  // patch_embed 1152 x 3 x 2 x 16 x 16 + 1152, pos_embed 2304 x 1152, 27 blocks of 15,239,504,
  // merger (2 x 1152 + 4608^2 + 4608 + 4608 x 5120 + 5120).
  CHECK(count.vision == 460'730'096);
  CHECK(count.active == 27'781'427'952 - 424'699'392 - 460'730'096);
  // KV: 16 full-attention layers x 2 x 4 kv heads x 256 x 2 bytes.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 16 * 2 * 4 * 256 * 2);
  // 48 DeltaNet layers x (48 x 128 x 128 x 4 + 3 x (2 x 16 x 128 + 48 x 128) x 2).
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) ==
        48LL * (48 * 128 * 128 * 4 + 3 * 10'240 * 2));
  CHECK(trace::effective_ssm_dtype(model, trace::MemoryAssumptions{}) == trace::Dtype::fp32);
}

TEST_CASE("Qwen3.5's uploads: BF16 but each DeltaNet's A_log and norm in F32",
          "[qwen3_5][storage]") {
  // The published index total_sizes: Qwen3.5-27B 55,562,872,800 (an "official metadata subset"
  // whose shard headers list linear_attn.A_log as F32 [48]) and Qwen3.5-9B 19,306,216,416 (Hub
  // revision c2022362). Both exceed 2 bytes a parameter by 2 x (A_log + norm) x DeltaNet layers.
  // trace's bytes take BF16 (as Qwen3.6 and later store them) and the note gives the difference.
  const auto check = [](const char* name, std::int64_t layers, std::int64_t heads,
                        std::int64_t published) {
    INFO(name);
    const trace::ModelDescription model = fixture(name);
    const trace::ParameterCount count = trace::count_parameters(model);
    const std::int64_t surplus = 2 * layers * (heads + 128);
    CHECK(trace::estimate_storage(model, count).bytes == 2 * count.total);
    CHECK(2 * count.total + surplus == published);
    bool noted = false;
    for (const std::string& note : model.notes) {
      noted |= note.find(std::to_string(surplus) + " bytes more") != std::string::npos;
    }
    CHECK(noted);
  };
  check("Qwen--Qwen3.5-27B.json", 48, 48, 55'562'872'800);
  check("Qwen--Qwen3.5-9B.reconstructed.json", 24, 32, 19'306'216'416);
}

TEST_CASE("Qwen3.5-9B: Hub total 9,653,104,368", "[qwen3_5][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("Qwen--Qwen3.5-9B.reconstructed.json"));
  CHECK(count.total == 9'653'104'368);
  CHECK(count.vision == 456'010'480);
}

TEST_CASE("Qwen3.5-35B-A3B: Hub total 35,951,822,704, text 34,660,610,688", "[qwen3_5][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("Qwen--Qwen3.5-35B-A3B.reconstructed.json"));
  CHECK(count.total == 35'951'822'704);
  CHECK(count.total - count.mtp - count.vision == 34'660'610'688);
  CHECK(count.vision == 446'571'248);
  // 40 layers x 248 unused experts x 3 x 2048 x 512 left out of the text model.
  CHECK(count.active == 34'660'610'688 - 40LL * 248 * 3 * 2048 * 512);
}

TEST_CASE("Qwen3.5-397B-A17B: the header ledger's 403,397,928,944", "[qwen3_5][golden]") {
  // Fixture reconstructed from the published hyperparameters (SOURCES-qwen3-next.md): H 4096,
  // 60 layers (45 DeltaNet, 15 full attention), 512 experts of 1024 (top 10) + a shared one.
  const trace::ParameterCount count =
      trace::count_parameters(fixture("Qwen--Qwen3.5-397B-A17B.reconstructed.json"));
  // DeltaNet: in_proj_qkv 12288 x 4096 + z 8192 x 4096 + b, a 2 x 64 x 4096 + conv 12288 x 4
  // + A_log, dt_bias 2 x 64 + norm 128 + out_proj 4096 x 8192.
  constexpr std::int64_t delta =
      12288LL * 4096 + 8192LL * 4096 + 2 * 64 * 4096 + 12288 * 4 + 2 * 64 + 128 + 4096LL * 8192;
  static_assert(delta == 118'014'208);
  // Attention: q (+ gate) 2 x 32 x 256 x 4096, k and v 2 x 512 x 4096, o 4096 x 8192, q/k norms.
  constexpr std::int64_t attention = 2LL * 32 * 256 * 4096 + 2 * 512 * 4096 + 4096LL * 8192 + 512;
  // MoE: router 512 x 4096, 512 experts + 1 shared of 3 x 4096 x 1024, shared gate 4096.
  constexpr std::int64_t expert = 3LL * 4096 * 1024;
  constexpr std::int64_t moe = 512 * 4096 + 513 * expert + 4096;
  constexpr std::int64_t norms = 2 * 4096;
  constexpr std::int64_t text =
      45 * (delta + moe + norms) + 15 * (attention + moe + norms) + 4096 + 2LL * 248320 * 4096;
  static_assert(text == 396'346'350'336);  // the ledger's text model
  // MTP: fc 2H x H, three norms, one attention layer with the MoE.
  constexpr std::int64_t mtp = 2LL * 4096 * 4096 + 3 * 4096 + attention + moe + norms;
  static_assert(mtp == 6'595'568'128);  // the ledger's MTP
  CHECK(count.mtp == mtp);
  CHECK(count.vision == 456'010'480);  // the 9B's tower, merged into 4096
  CHECK(count.total == text + mtp + 456'010'480);
  CHECK(count.total == 403'397'928'944);
  CHECK(count.active == text - 60LL * 502 * expert);  // 10 of 512 experts a layer
}

TEST_CASE("Qwen3-Next / Qwen3.5 config errors name the key", "[qwen3_next][errors]") {
  nlohmann::json next = nlohmann::json::parse(trace::test::config_text(k_next));
  next["layer_types"] = {"linear_attention", "full_attention"};
  CHECK_THROWS_AS(trace::parse_model_config(next.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(next.dump()),
                    Catch::Matchers::Contains("layer_types") && Catch::Matchers::Contains("48"));
  next["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 48; ++i) next["layer_types"].push_back(i == 5 ? "mamba" : "full_attention");
  CHECK_THROWS_WITH(trace::parse_model_config(next.dump()),
                    Catch::Matchers::Contains("layer_types") && Catch::Matchers::Contains("mamba"));
  next.erase("layer_types");
  next.erase("linear_num_value_heads");
  CHECK_THROWS_WITH(trace::parse_model_config(next.dump()),
                    Catch::Matchers::Contains("linear_num_value_heads"));

  nlohmann::json dense = nlohmann::json::parse(trace::test::config_text("Qwen--Qwen3.5-27B.json"));
  dense["text_config"]["num_experts"] = 64;
  CHECK_THROWS_WITH(trace::parse_model_config(dense.dump()),
                    Catch::Matchers::Contains("text_config.num_experts"));
  dense["text_config"].erase("num_experts");
  dense["vision_config"].erase("depth");
  CHECK_THROWS_WITH(trace::parse_model_config(dense.dump()),
                    Catch::Matchers::Contains("vision_config.depth"));
}

TEST_CASE("Qwen3.6-27B-FP8: block FP8 converts DeltaNet's projections but in_proj_a / in_proj_b",
          "[qwen3_5][quantization]") {
  const trace::ModelDescription model = fixture("Qwen--Qwen3.6-27B-FP8.reconstructed.json");
  REQUIRE(model.quantization.has_value());
  const trace::Quantization& q = *model.quantization;
  CHECK(q.format == trace::QuantFormat::fp8_block);
  CHECK(q.block_scales_bf16);
  const std::string layer = "model.language_model.layers.0.linear_attn.";
  CHECK(q.converts_ssm_projection(layer + "in_proj_qkv"));
  CHECK(q.converts_ssm_projection(layer + "in_proj_z"));
  CHECK(q.converts_ssm_projection(layer + "out_proj"));
  CHECK_FALSE(q.converts_ssm_projection(layer + "in_proj_a"));
  CHECK_FALSE(q.converts_ssm_projection(layer + "in_proj_b"));
  // Only the whole last part matches: another module ending in the same letters is converted.
  CHECK(q.converts_ssm_projection(layer + "xin_proj_a"));
  // A scheme that leaves every SSM projection at the checkpoint dtype converts none.
  trace::Quantization unconverted = q;
  unconverted.ssm_quantized = false;
  CHECK_FALSE(unconverted.converts_ssm_projection(layer + "in_proj_qkv"));
}
