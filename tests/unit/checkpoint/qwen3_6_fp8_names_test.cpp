// Qwen/Qwen3.6-27B-FP8's checkpoint names (Naming::qwen_fp8_block, src/checkpoint/naming.cpp's
// qwen3_5 naming): Qwen's block FP8 keeps the Qwen3-VL tower in modules_to_not_convert (333
// BF16 model.visual.* tensors, no weight_scale_inv), converts the DeltaNet in_proj_qkv /
// in_proj_z / out_proj but not in_proj_a / in_proj_b, the attention and MLP Linears of the 64
// layers and the MTP layer (not mtp.fc), with BF16 [ceil(r/128), ceil(c/128)] block scales.
// The published repo stores one shard per layer (layers-N.safetensors: 20 tensors a DeltaNet
// layer, 18 a full-attention one), mtp.safetensors (22) and outside.safetensors (336): 1,606
// tensors; every number below is written by hand from the config and those shard sizes
// (tests/data/configs/SOURCES-qwen3_6-fp8-names.md).
#include <cstdint>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"

namespace {

using trace::checkpoint::ExpectedTensor;
using trace::checkpoint::Inventory;
using trace::test::bytes_under;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::count_under;
using trace::test::dtype_of;
using trace::test::find_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

constexpr const char* k_fp8 = "Qwen--Qwen3.6-27B-FP8.reconstructed.json";
const std::string k_lm = "model.language_model.";

// Bytes of one DeltaNet layer (H 5120; keys 16 x 128, values 48 x 128; MLP 17408):
// F8_E4M3 in_proj_qkv [2 x 2048 + 6144, 5120], in_proj_z and out_proj 6144 x 5120, gate / up /
// down 17408 x 5120; BF16 block scales [80, 40] + [48, 40] + [40, 48] + 2 x [136, 40] + [40, 136];
// BF16 in_proj_b / in_proj_a [48, 5120], conv1d [10240, 1, 4], A_log / dt_bias [48], norm [128],
// two layer norms [5120].
constexpr std::int64_t k_delta_layer = (10240LL * 5120 + 2 * 6144LL * 5120 + 3 * 17408LL * 5120) +
                                       2 * (80 * 40 + 48 * 40 + 40 * 48 + 3 * 136 * 40) +
                                       2 * (2 * 48 * 5120 + 10240 * 4 + 2 * 48 + 128 + 2 * 5120);
// One full-attention layer: F8_E4M3 q_proj [2 x 24 x 256, 5120] (queries and the output gate),
// k_proj / v_proj [4 x 256, 5120], o_proj [5120, 6144], the MLP; BF16 scales [96, 40] +
// 2 x [8, 40] + [40, 48] + the MLP's; BF16 q_norm / k_norm [256] and the two layer norms.
constexpr std::int64_t k_attention_layer =
    (12288LL * 5120 + 2 * 1024LL * 5120 + 5120LL * 6144 + 3 * 17408LL * 5120) +
    2 * (96 * 40 + 2 * 8 * 40 + 40 * 48 + 3 * 136 * 40) + 2 * (2 * 256 + 2 * 5120);
// The tower (depth 27, width 1152, MLP 4304, out 5120, merge 2 x 2): per block norm1 / norm2
// weight and bias, qkv [3456, 1152], proj [1152, 1152], linear_fc1 [4304, 1152], linear_fc2
// [1152, 4304], all biased; patch_embed.proj [1152, 3, 2, 16, 16] + bias, pos_embed [2304, 1152],
// merger norm [1152] x 2, linear_fc1 [4608, 4608], linear_fc2 [5120, 4608], biased.
constexpr std::int64_t k_tower_params =
    27 * (4 * 1152 + (3456LL * 1152 + 3456) + (1152LL * 1152 + 1152) + (4304LL * 1152 + 4304) +
          (1152LL * 4304 + 1152)) +
    (1152LL * 3 * 2 * 16 * 16 + 1152) + 2304LL * 1152 +
    (2 * 1152 + (4608LL * 4608 + 4608) + (5120LL * 4608 + 5120));
// mtp.*: one full-attention layer, fc [5120, 10240] BF16 and three norms [5120].
constexpr std::int64_t k_mtp = k_attention_layer + 2 * (5120LL * 10240 + 3 * 5120);
// outside.safetensors: embed_tokens and lm_head [248320, 5120], the final norm, the tower.
constexpr std::int64_t k_outside = 2 * (2 * 248320LL * 5120 + 5120) + 2 * k_tower_params;

}  // namespace

