// Jamba (model_type jamba): totals and active counts derived by hand from the tensor shapes of
// transformers' modeling_jamba.py (tests/data/configs/SOURCES-jamba-granite.md). Jamba-v0.1's
// total equals the exact published Hub count 51,570,323,328 (SOURCES file); Jamba-1.5-Mini and
// -Large only round to AI21's published 52B / 12B active and 398B / 94B active; the Mamba state
// and KV bytes per sequence derived by hand; schedule errors.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::test::fixture;

nlohmann::json fixture_json(const char* name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

}  // namespace

TEST_CASE("Jamba-v0.1: 51,570,323,328 total, 12,110,311,296 active", "[jamba][golden]") {
  const trace::ModelDescription model = fixture("ai21labs--Jamba-v0.1.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Published: 51,570,323,328 (Hub count for ai21labs/Jamba-v0.1, SOURCES-jamba-granite.md).
  // 2 x 65,536 x 4,096 (embedding + untied head) + 4 attention x 41,943,040 + 28 Mamba x
  // 105,308,448 + 16 dense MLP x 176,160,768 + 16 MoE x (16 x 176,160,768 + 65,536 router) +
  // 32 x 2 x 4,096 + 4,096 norms.
  CHECK(count.total == 51'570'323'328);
  // 16 MoE layers x 14 idle experts x 176,160,768.
  CHECK(count.active == 51'570'323'328 - 16LL * 14 * 176'160'768);
  CHECK(count.active == 12'110'311'296);
  CHECK(trace::component_count(count, "ssm") == 28LL * 105'308'448);
  CHECK(trace::component_count(count, "router") == 16LL * 65'536);

  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 32);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const bool attention = i % 8 == 4;
    CHECK((blocks[i].attention.kind == trace::AttentionKind::standard) == attention);
    CHECK(blocks[i].ssm.has_value() == !attention);
    CHECK(blocks[i].moe.has_value() == (i % 2 == 1));
    CHECK_FALSE(blocks[i].single_mixer);
  }
  REQUIRE(blocks[0].ssm);
  CHECK(blocks[0].ssm->kind == trace::SsmKind::mamba1);
  CHECK(blocks[0].ssm->inner == 8'192);
  CHECK(blocks[0].ssm->dt_rank == 256);
  CHECK(blocks[0].ssm->dt_bc_norms);
  CHECK(blocks[1].moe->top_k == 2);
}

TEST_CASE("Jamba-1.5-Mini: same shapes as v0.1, 52B / 12B active", "[jamba][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("ai21labs--AI21-Jamba-1.5-Mini.reconstructed.json"));
  CHECK(count.total == 51'570'323'328);
  CHECK(count.active == 12'110'311'296);
}

TEST_CASE("Jamba-1.5-Large: 398,555,145,696 total, 94,149,338,592 active", "[jamba][golden]") {
  const trace::ModelDescription model =
      fixture("ai21labs--AI21-Jamba-1.5-Large.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  // 2 x 65,536 x 8,192 + 9 attention x 150,994,944 + 63 Mamba x 420,332,064 + 36 dense MLP x
  // 603,979,776 + 36 MoE x (16 x 603,979,776 + 131,072) + 72 x 2 x 8,192 + 8,192.
  CHECK(count.total == 398'555'145'696);
  CHECK(count.active == 398'555'145'696 - 36LL * 14 * 603'979'776);
  CHECK(count.active == 94'149'338'592);
}

TEST_CASE("Jamba serving: KV on 4 attention layers, Mamba-1 state fixed", "[jamba][memory]") {
  const trace::ModelDescription model = fixture("ai21labs--Jamba-v0.1.reconstructed.json");
  // 4 attention layers x 2 (K, V) x 8 kv heads x 128 x 2 bytes (bf16).
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 4 * 2 * 8 * 128 * 2);
  CHECK(trace::kv_cache_bytes(model, 262'144, trace::Dtype::bf16) == 16'384LL * 262'144);
  // 28 Mamba layers x (conv (4 - 1) x 8,192 x 2 bytes + SSM 8,192 x 16 x 4 bytes).
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) ==
        28LL * (3 * 8'192 * 2 + 8'192 * 16 * 4));
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 16'056'320);
}

TEST_CASE("Jamba defaults: dt_rank auto and the schedule defaults", "[jamba]") {
  nlohmann::json config = fixture_json("ai21labs--Jamba-v0.1.reconstructed.json");
  config["mamba_dt_rank"] = "auto";  // ceil(4096 / 16) = 256
  for (const char* key : {"attn_layer_period", "attn_layer_offset", "expert_layer_period",
                          "expert_layer_offset"}) {
    config.erase(key);
  }
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(model).total == 51'570'323'328);
  bool noted = false;
  for (const std::string& note : model.notes) {
    noted = noted || note.find("attn_layer_period = 8") != std::string::npos;
  }
  CHECK(noted);
  // One expert: layers_num_experts is 1 everywhere, so every layer keeps a dense MLP.
  config["num_experts"] = 1;
  const trace::ModelDescription dense = trace::parse_model_config(config.dump());
  for (const trace::Block& block : dense.stacks.front().blocks) CHECK_FALSE(block.moe);
}

TEST_CASE("Jamba errors name the key", "[jamba][errors]") {
  const nlohmann::json base = fixture_json("ai21labs--Jamba-v0.1.reconstructed.json");
  nlohmann::json config = base;
  config["attn_layer_offset"] = 8;
  CHECK_THROWS_AS(trace::parse_model_config(config.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("attn_layer_offset") &&
                        Catch::Matchers::Contains("attn_layer_period"));
  config = base;
  config["expert_layer_offset"] = 2;
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("expert_layer_offset"));
  config = base;
  config["attn_layer_period"] = 0;
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("attn_layer_period"));
  config = base;
  config["num_experts_per_tok"] = 17;
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("num_experts_per_tok"));
  config = base;
  config["mamba_dt_rank"] = "big";
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("mamba_dt_rank"));
  config = base;
  config["num_attention_heads"] = 24;  // 4096 is no multiple of 24
  CHECK_THROWS_AS(trace::parse_model_config(config.dump()), trace::ConfigError);
}
