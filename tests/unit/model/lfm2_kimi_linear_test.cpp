// LFM2 / LFM2.5 (short-conv + GQA hybrids) and Kimi-Linear (KDA + MLA, MoE): exact totals against
// the published counts, the LFM2 FFN-width rule, the per-sequence conv / KDA state and the MLA KV
// cache derived by hand, and the config errors. Sources and tensor-by-tensor derivations:
// tests/data/configs/SOURCES-lfm2-kimi-linear.md.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "estimate/checkpoint_layout.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::test::fixture;

constexpr const char* k_lfm25 = "unsloth--LFM2.5-1.2B-Instruct.reconstructed.json";
constexpr const char* k_lfm2 = "LiquidAI--LFM2-1.2B.reconstructed.json";
constexpr const char* k_kimi = "moonshotai--Kimi-Linear-48B-A3B-Instruct.reconstructed.json";
constexpr const char* k_kimi_awq = "cyankiwi--Kimi-Linear-48B-A3B-Instruct-AWQ-4bit.reconstructed.json";

std::int64_t lfm2_ffn_width(const nlohmann::json& config) {
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  return model.stacks.front().blocks.front().mlp.intermediate;
}

}  // namespace

TEST_CASE("LFM2.5-1.2B-Instruct: 1,170,340,608, 10 short-conv + 6 GQA layers", "[lfm2][golden]") {
  const trace::ModelDescription model = fixture(k_lfm25);
  const trace::ParameterCount count = trace::count_parameters(model);
  // Embedding 65536 x 2048 (tied) + 6 attention layers x 60,821,632 + 10 conv layers x
  // 67,119,104 + embedding_norm 2048.
  CHECK(count.total == 1'170'340'608);
  CHECK(count.active == count.total);
  CHECK(model.stacks.front().final_norm->name == "embedding_norm");

  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 16);
  int conv = 0;
  int attention = 0;
  for (const trace::Block& block : blocks) {
    conv += block.ssm ? 1 : 0;
    attention += block.attention.kind == trace::AttentionKind::standard ? 1 : 0;
    // 2/3 x 12288 = 8192, already a multiple of 256.
    CHECK(block.mlp.intermediate == 8192);
  }
  CHECK(conv == 10);
  CHECK(attention == 6);
  CHECK(blocks[2].attention.kind == trace::AttentionKind::standard);
  REQUIRE(blocks[0].ssm);
  CHECK(blocks[0].ssm->kind == trace::SsmKind::short_conv);
  // in_proj 2048 -> 6144, depthwise conv 2048 x 3, out_proj 2048 -> 2048, no biases.
  CHECK(trace::ssm_params(*blocks[0].ssm) == 2048LL * 6144 + 2048 * 3 + 2048LL * 2048);
  // q 2048 x 2048, k / v 2048 x 512, out_proj 2048 x 2048, q / k layernorm 64 each.
  CHECK(trace::attention_params(blocks[2].attention) ==
        2 * 2048LL * 2048 + 2 * 2048LL * 512 + 2 * 64);

  // Unsloth's LFM2.5 notebook: r = 16 on q/k/v/out_proj, in_proj, w1/w2/w3 (every Linear but the
  // tied head) -> "trainable params 11,108,352".
  CHECK(trace::lora_parameters(model, 16, trace::LoraTargets::all_linear) == 11'108'352);
}

TEST_CASE("LFM2.5 serving: KV on 6 layers, a conv state on the other 10", "[lfm2][memory]") {
  const trace::ModelDescription model = fixture(k_lfm25);
  // 6 attention layers x 2 (K, V) x 8 kv heads x 64 x 2 bytes.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 6 * 2 * 8 * 64 * 2);
  // 10 conv layers x (conv_L_cache - 1 = 2) x 2048 channels x 2 bytes; no recurrent state.
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 10 * 2 * 2048 * 2);
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) ==
        trace::ssm_state_bytes(model, trace::Dtype::bf16, 2));
}

TEST_CASE("LFM2-1.2B: model card 1,170,340,608 from full_attn_idxs and block_ff_dim",
          "[lfm2][golden]") {
  const trace::ModelDescription model = fixture(k_lfm2);
  CHECK(trace::count_parameters(model).total == 1'170'340'608);
  CHECK(model.tie_word_embeddings);
  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 16);
  for (const int index : {2, 5, 8, 10, 12, 14}) {
    CHECK(blocks[static_cast<std::size_t>(index)].attention.kind == trace::AttentionKind::standard);
    CHECK_FALSE(blocks[static_cast<std::size_t>(index)].ssm);
  }
  CHECK(blocks[0].ssm);
  CHECK(blocks[15].ssm);
}

