// Granite 4.0 (model_type granitemoehybrid): totals derived by hand from the tensor shapes of
// transformers' modeling_granitemoehybrid.py (tests/data/configs/SOURCES-jamba-granite.md) and
// equal to the exact published checkpoint totals (Hub safetensors metadata / GGUF
// general.parameter_count, sources in the SOURCES file): H-Small 32,207,337,984, H-Tiny
// 6,939,037,248, H-Micro 3,191,396,096, Micro 3,402,836,480, 1B 1,631,750,144, 350M 352,379,904.
// H-1B has no published exact count (hand derivation only). Active counts, Mamba-2 state and KV
// bytes derived by hand; schedule errors.
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

TEST_CASE("Granite-4.0-H-Small: 32,207,337,984 total, 8,803,121,664 active", "[granite][golden]") {
  const trace::ModelDescription model =
      fixture("ibm-granite--granite-4.0-h-small.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Published: 32,207,337,984 (Hub safetensors total; GGUF n-params of unsloth's conversion).
  // 100,352 x 4,096 (tied) + 4 attention x 41,943,040 + 36 Mamba-2 x 102,286,976 + 40 x
  // (72 experts x 9,437,184 + 294,912 router + 18,874,368 shared) + 40 x 2 x 4,096 + 4,096.
  CHECK(count.total == 32'207'337'984);
  CHECK(count.active == 32'207'337'984 - 40LL * 62 * 9'437'184);
  CHECK(count.active == 8'803'121'664);
  CHECK(trace::component_count(count, "ssm") == 36LL * 102'286'976);
  CHECK(trace::component_count(count, "shared_experts") == 40LL * 18'874'368);
  CHECK(trace::component_count(count, "head") == 0);  // tied

  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 40);
  int attention = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const bool is_attention = i % 10 == 5;
    attention += is_attention ? 1 : 0;
    CHECK((blocks[i].attention.kind == trace::AttentionKind::standard) == is_attention);
    CHECK(blocks[i].ssm.has_value() == !is_attention);
    REQUIRE(blocks[i].moe);
    CHECK(blocks[i].moe->top_k == 10);
  }
  CHECK(attention == 4);
  CHECK(blocks[5].attention.rotary_dim == 0);  // NoPE
  CHECK(model.position == trace::PositionKind::none);
  CHECK(blocks[0].ssm->kind == trace::SsmKind::mamba2);
  CHECK(blocks[0].ssm->conv_channels() == 8'448);
}

TEST_CASE("Granite-4.0-H-Tiny: 6,939,037,248 total, 1,465,470,528 active", "[granite][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("ibm-granite--granite-4.0-h-tiny.reconstructed.json"));
  // Published: 6,939,037,248 (safetensors metadata of granite-4.0-h-tiny and -h-tiny-base).
  // 100,352 x 1,536 + 4 x 6,291,456 + 36 x 14,642,576 + 40 x (64 x 2,359,296 + 98,304 +
  // 4,718,592) + 40 x 2 x 1,536 + 1,536.
  CHECK(count.total == 6'939'037'248);
  CHECK(count.active == 6'939'037'248 - 40LL * 58 * 2'359'296);
  CHECK(count.active == 1'465'470'528);
}

TEST_CASE("Granite-4.0-H-Micro (dense hybrid): 3,191,396,096", "[granite][golden]") {
  const trace::ModelDescription model =
      fixture("ibm-granite--granite-4.0-h-micro.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Published: 3,191,396,096 (GGUF general.parameter_count of the h-micro conversion).
  // 100,352 x 2,048 + 4 x 10,485,760 + 36 x 25,847,232 + 40 x 50,331,648 (shared MLP) +
  // 40 x 2 x 2,048 + 2,048.
  CHECK(count.total == 3'191'396'096);
  CHECK(count.active == count.total);
  CHECK(trace::component_count(count, "experts") == 0);
  CHECK(trace::component_count(count, "router") == 0);
  CHECK(trace::component_count(count, "mlp") == 40LL * 50'331'648);
  for (const trace::Block& block : model.stacks.front().blocks) {
    CHECK_FALSE(block.moe);
    CHECK(block.mlp.kind == trace::MlpKind::gated);
    CHECK(block.mlp.intermediate == 8'192);
  }
}

TEST_CASE("Granite-4.0-Micro (attention only, RoPE): 3,402,836,480", "[granite][golden]") {
  const trace::ModelDescription model = fixture("ibm-granite--granite-4.0-micro.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Published: 3,402,836,480 (Hub safetensors.total).
  // 100,352 x 2,560 + 40 x (15,728,640 attention + 62,914,560 MLP + 2 x 2,560) + 2,560.
  CHECK(count.total == 3'402'836'480);
  CHECK(trace::component_count(count, "ssm") == 0);
  CHECK(model.position == trace::PositionKind::rope);
  CHECK(model.stacks.front().blocks[0].attention.rotary_dim == 64);
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 0);
  // 40 layers x 2 x 8 kv heads x 64 x 2 bytes.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 81'920);
}

TEST_CASE("Granite-4.0-1B (attention only, RoPE): 1,631,750,144", "[granite][golden]") {
  const trace::ModelDescription model = fixture("ibm-granite--granite-4.0-1b.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Published: 1,631,750,144 (Hub safetensors total of ibm-granite/granite-4.0-1b).
  // 100,352 x 2,048 (tied) + 40 x (10,485,760 attention + 25,165,824 MLP + 2 x 2,048) + 2,048.
  CHECK(count.total == 1'631'750'144);
  CHECK(count.active == count.total);
  CHECK(trace::component_count(count, "ssm") == 0);
  CHECK(trace::component_count(count, "mlp") == 40LL * 25'165'824);
  CHECK(model.position == trace::PositionKind::rope);
}

TEST_CASE("Granite-4.0-350M (attention only, RoPE): 352,379,904", "[granite][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("ibm-granite--granite-4.0-350m.reconstructed.json"));
  // Published: 352,379,904 (Hub safetensors total of ibm-granite/granite-4.0-350m).
  // 100,352 x 1,024 (tied) + 28 x (2,621,440 attention + 6,291,456 MLP + 2 x 1,024) + 1,024.
  CHECK(count.total == 352'379'904);
  CHECK(trace::component_count(count, "attention") == 28LL * 2'621'440);
}

TEST_CASE("Granite-4.0-H-1B (dense hybrid): 1,461,538,368 derived", "[granite]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("ibm-granite--granite-4.0-h-1b.reconstructed.json"));
  // Hand derivation only (no exact published count found): 100,352 x 1,536 (tied) + 4 x
  // 6,291,456 + 36 x 14,642,576 (the H-Tiny mixer) + 40 x 18,874,368 (shared MLP, 4,096) +
  // 40 x 2 x 1,536 + 1,536.
  CHECK(count.total == 1'461'538'368);
  CHECK(trace::component_count(count, "ssm") == 36LL * 14'642'576);
}

TEST_CASE("Granite 4.0-H serving: KV on 4 layers, Mamba-2 state fixed", "[granite][memory]") {
  const trace::ModelDescription small =
      fixture("ibm-granite--granite-4.0-h-small.reconstructed.json");
  // 4 attention layers x 2 x 8 kv heads x 128 x 2 bytes.
  CHECK(trace::kv_cache_bytes(small, 1, trace::Dtype::bf16) == 4 * 2 * 8 * 128 * 2);
  // 36 Mamba layers x (conv 3 x (8,192 + 2 x 128) x 2 bytes + SSM 128 heads x 64 x 128 x 4).
  CHECK(trace::ssm_state_bytes(small, trace::Dtype::fp32, 2) ==
        36LL * (3 * 8'448 * 2 + 128LL * 64 * 128 * 4));
  CHECK(trace::ssm_state_bytes(small, trace::Dtype::fp32, 2) == 152'819'712);
  const trace::ModelDescription micro =
      fixture("ibm-granite--granite-4.0-h-micro.reconstructed.json");
  CHECK(trace::kv_cache_bytes(micro, 1, trace::Dtype::bf16) == 4 * 2 * 8 * 64 * 2);
  CHECK(trace::ssm_state_bytes(micro, trace::Dtype::fp32, 2) ==
        36LL * (3 * 4'352 * 2 + 64LL * 64 * 128 * 4));
}

TEST_CASE("Granite schedule: layers_block_type alias, d_head auto", "[granite]") {
  nlohmann::json config = fixture_json("ibm-granite--granite-4.0-h-tiny.reconstructed.json");
  config["layers_block_type"] = config["layer_types"];
  config.erase("layer_types");
  config["mamba_d_head"] = "auto";  // 3,072 / 48 = 64
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        6'939'037'248);
}

TEST_CASE("Granite errors name the key", "[granite][errors]") {
  const nlohmann::json base = fixture_json("ibm-granite--granite-4.0-h-tiny.reconstructed.json");
  nlohmann::json config = base;
  config["layer_types"].erase(config["layer_types"].size() - 1);  // 39 entries for 40 layers
  CHECK_THROWS_AS(trace::parse_model_config(config.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("layer_types") && Catch::Matchers::Contains("40"));
  config = base;
  config["layer_types"][3] = "mlp";
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("layer_types") &&
                        Catch::Matchers::Contains("\"mlp\""));
  config = base;
  config["layers_block_type"] = nlohmann::json::array();
  for (int i = 0; i < 40; ++i) config["layers_block_type"].push_back("mamba");
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("layers_block_type"));
  config = base;
  config["mamba_d_head"] = 96;  // 48 x 96 != 2 x 1,536
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("mamba_d_head"));
  config = base;
  config["mamba_n_heads"] = 50;  // does not divide 3,072
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("mamba_n_heads"));
  config = base;
  config["position_embedding_type"] = "alibi";
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("position_embedding_type"));
  config = base;
  config["num_experts_per_tok"] = 65;
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("num_experts_per_tok"));
}
