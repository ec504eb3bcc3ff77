// GLM-5.3-Flash (glm5_next: Kimi Delta Attention + NoPE MLA / DSA hybrid with 4-stream mHC, MoE,
// MTP and a vision tower): the total against the published BF16 checkpoint size, per-layer byte
// figures and components derived by hand, the KV cache and KDA state per sequence, and the
// config errors. Sources and every derivation: tests/data/configs/SOURCES-glm5_next.md.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::test::fixture;

constexpr const char* k_flash = "zai-org--GLM-5.3-Flash-BF16.reconstructed.json";

nlohmann::json flash_json() {
  return nlohmann::json::parse(trace::test::config_text(k_flash));
}

// One mHC site: fn [(2 + 4) x 4, 4 x 4096] + base [24] + scale [3].
constexpr std::int64_t k_hc_site = 24LL * 16384 + 24 + 3;  // 393,243
// One indexer's k-pool tensors: index_kpool_compress_ape [4, 128] + _gate [128, 4096].
constexpr std::int64_t k_kpool = 4 * 128 + 128LL * 4096;  // 524,800

bool has_note(const trace::ModelDescription& model, const std::string& text) {
  for (const std::string& note : model.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE(
    "GLM-5.3-Flash-BF16: 321,323,031,390 parameters from the published 642,646,653,816 "
    "bytes",
    "[glm5_next][golden]") {
  const trace::ModelDescription model = fixture(k_flash);
  const trace::ParameterCount count = trace::count_parameters(model);
  // zai-org/GLM-5.3-Flash-BF16 model.safetensors.index.json: 642,646,653,816 tensor bytes over
  // 38,770 tensors. Everything is BF16 except these F32 tensors: KDA A_log [64] + dt_bias [8192]
  // in 34 layers, e_score_correction_bias [288] in 42 + 1 (MTP) MoE layers, mHC base [24] +
  // scale [3] at 2 sites in 45 layers: 295,518 elements. Parameters =
  // (642,646,653,816 - 2 x 295,518) / 2.
  constexpr std::int64_t k_f32 = 34 * (64 + 8192) + 43 * 288 + 45 * 2 * (24 + 3);
  static_assert(k_f32 == 295'518);
  static_assert((642'646'653'816LL - 2 * k_f32) / 2 == 321'323'031'390LL);
  CHECK(count.total == 321'323'031'390);
  // The model card's "320B total" is the same count, rounded.
  CHECK(count.total / 1'000'000'000 == 321);

  // MTP layer 45: 14,865,185,408 bytes published (one F32 correction bias of 288 inside).
  CHECK(count.mtp == (14'865'185'408LL - 2 * 288) / 2);
  CHECK(count.mtp == 7'432'592'416);
  // Vision: patch_embed 1024 x 3 x 2 x 14 x 14 + 1024, 24 blocks of 16,792,704, post_layernorm
  // 1024, downsample 4096 x 1024 x 2 x 2 + 4096, merger proj 4096^2, LayerNorm 2 x 4096,
  // gate / up 2 x 10240 x 4096, down 4096 x 10240.
  CHECK(count.vision == 563'627'008);
  CHECK(count.vision == 1'205'248 + 24 * 16'792'704 + 1'024 + 16'781'312 + 16'777'216 + 8'192 +
                            83'886'080 + 41'943'040);
  // mHC: 45 layers x 2 sites x 393,243.
  CHECK(trace::component_count(count, "other") == 45 * 2 * k_hc_site);
  CHECK(trace::component_count(count, "other") == 35'391'870);
  // Router e_score_correction_bias: 42 trunk MoE layers + the MTP layer, 288 each.
  CHECK(count.router_bias_buffers == 43 * 288);
  // Active: no MTP, no vision, and of the 42 trunk MoE layers only 8 + shared of 288 experts
  // (280 x 3 x 2048 x 4096 left out per layer). The card says "18B active"; trace's text path
  // is 17.38B (with the vision tower 17.94B).
  CHECK(count.active ==
        321'323'031'390 - 7'432'592'416 - 563'627'008 - 42LL * 280 * 3 * 2048 * 4096);
  CHECK(count.active == 17'376'721'726);

  // Storage: the published tensor bytes to the byte. F32: the 43 routers' correction biases
  // (43 x 288) and the 283,134 parameters the checkpoint keeps in F32, KDA A_log [64] and
  // dt_bias [64 x 128] in 34 layers and mHC base [24] and scale [3] at 2 sites of 45 layers.
  CHECK(model.fp32_stored_params == 45 * 2 * (24 + 3));  // the mHC part; KDA's are its blocks'
  std::int64_t kda_f32 = 0;
  for (const trace::Block& block : model.stacks.front().blocks) {
    if (block.ssm && block.ssm->decay_fp32) kda_f32 += block.ssm->num_heads + block.ssm->inner;
  }
  CHECK(kda_f32 == 34 * (64 + 8192));
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  CHECK(storage.mtp_bytes == 14'865'185'408);
  CHECK(storage.bytes == 642'646'653'816);
  const std::vector<std::pair<std::string, std::int64_t>> by_dtype = {
      {"BF16", 642'646'653'816 - 4 * (43 * 288 + 283'134)}, {"F32", 4 * (43 * 288 + 283'134)}};
  CHECK(storage.by_dtype == by_dtype);
}

TEST_CASE("GLM-5.3-Flash: layer schedule and hand-derived components", "[glm5_next]") {
  const trace::ModelDescription model = fixture(k_flash);
  CHECK(model.model_type == "glm5_next");
  CHECK(model.position == trace::PositionKind::none);
  CHECK_FALSE(model.tie_word_embeddings);
  CHECK(model.max_position_embeddings == 1'048'576);
  CHECK(model.mtp_depths == 1);
  REQUIRE(model.stacks.size() == 3);
  const trace::Stack& decoder = model.stacks[0];
  REQUIRE(decoder.blocks.size() == 45);
  int kda = 0;
  for (std::size_t i = 0; i < decoder.blocks.size(); ++i) {
    const trace::Block& block = decoder.blocks[i];
    INFO("layer " << i);
    const bool sparse_attention = i % 4 == 3;
    CHECK(block.residual_streams == 4);  // mHC: 4 x 4096 between layers
    CHECK(static_cast<bool>(block.ssm) == !sparse_attention);
    CHECK((block.attention.kind == trace::AttentionKind::mla) == sparse_attention);
    CHECK(static_cast<bool>(block.attention.indexer) == sparse_attention);
    CHECK(static_cast<bool>(block.moe) == (i >= 3));
    kda += block.ssm ? 1 : 0;
  }
  CHECK(kda == 34);
  CHECK(model.stacks[1].mtp);
  REQUIRE(model.stacks[1].blocks.size() == 1);
  CHECK(model.stacks[1].blocks[0].residual_streams == 1);  // layer 45 stores no hc_* tensors
  CHECK(model.stacks[2].vision);
  CHECK(model.stacks[2].blocks.size() == 24);

  // One KDA mixer: q/k/v 3 x 8192 x 4096, conv 3 x 8192 x 4, f_a / g_a 2 x 128 x 4096, f_b / g_b
  // 2 x 8192 x 128, b_proj 64 x 4096, dt_bias 8192, A_log 64, o_norm 128, o_proj 4096 x 8192.
  const trace::Block& layer0 = decoder.blocks[0];
  CHECK(trace::ssm_params(*layer0.ssm) == 3LL * 8192 * 4096 + 3 * 8192 * 4 + 2 * 128 * 4096 +
                                              2 * 8192 * 128 + 64 * 4096 + 8192 + 64 + 128 +
                                              4096LL * 8192);
  CHECK(trace::ssm_params(*layer0.ssm) == 137'732'288);
  // Layer 0: KDA + dense SwiGLU 3 x 12288 x 4096 + 2 norms.
  CHECK(trace::block_params(layer0) == 137'732'288 + 3LL * 12288 * 4096 + 2 * 4096);

  // One sparse-attention mixer: q_a 1536 x 4096 + q_a_layernorm 1536 + q_b 16384 x 1536 +
  // kv_a 512 x 4096 + kv_a_layernorm 512 + kv_b 32768 x 512 + o_proj 4096 x 16384, and the
  // indexer wq_b 4096 x 1536 + wk 128 x 4096 + k_norm 2 x 128 + weights_proj 32 x 4096 (its
  // k-pool ape / gate are extra tensors).
  const trace::Block& layer3 = decoder.blocks[3];
  CHECK(trace::attention_params(layer3.attention) ==
        117'442'560 + 4096LL * 1536 + 128 * 4096 + 256 + 32 * 4096);
  CHECK(trace::attention_params(layer3.attention) + k_kpool == 124'914'432);

  // One MoE: router 288 x 4096 + correction bias 288, experts 288 x 3 x 2048 x 4096, shared
  // 3 x 2048 x 4096.
  const trace::MoeParams moe = trace::moe_params(*layer3.moe);
  CHECK(moe.router == 288 * 4096 + 288);
  CHECK(moe.routed == 288LL * 3 * 2048 * 4096);
  CHECK(moe.shared == 3LL * 2048 * 4096);
  CHECK(moe.total == 7'274'103'072);
  CHECK(moe.active == 8LL * 3 * 2048 * 4096 + 288 * 4096 + 288 + 3LL * 2048 * 4096);

  // The largest trunk layer, a KDA + MoE one, is 14,825,277,272 bytes published: its F32 tensors
  // are dt_bias 8192, A_log 64, the correction bias 288 and mHC base / scale 2 x 27.
  const trace::Block& layer4 = decoder.blocks[4];
  CHECK(trace::block_params(layer4) + 2 * k_hc_site ==
        (14'825'277'272LL - 2 * (8192 + 64 + 288 + 54)) / 2);
  CHECK(trace::block_params(layer4) + 2 * k_hc_site == 7'412'630'038);

  // Vision block: qkv 3 x 1024^2 + 3072, proj 1024^2 + 1024, q_norm / k_norm 64 each, gate / up
  // 2 x (4096 x 1024 + 4096), down 1024 x 4096 + 1024, norm1 / norm2 1024 each.
  CHECK(trace::block_params(model.stacks[2].blocks[0]) == 16'792'704);
}

TEST_CASE("GLM-5.3-Flash serving: KV on the 11 MLA layers, KDA state on the 34 others",
          "[glm5_next][memory]") {
  const trace::ModelDescription model = fixture(k_flash);
  // 11 sparse-attention layers x ((kv_lora_rank 512 + qk_rope_head_dim 0) x 2 bytes + the
  // indexer's key, 128 FP8 bytes + one F32 scale); the KDA layers cache nothing per token, the
  // MTP layer only when served.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 11 * ((512 + 0) * 2 + 128 + 4));
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 12'716);
  CHECK(trace::kv_cache_bytes(model, 1'000'000, trace::Dtype::bf16) == 12'716LL * 1'000'000);
  trace::KvSplit with_mtp;
  with_mtp.mtp = true;
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16, with_mtp) == 12 * (1024 + 132));
  // An FP8 cache is FlashMLA's sparse row: 512 FP8 + 4 F32 scales (no rope key here).
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::fp8) == 11 * (512 + 4 * 4 + 0 + 132));
  // 34 KDA layers x (recurrent 64 heads x 128 x 128 x 4 bytes + conv (4 - 1) x 3 x 8192 x 2 bytes).
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) ==
        34LL * (64 * 128 * 128 * 4 + 3 * 24'576 * 2));
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 147'619'840);
}

TEST_CASE("GLM-5.3-Flash text model alone and the config class's defaults", "[glm5_next]") {
  const nlohmann::json config = flash_json();
  nlohmann::json text = config["text_config"];
  const trace::ModelDescription alone = trace::parse_model_config(text.dump());
  CHECK(alone.model_type == "glm5_next_text");
  // The whole model less the vision tower.
  CHECK(trace::count_parameters(alone).total == 321'323'031'390 - 563'627'008);

  // Without the schedules Glm5NextTextConfig builds the same ones (every 4th layer sparse
  // attention, 3 dense layers, every indexer full), and says so.
  text.erase("layer_types");
  text.erase("mlp_layer_types");
  text.erase("indexer_types");
  const trace::ModelDescription derived = trace::parse_model_config(text.dump());
  CHECK(trace::count_parameters(derived).total == 321'323'031'390 - 563'627'008);
  CHECK(has_note(derived, "layer_types"));
  // index_kpool absent: the class default 16 makes ape [16, 128] per indexer (12 indexers).
  text.erase("index_kpool");
  const trace::ModelDescription pooled = trace::parse_model_config(text.dump());
  CHECK(trace::count_parameters(pooled).total ==
        321'323'031'390 - 563'627'008 + 12 * (16 - 4) * 128);
  CHECK(has_note(pooled, "index_kpool = 16"));
}

TEST_CASE("GLM-5.3-Flash config errors name the key", "[glm5_next][errors]") {
  nlohmann::json config = flash_json();
  config["text_config"].erase("hc_mult");
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("text_config.hc_mult"));

  config = flash_json();
  config["text_config"].erase("n_routed_experts");
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("text_config.n_routed_experts"));

  config = flash_json();
  config["text_config"].erase("linear_attn_config");
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("text_config.linear_attn_config"));

  config = flash_json();
  config["vision_config"].erase("projection_intermediate_size");
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("vision_config.projection_intermediate_size"));

  config = flash_json();
  config.erase("vision_config");
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("vision_config"));

  config = flash_json();
  config["text_config"]["qk_rope_head_dim"] = 64;
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("text_config.qk_rope_head_dim"));

  // vLLM builds dense layers from first_k_dense_replace, transformers from mlp_layer_types.
  config = flash_json();
  config["text_config"]["first_k_dense_replace"] = 1;
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("text_config.first_k_dense_replace"));

  // linear_attn_config's 0-based lists must agree with layer_types.
  config = flash_json();
  config["text_config"]["layer_types"][4] = "deepseek_sparse_attention";
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("linear_attn_config.kda_layers"));

  config = flash_json();
  config["text_config"]["mhc"] = false;
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("text_config.mhc"));
}
