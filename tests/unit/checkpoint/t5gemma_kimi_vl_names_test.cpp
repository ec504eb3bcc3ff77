// T5Gemma and Kimi-VL checkpoint names (src/checkpoint/naming_t5gemma_kimi_vl.cpp), written by
// hand from transformers' modular_t5gemma.py (T5GemmaEncoderLayer / T5GemmaDecoderLayer,
// T5GemmaLMHead.out_proj tied to model.decoder.embed_tokens) and keras-hub's convert_t5gemma.py,
// and from Kimi-VL's remote code as its loaders read the upload (vision_tower.encoder.blocks.N.
// {wqkv, wo, norm0, norm1, mlp.fc0, mlp.fc1}, multi_modal_projector.*, language_model.*).
// tests/data/configs/SOURCES-t5gemma-kimi_vl-names.md cites every name; SOURCES-t5.md and
// SOURCES-kimi_vl.md hold the published counts.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::ExpectedTensor;
using trace::checkpoint::Inventory;
using trace::test::buffer_count;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_of;
using trace::test::find_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

std::int64_t parameter_tensors(const Inventory& inventory) {
  return std::count_if(inventory.tensors.begin(), inventory.tensors.end(),
                       [](const ExpectedTensor& tensor) { return tensor.logical_params > 0; });
}

std::int64_t named_with(const Inventory& inventory, const std::string& prefix) {
  return std::count_if(
      inventory.tensors.begin(), inventory.tensors.end(),
      [&](const ExpectedTensor& tensor) { return tensor.name.starts_with(prefix); });
}

// No name is listed twice.
bool names_unique(const Inventory& inventory) {
  std::vector<std::string> names;
  for (const ExpectedTensor& tensor : inventory.tensors) names.push_back(tensor.name);
  std::sort(names.begin(), names.end());
  return std::adjacent_find(names.begin(), names.end()) == names.end();
}

}  // namespace

TEST_CASE("T5Gemma 2B-2B: model.encoder / model.decoder layers, cross_attn, tied out_proj",
          "[checkpoint][names][t5gemma]") {
  // t5gemma-2b-2b-ul2: both stacks d 2304, 26 layers, 8 heads / 4 KV heads x 256 (q 2048, k / v
  // 1024 rows), GeGLU 9216, vocabulary 256,000, the head tied to the decoder's table.
  const Inventory inventory = fixture_inventory("google--t5gemma-2b-2b-ul2.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  check_tensor(inventory, "model.encoder.embed_tokens.weight", {256000, 2304});
  check_tensor(inventory, "model.decoder.embed_tokens.weight", {256000, 2304});
  check_tensor(inventory, "model.encoder.layers.0.self_attn.q_proj.weight", {2048, 2304});
  check_tensor(inventory, "model.encoder.layers.0.self_attn.k_proj.weight", {1024, 2304});
  check_tensor(inventory, "model.encoder.layers.0.self_attn.v_proj.weight", {1024, 2304});
  check_tensor(inventory, "model.encoder.layers.0.self_attn.o_proj.weight", {2304, 2048});
  check_tensor(inventory, "model.encoder.layers.25.mlp.gate_proj.weight", {9216, 2304});
  check_tensor(inventory, "model.encoder.layers.25.mlp.up_proj.weight", {9216, 2304});
  check_tensor(inventory, "model.encoder.layers.25.mlp.down_proj.weight", {2304, 9216});
  for (const char* norm : {"pre_self_attn_layernorm", "post_self_attn_layernorm",
                           "pre_feedforward_layernorm", "post_feedforward_layernorm"}) {
    check_tensor(inventory, std::string("model.encoder.layers.7.") + norm + ".weight", {2304});
    check_tensor(inventory, std::string("model.decoder.layers.7.") + norm + ".weight", {2304});
  }
  check_tensor(inventory, "model.encoder.norm.weight", {2304});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.q_proj.weight", {2048, 2304});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.k_proj.weight", {1024, 2304});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.v_proj.weight", {1024, 2304});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.o_proj.weight", {2304, 2048});
  check_tensor(inventory, "model.decoder.layers.25.pre_cross_attn_layernorm.weight", {2304});
  check_tensor(inventory, "model.decoder.layers.25.post_cross_attn_layernorm.weight", {2304});
  check_tensor(inventory, "model.decoder.norm.weight", {2304});
  check_absent(inventory, "model.encoder.layers.26.self_attn.q_proj.weight");
  check_absent(inventory, "model.encoder.layers.0.cross_attn.q_proj.weight");
  check_absent(inventory, "model.encoder.layers.0.pre_cross_attn_layernorm.weight");
  check_absent(inventory, "model.shared.weight");
  check_absent(inventory, "lm_head.weight");
  // The tied head is not a parameter of its own; a copy some saves keep is a buffer.
  const ExpectedTensor* head = find_tensor(inventory, "lm_head.out_proj.weight");
  REQUIRE(head != nullptr);
  CHECK(head->buffer);
  CHECK(head->logical_params == 0);
  CHECK(head->shape == std::vector<std::int64_t>{256000, 2304});
  CHECK(dtype_of(inventory, "model.decoder.layers.0.cross_attn.k_proj.weight") == "BF16");
  // Encoder layer: q, k, v, o, gate, up, down + 4 norms = 11; decoder layer: 11 + cross q, k, v,
  // o + 2 norms = 17. 2 tables + 26 x 11 + norm + 26 x 17 + norm = 2 + 286 + 1 + 442 + 1 = 732.
  CHECK(parameter_tensors(inventory) == 732);
  CHECK(buffer_count(inventory) == 1);
  CHECK(inventory.tensors.size() == 733);
  CHECK(names_unique(inventory));
  // keras-hub's t5gemma_2b_2b preset (its converter ports the Hub tensors one to one).
  CHECK(inventory_params(inventory) == 5'596'853'760);
}

