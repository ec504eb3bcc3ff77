// GLM-4V's checkpoint names (src/checkpoint/naming_glm4v.cpp): the text model under
// model.language_model.*, lm_head.weight at the top, the tower under model.visual.* with its
// Conv3d patch embed, post_conv_layernorm, learned position table, Conv2d downsample and SwiGLU
// merger; GLM-4.5V's experts one tensor per expert and projection, no MTP layer
// (tests/data/configs/SOURCES-glm4v-names.md: the official Megatron-to-HF converters, vLLM's
// glm4_1v.py mapper and GLM-4.5V's 18,106-tensor shard scan). Shapes are written by hand from the
// configs' hyperparameters (SOURCES-glm4v.md); counts are derived in the comments.
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
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

// The GLM-4V tower of every release (vision D 1536, 24 blocks, 12 heads, patch 14 over 2 frames,
// image 336, merge 2, O = text hidden 4096) with the merger's SwiGLU of width `merger`.
void check_glm_tower(const Inventory& inventory, std::int64_t merger) {
  check_tensor(inventory, "model.visual.patch_embed.proj.weight", {1536, 3, 2, 14, 14});
  check_tensor(inventory, "model.visual.patch_embed.proj.bias", {1536});
  check_tensor(inventory, "model.visual.post_conv_layernorm.weight", {1536});
  // (336 / 14)^2 = 576 positions.
  check_tensor(inventory, "model.visual.embeddings.position_embedding.weight", {576, 1536});
  check_tensor(inventory, "model.visual.blocks.0.norm1.weight", {1536});
  check_tensor(inventory, "model.visual.blocks.23.norm2.weight", {1536});
  check_tensor(inventory, "model.visual.blocks.23.attn.qkv.weight", {3 * 1536, 1536});
  check_absent(inventory, "model.visual.blocks.23.attn.qkv.bias");  // attention_bias false
  check_tensor(inventory, "model.visual.blocks.23.attn.proj.weight", {1536, 1536});
  check_absent(inventory, "model.visual.blocks.23.attn.proj.bias");
  // Glm4VisionMlp is out_hidden_size (4096) wide.
  check_tensor(inventory, "model.visual.blocks.23.mlp.gate_proj.weight", {4096, 1536});
  check_tensor(inventory, "model.visual.blocks.23.mlp.up_proj.weight", {4096, 1536});
  check_tensor(inventory, "model.visual.blocks.23.mlp.down_proj.weight", {1536, 4096});
  check_absent(inventory, "model.visual.blocks.24.norm1.weight");
  check_tensor(inventory, "model.visual.post_layernorm.weight", {1536});
  check_tensor(inventory, "model.visual.downsample.weight", {4096, 1536, 2, 2});
  check_tensor(inventory, "model.visual.downsample.bias", {4096});
  check_tensor(inventory, "model.visual.merger.proj.weight", {4096, 4096});
  check_tensor(inventory, "model.visual.merger.post_projection_norm.weight", {4096});
  check_tensor(inventory, "model.visual.merger.post_projection_norm.bias", {4096});
  check_tensor(inventory, "model.visual.merger.gate_proj.weight", {merger, 4096});
  check_tensor(inventory, "model.visual.merger.up_proj.weight", {merger, 4096});
  check_tensor(inventory, "model.visual.merger.down_proj.weight", {4096, merger});
  check_absent(inventory, "visual.blocks.0.attn.qkv.weight");
  check_absent(inventory, "model.model.visual.downsample.weight");
}

// Tower tensors: 24 blocks x 7 (norm1, norm2, attn.qkv, attn.proj, mlp.gate/up/down_proj) = 168,
// plus 13 outside them: patch_embed.proj weight + bias (2), post_conv_layernorm (1),
// embeddings.position_embedding (1), post_layernorm (1), downsample weight + bias (2),
// merger.proj (1), merger.post_projection_norm weight + bias (2), merger.gate/up/down_proj (3).
constexpr std::int64_t k_tower_tensors = 24 * 7 + 13;  // 181

}  // namespace

