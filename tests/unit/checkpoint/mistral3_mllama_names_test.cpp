// Mistral 3 and Mllama checkpoint names (src/checkpoint/naming_mistral3_mllama.cpp): the
// wrappers' text models under language_model.model.* with language_model.lm_head; Mistral 3's
// Pixtral tower under vision_tower.transformer.layers.N and its patch-merger projector, the
// Ministral 3 uploads' FP8 text Linears with their scalar scales; Mllama's cross-attention
// layers, gated tiled position tables and two vision encoders. Names, shapes and counts are
// written by hand from transformers' modeling and conversion code and the fixtures'
// hyperparameters (tests/data/configs/SOURCES-mistral3-mllama-names.md); the parameter totals
// are the published ones (SOURCES-ministral3.md, SOURCES-validation-configs-2.md, SOURCES-vlm.md).
#include <cstdint>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_of;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

// The Pixtral tower and projector every Mistral 3 fixture holds (Pixtral D 1024, 24 layers, MLP
// 4096, 14 x 14 patches; spatial merge 2; vision_feature_layer -1; no projector bias), into a
// text model `text` wide.
void check_pixtral(const Inventory& inventory, std::int64_t text) {
  check_tensor(inventory, "vision_tower.patch_conv.weight", {1024, 3, 14, 14});
  check_absent(inventory, "vision_tower.patch_conv.bias");
  check_tensor(inventory, "vision_tower.ln_pre.weight", {1024});
  check_tensor(inventory, "vision_tower.transformer.layers.0.attention_norm.weight", {1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.attention.k_proj.weight",
               {1024, 1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.attention.o_proj.weight",
               {1024, 1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.ffn_norm.weight", {1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.feed_forward.gate_proj.weight",
               {4096, 1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.feed_forward.up_proj.weight",
               {4096, 1024});
  check_tensor(inventory, "vision_tower.transformer.layers.23.feed_forward.down_proj.weight",
               {1024, 4096});
  check_absent(inventory, "vision_tower.transformer.layers.24.attention.q_proj.weight");
  check_absent(inventory, "vision_tower.transformer.layers.0.mlp.gate_proj.weight");
  check_tensor(inventory, "multi_modal_projector.norm.weight", {1024});
  // Linear(1024 x 2 x 2, 1024, bias=False): the 2 x 2 patches folded side by side.
  check_tensor(inventory, "multi_modal_projector.patch_merger.merging_layer.weight", {1024, 4096});
  check_tensor(inventory, "multi_modal_projector.linear_1.weight", {text, 1024});
  check_tensor(inventory, "multi_modal_projector.linear_2.weight", {text, text});
  check_absent(inventory, "multi_modal_projector.linear_1.bias");
  check_absent(inventory, "multi_modal_projector.linear_2.bias");
  // The tower and projector are in modules_to_not_convert: never FP8.
  CHECK(dtype_of(inventory, "vision_tower.transformer.layers.23.attention.q_proj.weight") ==
        "BF16");
  check_absent(inventory, "vision_tower.transformer.layers.23.attention.q_proj.weight_scale_inv");
  CHECK(dtype_of(inventory, "multi_modal_projector.linear_2.weight") == "BF16");
  // (The 0.52+ runtime names are not what the uploads hold.)
  check_absent(inventory, "model.vision_tower.patch_conv.weight");
  check_absent(inventory, "model.language_model.embed_tokens.weight");
}

}  // namespace

TEST_CASE("Ministral-3-14B-Instruct-2512: FP8 text Linears with scalar scales, a BF16 tower",
          "[checkpoint][names]") {
  // Text: H 5120, 40 layers, 32 x 128 queries (4096), 8 x 128 keys / values (1024), I 16384,
  // V 131072, untied. convert_ministral3_weights_to_hf.py with FP8Linear (weight_block_size
  // null, activation_scheme static): every text Linear is F8_E4M3 [out, in] with a 0-dim
  // weight_scale_inv and activation_scale; embeddings, norms and the head stay BF16.
  const Inventory inventory =
      fixture_inventory("mistralai--Ministral-3-14B-Instruct-2512.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {131072, 5120});
  check_tensor(inventory, "language_model.model.layers.0.input_layernorm.weight", {5120});
  check_tensor(inventory, "language_model.model.layers.0.post_attention_layernorm.weight", {5120});
  check_tensor(inventory, "language_model.model.layers.39.self_attn.q_proj.weight", {4096, 5120});
  check_tensor(inventory, "language_model.model.layers.39.self_attn.k_proj.weight", {1024, 5120});
  check_tensor(inventory, "language_model.model.layers.39.self_attn.o_proj.weight", {5120, 4096});
  check_tensor(inventory, "language_model.model.layers.39.mlp.down_proj.weight", {5120, 16384});
  check_tensor(inventory, "language_model.model.layers.39.self_attn.k_proj.weight_scale_inv", {});
  check_tensor(inventory, "language_model.model.layers.39.self_attn.k_proj.activation_scale", {});
  check_tensor(inventory, "language_model.model.layers.0.mlp.gate_proj.activation_scale", {});
  CHECK(dtype_of(inventory, "language_model.model.layers.39.self_attn.k_proj.weight") == "F8_E4M3");
  CHECK(dtype_of(inventory, "language_model.model.layers.39.self_attn.k_proj.weight_scale_inv") ==
        "F32");
  CHECK(dtype_of(inventory, "language_model.model.embed_tokens.weight") == "BF16");
  check_tensor(inventory, "language_model.model.norm.weight", {5120});
  check_tensor(inventory, "language_model.lm_head.weight", {131072, 5120});
  CHECK(dtype_of(inventory, "language_model.lm_head.weight") == "BF16");
  check_absent(inventory, "language_model.lm_head.weight_scale_inv");
  check_absent(inventory, "lm_head.weight");
  check_absent(inventory, "language_model.model.layers.40.self_attn.q_proj.weight");
  check_pixtral(inventory, 5120);
  // Text: 40 layers x (2 norms + 7 Linears x 3) = 920, + embed_tokens, norm, lm_head = 923;
  // tower: patch_conv, ln_pre + 24 x 9 = 218; projector 4: 1,145 tensors.
  CHECK(inventory.tensors.size() == 40 * (2 + 7 * 3) + 3 + 2 + 24 * 9 + 4);
  // "text 13,506,073,600 and vision + projector 438,958,080" (SOURCES-ministral3.md); the scales
  // hold no parameters.
  CHECK(inventory_params(inventory) == 13'506'073'600 + 438'958'080);
  // FP8: 40 x 304,087,040 Linear values at 1 byte, the other 1,781,550,080 parameters at 2,
  // 40 x 7 x 2 scalars at 4 (SOURCES-ministral3.md's 15,726,584,000).
  CHECK(inventory_bytes(inventory) == 40LL * 304'087'040 + 2LL * 1'781'550'080 + 4LL * 40 * 7 * 2);
}

TEST_CASE("Ministral-3-3B-Instruct-2512: tied, no lm_head stored", "[checkpoint][names]") {
  // H 3072, 26 layers, 32 x 128 queries (4096) from a 3072 residual, 8 kv heads, I 9216, tied.
  const Inventory inventory =
      fixture_inventory("mistralai--Ministral-3-3B-Instruct-2512.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {131072, 3072});
  check_tensor(inventory, "language_model.model.layers.25.self_attn.q_proj.weight", {4096, 3072});
  check_tensor(inventory, "language_model.model.layers.25.self_attn.o_proj.weight", {3072, 4096});
  check_tensor(inventory, "language_model.model.layers.25.mlp.up_proj.weight", {9216, 3072});
  check_tensor(inventory, "language_model.model.layers.25.mlp.up_proj.weight_scale_inv", {});
  check_absent(inventory, "language_model.lm_head.weight");
  check_absent(inventory, "lm_head.weight");
  check_pixtral(inventory, 3072);
  // 26 x 23 + embed_tokens, norm = 600; tower 218; projector 4: 822.
  CHECK(inventory.tensors.size() == 26 * (2 + 7 * 3) + 2 + 2 + 24 * 9 + 4);
  // Text 3,429,006,336 + tower 403,305,472 + projector 16,778,240 (SOURCES-ministral3.md).
  CHECK(inventory_params(inventory) == 3'849'090'048);
  // 26 x 116,391,936 FP8 values, the other 822,899,712 parameters in BF16, 364 F32 scalars: the
  // 4,671,991,216 bytes of the tree page's one 4.67 GB model.safetensors (SOURCES-ministral3.md).
  CHECK(inventory_bytes(inventory) == 4'671'991'216);
}

TEST_CASE("Magistral-Small-2509: a BF16 Mistral 3 with Mistral's text model",
          "[checkpoint][names]") {
  // The fixture is the base model's config without the bnb re-upload's quantization_config
  // (SOURCES-validation-configs-2.md, row 227): the BF16 checkpoint. Text: Mistral Small 3.x
  // (H 5120, 40 layers, 32 x 128 queries, 8 kv heads, I 32768, V 131072, untied).
  const Inventory inventory =
      fixture_inventory("unsloth--Magistral-Small-2509-unsloth-bnb-4bit.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "language_model.model.layers.0.mlp.gate_proj.weight", {32768, 5120});
  check_tensor(inventory, "language_model.model.layers.39.mlp.down_proj.weight", {5120, 32768});
  check_tensor(inventory, "language_model.model.layers.39.self_attn.v_proj.weight", {1024, 5120});
  check_tensor(inventory, "language_model.lm_head.weight", {131072, 5120});
  check_absent(inventory, "language_model.model.layers.0.mlp.gate_proj.weight_scale_inv");
  CHECK(dtype_of(inventory, "language_model.model.layers.0.mlp.gate_proj.weight") == "BF16");
  check_pixtral(inventory, 5120);
  // Text 40 x 9 + 3 = 363; tower 218; projector 4: 585, the parameter tensors transformers
  // loads for this architecture ("Loading weights: 585/585" for Devstral-Small-2-24B,
  // SOURCES-mistral3-mllama-names.md).
  CHECK(inventory.tensors.size() == 40 * 9 + 3 + 2 + 24 * 9 + 4);
  CHECK(inventory.tensors.size() == 585);
  // Mistral-Small-3.1 / 3.2's Hub total, 24,011,361,280, every tensor BF16.
  CHECK(inventory_params(inventory) == 24'011'361'280);
  CHECK(inventory_bytes(inventory) == 2 * 24'011'361'280LL);
}

TEST_CASE("Llama-3.2-11B-Vision: cross-attention layers, gated tile tables, two encoders",
          "[checkpoint][names]") {
  // modeling_mllama.py; text H 4096, 40 layers of which [3, 8, ..., 38] are cross-attention
  // layers, 32 / 8 heads x 128, I 14336, V 128256 (+ 8 table rows); vision D 1280, 32 local + 8
  // global layers, MLP 5120, 560 / 14 = 40 x 40 patches + a class token = 1601 positions, 4
  // tiles, 8 aspect ratios (9 table rows); vision output 1280 x 6 = 7680.
  const Inventory inventory =
      fixture_inventory("meta-llama--Llama-3.2-11B-Vision.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // nn.Embedding(vocab_size + 8, H): torch.Size([128264, 4096]) in the first shard.
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {128264, 4096});
  check_absent(inventory, "language_model.model.embed_tokens (8 rows past vocab_size).weight");
  check_tensor(inventory, "language_model.lm_head.weight", {128256, 4096});
  check_tensor(inventory, "language_model.model.norm.weight", {4096});
  // A self-attention layer: Llama's 9 tensors.
  check_tensor(inventory, "language_model.model.layers.4.self_attn.q_proj.weight", {4096, 4096});
  check_tensor(inventory, "language_model.model.layers.4.self_attn.v_proj.weight", {1024, 4096});
  check_absent(inventory, "language_model.model.layers.4.cross_attn.q_proj.weight");
  check_absent(inventory, "language_model.model.layers.4.cross_attn_attn_gate");
  // A cross-attention layer: no self_attn; cross_attn.{q,k,v,o}_proj (keys and values read the
  // projected image states, H wide), q_norm / k_norm over one head, two tanh gates [1].
  check_absent(inventory, "language_model.model.layers.3.self_attn.q_proj.weight");
  check_tensor(inventory, "language_model.model.layers.3.cross_attn.q_proj.weight", {4096, 4096});
  check_tensor(inventory, "language_model.model.layers.3.cross_attn.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "language_model.model.layers.3.cross_attn.o_proj.weight", {4096, 4096});
  check_tensor(inventory, "language_model.model.layers.3.cross_attn.q_norm.weight", {128});
  check_tensor(inventory, "language_model.model.layers.3.cross_attn.k_norm.weight", {128});
  check_tensor(inventory, "language_model.model.layers.3.cross_attn_attn_gate", {1});
  check_tensor(inventory, "language_model.model.layers.38.cross_attn_mlp_gate", {1});
  check_tensor(inventory, "language_model.model.layers.38.mlp.gate_proj.weight", {14336, 4096});
  check_tensor(inventory, "language_model.model.layers.38.post_attention_layernorm.weight", {4096});
  // The tower's tables and gates (bare nn.Parameters without ".weight", nn.Embeddings with it).
  check_tensor(inventory, "vision_model.patch_embedding.weight", {1280, 3, 14, 14});
  check_absent(inventory, "vision_model.patch_embedding.bias");
  check_tensor(inventory, "vision_model.class_embedding", {1280});
  check_tensor(inventory, "vision_model.gated_positional_embedding.embedding", {1601, 1280});
  check_tensor(inventory, "vision_model.gated_positional_embedding.gate", {1});
  check_tensor(inventory, "vision_model.gated_positional_embedding.tile_embedding.weight",
               {9, 4 * 1601 * 1280});
  check_tensor(inventory, "vision_model.pre_tile_positional_embedding.embedding.weight",
               {9, 4 * 1280});
  check_tensor(inventory, "vision_model.pre_tile_positional_embedding.gate", {1});
  check_tensor(inventory, "vision_model.post_tile_positional_embedding.embedding.weight",
               {9, 4 * 1280});
  check_tensor(inventory, "vision_model.post_tile_positional_embedding.gate", {1});
  check_tensor(inventory, "vision_model.layernorm_pre.weight", {1280});
  check_tensor(inventory, "vision_model.layernorm_post.bias", {1280});
  // Local encoder layers: LayerNorms, bias-free q/k/v/o, biased fc1 / fc2, no gates.
  check_tensor(inventory, "vision_model.transformer.layers.31.input_layernorm.bias", {1280});
  check_tensor(inventory, "vision_model.transformer.layers.31.self_attn.o_proj.weight",
               {1280, 1280});
  check_absent(inventory, "vision_model.transformer.layers.31.self_attn.o_proj.bias");
  check_tensor(inventory, "vision_model.transformer.layers.31.mlp.fc1.weight", {5120, 1280});
  check_tensor(inventory, "vision_model.transformer.layers.31.mlp.fc1.bias", {5120});
  check_tensor(inventory, "vision_model.transformer.layers.31.mlp.fc2.weight", {1280, 5120});
  check_absent(inventory, "vision_model.transformer.layers.32.mlp.fc2.weight");
  check_absent(inventory, "vision_model.transformer.layers.0.gate_attn");
  // Global layers: the same plus gate_attn / gate_ffn [1].
  check_tensor(inventory, "vision_model.global_transformer.layers.7.gate_attn", {1});
  check_tensor(inventory, "vision_model.global_transformer.layers.7.gate_ffn", {1});
  check_tensor(inventory,
               "vision_model.global_transformer.layers.7.post_attention_layernorm.weight", {1280});
  check_tensor(inventory, "vision_model.global_transformer.layers.7.mlp.fc2.bias", {1280});
  check_absent(inventory, "vision_model.global_transformer.layers.8.gate_attn");
  check_tensor(inventory, "multi_modal_projector.weight", {4096, 7680});
  check_tensor(inventory, "multi_modal_projector.bias", {4096});
  // Text: 32 x 9 + 8 x 13 (4 cross_attn Linears, 2 QK-norms, 2 gates, 2 norms, 3 MLP) +
  // embed_tokens, norm, lm_head = 395. Vision: patch_embedding, class_embedding, 3 gated
  // position tensors, 2 x 2 tile tensors, 2 x 2 LayerNorm tensors = 13; 32 x 12 local + 8 x 14
  // global layers = 496. Projector 2: 906 tensors.
  CHECK(inventory.tensors.size() == 32 * 9 + 8 * 13 + 3 + 13 + 32 * 12 + 8 * 14 + 2);
  // The published 10,670,220,835 (SOURCES-vlm.md), all BF16.
  CHECK(inventory_params(inventory) == 10'670'220'835);
  CHECK(inventory_bytes(inventory) == 2 * 10'670'220'835LL);
}
