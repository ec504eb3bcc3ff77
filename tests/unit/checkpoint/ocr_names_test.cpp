// The checkpoint names of dots.ocr and DeepSeek-OCR (src/checkpoint/naming_dots_ocr.cpp).
// dots.ocr: Qwen2's model.* and lm_head, the dots_vit tower at the top level as vision_tower.*
// (patchifier conv and RMSNorm, blocks.N.{norm1, norm2, attn.qkv, attn.proj, mlp.fc1 / fc3 /
// fc2}, post_trunk_norm, merger.{ln_q, mlp.0, mlp.2}): the remote modeling_dots_vision.py and
// vLLM's dots_ocr.py mapper; published 3,039,179,264 parameters, BF16. DeepSeek-OCR: every tensor
// under model.* (DeepseekOCRModel), the SAM ViT-B as model.sam_model.*, the CLIP-L as
// model.vision_model.*; its safetensors listing (2,710 tensors, 3,336,106,240 parameters, BF16)
// names each. Counts written by hand from those sources (tests/data/configs/SOURCES-ocr-names.md,
// SOURCES-dots_ocr-deepseek_ocr.md).
#include <cstdint>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::buffer_count;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_tensor_count;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

}  // namespace

TEST_CASE("dots.ocr: model.*, vision_tower.blocks.N with attn.qkv and mlp.fc1/fc3/fc2: 643 tensors",
          "[checkpoint][names][ocr_names]") {
  const Inventory inventory = fixture_inventory("rednote-hilab--dots.ocr.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text: Qwen2, H 1536, 28 layers, 12 query heads and 2 KV heads of 128 (q/k/v biased, o_proj
  // not), MLP 8960, vocabulary 151,936 untied.
  check_tensor(inventory, "model.embed_tokens.weight", {151936, 1536});
  check_tensor(inventory, "lm_head.weight", {151936, 1536});
  check_tensor(inventory, "model.norm.weight", {1536});
  check_tensor(inventory, "model.layers.27.self_attn.q_proj.bias", {1536});
  check_tensor(inventory, "model.layers.27.self_attn.k_proj.weight", {256, 1536});
  check_tensor(inventory, "model.layers.27.mlp.down_proj.weight", {1536, 8960});
  check_absent(inventory, "model.layers.0.self_attn.o_proj.bias");
  check_absent(inventory, "model.layers.28.self_attn.q_proj.weight");
  // Vision: embed_dim 1536, 42 blocks, SwiGLU 4224, use_bias false; patch 14, merge 2.
  check_tensor(inventory, "vision_tower.patch_embed.patchifier.proj.weight", {1536, 3, 14, 14});
  check_tensor(inventory, "vision_tower.patch_embed.patchifier.proj.bias", {1536});
  check_tensor(inventory, "vision_tower.patch_embed.patchifier.norm.weight", {1536});
  check_absent(inventory, "vision_tower.patch_embed.patchifier.norm.bias");  // RMSNorm
  for (const std::string block : {"vision_tower.blocks.0.", "vision_tower.blocks.41."}) {
    check_tensor(inventory, block + "norm1.weight", {1536});
    check_tensor(inventory, block + "norm2.weight", {1536});
    check_tensor(inventory, block + "attn.qkv.weight", {3 * 1536, 1536});
    check_tensor(inventory, block + "attn.proj.weight", {1536, 1536});
    check_tensor(inventory, block + "mlp.fc1.weight", {4224, 1536});
    check_tensor(inventory, block + "mlp.fc3.weight", {4224, 1536});
    check_tensor(inventory, block + "mlp.fc2.weight", {1536, 4224});
    check_absent(inventory, block + "attn.qkv.bias");
    check_absent(inventory, block + "norm1.bias");
    // trace's own spellings are not the checkpoint's.
    check_absent(inventory, block + "attn.qkv_proj.weight");
    check_absent(inventory, block + "mlp.gate_proj.weight");
  }
  check_absent(inventory, "vision_tower.blocks.42.norm1.weight");
  check_tensor(inventory, "vision_tower.post_trunk_norm.weight", {1536});
  check_tensor(inventory, "vision_tower.merger.ln_q.weight", {1536});
  check_tensor(inventory, "vision_tower.merger.ln_q.bias", {1536});
  check_tensor(inventory, "vision_tower.merger.mlp.0.weight", {1536 * 4, 1536 * 4});
  check_tensor(inventory, "vision_tower.merger.mlp.0.bias", {6144});
  check_tensor(inventory, "vision_tower.merger.mlp.2.weight", {1536, 6144});
  check_tensor(inventory, "vision_tower.merger.mlp.2.bias", {1536});

  // Text: embedding, head, final norm; each layer q/k/v weight and bias, o_proj, three MLP
  // projections, two norms. Vision: conv weight and bias, its norm; 7 per block; post_trunk_norm;
  // ln_q and the two merger Linears, weight and bias each.
  constexpr std::int64_t text = 3 + 28 * (6 + 1 + 3 + 2);
  constexpr std::int64_t vision = 3 + 42 * 7 + 1 + 3 * 2;
  static_assert(text + vision == 643);
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) == text + vision);
  CHECK(buffer_count(inventory) == 0);
  CHECK(inventory_params(inventory) == 3'039'179'264);
  CHECK(inventory_bytes(inventory) == 2 * 3'039'179'264LL);
  CHECK(dtype_tensor_count(inventory, "BF16") ==
        static_cast<std::int64_t>(inventory.tensors.size()));
}

TEST_CASE(
    "DeepSeek-OCR: model.*, model.sam_model.blocks.N, model.vision_model.transformer.layers.N",
    "[checkpoint][names][ocr_names]") {
  const Inventory inventory = fixture_inventory("deepseek-ai--DeepSeek-OCR.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text: DeepSeek-V2 without MLA, H 1280, 12 layers, layer 0 dense (6848), then 64 experts of
  // 896 and 2 shared (1792), vocabulary 129,280 untied; under model.*, not language.model.*.
  check_tensor(inventory, "model.embed_tokens.weight", {129280, 1280});
  check_tensor(inventory, "lm_head.weight", {129280, 1280});
  check_tensor(inventory, "model.norm.weight", {1280});
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {6848, 1280});
  check_tensor(inventory, "model.layers.11.self_attn.q_proj.weight", {1280, 1280});
  check_tensor(inventory, "model.layers.11.mlp.gate.weight", {64, 1280});
  check_tensor(inventory, "model.layers.11.mlp.experts.63.down_proj.weight", {1280, 896});
  check_tensor(inventory, "model.layers.1.mlp.shared_experts.up_proj.weight", {1792, 1280});
  check_absent(inventory, "language.model.embed_tokens.weight");
  check_absent(inventory, "language.lm_head.weight");
  // SAM ViT-B: width 768, 12 blocks of 12 heads (64 wide), 16-pixel patches of a 1024 image
  // (64 x 64 grid), 14-patch windows except the global blocks 2, 5, 8 and 11.
  check_tensor(inventory, "model.sam_model.patch_embed.proj.weight", {768, 3, 16, 16});
  check_tensor(inventory, "model.sam_model.patch_embed.proj.bias", {768});
  check_tensor(inventory, "model.sam_model.pos_embed", {1, 64, 64, 768});
  for (const std::string block : {"model.sam_model.blocks.0.", "model.sam_model.blocks.11."}) {
    check_tensor(inventory, block + "norm1.weight", {768});
    check_tensor(inventory, block + "norm2.bias", {768});
    check_tensor(inventory, block + "attn.qkv.weight", {3 * 768, 768});
    check_tensor(inventory, block + "attn.qkv.bias", {2304});
    check_tensor(inventory, block + "attn.proj.weight", {768, 768});
    check_tensor(inventory, block + "mlp.lin1.weight", {4 * 768, 768});
    check_tensor(inventory, block + "mlp.lin2.weight", {768, 3072});
    check_tensor(inventory, block + "mlp.lin2.bias", {768});
    check_absent(inventory, block + "attn.qkv_proj.weight");
    check_absent(inventory, block + "mlp.fc1.weight");
  }
  for (const int windowed : {0, 1, 3, 10}) {
    const std::string at = "model.sam_model.blocks." + std::to_string(windowed) + ".attn.";
    check_tensor(inventory, at + "rel_pos_h", {2 * 14 - 1, 64});
    check_tensor(inventory, at + "rel_pos_w", {27, 64});
  }
  for (const int global : {2, 5, 8, 11}) {
    const std::string at = "model.sam_model.blocks." + std::to_string(global) + ".attn.";
    check_tensor(inventory, at + "rel_pos_h", {2 * 64 - 1, 64});
    check_tensor(inventory, at + "rel_pos_w", {127, 64});
  }
  check_absent(inventory, "model.sam_model.blocks.12.attn.rel_pos_h");
  check_tensor(inventory, "model.sam_model.neck.0.weight", {256, 768, 1, 1});
  check_tensor(inventory, "model.sam_model.neck.1.weight", {256});
  check_tensor(inventory, "model.sam_model.neck.1.bias", {256});
  check_tensor(inventory, "model.sam_model.neck.2.weight", {256, 256, 3, 3});
  check_tensor(inventory, "model.sam_model.neck.3.bias", {256});
  check_absent(inventory, "model.sam_model.neck.0.bias");
  check_absent(inventory, "model.sam_model.neck.2.bias");
  check_tensor(inventory, "model.sam_model.net_2.weight", {512, 256, 3, 3});
  check_tensor(inventory, "model.sam_model.net_3.weight", {1024, 512, 3, 3});
  check_absent(inventory, "model.sam_model.net_3.bias");
  // CLIP-L/14 at 224: width 1024, 24 layers, (224 / 14)^2 + 1 = 257 positions, no post-norm.
  check_tensor(inventory, "model.vision_model.embeddings.class_embedding", {1024});
  check_tensor(inventory, "model.vision_model.embeddings.patch_embedding.weight",
               {1024, 3, 14, 14});
  check_absent(inventory, "model.vision_model.embeddings.patch_embedding.bias");
  check_tensor(inventory, "model.vision_model.embeddings.position_embedding.weight",
               {16 * 16 + 1, 1024});
  check_tensor(inventory, "model.vision_model.pre_layrnorm.weight", {1024});
  check_tensor(inventory, "model.vision_model.pre_layrnorm.bias", {1024});
  for (const std::string layer :
       {"model.vision_model.transformer.layers.0.", "model.vision_model.transformer.layers.23."}) {
    check_tensor(inventory, layer + "layer_norm1.weight", {1024});
    check_tensor(inventory, layer + "layer_norm2.bias", {1024});
    check_tensor(inventory, layer + "self_attn.qkv_proj.weight", {3 * 1024, 1024});
    check_tensor(inventory, layer + "self_attn.qkv_proj.bias", {3072});
    check_tensor(inventory, layer + "self_attn.out_proj.weight", {1024, 1024});
    check_tensor(inventory, layer + "mlp.fc1.weight", {4096, 1024});
    check_tensor(inventory, layer + "mlp.fc2.bias", {1024});
    check_absent(inventory, layer + "self_attn.o_proj.weight");
  }
  check_absent(inventory, "model.vision_model.transformer.layers.24.mlp.fc1.weight");
  check_absent(inventory, "model.vision_model.post_layernorm.weight");
  // The linear projector from CLIP + SAM features (1024 + 1024) and the two layout tokens.
  check_tensor(inventory, "model.projector.layers.weight", {1280, 2048});
  check_tensor(inventory, "model.projector.layers.bias", {1280});
  check_tensor(inventory, "model.image_newline", {1280});
  check_tensor(inventory, "model.view_seperator", {1280});
  check_absent(inventory, "image_newline");

  // The listing's 2,710: text (embedding, head, norm; 12 x (2 norms + q/k/v/o); layer 0's three
  // MLP projections; 11 x (64 x 3 experts + gate + 3 shared)), the two tokens, the projector's
  // weight and bias; SAM (patch conv 2, pos_embed, 12 x (4 Linears x 2 + 2 norms x 2 + 2
  // rel_pos), neck 6, net_2, net_3); CLIP (3 embeddings, pre_layrnorm 2, 24 x (4 Linears x 2 +
  // 2 norms x 2)).
  constexpr std::int64_t text = 3 + 12 * 6 + 3 + 11 * (64 * 3 + 1 + 3);
  constexpr std::int64_t sam = 2 + 1 + 12 * (8 + 4 + 2) + 6 + 2;
  constexpr std::int64_t clip = 3 + 2 + 24 * (8 + 4);
  static_assert(text == 2234 && sam == 179 && clip == 293);
  static_assert(text + 2 + 2 + sam + clip == 2710);
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) == 2710);
  CHECK(buffer_count(inventory) == 0);
  CHECK(inventory_params(inventory) == 3'336'106'240);
  CHECK(inventory_bytes(inventory) == 2 * 3'336'106'240LL);
  CHECK(dtype_tensor_count(inventory, "BF16") ==
        static_cast<std::int64_t>(inventory.tensors.size()));
}

TEST_CASE("DeepSeek-OCR's naming leaves DeepSeek-VL2's layout as it was",
          "[checkpoint][names][ocr_names]") {
  // deepseek-vl2-tiny (DeepseekVLV2ForCausalLM) keeps language.* and vision.* (SOURCES-
  // deepseek_vl_v2.md); only the DeepseekOCRForCausalLM config is tagged.
  const Inventory inventory =
      fixture_inventory("deepseek-ai--deepseek-vl2-tiny.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language.model.embed_tokens.weight", {129280, 1280});
  check_tensor(inventory, "language.lm_head.weight", {129280, 1280});
  check_tensor(inventory, "vision.blocks.0.attn.qkv.weight", {3456, 1152});
  check_tensor(inventory, "image_newline", {1280});
  check_absent(inventory, "model.embed_tokens.weight");
  check_absent(inventory, "model.image_newline");
}