TEST_CASE("GLM-4.6V-Flash: model.language_model.* and model.visual.*: 704 tensors",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("zai-org--GLM-4.6V-Flash.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text (H 4096, 40 layers, 32 heads of 128, 2 kv heads, I 13696, vocab 151552, untied).
  check_tensor(inventory, "model.language_model.embed_tokens.weight", {151552, 4096});
  check_tensor(inventory, "lm_head.weight", {151552, 4096});
  check_absent(inventory, "model.language_model.lm_head.weight");
  check_tensor(inventory, "model.language_model.norm.weight", {4096});
  const std::string layer = "model.language_model.layers.39.";
  check_tensor(inventory, layer + "input_layernorm.weight", {4096});
  check_tensor(inventory, layer + "post_self_attn_layernorm.weight", {4096});
  check_tensor(inventory, layer + "post_attention_layernorm.weight", {4096});
  check_tensor(inventory, layer + "post_mlp_layernorm.weight", {4096});
  check_tensor(inventory, layer + "self_attn.q_proj.weight", {4096, 4096});
  check_tensor(inventory, layer + "self_attn.q_proj.bias", {4096});
  check_tensor(inventory, layer + "self_attn.k_proj.weight", {2 * 128, 4096});
  check_tensor(inventory, layer + "self_attn.v_proj.bias", {2 * 128});
  check_tensor(inventory, layer + "self_attn.o_proj.weight", {4096, 4096});
  check_absent(inventory, layer + "self_attn.o_proj.bias");
  check_tensor(inventory, layer + "mlp.gate_up_proj.weight", {2 * 13696, 4096});
  check_tensor(inventory, layer + "mlp.down_proj.weight", {4096, 13696});
  check_absent(inventory, "model.language_model.layers.40.input_layernorm.weight");
  check_absent(inventory, "model.layers.0.self_attn.q_proj.weight");
  // The merger's SwiGLU is the vision intermediate_size, 13696 here.
  check_glm_tower(inventory, 13696);
  CHECK(dtype_of(inventory, "model.visual.downsample.weight") == "BF16");
  // Text: embed_tokens, norm, lm_head + 40 layers x 13 (4 norms, q/k/v weights and biases,
  // o_proj, gate_up_proj, down_proj) = 3 + 520 = 523; tower 181: 704.
  CHECK(inventory.tensors.size() ==
        static_cast<std::size_t>(3 + 40 * (4 + 6 + 1 + 2) + k_tower_tensors));
  CHECK(inventory.tensors.size() == 704);
  // The Hub's safetensors total (SOURCES-glm4v.md), all BF16: 2 bytes each (about 20.6 GB).
  CHECK(inventory_params(inventory) == 10'292'777'472);
  CHECK(inventory_bytes(inventory) == 2 * 10'292'777'472LL);
}

TEST_CASE("GLM-4.1V-9B-Thinking: top-level text keys and the same 704 tensors",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("zai-org--GLM-4.1V-9B-Thinking.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.language_model.layers.0.mlp.gate_up_proj.weight",
               {2 * 13696, 4096});
  check_tensor(inventory, "model.language_model.layers.0.post_mlp_layernorm.weight", {4096});
  check_tensor(inventory, "lm_head.weight", {151552, 4096});
  check_glm_tower(inventory, 13696);
  // GLM-4.6V-Flash's shapes (SOURCES-glm4v.md): 3 + 40 x 13 + 181.
  CHECK(inventory.tensors.size() == 704);
  CHECK(inventory_params(inventory) == 10'292'777'472);
}

TEST_CASE("GLM-4.5V: per-expert MoE under model.language_model.* and no MTP layer: 18106 tensors",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("zai-org--GLM-4.5V.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text (H 4096, 46 layers, 96 heads of 128, 8 kv heads, dense I 10944 on layer 0, then 128
  // experts of 1408 and one shared expert of 1408).
  check_tensor(inventory, "model.language_model.embed_tokens.weight", {151552, 4096});
  check_tensor(inventory, "lm_head.weight", {151552, 4096});
  check_tensor(inventory, "model.language_model.norm.weight", {4096});
  check_tensor(inventory, "model.language_model.layers.0.self_attn.q_proj.weight", {12288, 4096});
  check_tensor(inventory, "model.language_model.layers.0.self_attn.q_proj.bias", {12288});
  check_tensor(inventory, "model.language_model.layers.45.self_attn.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "model.language_model.layers.45.self_attn.v_proj.bias", {1024});
  check_tensor(inventory, "model.language_model.layers.45.self_attn.o_proj.weight", {4096, 12288});
  check_tensor(inventory, "model.language_model.layers.45.input_layernorm.weight", {4096});
  check_tensor(inventory, "model.language_model.layers.45.post_attention_layernorm.weight", {4096});
  check_absent(inventory, "model.language_model.layers.45.post_mlp_layernorm.weight");
  check_tensor(inventory, "model.language_model.layers.0.mlp.gate_proj.weight", {10944, 4096});
  check_tensor(inventory, "model.language_model.layers.0.mlp.up_proj.weight", {10944, 4096});
  check_tensor(inventory, "model.language_model.layers.0.mlp.down_proj.weight", {4096, 10944});
  check_absent(inventory, "model.language_model.layers.0.mlp.gate.weight");
  check_tensor(inventory, "model.language_model.layers.1.mlp.gate.weight", {128, 4096});
  check_tensor(inventory, "model.language_model.layers.1.mlp.gate.e_score_correction_bias", {128});
  CHECK(dtype_of(inventory, "model.language_model.layers.1.mlp.gate.e_score_correction_bias") ==
        "F32");
  check_tensor(inventory, "model.language_model.layers.1.mlp.experts.0.gate_proj.weight",
               {1408, 4096});
  check_tensor(inventory, "model.language_model.layers.45.mlp.experts.127.up_proj.weight",
               {1408, 4096});
  check_tensor(inventory, "model.language_model.layers.45.mlp.experts.127.down_proj.weight",
               {4096, 1408});
  check_absent(inventory, "model.language_model.layers.45.mlp.experts.128.up_proj.weight");
  check_absent(inventory, "model.language_model.layers.1.mlp.experts.gate_up_proj");
  check_tensor(inventory, "model.language_model.layers.45.mlp.shared_experts.gate_proj.weight",
               {1408, 4096});
  check_tensor(inventory, "model.language_model.layers.45.mlp.shared_experts.down_proj.weight",
               {4096, 1408});
  // No MTP layer: GLM-4.5-Air's model.layers.46 has no counterpart here.
  check_absent(inventory, "model.language_model.layers.46.eh_proj.weight");
  check_absent(inventory, "model.language_model.layers.46.input_layernorm.weight");
  // The merger's SwiGLU is the vision intermediate_size, 10944 here.
  check_glm_tower(inventory, 10944);
  // Text: 3 (embed_tokens, norm, lm_head) + 46 x 9 (2 norms, q/k/v weights and biases, o_proj)
  // + 3 (layer 0's dense MLP) + 45 x 389 (128 x 3 experts, 3 shared, gate.weight, the correction
  // bias) = 17,925; tower 181: 18,106, the shard scan's count (SOURCES-glm4v.md).
  CHECK(inventory.tensors.size() ==
        static_cast<std::size_t>(3 + 46 * 9 + 3 + 45 * (128 * 3 + 3 + 2) + k_tower_tensors));
  CHECK(inventory.tensors.size() == 18'106);
  CHECK(inventory_params(inventory) == 107'710'933'120);
  // BF16 but for the 45 x 128 F32 correction biases: 2 bytes a parameter + 2 more for each of
  // those 5,760 = 215,421,877,760 bytes (SOURCES-glm4v.md).
  CHECK(inventory_bytes(inventory) == 2 * 107'710'933'120LL + 2 * 45 * 128);
  CHECK(inventory_bytes(inventory) == 215'421'877'760LL);
}

TEST_CASE("glm46v (transformers' GLM-4.6V wrapper type) saves the same names",
          "[checkpoint][names]") {
  // modular_glm46v.py: Glm46VModel keeps Glm4vModel's `visual` and `language_model`; the decoder
  // follows text_config.model_type (GLM-4.5V's config is glm4v_moe_text).
  nlohmann::json config = nlohmann::json::parse(trace::test::config_text("zai-org--GLM-4.5V.json"));
  config["model_type"] = "glm46v";
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
  CHECK(inventory.complete);
  check_tensor(inventory, "model.language_model.layers.45.mlp.experts.127.down_proj.weight",
               {4096, 1408});
  check_tensor(inventory, "model.visual.downsample.weight", {4096, 1536, 2, 2});
  CHECK(inventory.tensors.size() == 18'106);
  CHECK(inventory_params(inventory) == 107'710'933'120);
}