TEST_CASE("Qwen3.6-27B-FP8: complete, the tower named unquantized", "[qwen3_6_fp8_names]") {
  const Inventory inventory = fixture_inventory(k_fp8);
  // Every tensor is named as the shards hold it, and the storage estimate stores Qwen's layout
  // (DeltaNet projections converted but in_proj_a / in_proj_b, BF16 block scales).
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());

  // 27 blocks x 12 + patch_embed 2 + pos_embed 1 + merger 6, BF16, no scale anywhere.
  CHECK(count_under(inventory, "model.visual.") == 27 * 12 + 2 + 1 + 6);
  CHECK(k_tower_params == 460'730'096);  // the tower of Qwen3.5-27B (SOURCES-validation-configs-2)
  CHECK(bytes_under(inventory, "model.visual.") == 2 * k_tower_params);
  check_tensor(inventory, "model.visual.blocks.0.attn.qkv.weight", {3456, 1152});
  CHECK(dtype_of(inventory, "model.visual.blocks.0.attn.qkv.weight") == "BF16");
  check_tensor(inventory, "model.visual.blocks.26.mlp.linear_fc2.weight", {1152, 4304});
  CHECK(dtype_of(inventory, "model.visual.blocks.26.mlp.linear_fc2.weight") == "BF16");
  check_tensor(inventory, "model.visual.merger.linear_fc2.weight", {5120, 4608});
  check_tensor(inventory, "model.visual.patch_embed.proj.weight", {1152, 3, 2, 16, 16});
  check_absent(inventory, "model.visual.blocks.0.attn.qkv.weight_scale_inv");
  check_absent(inventory, "model.visual.merger.linear_fc1.weight_scale_inv");
}

TEST_CASE("Qwen3.6-27B-FP8: DeltaNet projections and scales as the shards store them",
          "[qwen3_6_fp8_names]") {
  const Inventory inventory = fixture_inventory(k_fp8);
  const std::string delta = k_lm + "layers.0.linear_attn.";
  for (const char* leaf : {"in_proj_qkv", "in_proj_z", "out_proj"}) {
    CHECK(dtype_of(inventory, delta + leaf + ".weight") == "F8_E4M3");
    CHECK(dtype_of(inventory, delta + leaf + ".weight_scale_inv") == "BF16");
  }
  check_tensor(inventory, delta + "in_proj_qkv.weight_scale_inv", {80, 40});
  check_tensor(inventory, delta + "out_proj.weight_scale_inv", {40, 48});
  for (const char* leaf : {"in_proj_a", "in_proj_b"}) {
    check_tensor(inventory, delta + leaf + ".weight", {48, 5120});
    CHECK(dtype_of(inventory, delta + leaf + ".weight") == "BF16");
    check_absent(inventory, delta + leaf + ".weight_scale_inv");
  }
  // Scales BF16 as the shard sizes require; an F32 upload reconciles too.
  const ExpectedTensor* scale =
      find_tensor(inventory, k_lm + "layers.3.self_attn.q_proj.weight_scale_inv");
  REQUIRE(scale != nullptr);
  CHECK(scale->shape == std::vector<std::int64_t>{96, 40});
  CHECK(scale->dtype == "BF16");
  CHECK(scale->also_stored_as == "F32");
  // The MTP layer converted like the others but its fc.
  CHECK(dtype_of(inventory, "mtp.layers.0.mlp.down_proj.weight") == "F8_E4M3");
  check_tensor(inventory, "mtp.layers.0.mlp.down_proj.weight_scale_inv", {40, 136});
  CHECK(dtype_of(inventory, "mtp.fc.weight") == "BF16");
  check_absent(inventory, "mtp.fc.weight_scale_inv");
  CHECK(dtype_of(inventory, "lm_head.weight") == "BF16");
}

TEST_CASE("Qwen3.6-27B-FP8: 1,606 tensors, each shard's bytes under its published size",
          "[qwen3_6_fp8_names]") {
  const Inventory inventory = fixture_inventory(k_fp8);
  // 48 DeltaNet layers x 20 + 16 full-attention layers x 18 + mtp 22 + outside 336.
  CHECK(inventory.tensors.size() == 48 * 20 + 16 * 18 + 22 + 336);
  CHECK(count_under(inventory, k_lm + "layers.0.") == 20);
  CHECK(count_under(inventory, k_lm + "layers.3.") == 18);
  CHECK(count_under(inventory, "mtp.") == 22);
  CHECK(inventory_params(inventory) == 27'781'427'952);

  CHECK(bytes_under(inventory, k_lm + "layers.0.") == k_delta_layer);
  CHECK(bytes_under(inventory, k_lm + "layers.3.") == k_attention_layer);
  CHECK(bytes_under(inventory, "mtp.") == k_mtp);
  CHECK(k_delta_layer == 383'862'848);
  CHECK(k_attention_layer == 372'311'424);
  CHECK(k_mtp == 477'199'744);
  CHECK(k_outside == 6'007'064'032);
  CHECK(inventory_bytes(inventory) ==
        48 * k_delta_layer + 16 * k_attention_layer + k_mtp + k_outside);
  // Each shard file = 8 + header + data: the published sizes leave a header of about 115-130
  // bytes a tensor (F32 scales, or an FP8 tower, would not fit under them).
  CHECK(383'865'448 - k_delta_layer == 2'600);      // layers-0.safetensors, 20 tensors
  CHECK(372'313'744 - k_attention_layer == 2'320);  // layers-3.safetensors, 18 tensors
  CHECK(477'202'224 - k_mtp == 2'480);              // mtp.safetensors, 22 tensors
  CHECK(6'007'102'112 - k_outside == 38'080);       // outside.safetensors, 336 tensors
  // The storage estimate (what serving plans hold for weights) stores the same layout.
  const trace::ModelDescription model = trace::test::fixture(k_fp8);
  const trace::StorageEstimate storage =
      trace::estimate_storage(model, trace::count_parameters(model));
  CHECK(storage.bytes == 48 * k_delta_layer + 16 * k_attention_layer + k_mtp + k_outside);
}