TEST_CASE("T5Gemma 9B-2B: a 3584-wide encoder, cross k / v reading it",
          "[checkpoint][names][t5gemma]") {
  // Encoder: Gemma 2 9B's shapes, d 3584, 42 layers, 16 heads / 8 KV heads x 256 (q 4096, k / v
  // 2048), GeGLU 14336; decoder: the 2B's, its cross-attention k / v [4 x 256, 3584].
  const Inventory inventory = fixture_inventory("google--t5gemma-9b-2b-ul2.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.encoder.embed_tokens.weight", {256000, 3584});
  check_tensor(inventory, "model.decoder.embed_tokens.weight", {256000, 2304});
  check_tensor(inventory, "model.encoder.layers.41.self_attn.q_proj.weight", {4096, 3584});
  check_tensor(inventory, "model.encoder.layers.41.self_attn.k_proj.weight", {2048, 3584});
  check_tensor(inventory, "model.encoder.layers.41.self_attn.o_proj.weight", {3584, 4096});
  check_tensor(inventory, "model.encoder.layers.41.mlp.gate_proj.weight", {14336, 3584});
  check_tensor(inventory, "model.encoder.layers.41.mlp.down_proj.weight", {3584, 14336});
  check_tensor(inventory, "model.encoder.layers.41.post_feedforward_layernorm.weight", {3584});
  check_tensor(inventory, "model.encoder.norm.weight", {3584});
  check_absent(inventory, "model.encoder.layers.42.self_attn.q_proj.weight");
  check_tensor(inventory, "model.decoder.layers.25.self_attn.q_proj.weight", {2048, 2304});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.q_proj.weight", {2048, 2304});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.k_proj.weight", {1024, 3584});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.v_proj.weight", {1024, 3584});
  check_tensor(inventory, "model.decoder.layers.25.cross_attn.o_proj.weight", {2304, 2048});
  check_absent(inventory, "model.decoder.layers.26.cross_attn.q_proj.weight");
  check_tensor(inventory, "model.decoder.norm.weight", {2304});
  check_tensor(inventory, "lm_head.out_proj.weight", {256000, 2304});
  // 2 tables + 42 x 11 + norm + 26 x 17 + norm = 2 + 462 + 1 + 442 + 1 = 908.
  CHECK(parameter_tensors(inventory) == 908);
  CHECK(names_unique(inventory));
  // Encoder 256,000 x 3584 + 42 x (2 x 3584 x 4096 + 2 x 3584 x 2048 + 3 x 3584 x 14336 + 4 x
  // 3584) + 3584 = 917,504,000 + 42 x 198,195,200 + 3,584 = 9,241,705,984; decoder 256,000 x 2304
  // + 26 x (2 x 2304 x 2048 + 2 x 2304 x 1024 + 2 x 2304 x 2048 + 2 x 3584 x 1024 + 3 x 2304 x
  // 9216 + 6 x 2304) + 2304 = 589,824,000 + 26 x 94,647,808 + 2,304 = 3,050,669,312: keras-hub's
  // t5gemma_9b_2b preset, 12,292,375,296.
  CHECK(inventory_params(inventory) == 12'292'375'296);
}

