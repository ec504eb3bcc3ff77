// Falcon-H1: the parallel attention + Mamba-2 hybrid. The 0.5B total is a hand derivation from the
// tensor shapes of transformers' modeling_falcon_h1.py over the fixture's config (see
// tests/data/configs/SOURCES-falcon-h1-zamba2.md); KV and Mamba state per sequence by hand.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

const char* const k_fixture = "tiiuae--Falcon-H1-0.5B-Base.reconstructed.json";

trace::ModelDescription falcon_h1() {
  return trace::parse_model_config(trace::test::config_text(k_fixture));
}

}  // namespace

TEST_CASE("Falcon-H1-0.5B: 521,411,104 by the tensor shapes", "[falcon_h1][golden]") {
  const trace::ModelDescription model = falcon_h1();
  const trace::ParameterCount count = trace::count_parameters(model);
  // Per layer: attention 1024x512 + 2 x 1024x128 + 512x1024 = 1,310,720; Mamba in_proj
  // 1024 x (1536 + 1792 + 24) = 3,432,448, conv1d 1792 x 4 + 1792 = 8,960, A_log/D/dt_bias 72,
  // out_proj 1536 x 1024 = 1,572,864 (no gated norm: mamba_rms_norm false) = 5,014,344; MLP
  // 3 x 1024 x 2048 = 6,291,456; two RMSNorms 2,048. 36 x 12,618,568 = 454,268,448, plus embed and
  // lm_head 2 x 32,784 x 1,024 = 67,141,632 and final_layernorm 1,024.
  CHECK(count.total == 521'411'104);
  CHECK(trace::component_count(count, "ssm") == 36LL * 5'014'344);
  CHECK(trace::component_count(count, "attention") == 36LL * 1'310'720);
  const trace::Block& block = model.stacks.front().blocks.front();
  REQUIRE(block.ssm);
  CHECK(block.ssm->inner == 1536);  // mamba_d_ssm, not mamba_expand x hidden (2048)
  CHECK(block.ssm->in_proj_width() == 3352);
  CHECK_FALSE(block.ssm->gated_norm);
  CHECK(block.attention.kind == trace::AttentionKind::standard);
  CHECK_FALSE(block.single_mixer);
}

TEST_CASE("Falcon-H1 serving: KV in every layer, Mamba state fixed", "[falcon_h1][memory]") {
  const trace::ModelDescription model = falcon_h1();
  // 36 layers x 2 (K, V) x 2 kv heads x 64 x 2 bytes (bf16) = 18,432 bytes per token.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 18'432);
  // 36 layers x (conv 3 x 1,792 x 2 bytes + SSM 24 heads x 64 x 128 x 4 bytes).
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 36LL * (3 * 1'792 * 2 + 24 * 64 * 128 * 4));
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 28'698'624);
}

TEST_CASE("Falcon-H1 options: gated norm, one-sided projector bias", "[falcon_h1]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_fixture));
  config["mamba_rms_norm"] = true;  // + 1,536 per layer
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        521'411'104 + 36 * 1'536);
  config["mamba_rms_norm"] = false;
  config["projectors_bias"] = true;  // out_proj bias only: + 1,024 per layer
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        521'411'104 + 36 * 1'024);
  config["mamba_proj_bias"] = true;  // and in_proj's: + 3,352 per layer
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        521'411'104 + 36 * (1'024 + 3'352));
  config["mamba_proj_bias"] = false;
  config["projectors_bias"] = false;
  config["mamba_d_ssm"] = nullptr;  // mamba_expand x hidden = 2048 = 32 x 64
  config["mamba_n_heads"] = 32;
  const trace::ModelDescription expanded = trace::parse_model_config(config.dump());
  CHECK(expanded.stacks.front().blocks.front().ssm->inner == 2048);
}

TEST_CASE("Falcon-H1 errors name the key", "[falcon_h1][errors]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_fixture));
  for (const char* key : {"mamba_n_heads", "mamba_d_state", "mamba_d_ssm", "mamba_d_head"}) {
    nlohmann::json broken = config;
    broken.erase(key);
    CHECK_THROWS_AS(trace::parse_model_config(broken.dump()), trace::ConfigError);
    CHECK_THROWS_WITH(trace::parse_model_config(broken.dump()), Catch::Matchers::Contains(key));
  }
  nlohmann::json wrong = config;
  wrong["mamba_d_head"] = 32;  // 24 x 32 != 1536
  CHECK_THROWS_WITH(trace::parse_model_config(wrong.dump()),
                    Catch::Matchers::Contains("mamba_d_head") && Catch::Matchers::Contains("1536"));
}
