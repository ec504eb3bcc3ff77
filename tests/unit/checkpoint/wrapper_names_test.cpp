// More vision-language wrappers' checkpoint names (docs/checkpoint.md, "Naming"): pixtral-12b's
// llava with its Pixtral tower under vision_tower.transformer.layers.N, as transformers'
// convert_pixtral_weights_to_hf.py wrote mistral-community/pixtral-12b. Shapes are written by
// hand from the modeling code and the config's hyperparameters; counts are derived in the
// comments.
#include <string>
#include <vector>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_params;

}  // namespace

TEST_CASE("pixtral-12b: a llava whose Pixtral tower is vision_tower.transformer.layers.N",
          "[checkpoint][names]") {
  // convert_pixtral_weights_to_hf.py renames vision_encoder.* to vision_tower.* and keeps
  // Pixtral's module names: patch_conv (Conv2d 3 -> 1024, 16 x 16 patches, no bias), ln_pre
  // (RMSNorm), transformer.layers.N.{attention_norm, attention.{q,k,v,o}_proj (1024 x 1024),
  // ffn_norm, feed_forward.{gate,up,down}_proj (I 4096)}, all bias-free; the text model is
  // Mistral-Nemo's (V 131072, H 5120, 40 layers, 32 / 8 heads x 128, I 14336) under
  // language_model.model.* with language_model.lm_head; multi_modal_projector.linear_1
  // [5120, 1024] and linear_2 [5120, 5120], biased (LlavaConfig's default).
  const Inventory inventory =
      fixture_inventory("mistral-community--pixtral-12b.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "vision_tower.patch_conv.weight", {1024, 3, 16, 16});
  check_absent(inventory, "vision_tower.patch_conv.bias");
  check_tensor(inventory, "vision_tower.ln_pre.weight", {1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.attention.o_proj.weight",
               {1024, 1024});
  check_absent(inventory, "vision_tower.transformer.layers.23.attention.o_proj.bias");
  check_tensor(inventory, "vision_tower.transformer.layers.23.feed_forward.gate_proj.weight",
               {4096, 1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.feed_forward.down_proj.weight",
               {1024, 4096});
  check_tensor(inventory, "vision_tower.transformer.layers.0.attention_norm.weight", {1024});
  check_tensor(inventory, "vision_tower.transformer.layers.0.ffn_norm.weight", {1024});
  check_absent(inventory, "vision_tower.transformer.layers.0.mlp.fc1.weight");
  check_tensor(inventory, "language_model.model.layers.39.self_attn.q_proj.weight", {4096, 5120});
  check_tensor(inventory, "language_model.lm_head.weight", {131072, 5120});
  check_tensor(inventory, "multi_modal_projector.linear_1.weight", {5120, 1024});
  check_tensor(inventory, "multi_modal_projector.linear_2.bias", {5120});
  // Text 40 x 9 + embedding, norm, head = 363; tower 24 x 9 + patch_conv + ln_pre = 218;
  // projector 4: 585 tensors. Parameters: text 2 x 671,088,640 + 40 x 272,640,000 + 5,120 =
  // 12,247,782,400; tower 24 x 16,779,264 + 786,432 + 1,024 = 403,489,792; projector 5,248,000
  // + 26,219,520 = 31,467,520: 12,682,739,712.
  CHECK(inventory.tensors.size() == 585);
  CHECK(inventory_params(inventory) == 12'682'739'712);
}

TEST_CASE("Aya Vision: a SigLIP tower and a pixel-shuffle projector beside Command R7B",
          "[checkpoint][names]") {
  // modeling_aya_vision.py's _checkpoint_conversion_mapping: the uploads keep
  // language_model.model.*, vision_tower.vision_model.* and multi_modal_projector.*, the head
  // tied (no lm_head). aya-vision-8b: text H 4096, 32 x 128 queries, 8 kv heads, I 14336, one
  // LayerNorm (weight only) a layer; tower D 1152, patch 14, 364 / 14 = 26 x 26 = 676 positions;
  // the projector folds 2 x 2 patches: 1152 x 4 = 4608 wide, its LayerNorm biased,
  // linear_1 [28672, 4608] (alignment_intermediate_size), SwiGLU halves it, linear_2
  // [4096, 14336].
  const Inventory inventory = fixture_inventory("CohereForAI--aya-vision-8b.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.layers.31.self_attn.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "language_model.model.layers.31.input_layernorm.weight", {4096});
  check_absent(inventory, "language_model.lm_head.weight");
  check_tensor(inventory, "vision_tower.vision_model.embeddings.patch_embedding.weight",
               {1152, 3, 14, 14});
  check_tensor(inventory, "vision_tower.vision_model.embeddings.position_embedding.weight",
               {676, 1152});
  check_tensor(inventory, "multi_modal_projector.layernorm.bias", {4608});
  check_tensor(inventory, "multi_modal_projector.linear_1.weight", {28672, 4608});
  check_tensor(inventory, "multi_modal_projector.linear_2.weight", {4096, 14336});
  // Text 32 x 8 + embedding + norm = 258; tower 27 x 16 + patch embedding 2 + positions 1 +
  // post_layernorm 2 = 437; projector 6: 701.
  CHECK(inventory.tensors.size() == 701);
}

TEST_CASE("DBRX: transformer.blocks.N with every expert of a projection in one 2-D tensor",
          "[checkpoint][names]") {
  // modeling_dbrx.py: d_model 6144, 40 blocks, 48 heads x 128 with kv_n_heads 8, so Wqkv is
  // [6144 + 2 x 8 x 128 = 8192, 6144]; bias-free LayerNorms norm_1 / norm_2 (weight only);
  // router.layer [16, 6144]; DbrxExpertGLU's w1, v1, w2 bare nn.Parameters of shape
  // [16 x 10752 = 172032, 6144] each; transformer.wte and the untied lm_head [100352, 6144].
  const Inventory inventory = fixture_inventory("databricks--dbrx-instruct.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.wte.weight", {100352, 6144});
  check_tensor(inventory, "transformer.blocks.39.norm_attn_norm.attn.Wqkv.weight", {8192, 6144});
  check_tensor(inventory, "transformer.blocks.0.norm_attn_norm.norm_1.weight", {6144});
  check_absent(inventory, "transformer.blocks.0.norm_attn_norm.norm_1.bias");
  check_tensor(inventory, "transformer.blocks.0.ffn.router.layer.weight", {16, 6144});
  check_tensor(inventory, "transformer.blocks.0.ffn.experts.mlp.w1", {172032, 6144});
  check_tensor(inventory, "transformer.blocks.0.ffn.experts.mlp.v1", {172032, 6144});
  check_tensor(inventory, "transformer.blocks.39.ffn.experts.mlp.w2", {172032, 6144});
  check_absent(inventory, "transformer.blocks.0.ffn.experts.mlp.w1.weight");
  check_tensor(inventory, "lm_head.weight", {100352, 6144});
  // 40 blocks x 8 (norm_1, Wqkv, out_proj, norm_2, router, w1, v1, w2) + wte, norm_f, lm_head =
  // 323 (llama.cpp's dbrx-instruct GGUF count). Parameters: per block 2 x 6144 + 8192 x 6144 +
  // 6144 x 6144 + 16 x 6144 + 3 x 172032 x 6144 = 3,259,084,800; x 40 = 130,363,392,000; plus
  // 2 x 100352 x 6144 + 6144 = 1,233,131,520: 131,596,523,520 (SOURCES-phimoe-dbrx.md).
  CHECK(inventory.tensors.size() == 323);
  CHECK(inventory_params(inventory) == 131'596'523'520);
}
