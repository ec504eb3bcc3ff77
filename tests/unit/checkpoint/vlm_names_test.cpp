// The vision-language models' checkpoint names (docs/checkpoint.md, "Naming"): Qwen2-VL and
// Qwen2.5-VL uploads keep the text model under model.* and the tower at the top as visual.* (saved
// before transformers 4.52); Qwen3-VL's under model.language_model.* and model.visual.*, with the
// MoE's experts stacked [E, H, 2I] (tests/data/configs/SOURCES-vlm.md, "Checkpoint names");
// Gemma 3's language_model.model.* beside vision_tower.vision_model.* and a bare projector matrix;
// Llama 4's language_model.model.* with feed_forward.* and vision_model.model.layers.N
// (docs/catalog.md's sources); the LLaVA and PaliGemma wrappers' language_model.model.* beside a
// CLIP or SigLIP tower under vision_tower.vision_model.*, Idefics3's and SmolVLM's
// model.text_model.* beside model.vision_model.* (SOURCES-llava.md, SOURCES-vlm-wrappers.md,
// SOURCES-paligemma-idefics3.md). Shapes are
// written by hand from the modeling code and the configs' hyperparameters; counts and bytes are
// derived in the comments or published (cited).
#include <string>
#include <vector>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::inventory_params;

Inventory inventory_of(const std::string& config) {
  return trace::checkpoint::build_inventory(trace::test::fixture(config));
}

}  // namespace

TEST_CASE("Qwen2-VL-7B: model.* and a top-level visual.* tower", "[checkpoint][names]") {
  // modeling_qwen2_vl.py: tower D 1280, 32 blocks, MLP 4 x 1280 (fc1 / fc2, QuickGELU), a
  // bias-free Conv3d of 14 x 14 patches over 2 frames, merger ln_q (LayerNorm) + mlp.0 / mlp.2
  // into the text width 3584.
  const Inventory inventory = inventory_of("Qwen--Qwen2-VL-7B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.bias", {3584});
  check_tensor(inventory, "lm_head.weight", {152064, 3584});
  check_tensor(inventory, "visual.patch_embed.proj.weight", {1280, 3, 2, 14, 14});
  check_absent(inventory, "visual.patch_embed.proj.bias");
  check_tensor(inventory, "visual.blocks.31.attn.qkv.weight", {3840, 1280});
  check_tensor(inventory, "visual.blocks.31.attn.proj.bias", {1280});
  check_tensor(inventory, "visual.blocks.31.mlp.fc1.weight", {5120, 1280});
  check_tensor(inventory, "visual.blocks.31.mlp.fc2.weight", {1280, 5120});
  check_tensor(inventory, "visual.blocks.0.norm1.bias", {1280});
  check_tensor(inventory, "visual.merger.ln_q.bias", {1280});
  check_tensor(inventory, "visual.merger.mlp.0.weight", {5120, 5120});
  check_tensor(inventory, "visual.merger.mlp.2.weight", {3584, 5120});
  check_absent(inventory, "model.visual.blocks.0.attn.qkv.weight");
  // Text: 28 layers x 12 (2 norms, q/k/v weights and biases, o, 3 MLP) + embedding, norm, head =
  // 339; tower: patch_embed 1 + 32 x 12 (2 LayerNorms x 2, 4 biased Linears x 2) + merger 6 = 391.
  CHECK(inventory.tensors.size() == 730);
}

