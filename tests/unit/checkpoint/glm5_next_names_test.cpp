// GLM-5.3-Flash's checkpoint names (src/checkpoint/naming_glm5_next.cpp): the text model under
// model.language_model.* (45 trunk layers: 34 KDA, 11 sparse MLA with a k-pool DSA indexer; 3
// dense, 42 MoE; mHC tensors hc_attn_* / hc_ffn_* in every trunk layer), the MTP layer as
// layers.45 without hc_* tensors, the vision tower under model.visual.*, lm_head at the top.
// Names, shapes, dtypes and counts are written by hand from vLLM's glm5_next.py, transformers'
// modeling_glm5_next.py and the published BF16 tensor table and byte totals
// (tests/data/configs/SOURCES-glm5_next.md, SOURCES-glm5_next-names.md). H = 4096, hc_mult
// n = 4, 288 experts, V = 154,880.
#include <cstdint>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::bytes_under;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::count_under;
using trace::test::dtype_of;
using trace::test::dtype_tensor_count;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

constexpr const char* k_flash = "zai-org--GLM-5.3-Flash-BF16.reconstructed.json";
const std::string k_layers = "model.language_model.layers.";

}  // namespace

TEST_CASE("GLM-5.3-Flash: the inventory is the published BF16 checkpoint's",
          "[checkpoint][glm5_next_names]") {
  const Inventory inventory = fixture_inventory(k_flash);
  REQUIRE(inventory.complete);
  // Embedding, final norm, lm_head; 34 KDA mixers x 15; 11 MLA + indexer x 14; 45 trunk layers x
  // (2 norms + 6 mHC); 42 MoE layers x (288 x 3 experts + router weight and bias + 3 shared); 3
  // dense MLPs x 3; 347 vision tensors; MTP layer 45: 25 + 288 x 3.
  const std::int64_t tensors =
      3 + 34 * 15 + 11 * 14 + 45 * 8 + 42 * (288 * 3 + 2 + 3) + 3 * 3 + 347 + (25 + 288 * 3);
  CHECK(tensors == 38'770);
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) == tensors);
  // F32: KDA A_log + dt_bias (34 x 2), 43 correction biases, mHC base + scale (45 x 2 x 2).
  CHECK(dtype_tensor_count(inventory, "F32") == 34 * 2 + 43 + 45 * 4);
  // Bytes: every parameter at 2 bytes, the 34 x (8192 + 64) + 43 x 288 + 45 x 2 x 27 F32
  // elements at 2 more (SOURCES-glm5_next.md).
  const std::int64_t f32_elements = 34 * (8192 + 64) + 43 * 288 + 45 * 2 * 27;
  CHECK(f32_elements == 295'518);
  CHECK(inventory_params(inventory) == 321'323'031'390);
  CHECK(inventory_bytes(inventory) == 2 * 321'323'031'390 + 2 * f32_elements);
  CHECK(inventory_bytes(inventory) == 642'646'653'816);
}

TEST_CASE("GLM-5.3-Flash: per-layer bytes match the published shard headers",
          "[checkpoint][glm5_next_names]") {
  const Inventory inventory = fixture_inventory(k_flash);
  // Layer 4: KDA + MoE, the largest trunk layer: 7,412,630,038 parameters, 8192 + 64 + 288 + 54
  // of them F32.
  CHECK(bytes_under(inventory, k_layers + "4.") ==
        2 * 7'412'630'038LL + 2 * (8192 + 64 + 288 + 54));
  CHECK(bytes_under(inventory, k_layers + "4.") == 14'825'277'272);
  // MTP layer 45: 7,432,592,416 parameters, only the correction bias in F32.
  CHECK(bytes_under(inventory, k_layers + "45.") == 2 * 7'432'592'416LL + 2 * 288);
  CHECK(bytes_under(inventory, k_layers + "45.") == 14'865'185'408);
  CHECK(count_under(inventory, k_layers + "45.") == 25 + 288 * 3);
  // The tower: 563,627,008 parameters, all BF16.
  CHECK(count_under(inventory, "model.visual.") == 2 + 24 * 14 + 1 + 2 + 1 + 2 + 3);
  CHECK(bytes_under(inventory, "model.visual.") == 2 * 563'627'008LL);
}

TEST_CASE("GLM-5.3-Flash: trunk layer names", "[checkpoint][glm5_next_names]") {
  const Inventory inventory = fixture_inventory(k_flash);
  check_tensor(inventory, "model.language_model.embed_tokens.weight", {154'880, 4096});
  check_tensor(inventory, "model.language_model.norm.weight", {4096});
  check_tensor(inventory, "lm_head.weight", {154'880, 4096});
  // mHC at both sites of every trunk layer: fn [(2 + 4) x 4, 4 x 4096], base and scale F32.
  for (const std::string layer : {"0.", "3.", "44."}) {
    for (const std::string site : {"hc_attn_", "hc_ffn_"}) {
      check_tensor(inventory, k_layers + layer + site + "fn", {24, 4 * 4096});
      CHECK(dtype_of(inventory, k_layers + layer + site + "fn") == "BF16");
      check_tensor(inventory, k_layers + layer + site + "base", {24});
      CHECK(dtype_of(inventory, k_layers + layer + site + "base") == "F32");
      check_tensor(inventory, k_layers + layer + site + "scale", {3});
      CHECK(dtype_of(inventory, k_layers + layer + site + "scale") == "F32");
    }
  }
  // KDA (layer 0): 64 heads of 128, kernel 4; A_log a [64] vector, A_log and dt_bias F32.
  const std::string kda = k_layers + "0.self_attn.";
  check_tensor(inventory, kda + "q_proj.weight", {8192, 4096});
  check_tensor(inventory, kda + "v_conv1d.weight", {8192, 1, 4});
  check_tensor(inventory, kda + "f_a_proj.weight", {128, 4096});
  check_tensor(inventory, kda + "f_b_proj.weight", {8192, 128});
  check_tensor(inventory, kda + "b_proj.weight", {64, 4096});
  check_tensor(inventory, kda + "g_b_proj.weight", {8192, 128});
  check_tensor(inventory, kda + "A_log", {64});
  CHECK(dtype_of(inventory, kda + "A_log") == "F32");
  check_tensor(inventory, kda + "dt_bias", {8192});
  CHECK(dtype_of(inventory, kda + "dt_bias") == "F32");
  check_tensor(inventory, kda + "o_norm.weight", {128});
  check_tensor(inventory, kda + "o_proj.weight", {4096, 8192});
  check_absent(inventory, kda + "indexer.wk.weight");
  // Dense MLP (layers 0-2).
  check_tensor(inventory, k_layers + "2.mlp.down_proj.weight", {4096, 12288});
  // Sparse MLA + indexer (layer 3): 64 heads, NoPE, k-pool 4 x index_head_dim 128.
  const std::string mla = k_layers + "3.self_attn.";
  check_tensor(inventory, mla + "q_b_proj.weight", {64 * 256, 1536});
  check_tensor(inventory, mla + "kv_a_proj_with_mqa.weight", {512, 4096});
  check_tensor(inventory, mla + "kv_b_proj.weight", {64 * (256 + 256), 512});
  check_tensor(inventory, mla + "indexer.wq_b.weight", {32 * 128, 1536});
  check_tensor(inventory, mla + "indexer.k_norm.bias", {128});
  check_tensor(inventory, mla + "indexer.index_kpool_compress_ape", {4, 128});
  CHECK(dtype_of(inventory, mla + "indexer.index_kpool_compress_ape") == "BF16");
  check_tensor(inventory, mla + "indexer.index_kpool_compress_gate", {128, 4096});
  check_absent(inventory, mla + "indexer.index_kpool_compress_gate.weight");
  // MoE: router, F32 correction bias, experts one tensor each, shared expert.
  check_tensor(inventory, k_layers + "3.mlp.gate.weight", {288, 4096});
  CHECK(dtype_of(inventory, k_layers + "3.mlp.gate.e_score_correction_bias") == "F32");
  check_tensor(inventory, k_layers + "44.mlp.experts.287.down_proj.weight", {4096, 2048});
  check_tensor(inventory, k_layers + "3.mlp.shared_experts.up_proj.weight", {2048, 4096});
}

TEST_CASE("GLM-5.3-Flash: the MTP layer and the vision tower", "[checkpoint][glm5_next_names]") {
  const Inventory inventory = fixture_inventory(k_flash);
  const std::string mtp = k_layers + "45.";
  check_tensor(inventory, mtp + "eh_proj.weight", {4096, 2 * 4096});
  check_tensor(inventory, mtp + "enorm.weight", {4096});
  check_tensor(inventory, mtp + "hnorm.weight", {4096});
  check_tensor(inventory, mtp + "shared_head.norm.weight", {4096});
  check_tensor(inventory, mtp + "self_attn.indexer.index_kpool_compress_ape", {4, 128});
  check_tensor(inventory, mtp + "mlp.experts.287.gate_proj.weight", {2048, 4096});
  check_absent(inventory, mtp + "hc_attn_fn");
  check_absent(inventory, mtp + "hc_ffn_base");
  check_absent(inventory, "model.language_model.layers.46.input_layernorm.weight");
  // Tower: D 1024 (16 heads of 64), I 4096, out 4096, projection 10240, patch 14, 2 frames.
  const std::string visual = "model.visual.";
  check_tensor(inventory, visual + "patch_embed.proj.weight", {1024, 3, 2, 14, 14});
  check_tensor(inventory, visual + "patch_embed.proj.bias", {1024});
  check_tensor(inventory, visual + "blocks.23.attn.qkv.weight", {3 * 1024, 1024});
  check_tensor(inventory, visual + "blocks.23.attn.qkv.bias", {3 * 1024});
  check_tensor(inventory, visual + "blocks.23.attn.proj.weight", {1024, 1024});
  check_tensor(inventory, visual + "blocks.0.attn.q_norm.weight", {64});
  check_tensor(inventory, visual + "blocks.0.mlp.down_proj.bias", {1024});
  check_tensor(inventory, visual + "blocks.0.norm2.weight", {1024});
  check_tensor(inventory, visual + "post_layernorm.weight", {1024});
  check_tensor(inventory, visual + "downsample.weight", {4096, 1024, 2, 2});
  check_tensor(inventory, visual + "merger.post_projection_norm.bias", {4096});
  check_tensor(inventory, visual + "merger.gate_proj.weight", {10240, 4096});
  check_tensor(inventory, visual + "merger.down_proj.weight", {4096, 10240});
  check_absent(inventory, visual + "blocks.0.attn.qkv_proj.weight");
  check_absent(inventory, visual + "merger.proj.bias");
}
