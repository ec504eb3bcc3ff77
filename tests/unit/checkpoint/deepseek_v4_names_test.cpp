// DeepSeek-V4-Flash's checkpoint names (src/checkpoint/naming_deepseek_v4.cpp): the reference
// inference/model.py state dict without a wrapper (embed, head, norm, hc_head_*, layers.N.*,
// mtp.0.*), FP8 Linears as .weight F8_E4M3 + .scale F8_E8M0, routed experts as .weight I8 (two
// FP4 values a byte) + .scale F8_E8M0. Names, shapes and counts written by hand from the
// published index's tensor families and shard-2 header (audit report, index id 59368543979),
// rtp-llm's checkpoint oracle (dsv4_checkpoint_inventory.py: 69,187 names, 1,575 of them
// mtp.0.*) and the published totals (tests/data/configs/SOURCES-deepseek_v4-names.md,
// SOURCES-deepseek_v4.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::checkpoint::ExpectedTensor;
using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_of;
using trace::test::dtype_tensor_count;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

constexpr const char* k_flash = "deepseek-ai--DeepSeek-V4-Flash.json";

// An FP8 Linear [rows, cols]: the weight and one UE8M0 scale per 128 x 128 block.
void check_fp8(const Inventory& inventory, const std::string& at, std::int64_t rows,
               std::int64_t cols) {
  check_tensor(inventory, at + ".weight", {rows, cols});
  check_tensor(inventory, at + ".scale", {(rows + 127) / 128, (cols + 127) / 128});
  CHECK(dtype_of(inventory, at + ".weight") == "F8_E4M3");
  CHECK(dtype_of(inventory, at + ".scale") == "F8_E8M0");
}

// A routed expert's FP4 Linear [rows, cols]: I8 [rows, cols / 2] and a scale per 32 inputs.
void check_fp4(const Inventory& inventory, const std::string& at, std::int64_t rows,
               std::int64_t cols) {
  check_tensor(inventory, at + ".weight", {rows, cols / 2});
  check_tensor(inventory, at + ".scale", {rows, cols / 32});
  CHECK(dtype_of(inventory, at + ".weight") == "I8");
  CHECK(dtype_of(inventory, at + ".scale") == "F8_E8M0");
}

// Every layer, MTP's too: H 4096, 64 heads x 512, q_lora 1024, o_groups 8 x o_lora 1024,
// 256 experts of 2048, one shared expert, hc_mult 4.
void check_layer(const Inventory& inventory, const std::string& at) {
  check_tensor(inventory, at + "attn_norm.weight", {4096});
  check_tensor(inventory, at + "ffn_norm.weight", {4096});
  check_tensor(inventory, at + "attn.attn_sink", {64});
  CHECK(dtype_of(inventory, at + "attn.attn_sink") == "F32");
  check_fp8(inventory, at + "attn.wq_a", 1024, 4096);
  check_tensor(inventory, at + "attn.q_norm.weight", {1024});
  CHECK(dtype_of(inventory, at + "attn.q_norm.weight") == "BF16");
  check_fp8(inventory, at + "attn.wq_b", 64 * 512, 1024);
  check_fp8(inventory, at + "attn.wkv", 512, 4096);
  check_tensor(inventory, at + "attn.kv_norm.weight", {512});
  check_fp8(inventory, at + "attn.wo_a", 8 * 1024, 64 * 512 / 8);
  check_fp8(inventory, at + "attn.wo_b", 4096, 8 * 1024);
  check_tensor(inventory, at + "ffn.gate.weight", {256, 4096});
  CHECK(dtype_of(inventory, at + "ffn.gate.weight") == "BF16");
  for (const char* expert : {"experts.0.", "experts.255."}) {
    check_fp4(inventory, at + "ffn." + expert + "w1", 2048, 4096);
    check_fp4(inventory, at + "ffn." + expert + "w2", 4096, 2048);
    check_fp4(inventory, at + "ffn." + expert + "w3", 2048, 4096);
  }
  check_absent(inventory, at + "ffn.experts.256.w1.weight");
  check_fp8(inventory, at + "ffn.shared_experts.w1", 2048, 4096);
  check_fp8(inventory, at + "ffn.shared_experts.w2", 4096, 2048);
  check_fp8(inventory, at + "ffn.shared_experts.w3", 2048, 4096);
  for (const std::string site : {"hc_attn_", "hc_ffn_"}) {
    check_tensor(inventory, at + site + "fn", {(2 + 4) * 4, 4 * 4096});
    check_tensor(inventory, at + site + "base", {(2 + 4) * 4});
    check_tensor(inventory, at + site + "scale", {3});
    CHECK(dtype_of(inventory, at + site + "fn") == "F32");
  }
}