TEST_CASE("Kimi-VL-A3B: language_model.*, MoonViT's vision_tower.encoder.blocks.N, projector",
          "[checkpoint][names][kimi_vl]") {
  // Text: DeepSeek-V3 layout, H 2048, 27 layers (layer 0 dense, 11264), MLA without query LoRA
  // (16 heads x (128 + 64)), kv_lora 512, v 128, 64 experts of 1408 + 2 shared, V 163,840.
  // Tower: MoonViT d 1152, 27 blocks, MLP 4304, patch 14, a 64 x 64 position grid; projector
  // over 2 x 2 merged patches (4608) into 2048.
  const Inventory inventory =
      fixture_inventory("moonshotai--Kimi-VL-A3B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {163840, 2048});
  check_tensor(inventory, "language_model.model.layers.0.self_attn.q_proj.weight", {3072, 2048});
  check_tensor(inventory, "language_model.model.layers.0.self_attn.kv_a_proj_with_mqa.weight",
               {576, 2048});
  check_tensor(inventory, "language_model.model.layers.0.self_attn.kv_a_layernorm.weight", {512});
  check_tensor(inventory, "language_model.model.layers.0.self_attn.kv_b_proj.weight", {4096, 512});
  check_tensor(inventory, "language_model.model.layers.0.self_attn.o_proj.weight", {2048, 2048});
  check_tensor(inventory, "language_model.model.layers.0.mlp.gate_proj.weight", {11264, 2048});
  check_tensor(inventory, "language_model.model.layers.0.mlp.down_proj.weight", {2048, 11264});
  check_absent(inventory, "language_model.model.layers.0.mlp.gate.weight");
  check_tensor(inventory, "language_model.model.layers.26.input_layernorm.weight", {2048});
  check_tensor(inventory, "language_model.model.layers.26.post_attention_layernorm.weight", {2048});
  check_tensor(inventory, "language_model.model.layers.26.mlp.gate.weight", {64, 2048});
  check_tensor(inventory, "language_model.model.layers.26.mlp.gate.e_score_correction_bias", {64});
  // Stored at the checkpoint's dtype, not DeepSeek-V3's F32: the routers' 26 x (64 x 2048 + 64)
  // x 2 = 6,819,072 bytes measured on the upload.
  CHECK(dtype_of(inventory, "language_model.model.layers.26.mlp.gate.e_score_correction_bias") ==
        "BF16");
  check_tensor(inventory, "language_model.model.layers.26.mlp.experts.63.gate_proj.weight",
               {1408, 2048});
  check_tensor(inventory, "language_model.model.layers.26.mlp.experts.63.up_proj.weight",
               {1408, 2048});
  check_tensor(inventory, "language_model.model.layers.26.mlp.experts.63.down_proj.weight",
               {2048, 1408});
  check_absent(inventory, "language_model.model.layers.26.mlp.experts.64.up_proj.weight");
  check_tensor(inventory, "language_model.model.layers.1.mlp.shared_experts.gate_proj.weight",
               {2816, 2048});
  check_tensor(inventory, "language_model.model.layers.1.mlp.shared_experts.down_proj.weight",
               {2048, 2816});
  check_tensor(inventory, "language_model.model.norm.weight", {2048});
  check_tensor(inventory, "language_model.lm_head.weight", {163840, 2048});
  check_absent(inventory, "lm_head.weight");
  check_absent(inventory, "language_model.model.layers.27.input_layernorm.weight");
  // The rotary frequency buffer over qk_rope_head_dim 64: 32 F32 values per layer, no parameter.
  const ExpectedTensor* inv_freq =
      find_tensor(inventory, "language_model.model.layers.13.self_attn.rotary_emb.inv_freq");
  REQUIRE(inv_freq != nullptr);
  CHECK(inv_freq->buffer);
  CHECK(inv_freq->logical_params == 0);
  CHECK(inv_freq->shape == std::vector<std::int64_t>{32});
  CHECK(inv_freq->dtype == "F32");

  check_tensor(inventory, "vision_tower.patch_embed.proj.weight", {1152, 3, 14, 14});
  check_tensor(inventory, "vision_tower.patch_embed.proj.bias", {1152});
  check_tensor(inventory, "vision_tower.patch_embed.pos_emb.weight", {64, 64, 1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.0.wqkv.weight", {3456, 1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.0.wqkv.bias", {3456});
  check_tensor(inventory, "vision_tower.encoder.blocks.0.wo.weight", {1152, 1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.0.wo.bias", {1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.26.mlp.fc0.weight", {4304, 1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.26.mlp.fc0.bias", {4304});
  check_tensor(inventory, "vision_tower.encoder.blocks.26.mlp.fc1.weight", {1152, 4304});
  check_tensor(inventory, "vision_tower.encoder.blocks.26.mlp.fc1.bias", {1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.26.norm0.weight", {1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.26.norm0.bias", {1152});
  check_tensor(inventory, "vision_tower.encoder.blocks.26.norm1.bias", {1152});
  check_tensor(inventory, "vision_tower.encoder.final_layernorm.weight", {1152});
  check_tensor(inventory, "vision_tower.encoder.final_layernorm.bias", {1152});
  check_absent(inventory, "vision_tower.encoder.blocks.27.wqkv.weight");
  check_absent(inventory, "vision_tower.encoder.blocks.0.wqkv.qkv_proj.weight");
  check_tensor(inventory, "multi_modal_projector.pre_norm.weight", {1152});
  check_tensor(inventory, "multi_modal_projector.pre_norm.bias", {1152});
  check_tensor(inventory, "multi_modal_projector.linear_1.weight", {4608, 4608});
  check_tensor(inventory, "multi_modal_projector.linear_1.bias", {4608});
  check_tensor(inventory, "multi_modal_projector.linear_2.weight", {2048, 4608});
  check_tensor(inventory, "multi_modal_projector.linear_2.bias", {2048});

  // The upload's index: 11 names under layers.0. (2 norms + q_proj, kv_a_proj_with_mqa,
  // kv_a_layernorm, kv_b_proj, o_proj + gate / up / down + inv_freq) and 205 under layers.1.
  // (2 + 5 + gate, correction bias + 64 x 3 + 3 shared + inv_freq).
  CHECK(named_with(inventory, "language_model.model.layers.0.") == 11);
  CHECK(named_with(inventory, "language_model.model.layers.1.") == 205);
  // Tower + projector: 2 + 1 + 27 x 12 + 2 + 6 = 335, kornia's 443 less its 27 x 6 split q / k /
  // v tensors plus the 27 x 2 fused wqkv they came from.
  CHECK(named_with(inventory, "vision_tower.") + named_with(inventory, "multi_modal_projector.") ==
        335);
  // Parameters: text 1 + 10 + 26 x 204 + 1 + 1 = 5,317, vision 335: 5,652; 27 buffers.
  CHECK(parameter_tensors(inventory) == 5652);
  CHECK(buffer_count(inventory) == 27);
  CHECK(names_unique(inventory));
  // SOURCES-kimi_vl.md: text 15,960,110,208 + tower and projector 447,545,840 (kornia's exact
  // figure) = 16,407,656,048.
  CHECK(inventory_params(inventory) == 16'407'656'048);
  // The snapshot's 32,815,315,552 bytes: 2 x 16,407,656,048 + 27 x 32 x 4.
  CHECK(inventory_bytes(inventory) == 32'815'315'552);
}