TEST_CASE("Qwen2.5-VL-3B: RMSNorm blocks, a gated biased MLP, a tied head: 824 tensors",
          "[checkpoint][names]") {
  // modeling_qwen2_5_vl.py: norm1 / norm2 / merger.ln_q are RMSNorms (weight only), the MLP
  // gate_proj / up_proj / down_proj of 3420 with biases. The 3B ties its head: no lm_head.
  const Inventory inventory = inventory_of("Qwen--Qwen2.5-VL-3B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "visual.blocks.0.norm1.weight", {1280});
  check_absent(inventory, "visual.blocks.0.norm1.bias");
  check_tensor(inventory, "visual.blocks.0.mlp.gate_proj.bias", {3420});
  check_tensor(inventory, "visual.blocks.0.mlp.down_proj.weight", {1280, 3420});
  check_tensor(inventory, "visual.merger.ln_q.weight", {1280});
  check_absent(inventory, "visual.merger.ln_q.bias");
  check_tensor(inventory, "visual.merger.mlp.2.weight", {2048, 5120});
  check_absent(inventory, "lm_head.weight");
  // 36 x 12 + 2 text tensors + 1 + 32 x 12 (2 RMSNorms, qkv and proj x 2, 3 MLP x 2) + 5 tower
  // tensors = 824: the 824 parameter rows a strict-load script lists for the upload (file id
  // 69314427749, SOURCES-vlm.md).
  CHECK(inventory.tensors.size() == 824);
}

TEST_CASE("Qwen3-VL-8B: model.language_model.*, model.visual.* with DeepStack mergers",
          "[checkpoint][names]") {
  // modeling_qwen3_vl.py: tower D 1152, 27 blocks (linear_fc1 / linear_fc2 of 4304), patch_embed
  // with a bias, pos_embed 2304 x 1152, merger norm over D, three deepstack mergers whose norm is
  // over D x 2 x 2 = 4608, all into the text width 4096.
  const Inventory inventory = inventory_of("Qwen--Qwen3-VL-8B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.language_model.layers.35.self_attn.q_norm.weight", {128});
  check_tensor(inventory, "lm_head.weight", {151936, 4096});
  check_tensor(inventory, "model.visual.patch_embed.proj.bias", {1152});
  check_tensor(inventory, "model.visual.pos_embed.weight", {2304, 1152});
  check_tensor(inventory, "model.visual.blocks.26.mlp.linear_fc1.weight", {4304, 1152});
  check_tensor(inventory, "model.visual.merger.norm.weight", {1152});
  check_tensor(inventory, "model.visual.deepstack_merger_list.2.norm.weight", {4608});
  check_tensor(inventory, "model.visual.deepstack_merger_list.2.linear_fc2.weight", {4096, 4608});
  // Text 36 x 11 + 3 = 399; tower 2 + 1 + 27 x 12 + 6 + 3 x 6 = 351.
  CHECK(inventory.tensors.size() == 750);
  std::int64_t bytes = 0;
  for (const auto& tensor : inventory.tensors) bytes += tensor.bytes();
  CHECK(bytes == 17'534'247'392);  // the upload's index total_size (SOURCES-vlm.md)
}

TEST_CASE("Qwen3-VL-30B-A3B: stacked experts [E, H, 2I] and [E, I, H]", "[checkpoint][names]") {
  // 128 experts of 768 on H 2048, every layer sparse, no shared expert (llama.cpp's converter:
  // "Qwen3VL has transposed packed tensors"; Megatron-Bridge's [num_experts, mlp_in,
  // fused_gate_up_out]).
  const Inventory inventory = inventory_of("Qwen--Qwen3-VL-30B-A3B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.language_model.layers.0.mlp.gate.weight", {128, 2048});
  check_tensor(inventory, "model.language_model.layers.47.mlp.experts.gate_up_proj",
               {128, 2048, 1536});
  check_tensor(inventory, "model.language_model.layers.47.mlp.experts.down_proj", {128, 768, 2048});
  check_absent(inventory, "model.language_model.layers.0.mlp.experts.0.gate_proj.weight");
  // Text 48 x (2 norms, q/k/v/o, q/k norms, router, 2 stacked) + 3 = 531; tower 351.
  CHECK(inventory.tensors.size() == 882);
  CHECK(inventory_params(inventory) == 31'070'754'032);
}

TEST_CASE("Gemma 3 4B: vision_tower.vision_model.* and a bare projector matrix: 883 tensors",
          "[checkpoint][names]") {
  // transformers' convert_gemma3_weights_orbax_to_hf.py wrote Google's uploads: the text model
  // under language_model.model.* (head tied: no lm_head), SigLIP so400m (D 1152, 27 layers, MLP
  // 4304, 14 x 14 patches of 896-pixel images: 64 x 64 = 4096 positions), the projector's
  // mm_input_projection_weight [1152, 2560] (x @ W) and mm_soft_emb_norm [1152].
  const Inventory inventory = inventory_of("google--gemma-3-4b-it.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {262208, 2560});
  check_tensor(inventory, "language_model.model.layers.0.self_attn.q_proj.weight", {2048, 2560});
  check_tensor(inventory, "language_model.model.layers.0.self_attn.q_norm.weight", {256});
  check_absent(inventory, "language_model.lm_head.weight");
  check_tensor(inventory, "vision_tower.vision_model.embeddings.patch_embedding.weight",
               {1152, 3, 14, 14});
  check_tensor(inventory, "vision_tower.vision_model.embeddings.patch_embedding.bias", {1152});
  check_tensor(inventory, "vision_tower.vision_model.embeddings.position_embedding.weight",
               {4096, 1152});
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.26.self_attn.out_proj.weight",
               {1152, 1152});
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.26.mlp.fc1.weight",
               {4304, 1152});
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.26.layer_norm2.bias", {1152});
  check_tensor(inventory, "vision_tower.vision_model.post_layernorm.weight", {1152});
  check_tensor(inventory, "multi_modal_projector.mm_input_projection_weight", {1152, 2560});
  check_tensor(inventory, "multi_modal_projector.mm_soft_emb_norm.weight", {1152});
  // Text 34 layers x 13 (4 norms, q/k/v/o, q/k norms, 3 MLP) + embedding + norm = 444; tower
  // 27 x 16 + 2 + 1 + 2 = 437; projector 2: 883 (the count a test over the real download
  // expects; SOURCES-vlm.md).
  CHECK(inventory.tensors.size() == 883);
}

TEST_CASE(
    "Llama 4 Scout: language_model.model.* with feed_forward.*, vision_model.*: 1,133 tensors",
    "[checkpoint][names]") {
  // modeling_llama4.py (no conversion mapping): 48 MoE layers of 16 experts of 8192 on H 5120,
  // stacked [E, H, 2I] / [E, I, H] without ".weight", a router and a shared expert; the tower
  // (D 1408, 34 layers, MLP 5632, 14 x 14 patches of 336 pixels: 577 positions with the class
  // token) with bare class_embedding / positional_embedding_vlm; the adapter and projector
  // bias-free.
  const Inventory inventory = trace::checkpoint::build_inventory(trace::parse_model_config(
      trace::test::catalog_text("meta-llama/Llama-4-Scout-17B-16E-Instruct")));
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.layers.47.feed_forward.router.weight", {16, 5120});
  check_tensor(inventory, "language_model.model.layers.47.feed_forward.experts.gate_up_proj",
               {16, 5120, 16384});
  check_tensor(inventory, "language_model.model.layers.47.feed_forward.experts.down_proj",
               {16, 8192, 5120});
  check_tensor(inventory,
               "language_model.model.layers.0.feed_forward.shared_expert.down_proj.weight",
               {5120, 8192});
  check_tensor(inventory, "language_model.lm_head.weight", {202048, 5120});
  check_tensor(inventory, "vision_model.patch_embedding.linear.weight", {1408, 3 * 14 * 14});
  check_tensor(inventory, "vision_model.class_embedding", {1408});
  check_tensor(inventory, "vision_model.positional_embedding_vlm", {577, 1408});
  check_tensor(inventory, "vision_model.model.layers.33.self_attn.o_proj.bias", {1408});
  check_tensor(inventory, "vision_model.model.layers.33.mlp.fc2.weight", {1408, 5632});
  check_tensor(inventory, "vision_model.vision_adapter.mlp.fc1.weight", {4096, 5632});
  check_tensor(inventory, "multi_modal_projector.linear_1.weight", {5120, 4096});
  check_absent(inventory, "vision_model.vision_adapter.mlp.fc1.bias");
  // Text 48 x 12 (2 norms, q/k/v/o, router, 2 stacked, 3 shared) + embedding, norm, head = 579;
  // tower 34 x 16 + 9 (patch, class, positions, 2 x 2 norms, adapter 2) = 553; projector 1.
  CHECK(inventory.tensors.size() == 1'133);
  CHECK(inventory_params(inventory) ==
        108'641'793'536);  // the Hub's safetensors total (docs/catalog.md)
}

TEST_CASE("LLaVA-1.5-7B: language_model.model.* and the whole CLIP tower: 686 tensors",
          "[checkpoint][names]") {
  // convert_llava_weights_to_hf.py wrote the llava-hf uploads: Vicuna-7B (Llama: V 32064, H 4096,
  // I 11008, 32 layers) under language_model.model.* with language_model.lm_head; CLIP ViT-L/14 at
  // 336 pixels (D 1024, 24 layers, MLP 4096: 24 x 24 + 1 = 577 positions) under
  // vision_tower.vision_model.*, every layer and post_layernorm stored though the projector reads
  // layer 23's output; multi_modal_projector.linear_1 [4096, 1024] and linear_2 [4096, 4096],
  // both biased. SOURCES-llava.md.
  const Inventory inventory = inventory_of("llava-hf--llava-1.5-7b-hf.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {32064, 4096});
  check_tensor(inventory, "language_model.model.layers.31.mlp.down_proj.weight", {4096, 11008});
  check_tensor(inventory, "language_model.lm_head.weight", {32064, 4096});
  check_absent(inventory, "lm_head.weight");
  check_tensor(inventory, "vision_tower.vision_model.embeddings.patch_embedding.weight",
               {1024, 3, 14, 14});
  check_absent(inventory, "vision_tower.vision_model.embeddings.patch_embedding.bias");
  check_tensor(inventory, "vision_tower.vision_model.embeddings.class_embedding", {1024});
  check_tensor(inventory, "vision_tower.vision_model.embeddings.position_embedding.weight",
               {577, 1024});
  check_tensor(inventory, "vision_tower.vision_model.pre_layrnorm.bias", {1024});
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.23.self_attn.out_proj.bias",
               {1024});
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.23.mlp.fc1.weight",
               {4096, 1024});
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.23.layer_norm1.weight", {1024});
  check_tensor(inventory, "vision_tower.vision_model.post_layernorm.weight", {1024});
  check_absent(inventory, "vision_tower.vision_model.encoder.post_layernorm.weight");
  check_tensor(inventory, "multi_modal_projector.linear_1.weight", {4096, 1024});
  check_tensor(inventory, "multi_modal_projector.linear_2.bias", {4096});
  // Text 32 x 9 + embedding, norm, head = 291; tower 3 + 2 + 24 x 16 + 2 = 391; projector 4: the
  // 686 tensors, 7,063,427,072 parameters and 14,126,854,144 bytes (all F16) of an audit of the
  // upload's safetensors headers (SOURCES-llava.md).
  CHECK(inventory.tensors.size() == 686);
  CHECK(inventory_params(inventory) == 7'063'427'072);
  std::int64_t bytes = 0;
  for (const auto& tensor : inventory.tensors) bytes += tensor.bytes();
  CHECK(bytes == 14'126'854'144);
}

TEST_CASE("LLaVA-NeXT adds a bare image_newline", "[checkpoint][names]") {
  // llava-v1.6-mistral-7b-hf: Mistral-7B (I 14336, 8 KV heads) under language_model.model.*, the
  // same CLIP tower and projector, and LlavaNextForConditionalGeneration's image_newline [4096]
  // stored under its own name: 686 + 1 tensors.
  const Inventory next = inventory_of("llava-hf--llava-v1.6-mistral-7b-hf.reconstructed.json");
  CHECK(next.complete);
  check_tensor(next, "image_newline", {4096});
  check_tensor(next, "language_model.model.layers.0.self_attn.k_proj.weight", {1024, 4096});
  check_tensor(next, "language_model.model.layers.0.mlp.gate_proj.weight", {14336, 4096});
  CHECK(next.tensors.size() == 687);
  // pixtral-12b's Pixtral tower is named since other_towers: wrapper_names_test.cpp.
}

TEST_CASE("LLaVA-OneVision 0.5B: a SigLIP tower under vision_tower.vision_model.*: 716 tensors",
          "[checkpoint][names]") {
  // The llava-hf conversion (transformers 4.45): Qwen2-0.5B (H 896, 24 layers, q/k/v biased, head
  // tied: no language_model.lm_head) under language_model.model.*; SigLIP so400m less its last
  // layer (D 1152, 26 layers, MLP 4304, 14 x 14 patches of 384 pixels: 27 x 27 = 729 positions;
  // a biased patch Conv2d, no class token, no pre-norm, vision_use_head false: no pooling head);
  // the projector and image_newline. SOURCES-vlm-wrappers.md.
  const Inventory inventory =
      inventory_of("llava-hf--llava-onevision-qwen2-0.5b-ov-hf.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.layers.23.self_attn.q_proj.bias", {896});
  check_absent(inventory, "language_model.lm_head.weight");
  check_tensor(inventory, "vision_tower.vision_model.embeddings.patch_embedding.bias", {1152});
  check_tensor(inventory, "vision_tower.vision_model.embeddings.position_embedding.weight",
               {729, 1152});
  check_absent(inventory, "vision_tower.vision_model.embeddings.class_embedding");
  check_absent(inventory, "vision_tower.vision_model.pre_layrnorm.weight");
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.25.mlp.fc2.weight",
               {1152, 4304});
  check_absent(inventory, "vision_tower.vision_model.encoder.layers.26.mlp.fc2.weight");
  check_absent(inventory, "vision_tower.vision_model.head.probe");
  check_tensor(inventory, "multi_modal_projector.linear_1.weight", {896, 1152});
  check_tensor(inventory, "image_newline", {896});
  // Text 24 x 12 + embedding + norm = 290; tower 3 + 26 x 16 + 2 = 421; projector 4 and
  // image_newline: 716. Parameters: the hand derivation's 893,675,552 (SOURCES-vlm-wrappers.md).
  CHECK(inventory.tensors.size() == 716);
  CHECK(inventory_params(inventory) == 893'675'552);
}

TEST_CASE("PaliGemma 3B: language_model.model.*, a SigLIP tower and one projector Linear",
          "[checkpoint][names]") {
  // Google's uploads (transformers 4.41 to 4.47): Gemma-2B (H 2048, 18 layers, the head tied: no
  // lm_head) under language_model.model.*; SigLIP so400m at 224 pixels (D 1152, 27 layers, MLP
  // 4304, 16 x 16 = 256 positions, a biased patch Conv2d, no pooling head); the biased
  // multi_modal_projector.linear [2048, 1152]. SOURCES-paligemma-idefics3.md, "Checkpoint tensor
  // names".
  const Inventory inventory = inventory_of("google--paligemma-3b-pt-224.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {257216, 2048});
  check_absent(inventory, "language_model.lm_head.weight");
  check_tensor(inventory, "vision_tower.vision_model.embeddings.position_embedding.weight",
               {256, 1152});
  check_tensor(inventory, "vision_tower.vision_model.encoder.layers.26.self_attn.out_proj.weight",
               {1152, 1152});
  check_tensor(inventory, "vision_tower.vision_model.post_layernorm.bias", {1152});
  check_tensor(inventory, "multi_modal_projector.linear.weight", {2048, 1152});
  check_tensor(inventory, "multi_modal_projector.linear.bias", {2048});
  // Text 18 x 9 + embedding + norm = 164; tower 2 + 1 + 27 x 16 + 2 = 437; projector 2: 603.
  // The published model.num_parameters(), 2,923,466,480 (SOURCES-paligemma-idefics3.md).
  CHECK(inventory.tensors.size() == 603);
  CHECK(inventory_params(inventory) == 2'923'466'480);
}

TEST_CASE("SmolVLM: model.text_model.*, model.vision_model.* and a bias-free connector",
          "[checkpoint][names]") {
  // Idefics3ForConditionalGeneration (SmolVLM-256M: SmolLM2-135M's Llama, H 576, 30 layers, an
  // untied lm_head at the top; a SigLIP tower of D 768, 12 layers, 16 x 16 patches of 512
  // pixels: 1,024 positions) and the pixel-shuffle connector's
  // model.connector.modality_projection.proj [576, 768 x 4 x 4], no bias.
  const Inventory small = inventory_of("HuggingFaceTB--SmolVLM-256M-Instruct.reconstructed.json");
  CHECK(small.complete);
  check_tensor(small, "model.text_model.layers.29.mlp.down_proj.weight", {576, 1536});
  check_tensor(small, "lm_head.weight", {49280, 576});
  check_tensor(small, "model.vision_model.embeddings.patch_embedding.weight", {768, 3, 16, 16});
  check_tensor(small, "model.vision_model.encoder.layers.11.mlp.fc1.bias", {3072});
  check_tensor(small, "model.vision_model.post_layernorm.weight", {768});
  check_tensor(small, "model.connector.modality_projection.proj.weight", {576, 12288});
  check_absent(small, "model.connector.modality_projection.proj.bias");
  // Text 30 x 9 + embedding, norm, head = 273; tower 3 + 12 x 16 + 2 = 197; connector 1: 471.
  // The Hub's safetensors count, 256,484,928.
  CHECK(small.tensors.size() == 471);
  CHECK(inventory_params(small) == 256'484'928);
  // SmolVLM2 (model_type smolvlm) stores the same names: the 500M's published 507,482,304.
  const Inventory video = inventory_of("HuggingFaceTB--SmolVLM2-500M-Video-Instruct.json");
  CHECK(video.complete);
  CHECK(inventory_params(video) == 507'482'304);
}
