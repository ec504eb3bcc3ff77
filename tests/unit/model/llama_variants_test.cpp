// The Llama-lineage variants built on decoder_stack (granite, smollm3, olmo, olmo3, starcoder2,
// cohere, cohere2, glm, glm4, exaone, internlm2, baichuan): what each layout changes besides the
// golden totals (families_test.cpp). Every expected number is derived by hand in its comment
// from the fixture's hyperparameters.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

nlohmann::json fixture_json(const std::string& name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

std::int64_t total_of(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}

}  // namespace

TEST_CASE("Cohere2: global layers use no RoPE and hold the whole context", "[families][cohere]") {
  // Command R7B: 32 layers, every 4th global; 8 kv heads x 128 = 4,096 bytes per layer-token in
  // bf16 (K and V). At 8,192 tokens: 8 global layers hold 8,192, 24 sliding layers 4,096.
  const trace::ModelDescription model = trace::parse_model_config(
      trace::test::config_text("CohereForAI--c4ai-command-r7b-12-2024.reconstructed.json"));
  int global = 0;
  for (const trace::Block& block : model.stacks[0].blocks) {
    const bool sliding = block.attention.sliding_window == 4096;
    CHECK(block.attention.rotary_dim == (sliding ? 128 : 0));
    if (!sliding) ++global;
    CHECK(block.parallel_residual);
    CHECK(block.norms.size() == 1);
  }
  CHECK(global == 8);
  CHECK(trace::kv_cache_bytes(model, 8192, trace::Dtype::bf16) ==
        8LL * 4'096 * 8'192 + 24LL * 4'096 * 4'096);
}

TEST_CASE("Cohere: use_qk_norm adds a LayerNorm weight per head", "[families][cohere]") {
  // Aya Expanse 8B: 32 layers, 32 heads and 8 kv heads of 128: (4,096 + 1,024) x 32 = 163,840.
  nlohmann::json config = fixture_json("CohereForAI--aya-expanse-8b.reconstructed.json");
  config["use_qk_norm"] = true;
  CHECK(total_of(config) == 8'028'033'024 + 163'840);
}

TEST_CASE("SmolLM3: NoPE layers keep their tensors and drop RoPE", "[families][smollm3]") {
  // SmolLM3-3B's no_rope_layers marks every 4th of 36 layers 0: 9 NoPE layers, 27 with RoPE.
  const trace::ModelDescription model =
      trace::parse_model_config(trace::test::config_text("HuggingFaceTB--SmolLM3-3B.json"));
  int nope = 0;
  for (std::size_t i = 0; i < model.stacks[0].blocks.size(); ++i) {
    const int rotary = static_cast<int>(model.stacks[0].blocks[i].attention.rotary_dim);
    CHECK(rotary == ((i + 1) % 4 == 0 ? 0 : 128));
    if (rotary == 0) ++nope;
  }
  CHECK(nope == 9);
}