// A compressor of ratio r over rows of d: ape [r, c d] F32, wkv / wgate [c d, H] and norm [d]
// BF16, c = 2 at ratio 4.
void check_compressor(const Inventory& inventory, const std::string& at, std::int64_t ratio,
                      std::int64_t dim) {
  const std::int64_t width = (ratio == 4 ? 2 : 1) * dim;
  check_tensor(inventory, at + "ape", {ratio, width});
  CHECK(dtype_of(inventory, at + "ape") == "F32");
  check_tensor(inventory, at + "wkv.weight", {width, 4096});
  check_tensor(inventory, at + "wgate.weight", {width, 4096});
  CHECK(dtype_of(inventory, at + "wkv.weight") == "BF16");
  check_tensor(inventory, at + "norm.weight", {dim});
}

}  // namespace

TEST_CASE("DeepSeek-V4-Flash: reference names without a wrapper, every published tensor",
          "[checkpoint][names][deepseek_v4_names]") {
  const Inventory inventory = fixture_inventory(k_flash);
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());

  // Outside the layers (MAIN_GLOBAL_TARGETS): no model. wrapper, embed / head, not
  // embed_tokens / lm_head.
  check_tensor(inventory, "embed.weight", {129280, 4096});
  check_tensor(inventory, "head.weight", {129280, 4096});
  check_tensor(inventory, "norm.weight", {4096});
  check_tensor(inventory, "hc_head_fn", {4, 4 * 4096});
  check_tensor(inventory, "hc_head_base", {4});
  check_tensor(inventory, "hc_head_scale", {1});
  CHECK(dtype_of(inventory, "head.weight") == "BF16");
  CHECK(dtype_of(inventory, "hc_head_fn") == "F32");
  check_absent(inventory, "model.embed_tokens.weight");
  check_absent(inventory, "lm_head.weight");
  check_absent(inventory, "model.layers.0.attn.wq_a.weight");
  check_absent(inventory, "layers.0.attn.wq_a.weight_scale_inv");

  // Layers 0, 1: ratio 0 (window only), hash routing (num_hash_layers 3).
  for (const std::string at : {"layers.0.", "layers.1."}) {
    check_layer(inventory, at);
    check_tensor(inventory, at + "ffn.gate.tid2eid", {129280, 6});
    CHECK(dtype_of(inventory, at + "ffn.gate.tid2eid") == "I64");
    check_absent(inventory, at + "ffn.gate.bias");
    check_absent(inventory, at + "attn.compressor.ape");
    check_absent(inventory, at + "attn.indexer.wq_b.weight");
  }
  // Layer 2: ratio 4 (compressor + indexer), still hash-routed.
  check_layer(inventory, "layers.2.");
  check_tensor(inventory, "layers.2.ffn.gate.tid2eid", {129280, 6});
  check_absent(inventory, "layers.2.ffn.gate.bias");
  check_compressor(inventory, "layers.2.attn.compressor.", 4, 512);
  check_fp8(inventory, "layers.2.attn.indexer.wq_b", 64 * 128, 1024);
  check_tensor(inventory, "layers.2.attn.indexer.weights_proj.weight", {64, 4096});
  CHECK(dtype_of(inventory, "layers.2.attn.indexer.weights_proj.weight") == "BF16");
  check_compressor(inventory, "layers.2.attn.indexer.compressor.", 4, 128);
  // Layer 3: ratio 128 (compressor only), scored routing with gate.bias.
  check_layer(inventory, "layers.3.");
  check_tensor(inventory, "layers.3.ffn.gate.bias", {256});
  CHECK(dtype_of(inventory, "layers.3.ffn.gate.bias") == "F32");
  check_absent(inventory, "layers.3.ffn.gate.tid2eid");
  check_compressor(inventory, "layers.3.attn.compressor.", 128, 512);
  check_absent(inventory, "layers.3.attn.indexer.wq_b.weight");
  // Layer 42, the last: ratio 4.
  check_layer(inventory, "layers.42.");
  check_compressor(inventory, "layers.42.attn.indexer.compressor.", 4, 128);
  check_absent(inventory, "layers.43.attn_norm.weight");

  // mtp.0: a ratio-0 layer with scored routing, e_proj / h_proj, three norms, its own hc_head.
  check_layer(inventory, "mtp.0.");
  check_tensor(inventory, "mtp.0.ffn.gate.bias", {256});
  check_absent(inventory, "mtp.0.ffn.gate.tid2eid");
  check_absent(inventory, "mtp.0.attn.compressor.ape");
  check_fp8(inventory, "mtp.0.e_proj", 4096, 4096);
  check_fp8(inventory, "mtp.0.h_proj", 4096, 4096);
  for (const char* norm : {"enorm", "hnorm", "norm"}) {
    check_tensor(inventory, std::string("mtp.0.") + norm + ".weight", {4096});
  }
  check_tensor(inventory, "mtp.0.hc_head_fn", {4, 4 * 4096});
  check_tensor(inventory, "mtp.0.hc_head_base", {4});
  check_tensor(inventory, "mtp.0.hc_head_scale", {1});
  check_absent(inventory, "mtp.1.attn_norm.weight");

  // Tensors: a ratio-0 layer holds 2 norms + attn_sink + q_norm + kv_norm + 5 FP8 Linears x 2
  // + gate.weight and bias (or tid2eid) + 256 x 3 experts x 2 + shared 3 x 2 + mHC 2 x 3
  // = 1,565; a compressor adds 4 (41 layers), an indexer 3 + its compressor's 4 (21 layers).
  constexpr std::int64_t per_layer = 2 + 1 + 1 + 1 + 10 + 2 + 256 * 3 * 2 + 6 + 6;
  static_assert(per_layer == 1565);
  constexpr std::int64_t mtp = per_layer + 2 * 2 + 3 + 3;  // rtp-llm's oracle: 1,575 mtp.0.*
  static_assert(mtp == 1575);
  constexpr std::int64_t tensors = 6 + 43 * per_layer + 41 * 4 + 21 * 7 + mtp;
  static_assert(tensors == 69'187);  // the published index's tensors
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) == tensors);
  std::int64_t mtp_names = 0;
  for (const ExpectedTensor& tensor : inventory.tensors) {
    if (tensor.name.starts_with("mtp.0.")) ++mtp_names;
  }
  CHECK(mtp_names == 1575);

  // By dtype (published: BF16 433, F32 417, F8_E4M3 375, F8_E8M0 34,167, I64 3, I8 33,792).
  const auto by_dtype = [&](const char* dtype) { return dtype_tensor_count(inventory, dtype); };
  // BF16: embed, head, norm + 44 x (attn_norm, ffn_norm, q_norm, kv_norm, gate.weight)
  // + 41 compressors x 3 + 21 indexers x (weights_proj + 3) + MTP's enorm, hnorm, norm.
  CHECK(by_dtype("BF16") == 3 + 44 * 5 + 41 * 3 + 21 * 4 + 3);
  // F32: 2 hc_head x 3 + 44 x (attn_sink + 6 mHC) + 41 gate.bias + 62 ape.
  CHECK(by_dtype("F32") == 2 * 3 + 44 * 7 + (40 + 1) + (41 + 21));
  // F8_E4M3: 44 x (5 attention + 3 shared) + 21 indexer wq_b + e_proj, h_proj.
  CHECK(by_dtype("F8_E4M3") == 44 * 8 + 21 + 2);
  CHECK(by_dtype("F8_E8M0") == 375 + 44 * 256 * 3);
  CHECK(by_dtype("I8") == 44 * 256 * 3);
  CHECK(by_dtype("I64") == 3);
  // and no other dtype
  CHECK(by_dtype("BF16") + by_dtype("F32") + by_dtype("F8_E4M3") + by_dtype("F8_E8M0") +
            by_dtype("I8") + by_dtype("I64") ==
        static_cast<std::int64_t>(inventory.tensors.size()));

  // Bytes (SOURCES-deepseek_v4.md's derivation): FP4 values two a byte, expert scales, FP8
  // values and their scales, then BF16, F32 and I64 elements.
  constexpr std::int64_t fp4_values = 44LL * 256 * 3 * 2048 * 4096;
  constexpr std::int64_t expert_scales = 44LL * 256 * (2 * 2048 * 128 + 4096 * 64);
  constexpr std::int64_t fp8_values = 44LL * 132'120'576 + 21LL * 8'388'608 + 2LL * 4096 * 4096;
  constexpr std::int64_t fp8_scales = 44LL * 8'064 + 21 * 512 + 2 * 1'024;
  constexpr std::int64_t bf16 = 1'415'259'264;
  constexpr std::int64_t f32 = 36'168'018;
  constexpr std::int64_t i64 = 3LL * 129'280 * 6;
  static_assert(fp4_values / 2 + expert_scales + fp8_values + fp8_scales + 2 * bf16 + 4 * f32 +
                    8 * i64 ==
                159'609'485'896);  // the published total_size
  CHECK(inventory_bytes(inventory) == 159'609'485'896);
  std::int64_t elements = 0;
  for (const ExpectedTensor& tensor : inventory.tensors) elements += tensor.elements();
  // The Hub's safetensors.total for the upload.
  static_assert(fp4_values / 2 + expert_scales + fp8_values + fp8_scales + bf16 + f32 + i64 ==
                158'069'433'298);
  CHECK(elements == 158'069'433'298);
  // Parameters: every element but the scales, FP4 values unpacked.
  static_assert(fp4_values + fp8_values + bf16 + f32 + i64 == 290'944'616'402);
  CHECK(inventory_params(inventory) == 290'944'616'402);
  CHECK(inventory.naming.starts_with("DeepSeek-V4"));
}

TEST_CASE("DeepSeek-V4: without the published FP4 / FP8 layout the names stay partial",
          "[checkpoint][names][deepseek_v4_names]") {
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text(k_flash));
  config.erase("quantization_config");
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
  CHECK_FALSE(inventory.complete);
  REQUIRE(inventory.gaps.size() == 1);
  // The same names, each Linear one BF16 weight without a scale.
  check_tensor(inventory, "layers.0.attn.wq_a.weight", {1024, 4096});
  CHECK(dtype_of(inventory, "layers.0.attn.wq_a.weight") == "BF16");
  check_absent(inventory, "layers.0.attn.wq_a.scale");
  check_tensor(inventory, "layers.0.ffn.experts.0.w2.weight", {4096, 2048});
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) == 69'187 - 375 - 33'792);
}