TEST_CASE("LFM2 FFN width: Lfm2MLP's 2/3, multiplier and rounding rule", "[lfm2]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_lfm25));
  config.erase("block_ff_dim");
  config["intermediate_size"] = 12000;
  // int(2 x 12000 / 3) = 8000, x 1.0, rounded up to 256: 8192.
  CHECK(lfm2_ffn_width(config) == 8192);
  config["block_multiple_of"] = 100;
  CHECK(lfm2_ffn_width(config) == 8000);
  config["block_ffn_dim_multiplier"] = 1.5;  // int(1.5 x 8000) = 12000
  CHECK(lfm2_ffn_width(config) == 12000);
  // An explicit null multiplier skips the multiplier and the rounding.
  config["block_multiple_of"] = 256;
  config["block_ffn_dim_multiplier"] = nullptr;
  CHECK(lfm2_ffn_width(config) == 8000);
  // No adjustment: the width as written.
  config["block_auto_adjust_ff_dim"] = false;
  CHECK(lfm2_ffn_width(config) == 12000);
  // block_ff_dim is read in place of intermediate_size (Lfm2Config).
  config["block_auto_adjust_ff_dim"] = true;
  config["block_ffn_dim_multiplier"] = 1.0;
  config["block_ff_dim"] = 6656;  // LFM2-350M's: int(2 x 6656 / 3) = 4437 -> 4608
  CHECK(lfm2_ffn_width(config) == 4608);
}

TEST_CASE("LFM2 config errors name the key", "[lfm2][errors]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_lfm25));
  config["layer_types"] = {"conv", "full_attention"};
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("layer_types") && Catch::Matchers::Contains("16"));
  config["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 16; ++i) config["layer_types"].push_back(i == 3 ? "mamba" : "conv");
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("layer_types") && Catch::Matchers::Contains("mamba"));
  config.erase("layer_types");
  config["full_attn_idxs"] = {2, 16};
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("full_attn_idxs"));
  config["full_attn_idxs"] = {2};
  config.erase("block_ff_dim");
  config.erase("intermediate_size");
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("intermediate_size"));
  config["intermediate_size"] = 12288;
  config["tie_embedding"] = false;
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("tie_embedding"));
}