TEST_CASE("OLMo 3: sliding layers from layer_types / OLMo-1: norms hold nothing",
          "[families][olmo]") {
  // Olmo-3-1025-7B: 24 sliding layers keep 4,096 tokens, 8 full ones the whole context; 32 kv
  // heads x 128 x 2 (K, V) x 2 bytes = 16,384 bytes per layer-token.
  const trace::ModelDescription olmo3 = trace::parse_model_config(
      trace::test::config_text("allenai--Olmo-3-1025-7B.reconstructed.json"));
  CHECK(trace::kv_cache_bytes(olmo3, 8192, trace::Dtype::bf16) ==
        8LL * 16'384 * 8'192 + 24LL * 16'384 * 4'096);
  // OLMo-1B-hf with norms of weight + bias would add (2 x 16 + 1) x 2 x 2,048 = 135,168.
  const trace::ParameterCount olmo = trace::count_parameters(trace::parse_model_config(
      trace::test::config_text("allenai--OLMo-1B-hf.reconstructed.json")));
  CHECK(olmo.total == 1'176'764'416);
  CHECK(olmo.total == 50'304LL * 2'048 + 16LL * (4 * 2'048 * 2'048 + 3 * 2'048 * 8'192));
}

TEST_CASE("GLM: partial rotary and o_proj without bias / glm4 adds two norms per layer",
          "[families][glm]") {
  // glm-4-9b-chat-hf and GLM-4-9B-0414 share every Linear; the 0414 layout adds 2 x 4,096 norm
  // weights in each of 40 layers (327,680) and changes nothing else.
  const std::int64_t glm = total_of(fixture_json("THUDM--glm-4-9b-chat-hf.reconstructed.json"));
  const std::int64_t glm4 = total_of(fixture_json("THUDM--GLM-4-9B-0414.reconstructed.json"));
  CHECK(glm4 - glm == 327'680);
  const trace::ModelDescription model = trace::parse_model_config(
      trace::test::config_text("THUDM--GLM-4-9B-0414.reconstructed.json"));
  CHECK(model.stacks[0].blocks[0].attention.rotary_dim == 64);  // half of head_dim 128
  CHECK(model.stacks[0].blocks[0].attention.q_bias);
  CHECK_FALSE(model.stacks[0].blocks[0].attention.o_bias);
}

TEST_CASE("StarCoder2 without num_key_value_heads takes the class default 2",
          "[families][starcoder2]") {
  // starcoder2-15b has 4 kv heads of 128 in 40 layers; with 2, k_proj and v_proj lose
  // 2 x 2 x 128 x (6,144 + 1) weights and biases per layer: 40 x 3,146,240 = 125,849,600.
  nlohmann::json config = fixture_json("bigcode--starcoder2-15b.json");
  config.erase("num_key_value_heads");
  CHECK(total_of(config) == 15'957'889'024 - 125'849'600);
}

TEST_CASE("Granite MoE with a shared MLP / Baichuan and InternLM2 refusals",
          "[families][granite]") {
  // granitemoeshared: the 1B-A400M with shared_intermediate_size 1,024 adds, in 24 layers, a
  // fused [2,048, 1,024] input_linear and a [1,024, 1,024] output_linear: 24 x 3,145,728.
  nlohmann::json granite =
      fixture_json("ibm-granite--granite-3.1-1b-a400m-instruct.reconstructed.json");
  granite["model_type"] = "granitemoeshared";
  granite["shared_intermediate_size"] = 1024;
  CHECK(total_of(granite) == 1'334'628'352 + 24LL * 3'145'728);
  // W_pack packs full-width k and v: grouped-query attention is refused, not miscounted.
  nlohmann::json baichuan = fixture_json("baichuan-inc--Baichuan-7B.reconstructed.json");
  baichuan["num_key_value_heads"] = 8;
  CHECK_THROWS_AS(total_of(baichuan), trace::ConfigError);
  // The reward model swaps the head for a v_head trace does not model.
  nlohmann::json internlm = fixture_json("internlm--internlm2_5-7b-chat.json");
  internlm["architectures"] = {"InternLM2ForRewardModel"};
  CHECK_THROWS_AS(total_of(internlm), trace::ConfigError);
}

TEST_CASE("Baichuan2: RoPE at 7B, ALiBi at 13B, same tensor formula", "[families][baichuan]") {
  // 2 V H + L (4 H^2 + 3 H I + 2 H) + H with V 125,696 (no published count found for either):
  // 7B: H 4,096, I 11,008, L 32 -> 7,505,973,248; 13B: H 5,120, I 13,696, L 40 -> 13,896,668,160.
  const trace::ModelDescription seven = trace::parse_model_config(
      trace::test::config_text("baichuan-inc--Baichuan2-7B-Chat.reconstructed.json"));
  CHECK(seven.position == trace::PositionKind::rope);
  CHECK(trace::count_parameters(seven).total == 7'505'973'248);
  const trace::ModelDescription thirteen = trace::parse_model_config(
      trace::test::config_text("baichuan-inc--Baichuan2-13B-Chat.reconstructed.json"));
  CHECK(thirteen.position == trace::PositionKind::alibi);
  CHECK(thirteen.stacks[0].blocks[0].attention.rotary_dim == 0);
  CHECK(thirteen.max_position_embeddings == 4096);  // model_max_length
  CHECK(trace::count_parameters(thirteen).total == 13'896'668'160);
}

TEST_CASE("CWM, Helium, VaultGemma, LLaVA-NeXT-Video: the tensors each changes", "[families]") {
  // CWM: H 6144, 64 layers, 48 / 8 heads x 128, I 21504, vocab 128,256 untied; never biased.
  constexpr std::int64_t cwm_layer =
      2 * 6144LL * 6144 + 2 * 1024LL * 6144 + 3 * 6144LL * 21'504 + 2 * 6144;
  nlohmann::json cwm = fixture_json("facebook--cwm.reconstructed.json");
  CHECK(total_of(cwm) == 64 * cwm_layer + 2 * 128'256LL * 6144 + 6144);
  cwm["attention_bias"] = true;  // CwmConfig removes the key: still no bias
  CHECK(total_of(cwm) == 64 * cwm_layer + 2 * 128'256LL * 6144 + 6144);
  // Layers 0, 4, ..., 60 global, the other 48 slide over 8192: at 100,000 tokens,
  // (16 x 100,000 + 48 x 8,192) rows of 2 x 8 x 128 bf16 values.
  const trace::ModelDescription cwm_model = trace::parse_model_config(cwm.dump());
  CHECK(cwm_model.stacks[0].blocks[0].attention.sliding_window == 0);
  CHECK(cwm_model.stacks[0].blocks[1].attention.sliding_window == 8192);
  CHECK(trace::kv_cache_bytes(cwm_model, 100'000, trace::Dtype::bf16) ==
        (16LL * 100'000 + 48LL * 8192) * 2 * 8 * 128 * 2);

  // Helium: o_proj [H, H] never biased, q/k/v follow attention_bias (H 2560, 20 heads x 128).
  nlohmann::json helium = fixture_json("kyutai--helium-1-preview-2b.reconstructed.json");
  const std::int64_t helium_total = total_of(helium);
  helium["attention_bias"] = true;
  CHECK(total_of(helium) == helium_total + 24 * 3 * 2560);
  helium["head_dim"] = 64;  // 20 x 64 != 2560: Helium's o_proj could not take it
  CHECK_THROWS_AS(total_of(helium), trace::ConfigError);

  // VaultGemma: two norms per layer; o_proj biased with q/k/v (4 x 256 = 1024 wide, H 1152).
  nlohmann::json vault = fixture_json("google--vaultgemma-1b.reconstructed.json");
  const trace::ModelDescription vault_model = trace::parse_model_config(vault.dump());
  CHECK(vault_model.stacks[0].blocks[0].norms.size() == 2);
  const std::int64_t vault_total = total_of(vault);
  vault["attention_bias"] = true;
  CHECK(total_of(vault) == vault_total + 26 * (3 * 1024 + 1152));

  // LLaVA-NeXT-Video: a conv pooler only in spatial_pool_mode "conv" (1024 -> 1024, 2 x 2).
  nlohmann::json video = fixture_json("llava-hf--LLaVA-NeXT-Video-7B-hf.reconstructed.json");
  const std::int64_t video_total = total_of(video);
  video["spatial_pool_mode"] = "conv";
  CHECK(total_of(video) == video_total + 1024LL * 1024 * 4 + 1024);
  video["spatial_pool_mode"] = "bilinear";
  CHECK_THROWS_AS(total_of(video), trace::ConfigError);
}
