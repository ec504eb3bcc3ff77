// DeepSeek-V4-Flash (deepseek_v4: sliding-window + compressed / sparse-indexed attention with one
// shared KV head, 4-stream mHC, hash-routed then scored MoE, MTP): the total derived from the
// published tensor bytes and tensor count, per-layer components derived by hand from the
// reference inference/model.py, the KV cache trace counts, and the refusals. Sources and every
// derivation: tests/data/configs/SOURCES-deepseek_v4.md.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::test::fixture;

constexpr const char* k_flash = "deepseek-ai--DeepSeek-V4-Flash.json";

nlohmann::json flash_json() {
  return nlohmann::json::parse(trace::test::config_text(k_flash));
}

bool has_note(const trace::ModelDescription& model, const std::string& text) {
  for (const std::string& note : model.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

// Shapes (hidden 4096, 64 heads x 512, q_lora 1024, 8 output groups x o_lora 1024, 256 experts of
// 2048, vocab 129280, top-6, hc_mult 4, indexer 64 heads x 128).
// MLA-held part of one attention: wq_a [1024, 4096] + q_norm [1024] + wq_b [32768, 1024] +
// wkv [512, 4096].
constexpr std::int64_t k_attn_mla = 1024LL * 4096 + 1024 + 32768LL * 1024 + 512 * 4096;
// The rest: kv_norm [512] + wo_a [8192, 4096] + wo_b [4096, 8192] + attn_sink [64].
constexpr std::int64_t k_attn_rest = 512 + 8192LL * 4096 + 4096LL * 8192 + 64;
// Compressor, ratio 4 (overlapping, 2 x 512 wide): ape [4, 1024] + norm [512] + wkv, wgate
// [1024, 4096]; ratio 128: ape [128, 512] + norm [512] + wkv, wgate [512, 4096].
constexpr std::int64_t k_comp4 = 4 * 1024 + 512 + 2LL * 1024 * 4096;
constexpr std::int64_t k_comp128 = 128 * 512 + 512 + 2LL * 512 * 4096;
// Indexer: its compressor (ratio 4, 2 x 128 wide) ape [4, 256] + norm [128] + wkv, wgate
// [256, 4096], weights_proj [64, 4096], wq_b [8192, 1024].
constexpr std::int64_t k_indexer = 4 * 256 + 128 + 2LL * 256 * 4096 + 64 * 4096 + 8192LL * 1024;
// MoE without its gate: 256 experts + 1 shared, 3 x 2048 x 4096 each.
constexpr std::int64_t k_experts = 257LL * 3 * 2048 * 4096;
constexpr std::int64_t k_gate = 256 * 4096;
constexpr std::int64_t k_tid2eid = 129280LL * 6;
// One mHC site: fn [24, 16384] + base [24] + scale [3]; hc_head: fn [4, 16384] + base [4] +
// scale [1].
constexpr std::int64_t k_hc_site = 24LL * 16384 + 24 + 3;
constexpr std::int64_t k_hc_head = 4LL * 16384 + 4 + 1;

}  // namespace

TEST_CASE("DeepSeek-V4-Flash: 290,944,616,402 parameters from the published 159,609,485,896 bytes",
          "[deepseek_v4][golden]") {
  // model.safetensors.index.json: total_size 159,609,485,896 over 69,187 tensors. Every tensor's
  // dtype, from the reference model.py and the shard-2 header (SOURCES-deepseek_v4.md):
  // FP4 routed experts (44 MoE layers = 43 + MTP), two values a byte + one E8M0 byte per 32.
  constexpr std::int64_t fp4 = 44LL * 256 * 3 * 2048 * 4096;
  constexpr std::int64_t fp4_scales = 44LL * 256 * (2 * 2048 * 128 + 4096 * 64);
  // FP8 E4M3, one E8M0 byte per 128 x 128 block: per layer wq_a, wq_b, wkv, wo_a, wo_b and the
  // shared expert (132,120,576 values, 8,064 scales); the 21 indexers' wq_b (8,388,608 / 512);
  // MTP e_proj, h_proj (2 x 4096^2 / 2 x 1,024).
  constexpr std::int64_t fp8 = 44LL * 132'120'576 + 21LL * 8'388'608 + 2LL * 4096 * 4096;
  constexpr std::int64_t fp8_scales = 44 * 8064 + 21 * 512 + 2 * 1024;
  static_assert(4096LL * 1024 + 32768LL * 1024 + 512 * 4096 + 8192LL * 4096 + 4096LL * 8192 +
                    3LL * 2048 * 4096 ==
                132'120'576);
  static_assert(8 * 32 + 256 * 8 + 4 * 32 + 64 * 32 + 32 * 64 + 3 * 16 * 32 == 8064);
  // BF16: embed + head, final norm; per layer attn_norm, ffn_norm, q_norm, kv_norm, gate.weight;
  // compressor norm + wkv / wgate on 21 ratio-4 and 20 ratio-128 layers; the indexers'
  // compressor norm + wkv / wgate and weights_proj; MTP enorm, hnorm, norm.
  constexpr std::int64_t bf16 = 2LL * 129280 * 4096 + 4096 +
                                44LL * (2 * 4096 + 1024 + 512 + k_gate) +
                                21LL * (512 + 2 * 1024 * 4096) + 20LL * (512 + 2 * 512 * 4096) +
                                21LL * (128 + 2 * 256 * 4096 + 64 * 4096) + 3 * 4096;
  // F32: attn_sink, the compressors' ape, gate.bias (40 scored layers + MTP), mHC sites, hc_head
  // (backbone and MTP). I64: tid2eid on layers 0-2.
  constexpr std::int64_t f32 = 44 * 64 + 21 * 4 * 1024 + 20 * 128 * 512 + 21 * 4 * 256 + 41 * 256 +
                               44LL * 2 * k_hc_site + 2 * k_hc_head;
  constexpr std::int64_t i64 = 3 * k_tid2eid;
  static_assert(fp4 / 2 + fp4_scales + fp8 + fp8_scales + 2 * bf16 + 4 * f32 + 8 * i64 ==
                159'609'485'896LL);
  // The Hub's safetensors total counts stored elements (FP4 pairs as one I8, scales included):
  // 158,069,433,298.
  static_assert(fp4 / 2 + fp4_scales + fp8 + fp8_scales + bf16 + f32 + i64 == 158'069'433'298LL);
  // Parameters: every element but the scales, FP4 values unpacked.
  static_assert(fp4 + fp8 + bf16 + f32 + i64 == 290'944'616'402LL);

  const trace::ModelDescription model = fixture(k_flash);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == 290'944'616'402);
  // MTP (mtp.0): a ratio-0, scored-routing block + e_proj, h_proj, enorm, hnorm, norm, hc_head.
  constexpr std::int64_t mtp = k_attn_mla + k_attn_rest + k_experts + k_gate + 256 + 2 * 4096 +
                               2 * k_hc_site + 2LL * 4096 * 4096 + 3 * 4096 + k_hc_head;
  static_assert(mtp == 6'610'048'891);
  CHECK(count.mtp == mtp);
  // The model card's "284B total" is the count without the MTP layer.
  CHECK((count.total - count.mtp) / 1'000'000'000 == 284);
  // Per component.
  CHECK(trace::component_count(count, "experts") == 43LL * 256 * 3 * 2048 * 4096);
  CHECK(trace::component_count(count, "shared_experts") == 43LL * 3 * 2048 * 4096);
  CHECK(trace::component_count(count, "router") == 43 * k_gate + 40 * 256 + 3 * k_tid2eid);
  CHECK(trace::component_count(count, "attention") ==
        43 * (k_attn_mla + k_attn_rest) + 21 * (k_comp4 + k_indexer) + 20 * k_comp128);
  CHECK(trace::component_count(count, "other") == 43 * 2 * k_hc_site + k_hc_head);
  CHECK(trace::component_count(count, "norm") == 43 * 2 * 4096 + 4096);
  CHECK(count.router_bias_buffers == 41 * 256);

  // The storage table holds the published layout tensor by tensor.
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  CHECK(storage.format == "DeepSeek-V4 (FP4 experts + FP8 e4m3, UE8M0 scales)");
  CHECK(storage.bytes == 159'609'485'896);
  CHECK(storage.stored_elements == 158'069'433'298);
  CHECK(storage.tensors == 33'792 + 33'792 + 375 + 375 + 433 + 417 + 3);
  CHECK(storage.tensors == 69'187);
  CHECK(storage.scale_elements == fp4_scales + fp8_scales);
  CHECK(storage.quantized_values == fp4 + fp8);
  const auto dtype_bytes = [&storage](const std::string& dtype) {
    for (const auto& [name, bytes] : storage.by_dtype) {
      if (name == dtype) return bytes;
    }
    return std::int64_t{-1};
  };
  CHECK(dtype_bytes("I8") == fp4 / 2);
  CHECK(dtype_bytes("F8_E8M0") == fp4_scales + fp8_scales);
  CHECK(dtype_bytes("F8_E4M3") == fp8);
  CHECK(dtype_bytes("BF16") == 2 * bf16);
  CHECK(dtype_bytes("F32") == 4 * f32);
  CHECK(dtype_bytes("I64") == 8 * i64);
  // Routed experts of the 43 layers: 11,008 experts of 13,369,344 bytes (3 x 2048 x 4096 / 2
  // packed + 3 x 2048 x 128 scale bytes), the published 147,169,738,752.
  static_assert(3LL * 2048 * 4096 / 2 + (2 * 2048 * 128 + 4096 * 64) == 13'369'344);
  CHECK(storage.routed_expert_bytes == 43LL * 256 * 13'369'344);
  CHECK(storage.routed_expert_bytes == 147'169'738'752);
  // mtp.0: its experts (the published 3,422,552,064), FP8 Linears with e_proj / h_proj and their
  // scales, BF16 norms and gate, F32 sinks, gate.bias, mHC and hc_head.
  constexpr std::int64_t mtp_experts = 256LL * 13'369'344;
  static_assert(mtp_experts == 3'422'552'064);
  constexpr std::int64_t mtp_bytes =
      mtp_experts + (132'120'576 + 2LL * 4096 * 4096) + (8064 + 2 * 1024) +
      2 * (2 * 4096 + 1024 + 512 + k_gate + 3 * 4096) + 4 * (64 + 256 + 2 * k_hc_site + k_hc_head);
  CHECK(storage.mtp_bytes == mtp_bytes);
  CHECK(storage.mtp_bytes == 3'593'787'756);
}

TEST_CASE("DeepSeek-V4: another quantization_config is priced by the generic table, and says so",
          "[deepseek_v4][storage]") {
  nlohmann::json config = flash_json();
  config["quantization_config"]["scale_fmt"] = "float32";
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  REQUIRE(model.quantization);
  CHECK(model.quantization->family_layout.empty());
  CHECK(has_note(model, "priced by the generic table"));
  const trace::StorageEstimate storage =
      trace::estimate_storage(model, trace::count_parameters(model));
  CHECK(storage.format == "fp8_block");
  CHECK(storage.bytes != 159'609'485'896);

  // An engine's re-quantization replaces the checkpoint's quantization, and its layout with it.
  trace::ModelDescription requantized = fixture(k_flash);
  requantized.quantization = trace::Quantization{};
  requantized.quantization->format = trace::QuantFormat::fp8_tensor;
  CHECK(trace::estimate_storage(requantized, trace::count_parameters(requantized)).format ==
        "fp8_tensor");
}

TEST_CASE("DeepSeek-V4-Flash: layer schedule and hand-derived components", "[deepseek_v4]") {
  const trace::ModelDescription model = fixture(k_flash);
  CHECK(model.model_type == "deepseek_v4");
  CHECK_FALSE(model.tie_word_embeddings);
  CHECK(model.mtp_depths == 1);
  REQUIRE(model.stacks.size() == 2);
  const trace::Stack& decoder = model.stacks[0];
  REQUIRE(decoder.blocks.size() == 43);
  for (std::size_t i = 0; i < decoder.blocks.size(); ++i) {
    INFO("layer " << i);
    const trace::Block& block = decoder.blocks[i];
    CHECK(block.residual_streams == 4);
    CHECK(block.attention.sliding_window == 128);
    REQUIRE(block.moe);
    CHECK(block.moe->router_correction_bias == (i >= 3));  // hash routing on layers 0-2
  }
  REQUIRE(model.stacks[1].mtp);
  REQUIRE(model.stacks[1].blocks.size() == 1);
  CHECK(model.stacks[1].blocks[0].moe->router_correction_bias);  // MTP: scored routing

  const trace::Block& layer0 = decoder.blocks[0];
  CHECK(trace::attention_params(layer0.attention) == k_attn_mla);
  CHECK(k_attn_mla == 39'846'912);
  CHECK(k_attn_rest == 67'109'440);
  CHECK(k_comp4 == 8'393'216);
  CHECK(k_comp128 == 4'260'352);
  CHECK(k_indexer == 10'749'056);
  CHECK(k_hc_site == 393'243);
  // Scored MoE: experts + shared + gate.weight + gate.bias [256].
  const trace::MoeParams scored = trace::moe_params(*decoder.blocks[3].moe);
  CHECK(scored.total == k_experts + k_gate + 256);
  CHECK(scored.total == 6'468'665'600);
  CHECK(scored.active == 7LL * 3 * 2048 * 4096 + k_gate + 256);
  // Hash-routed MoE: no bias; tid2eid [129280, 6] is an extra tensor.
  CHECK(trace::moe_params(*layer0.moe).total == k_experts + k_gate);
  // Whole layers with their extra tensors: 0 (sliding only, hash), 2 (ratio 4 + indexer, hash),
  // 3 (ratio 128, scored), 4 (ratio 4, scored).
  const std::int64_t layer0_full =
      trace::block_params(layer0) + k_attn_rest + k_tid2eid + 2 * k_hc_site;
  CHECK(layer0_full ==
        k_attn_mla + k_attn_rest + 2 * 4096 + k_experts + k_gate + k_tid2eid + 2 * k_hc_site);
  CHECK(layer0_full == 6'577'192'054);
  CHECK(trace::block_params(decoder.blocks[2]) + k_attn_rest + k_comp4 + k_indexer + k_tid2eid +
            2 * k_hc_site ==
        6'596'334'326);
  CHECK(trace::block_params(decoder.blocks[3]) + k_attn_rest + k_comp128 + 2 * k_hc_site ==
        6'580'676'982);
  CHECK(trace::block_params(decoder.blocks[4]) + k_attn_rest + k_comp4 + k_indexer +
            2 * k_hc_site ==
        6'595'558'902);
}

TEST_CASE("DeepSeek-V4 serving: window rows, pooled rows, index keys and compressor state",
          "[deepseek_v4][memory]") {
  const trace::ModelDescription model = fixture(k_flash);
  // The compressors' F32 decode state per sequence (reference Compressor: kv_state and
  // score_state of [c ratio, c d] each, c = 2 on the overlapping ratio 4): ratio-4 layers
  // 2 x 8 x 1024 + the indexer's 2 x 8 x 256, ratio-128 layers 2 x 128 x 512.
  constexpr std::int64_t state = 4 * (21 * (2 * 8 * 1024 + 2 * 8 * 256) + 20 * (2 * 128 * 512));
  static_assert(state == 12'206'080);
  // One token: one 512-wide window row in each of the 43 layers (the MTP layer is not served),
  // no pooled row yet.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 43 * 512 * 2 + state);
  // 1M tokens (1,048,576): 128 window rows per layer; 262,144 pooled rows of 512 + index keys of
  // 128 on the 21 ratio-4 layers; 8,192 pooled rows on the 20 ratio-128 layers.
  constexpr std::int64_t million = 1'048'576;
  constexpr std::int64_t rows =
      2 * (43LL * 128 * 512 + 21LL * (million / 4) * (512 + 128) + 20LL * (million / 128) * 512);
  static_assert(rows == 7'219'838'976);
  CHECK(trace::kv_cache_bytes(model, million, trace::Dtype::bf16) == rows + state);
  // FP8 rows halve the rows, not the F32 state.
  CHECK(trace::kv_cache_bytes(model, million, trace::Dtype::fp8) == rows / 2 + state);
  // Replicated under tensor parallelism (one shared KV head, like an MLA latent).
  CHECK(trace::kv_cache_bytes(model, million, trace::Dtype::bf16, {4}) == rows + state);
  // A partial pooled window holds no row: 3 tokens, none; 4 tokens, one on each ratio-4 layer.
  CHECK(trace::kv_cache_bytes(model, 4, trace::Dtype::bf16) -
            trace::kv_cache_bytes(model, 3, trace::Dtype::bf16) ==
        2 * (43 * 512 + 21 * (512 + 128)));
}

TEST_CASE("DeepSeek-V4: a 61-layer stack gives vLLM's published 9.62 GiB at 1M tokens, bf16",
          "[deepseek_v4][memory][golden]") {
  // vLLM's DeepSeek-V4 announcement: "At 1M context, per-layer KV state is ~8.7x smaller than a
  // DeepSeek V3.2-style 61-layer stack (9.62 GiB vs 83.9 GiB, bf16)"; the 61 layers are 30 with
  // ratio 4 and 31 with ratio 128 (SOURCES-deepseek_v4.md). Flash's config with that schedule:
  nlohmann::json config = flash_json();
  config["num_hidden_layers"] = 61;
  config["num_nextn_predict_layers"] = 0;
  nlohmann::json ratios = nlohmann::json::array();
  for (int i = 0; i < 61; ++i) ratios.push_back(i < 30 ? 4 : 128);
  config["compress_ratios"] = ratios;
  config.erase("quantization_config");
  const trace::ModelDescription stack = trace::parse_model_config(config.dump());
  constexpr std::int64_t million = 1'048'576;
  constexpr std::int64_t state = 4 * (30 * (2 * 8 * 1024 + 2 * 8 * 256) + 31 * (2 * 128 * 512));
  const std::int64_t rows = trace::kv_cache_bytes(stack, million, trace::Dtype::bf16) - state;
  CHECK(rows == 2 * (61LL * 128 * 512 + 30LL * (million / 4) * 640 + 31LL * (million / 128) * 512));
  CHECK(std::llround(static_cast<double>(rows) / (1LL << 30) * 100) == 962);  // 9.62 GiB
  // ...against DeepSeek-V3.2's 61 layers of one 512 latent + 64 rope key per token in bf16,
  // and an index key of 128 FP8 values + one F32 scale (its reference Indexer's k_cache and
  // k_scale_cache, as vLLM caches it too).
  const std::int64_t v32 = trace::kv_cache_bytes(fixture("deepseek-ai--DeepSeek-V3.2.json"),
                                                 million, trace::Dtype::bf16);
  CHECK(v32 == 61LL * million * ((512 + 64) * 2 + 128 + 4));
  // The announcement's 83.9 GiB takes the index key at bf16 too (128 x 2 bytes).
  CHECK(std::llround(static_cast<double>(v32 + 61LL * million * (2 * 128 - 132)) / (1LL << 30) *
                     10) == 839);
  // An FP8 cache: FlashMLA's sparse row, 512 FP8 + 4 F32 scales + 64 BF16 rope = 656 bytes.
  CHECK(trace::kv_cache_bytes(fixture("deepseek-ai--DeepSeek-V3.2.json"), 1, trace::Dtype::fp8) ==
        61 * (656 + 132));
}

TEST_CASE("DeepSeek-V4 config errors name the key", "[deepseek_v4][errors]") {
  nlohmann::json config = flash_json();
  config["compress_ratios"][5] = 16;
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("compress_ratios") &&
                 Catch::Matchers::Contains("not supported yet"));

  config = flash_json();
  config["compress_ratios"].erase(43);
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("compress_ratios"));

  config = flash_json();
  config.erase("compress_ratios");
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("compress_ratios"));

  config = flash_json();
  config.erase("num_hash_layers");
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("num_hash_layers"));

  config = flash_json();
  config.erase("hc_mult");
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("hc_mult"));

  config = flash_json();
  config["num_key_value_heads"] = 8;
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("num_key_value_heads") &&
                 Catch::Matchers::Contains("not supported yet"));

  config = flash_json();
  config["n_shared_experts"] = 2;
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("n_shared_experts") &&
                 Catch::Matchers::Contains("not supported yet"));

  // V4.1-style keys whose tensors no published count covers.
  config = flash_json();
  config["kv_source_layer_ids"] = nlohmann::json::array({0, 1});
  CHECK_THAT(trace::test::config_error(config.dump()),
             Catch::Matchers::Contains("kv_source_layer_ids") &&
                 Catch::Matchers::Contains("not supported yet"));

  config = flash_json();
  config["o_groups"] = 7;
  CHECK_THAT(trace::test::config_error(config.dump()), Catch::Matchers::Contains("o_groups"));

  // Without MTP: the same model less mtp.0.
  config = flash_json();
  config["num_nextn_predict_layers"] = 0;
  const trace::ModelDescription no_mtp = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(no_mtp).total == 290'944'616'402 - 6'610'048'891);
}