TEST_CASE("Kimi-Linear-48B-A3B: Hub total 49,122,681,728", "[kimi_linear][golden]") {
  const trace::ModelDescription model = fixture(k_kimi);
  const trace::ParameterCount count = trace::count_parameters(model);
  // Embedding + untied head 2 x 163840 x 2304, 20 KDA layers x 39,514,272, 7 MLA layers x
  // 29,114,880, layer 0's SwiGLU 3 x 2304 x 9216, 26 MoE layers x 1,819,607,296, 54 layer norms
  // and the final norm x 2304.
  CHECK(count.total == 49'122'681'728);
  // The 26 x 256 e_score_correction_bias values are checkpoint tensors, inside the total.
  CHECK(count.router_bias_buffers == 26 * 256);
  CHECK(count.mtp == 0);
  // Active: 26 layers x 248 unused experts x 3 x 2304 x 1024 left out.
  CHECK(count.active == 49'122'681'728 - 26LL * 248 * 3 * 2304 * 1024);
  // Storage: the index's total_size, 98,245,528,576 bytes = 2 x 49,122,681,728 + 2 extra bytes
  // for each of the 20 x (32 A_log + 4,096 dt_bias) values kept in F32; the 26 x 256 router
  // biases are BF16 in this checkpoint.
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  CHECK(storage.bytes == 98'245'528'576);
  const std::vector<std::pair<std::string, std::int64_t>> by_dtype = {
      {"BF16", 2 * (49'122'681'728 - 20 * (32 + 4'096))}, {"F32", 4 * 20 * (32 + 4'096)}};
  CHECK(storage.by_dtype == by_dtype);
  CHECK(count.active == 3'484'459'904);
  CHECK(count.active_without_embedding == 3'484'459'904 - 163'840LL * 2304);

  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 27);
  int kda = 0;
  int mla = 0;
  for (const trace::Block& block : blocks) {
    kda += block.ssm ? 1 : 0;
    mla += block.attention.kind == trace::AttentionKind::mla ? 1 : 0;
  }
  CHECK(kda == 20);
  CHECK(mla == 7);
  // 1-based full_attn_layers 4, 8, ..., 24, 27 are layers 3, 7, ..., 23, 26.
  for (const int index : {3, 7, 11, 15, 19, 23, 26}) {
    CHECK(blocks[static_cast<std::size_t>(index)].attention.kind == trace::AttentionKind::mla);
  }
  CHECK_FALSE(blocks[0].moe);
  CHECK(blocks[0].mlp.intermediate == 9216);
  REQUIRE(blocks[1].moe);
  CHECK(blocks[1].moe->num_experts == 256);
  CHECK(blocks[1].moe->top_k == 8);
  REQUIRE(blocks[0].ssm);
  CHECK(blocks[0].ssm->kind == trace::SsmKind::kimi_delta);
  // q / k / v 3 x 4096 x 2304, 3 convs 4096 x 4, A_log 32, f_a / g_a 128 x 2304, f_b / g_b
  // 4096 x 128, dt_bias 4096, b_proj 32 x 2304, o_norm 128, o_proj 2304 x 4096.
  CHECK(trace::ssm_params(*blocks[0].ssm) ==
        3 * 4096LL * 2304 + 3 * 4096 * 4 + 32 + 2 * 128LL * 2304 + 2 * 4096LL * 128 + 4096 +
            32LL * 2304 + 128 + 2304LL * 4096);
  CHECK(trace::ssm_params(*blocks[0].ssm) == 39'514'272);
  // q_proj 32 x 192 x 2304, kv_a_proj_with_mqa 576 x 2304, kv_a_layernorm 512, kv_b_proj
  // 32 x 256 x 512, o_proj 2304 x 4096.
  CHECK(trace::attention_params(blocks[3].attention) == 29'114'880);
  CHECK(blocks[3].attention.rotary_dim == 0);  // mla_use_nope
  CHECK(model.position == trace::PositionKind::none);

  // The safetensors hold 20,493 tensors (the header listing): 3 model-level, 54 layer norms, 20 x
  // 15 KDA, 7 x 5 MLA, 3 dense MLP, 26 x (gate + bias + 256 x 3 experts + 3 shared).
  CHECK(trace::layout::tensor_count(model) == 20'493);

  // The AWQ re-quantization's fixture carries the same architecture.
  CHECK(trace::count_parameters(fixture(k_kimi_awq)).total == 49'122'681'728);
}

TEST_CASE("Kimi-Linear serving: KDA state per sequence, MLA latent per token",
          "[kimi_linear][memory]") {
  const trace::ModelDescription model = fixture(k_kimi);
  // 7 MLA layers x (kv_lora_rank 512 + rope key 64) x 2 bytes.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 7 * 576 * 2);
  // 20 KDA layers x (32 heads x 128 x 128 x 4 bytes + (4 - 1) x (3 x 4096) channels x 2 bytes).
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) ==
        20LL * (32 * 128 * 128 * 4 + 3 * 12'288 * 2));
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 43'417'600);
}

TEST_CASE("Kimi-Linear config errors name the key", "[kimi_linear][errors]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_kimi));
  nlohmann::json& linear = config["linear_attn_config"];
  linear["kda_layers"].erase(linear["kda_layers"].begin());  // layer 1 now in neither list
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("linear_attn_config.kda_layers") &&
                        Catch::Matchers::Contains("layer 1"));
  linear["kda_layers"].push_back(4);  // also a full-attention layer
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("twice"));
  linear.erase("kda_layers");
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("linear_attn_config.kda_layers"));
  // layer_types, when spelled out, takes over from the lists.
  config["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 27; ++i) {
    config["layer_types"].push_back((i + 1) % 4 == 0 || i == 26 ? "full_attention" : "kda_attention");
  }
  CHECK(trace::count_parameters(trace::parse_model_config(config.dump())).total ==
        49'122'681'728);
  config["linear_attn_config"]["use_full_rank_gate"] = true;
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("use_full_rank_gate"));
  config["linear_attn_config"].erase("use_full_rank_gate");
  config.erase("linear_attn_config");
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("linear_attn_config"));
}
