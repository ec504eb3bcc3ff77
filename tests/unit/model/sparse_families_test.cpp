// MoE, MLA, MTP, heterogeneous stacks and multimodal wrappers: exact totals against published
// checkpoint counts (sources: tests/data/configs/SOURCES-moe-families.md, docs/catalog.md), active
// counts against the vendors' published figures under their own conventions
// (docs/parameters.md), and KV bytes per token derived by hand in each test.
#include <cmath>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

struct Sparse {
  const char* fixture;  // tests/data/configs/<fixture> or "catalog:<repo id>"
  const char* model_type;
  std::int64_t total;
  std::int64_t mtp;
};

constexpr Sparse k_sparse[] = {
    {"catalog:mistralai/Mixtral-8x7B-v0.1", "mixtral", 46'702'792'704, 0},
    {"mistralai--Mixtral-8x22B-v0.1.json", "mixtral", 140'620'634'112, 0},
    {"catalog:Qwen/Qwen3-30B-A3B", "qwen3_moe", 30'532'122'624, 0},
    {"catalog:Qwen/Qwen3-235B-A22B", "qwen3_moe", 235'093'634'560, 0},
    {"allenai--OLMoE-1B-7B-0924.reconstructed.json", "olmoe", 6'919'161'856, 0},
    {"Qwen--Qwen1.5-MoE-A2.7B.json", "qwen2_moe", 14'315'784'192, 0},
    {"MiniMaxAI--MiniMax-M2.7.json", "minimax_m2", 228'689'764'864, 0},
    {"deepseek-ai--DeepSeek-V3.2.json", "deepseek_v32", 685'355'329'792,
     13'463'426'304 + 13'959'424},
    {"catalog:openai/gpt-oss-20b", "gpt_oss", 20'914'757'184, 0},
    {"catalog:openai/gpt-oss-120b", "gpt_oss", 116'829'156'672, 0},
    {"catalog:meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama4", 108'641'793'536, 0},
    {"meta-llama--Llama-4-Maverick-17B-128E-Instruct.reconstructed.json", "llama4", 401'583'781'376,
     0},
    {"zai-org--GLM-4.5-Air.reconstructed.json", "glm4_moe", 110'468'824'832, 3'616'573'568},
    {"zai-org--GLM-4.5.reconstructed.json", "glm4_moe", 358'337'791'296, 5'539'962'272},
    {"catalog:deepseek-ai/DeepSeek-V3", "deepseek_v3", 684'489'845'504, 13'463'426'304},
    {"catalog:deepseek-ai/DeepSeek-V4-Flash", "deepseek_v4", 290'944'616'402, 6'610'048'891},
    {"deepseek-ai--DeepSeek-V2.reconstructed.json", "deepseek_v2", 235'741'434'880, 0},
    {"moonshotai--Kimi-K2-Instruct.json", "kimi_k2", 1'026'408'232'448, 0},
    {"zai-org--GLM-5.json", "glm_moe_dsa", 753'864'139'008, 9'952'920'576},
    {"zai-org--GLM-5.2.json", "glm_moe_dsa", 753'329'940'480, 9'952'920'576},
    {"nvidia--Llama-3_1-Nemotron-Ultra-253B-v1.json", "nemotron-nas", 253'401'268'224, 0},
    // SOURCES-phimoe-dbrx.md, SOURCES-granite.md. Phi-3.5-MoE: an exact count published beside
    // Phi-3.5-mini's (which equals the Hub's); granite-3.1-1b-a400m: sum(numel) of the loaded
    // checkpoint; DBRX: hand-derived (only "132B" is published, checked below).
    {"microsoft--Phi-3.5-MoE-instruct.reconstructed.json", "phimoe", 41'873'153'344, 0},
    {"ibm-granite--granite-3.1-1b-a400m-instruct.reconstructed.json", "granitemoe", 1'334'628'352,
     0},
    {"databricks--dbrx-instruct.json", "dbrx", 131'596'523'520, 0},
    // DeepSeekMoE 16B: the Hub total (SOURCES-deepseek_moe.md)
    {"deepseek-ai--deepseek-moe-16b-base.reconstructed.json", "deepseek", 16'375'728'128, 0},
    // Hunyuan-A13B and dots.llm1: safetensors totals quoted by third parties; Ling-lite-1.5
    // hand-derived (16.8B published): SOURCES-hunyuan_moe/dots1/bailing_moe.md
    {"tencent--Hunyuan-A13B-Instruct.reconstructed.json", "hunyuan_v1_moe", 80'393'183'232, 0},
    {"rednote-hilab--dots.llm1.inst.reconstructed.json", "dots1", 142'774'381'696, 0},
    {"inclusionAI--Ling-lite-1.5.json", "bailing_moe", 16'801'974'272, 0},
    // GLM-4.5V: the sum over its 46 shards (= GLM-4.6V's Hub total; no MTP layer stored):
    // SOURCES-glm4v.md
    {"zai-org--GLM-4.5V.json", "glm4v_moe", 107'710'933'120, 0},
    // Ling 2.0 (BailingMoeV2ForCausalLM under model_type bailing_moe): Hub safetensors totals,
    // F32 expert biases included (SOURCES-bailing_moe_v2.md)
    {"inclusionAI--Ling-mini-2.0.reconstructed.json", "bailing_moe", 16'255'643'392, 0},
    {"inclusionAI--Ling-flash-2.0.reconstructed.json", "bailing_moe", 102'889'705'216, 0},
    // MiMo-7B-Base with its one MTP layer: hand-derived ("7B" published; SOURCES-mimo.md)
    {"XiaomiMiMo--MiMo-7B-Base.reconstructed.json", "mimo", 7'833'409'536, 210'790'400},
    // Kimi-VL-A3B (tower + projector = kornia's 447,545,840), DeepSeek-VL2 Tiny (a logged
    // runtime count); Small and base hand-derived (16B / 27B published): SOURCES-kimi_vl.md,
    // SOURCES-deepseek_vl_v2.md
    {"moonshotai--Kimi-VL-A3B-Instruct.reconstructed.json", "kimi_vl", 16'407'656'048, 0},
    {"deepseek-ai--deepseek-vl2-tiny.reconstructed.json", "deepseek_vl_v2", 3'370'501'440, 0},
    {"deepseek-ai--deepseek-vl2-small.reconstructed.json", "deepseek_vl_v2", 16'148'349'504, 0},
    {"deepseek-ai--deepseek-vl2.reconstructed.json", "deepseek_vl_v2", 27'480'134'248, 0},
};

std::string text_of(const std::string& fixture) {
  const std::string prefix = "catalog:";
  if (fixture.rfind(prefix, 0) == 0) return trace::test::catalog_text(fixture.substr(prefix.size()));
  return trace::test::config_text(fixture);
}

trace::ModelDescription model_of(const std::string& fixture) {
  return trace::parse_model_config(text_of(fixture));
}

// Mistral and OpenAI round to their last digit; Qwen, DeepSeek, Moonshot and Meta truncate
// (Qwen3-30B-A3B: 3.353B published as "3.3B"; DeepSeek-V3: 37.55B as "37B").
bool rounds_to(std::int64_t value, double published, double unit) {
  return std::abs(static_cast<double>(value) - published) <= unit / 2.0;
}
bool truncates_to(std::int64_t value, double published, double unit) {
  return std::floor(static_cast<double>(value) / unit) == std::round(published / unit);
}

}  // namespace

TEST_CASE("sparse models: totals equal the published checkpoint counts", "[golden][moe]") {
  for (const Sparse& row : k_sparse) {
    INFO(row.fixture);
    const trace::ModelDescription model = model_of(row.fixture);
    CHECK(model.model_type == row.model_type);
    const trace::ParameterCount count = trace::count_parameters(model);
    CHECK(count.total == row.total);
    CHECK(count.mtp == row.mtp);
    CHECK(count.active <= count.total);
    std::int64_t sum = 0;
    for (const auto& component : count.by_component) sum += component.second;
    CHECK(sum == count.total);
  }
}

TEST_CASE("active parameters match each vendor's published figure", "[moe][active]") {
  // With the embedding (Mistral, Qwen): Mixtral-8x7B 12.9B, 8x22B 39B, Qwen3-30B-A3B 3.3B,
  // Qwen3-235B-A22B 22B.
  CHECK(rounds_to(trace::count_parameters(model_of("catalog:mistralai/Mixtral-8x7B-v0.1")).active,
                  12.9e9, 0.1e9));
  CHECK(rounds_to(trace::count_parameters(model_of("mistralai--Mixtral-8x22B-v0.1.json")).active,
                  39e9, 1e9));
  CHECK(truncates_to(trace::count_parameters(model_of("catalog:Qwen/Qwen3-30B-A3B")).active,
                     3.3e9, 0.1e9));
  CHECK(truncates_to(trace::count_parameters(model_of("catalog:Qwen/Qwen3-235B-A22B")).active,
                     22e9, 1e9));
  // Without the input embedding, head kept (OpenAI's model card): 3.61B and 5.13B.
  CHECK(rounds_to(
      trace::count_parameters(model_of("catalog:openai/gpt-oss-20b")).active_without_embedding,
      3.61e9, 0.01e9));
  CHECK(rounds_to(
      trace::count_parameters(model_of("catalog:openai/gpt-oss-120b")).active_without_embedding,
      5.13e9, 0.01e9));
  // DeepSeek-V3 37B and Kimi-K2 32B under either convention; MTP never active.
  const trace::ParameterCount v3 = trace::count_parameters(model_of("catalog:deepseek-ai/DeepSeek-V3"));
  CHECK(truncates_to(v3.active, 37e9, 1e9));
  CHECK(rounds_to(v3.active_without_embedding, 37e9, 1e9));
  // DeepSeek-V4-Flash "13B active": the count without MTP (284,334,567,511) less the embedding
  // and the 250 idle routed experts of each of the 43 layers.
  const trace::ParameterCount v4 =
      trace::count_parameters(model_of("catalog:deepseek-ai/DeepSeek-V4-Flash"));
  CHECK(v4.active_without_embedding ==
        284'334'567'511 - 129'280LL * 4096 - 43LL * 250 * 3 * 2048 * 4096);
  CHECK(rounds_to(v4.active_without_embedding, 13e9, 1e9));
  const trace::ParameterCount k2 = trace::count_parameters(model_of("moonshotai--Kimi-K2-Instruct.json"));
  CHECK(truncates_to(k2.active, 32e9, 1e9));
  CHECK(rounds_to(k2.active_without_embedding, 32e9, 1e9));
  // Phi-3.5-MoE "6.6B active" of 41.9B; Granite-3.1-1B-A400M "400M active"; DBRX "36B active"
  // of "132B".
  const trace::ParameterCount phimoe =
      trace::count_parameters(model_of("microsoft--Phi-3.5-MoE-instruct.reconstructed.json"));
  CHECK(rounds_to(phimoe.active, 6.6e9, 0.1e9));
  CHECK(rounds_to(phimoe.total, 41.9e9, 0.1e9));
  CHECK(truncates_to(trace::count_parameters(model_of(
                         "ibm-granite--granite-3.1-1b-a400m-instruct.reconstructed.json"))
                         .active,
                     0.4e9, 0.1e9));
  const trace::ParameterCount dbrx = trace::count_parameters(model_of("databricks--dbrx-instruct.json"));
  CHECK(rounds_to(dbrx.active, 36e9, 1e9));
  CHECK(rounds_to(dbrx.total, 132e9, 1e9));
  // DeepSeekMoE 16B: 2.8B active (2,828,650,496 in published benchmark tables).
  CHECK(trace::count_parameters(
            model_of("deepseek-ai--deepseek-moe-16b-base.reconstructed.json"))
            .active == 2'828'650'496);
  // Hunyuan-A13B "13B active", dots.llm1 "14B active", Ling-lite "2.75B active".
  CHECK(rounds_to(trace::count_parameters(
                      model_of("tencent--Hunyuan-A13B-Instruct.reconstructed.json"))
                      .active,
                  13e9, 1e9));
  CHECK(rounds_to(
      trace::count_parameters(model_of("rednote-hilab--dots.llm1.inst.reconstructed.json")).active,
      14e9, 1e9));
  CHECK(rounds_to(trace::count_parameters(model_of("inclusionAI--Ling-lite-1.5.json")).active,
                  2.75e9, 0.01e9));
  // Ling-mini-2.0 "1.43B activated, 789M non-embedding"; Ling-flash-2.0 "6.1B activated, 4.8B
  // non-embedding": inclusionAI's non-embedding figures leave out the untied head too.
  // GLM-4.5V "12B active" (without the input embedding).
  const trace::ModelDescription ling_mini =
      model_of("inclusionAI--Ling-mini-2.0.reconstructed.json");
  const trace::ParameterCount mini = trace::count_parameters(ling_mini);
  CHECK(truncates_to(mini.active, 1.43e9, 0.01e9));
  CHECK(truncates_to(mini.active_without_embedding - ling_mini.vocab_size * ling_mini.hidden_size,
                     0.789e9, 0.001e9));
  const trace::ModelDescription ling_flash =
      model_of("inclusionAI--Ling-flash-2.0.reconstructed.json");
  const trace::ParameterCount flash = trace::count_parameters(ling_flash);
  CHECK(truncates_to(flash.active, 6.1e9, 0.1e9));
  CHECK(truncates_to(
      flash.active_without_embedding - ling_flash.vocab_size * ling_flash.hidden_size, 4.8e9,
      0.1e9));
  CHECK(truncates_to(
      trace::count_parameters(model_of("zai-org--GLM-4.5V.json")).active_without_embedding, 12e9,
      1e9));
  // Llama-4-Scout "17B active": the text path, the vision tower excluded.
  CHECK(truncates_to(trace::count_parameters(
                         model_of("catalog:meta-llama/Llama-4-Scout-17B-16E-Instruct")).active,
                     17e9, 1e9));
}

TEST_CASE("DeepSeek-V3 active count by hand", "[moe][active]") {
  // Every parameter but 248 idle routed experts in 58 MoE layers and the MTP layer:
  // one expert = 3 x 7168 x 2048 = 44,040,192.
  const trace::ParameterCount count =
      trace::count_parameters(model_of("catalog:deepseek-ai/DeepSeek-V3"));
  CHECK(count.active == 671'026'419'200LL - 58LL * 248 * 44'040'192);
  CHECK(count.active_without_embedding == count.active - 129'280LL * 7'168);
}

TEST_CASE("KV bytes per token, derived by hand", "[moe][kv]") {
  // DeepSeek-V3 MLA caches kv_lora_rank + qk_rope_head_dim = 576 values per token per layer,
  // for its 61 layers (the MTP layer is not served): 61 x 576 x 2 bytes in bf16, x 1 in fp8.
  const trace::ModelDescription v3 = model_of("catalog:deepseek-ai/DeepSeek-V3");
  CHECK(trace::kv_cache_bytes(v3, 1, trace::Dtype::bf16) == 61 * 576 * 2);
  CHECK(trace::kv_cache_bytes(v3, 1, trace::Dtype::fp8) == 61 * 576);
  // gpt-oss-120b: 36 layers x 2 x 8 kv heads x 64 x 2 bytes = 2,048 per layer per token; the 18
  // sliding layers hold at most 128 tokens.
  const trace::ModelDescription oss = model_of("catalog:openai/gpt-oss-120b");
  CHECK(trace::kv_cache_bytes(oss, 1, trace::Dtype::bf16) == 36 * 2'048);
  CHECK(trace::kv_cache_bytes(oss, 4096, trace::Dtype::bf16) ==
        18LL * 2'048 * 4'096 + 18LL * 2'048 * 128);
  // Llama-4-Scout: 48 layers x 2 x 8 x 128 x 2 = 4,096 bytes each; 36 chunked-attention layers
  // hold at most 8,192 tokens, 12 global NoPE layers the whole context.
  const trace::ModelDescription scout =
      model_of("catalog:meta-llama/Llama-4-Scout-17B-16E-Instruct");
  CHECK(trace::kv_cache_bytes(scout, 1, trace::Dtype::bf16) == 48 * 4'096);
  CHECK(trace::kv_cache_bytes(scout, 100'000, trace::Dtype::bf16) ==
        12LL * 4'096 * 100'000 + 36LL * 4'096 * 8'192);
  // Llama-3.3-Nemotron-Super-49B: 49 of 80 layers keep attention (64 heads / 8 groups = 8 kv
  // heads x 128): 49 x 2 x 8 x 128 x 2 bytes.
  const trace::ModelDescription super = trace::parse_model_config(
      trace::read_text_file(trace::test::data_dir() + "/configs/nvidia--Llama-3_3-Nemotron-Super-49B-v1.json"));
  CHECK(trace::kv_cache_bytes(super, 1, trace::Dtype::bf16) == 49 * 4'096);
}

TEST_CASE("DeciLM block_configs: FFN rounding, no_op and linear replacements", "[decilm]") {
  // hidden 1024, 8 heads: layer 0 GQA (8 / 4 groups = 2 kv heads) + ffn_mult 1.3 ->
  // int(2 x 1.3 x 1024 / 3) = 887 -> 1024 (multiple of 256); layer 1 no_op attention + linear FFN;
  // layer 2 linear attention + no_op FFN.
  const nlohmann::json config = {
      {"model_type", "nemotron-nas"}, {"vocab_size", 1000},   {"hidden_size", 1024},
      {"num_hidden_layers", 3},       {"num_attention_heads", 8},
      {"block_configs",
       {{{"attention", {{"n_heads_in_group", 4}}}, {"ffn", {{"ffn_mult", 1.3}}}},
        {{"attention", {{"no_op", true}}}, {"ffn", {{"replace_with_linear", true}}}},
        {{"attention", {{"replace_with_linear", true}}}, {"ffn", {{"no_op", true}}}}}}};
  const std::int64_t layer0 = 1024 * 1024 + 2 * 1024 * 256 + 1024 * 1024  // q, k, v, o
                              + 3 * 1024 * 1024                           // gate, up, down
                              + 2 * 1024;                                 // two norms
  const std::int64_t layer1 = 1024 * 1024 + 1024;  // linear FFN + post_attention_layernorm
  const std::int64_t layer2 = 1024 * 1024 + 1024;  // linear attention + input_layernorm
  const std::int64_t outside = 2 * 1000 * 1024 + 1024;  // embedding, untied head, final norm
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        layer0 + layer1 + layer2 + outside);
}

TEST_CASE("DeciLM-style per-layer kv heads", "[decilm]") {
  const nlohmann::json config = {{"model_type", "deci"},
                                 {"vocab_size", 100},
                                 {"hidden_size", 64},
                                 {"intermediate_size", 128},
                                 {"num_hidden_layers", 2},
                                 {"num_attention_heads", 4},
                                 {"num_key_value_heads_per_layer", {4, 1}}};
  // head_dim 16: layer 0 k/v 64 wide, layer 1 k/v 16 wide.
  const std::int64_t attention = 2 * 64 * 64 + 2 * 64 * 64 + 2 * 64 * 64 + 2 * 64 * 16;
  const std::int64_t mlp = 2 * 3 * 64 * 128;
  const std::int64_t norms = 4 * 64 + 64;
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        attention + mlp + norms + 2 * 100 * 64);
}

TEST_CASE("family-specific keys: missing or contradictory exit with their name", "[moe][errors]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::catalog_text("deepseek-ai/DeepSeek-V3"));
  config.erase("kv_lora_rank");
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("kv_lora_rank"));
  nlohmann::json super = nlohmann::json::parse(trace::read_text_file(
      trace::test::data_dir() + "/configs/nvidia--Llama-3_3-Nemotron-Super-49B-v1.json"));
  super["num_hidden_layers"] = 81;
  CHECK_THROWS_WITH(trace::parse_model_config(super.dump()),
                    Catch::Matchers::Contains("block_configs") && Catch::Matchers::Contains("81"));
  nlohmann::json mixtral = nlohmann::json::parse(trace::test::catalog_text("mistralai/Mixtral-8x7B-v0.1"));
  mixtral["num_experts_per_tok"] = 9;
  CHECK_THROWS_WITH(trace::parse_model_config(mixtral.dump()),
                    Catch::Matchers::Contains("num_experts_per_tok"));
  mixtral = nlohmann::json::parse(trace::test::catalog_text("mistralai/Mixtral-8x7B-v0.1"));
  mixtral.erase("num_local_experts");
  CHECK_THROWS_WITH(trace::parse_model_config(mixtral.dump()),
                    Catch::Matchers::Contains("num_local_experts"));
  nlohmann::json scout =
      nlohmann::json::parse(trace::test::catalog_text("meta-llama/Llama-4-Scout-17B-16E-Instruct"));
  scout.erase("vision_config");
  CHECK_THROWS_WITH(trace::parse_model_config(scout.dump()),
                    Catch::Matchers::Contains("vision_config"));
}
