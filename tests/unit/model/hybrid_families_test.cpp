// Hybrid state-space stacks (Nemotron-H, Puzzle, Mamba): exact totals against the published
// checkpoint counts (sources: docs/parameters.md, the Nemotron-H section), KV and Mamba state
// per sequence derived by hand, and the schedule errors.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::test::fixture;

}  // namespace

TEST_CASE("Nemotron 3 Super: 120,668,707,840 without MTP, 12.77B active", "[hybrid][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-BF16.reconstructed.json"));
  CHECK(count.total - count.mtp == 120'668'707'840);
  CHECK(count.mtp == 2'942'325'248);
  CHECK(count.total == 123'611'033'088);  // = the BF16 safetensors header total
  CHECK(count.active == 12'770'237'440);
  // The Hub's figure leaves the 41 x 512 F32 router-bias buffers out.
  CHECK(count.router_bias_buffers == 41 * 512);
  CHECK(count.total - count.router_bias_buffers == 123'611'012'096);
}

TEST_CASE("Nemotron 3 Nano 30B-A3B: Hub total 31,577,937,344", "[hybrid][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"));
  // 23 MoE layers x 128 router-bias buffer elements on top of the Hub's parameter count.
  CHECK(count.total - count.router_bias_buffers == 31'577'937'344);
  CHECK(count.total == 31'577'937'344 + 23 * 128);
  CHECK(count.mtp == 0);
}

TEST_CASE("Puzzle 75B-A9B: 75.35B total, 9.34B active, 88 real blocks", "[hybrid][golden]") {
  const trace::ModelDescription model =
      fixture("nvidia--NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-BF16.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total - count.mtp == 75'353'345'024);
  CHECK(count.active == 9'337'097'216);
  CHECK(count.mtp == 2'942'325'248);
  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 88);
  int mamba = 0;
  int moe = 0;
  int attention = 0;
  for (const trace::Block& block : blocks) {
    mamba += block.ssm ? 1 : 0;
    moe += block.moe ? 1 : 0;
    attention += block.attention.kind == trace::AttentionKind::standard ? 1 : 0;
  }
  CHECK(mamba == 40);
  CHECK(moe == 40);
  CHECK(attention == 8);
  // Per-layer widths and top-k: layer 1 (1280, top-4), layer 87 (2048, top-18).
  CHECK(blocks[1].moe->expert.intermediate == 1280);
  CHECK(blocks[1].moe->top_k == 4);
  CHECK(blocks[87].moe->expert.intermediate == 2048);
  CHECK(blocks[87].moe->top_k == 18);
  CHECK(blocks[0].ssm->state == 96);
  REQUIRE(model.stacks.size() == 2);
  CHECK(model.stacks[1].mtp);
  CHECK(model.stacks[1].blocks.size() == 2);
}

TEST_CASE("mamba-130m: 129,135,360", "[hybrid][golden]") {
  CHECK(trace::count_parameters(fixture("state-spaces--mamba-130m-hf.json")).total == 129'135'360);
}

TEST_CASE("hybrid serving: KV only on attention layers, Mamba state fixed", "[hybrid][memory]") {
  const trace::ModelDescription puzzle =
      fixture("nvidia--NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-BF16.reconstructed.json");
  // 8 attention layers x 2 (K, V) x 2 kv heads x 128 x 1 byte (fp8) = 4,096 bytes per token:
  // a 1M-token (2^20) request holds 4 GiB.
  CHECK(trace::kv_cache_bytes(puzzle, 1, trace::Dtype::fp8) == 4'096);
  CHECK(trace::kv_cache_bytes(puzzle, 1LL << 20, trace::Dtype::fp8) == 4LL << 30);
  // Mamba state per sequence: 40 layers x (conv 3 x 9,728 x 2 bytes + SSM 128 x 64 x 96 x 4).
  CHECK(trace::ssm_state_bytes(puzzle, trace::Dtype::fp32, 2) ==
        40LL * (3 * 9'728 * 2 + 128LL * 64 * 96 * 4));
  CHECK(trace::ssm_state_bytes(puzzle, trace::Dtype::fp32, 2) == 128'163'840);
  CHECK(trace::ssm_state_bytes(puzzle, trace::Dtype::fp16, 2) == 65'249'280);
  const trace::ModelDescription super =
      fixture("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-BF16.reconstructed.json");
  CHECK(trace::ssm_state_bytes(super, trace::Dtype::fp32, 2) == 170'229'760);
  // The config's mamba_ssm_cache_dtype (float32) is the default.
  CHECK(trace::effective_ssm_dtype(super, trace::MemoryAssumptions{}) == trace::Dtype::fp32);
}

TEST_CASE("hybrid schedule errors name the key", "[hybrid][errors]") {
  nlohmann::json nano =
      nlohmann::json::parse(trace::test::config_text("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"));
  nano["hybrid_override_pattern"] = "MEMEX";
  nano.erase("num_hidden_layers");
  CHECK_THROWS_WITH(trace::parse_model_config(nano.dump()),
                    Catch::Matchers::Contains("hybrid_override_pattern") &&
                        Catch::Matchers::Contains("'X'"));
  nano["hybrid_override_pattern"] = "MEME";
  nano["num_hidden_layers"] = 52;
  CHECK_THROWS_WITH(trace::parse_model_config(nano.dump()),
                    Catch::Matchers::Contains("num_hidden_layers") && Catch::Matchers::Contains("52"));
  nlohmann::json puzzle = nlohmann::json::parse(
      trace::test::config_text("nvidia--NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-BF16.reconstructed.json"));
  puzzle["block_configs"][1].erase("moe_intermediate_size");
  CHECK_THROWS_WITH(trace::parse_model_config(puzzle.dump()),
                    Catch::Matchers::Contains("block_configs[1]") &&
                        Catch::Matchers::Contains("moe_intermediate_size"));
}
