// Per family, as more_family_names_test.cpp: a few tensor names and shapes the published
// checkpoints hold, written by hand from the source named in each test (transformers' modeling
// code, vLLM's and llama.cpp's loaders, tests/data/configs/SOURCES-*.md) and the fixture's
// hyperparameters; the inventory must list them. Namings: src/checkpoint/naming_decoders.cpp.
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::ExpectedTensor;
using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_of;
using trace::test::find_tensor;
using trace::test::fixture_inventory;

}  // namespace

TEST_CASE("VaultGemma: Gemma 2's model.* names without the post-norms", "[checkpoint][names]") {
  // modular_vaultgemma.py (SOURCES-vaultgemma.md); vaultgemma-1b: hidden 1152, 4 heads x
  // head_dim 256 = 1024 query width, 4 kv heads -> k_proj [1024, 1152], o_proj [1152, 1024];
  // GeGLU intermediate 6912; 26 layers (0..25); attention_bias false; tied head.
  const Inventory inventory = fixture_inventory("google--vaultgemma-1b.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {256000, 1152});
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.weight", {1024, 1152});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {1024, 1152});
  check_tensor(inventory, "model.layers.25.self_attn.o_proj.weight", {1152, 1024});
  check_tensor(inventory, "model.layers.25.mlp.gate_proj.weight", {6912, 1152});
  check_tensor(inventory, "model.layers.25.mlp.down_proj.weight", {1152, 6912});
  check_tensor(inventory, "model.layers.25.input_layernorm.weight", {1152});
  check_tensor(inventory, "model.layers.25.pre_feedforward_layernorm.weight", {1152});
  check_tensor(inventory, "model.norm.weight", {1152});
  // VaultGemmaDecoderLayer deletes both post-norms; no bias; the head is the embedding.
  check_absent(inventory, "model.layers.0.post_attention_layernorm.weight");
  check_absent(inventory, "model.layers.0.post_feedforward_layernorm.weight");
  check_absent(inventory, "model.layers.0.self_attn.q_proj.bias");
  check_absent(inventory, "model.layers.26.input_layernorm.weight");
  check_absent(inventory, "lm_head.weight");
  CHECK(inventory.tensors.size() == 236);  // embed + 26 x (4 attention + 3 MLP + 2 norms) + norm
}

TEST_CASE("Code World Model: Llama's model.* names", "[checkpoint][names]") {
  // modular_cwm.py (SOURCES-cwm.md); facebook/cwm: hidden 6144, 48 heads x 128 = 6144, 8 kv heads
  // x 128 = 1024, q/k/v/o never biased, intermediate 21504, 64 layers (0..63), untied head.
  const Inventory inventory = fixture_inventory("facebook--cwm.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {128256, 6144});
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.weight", {6144, 6144});
  check_tensor(inventory, "model.layers.0.self_attn.v_proj.weight", {1024, 6144});
  check_tensor(inventory, "model.layers.63.self_attn.o_proj.weight", {6144, 6144});
  check_tensor(inventory, "model.layers.63.mlp.up_proj.weight", {21504, 6144});
  check_tensor(inventory, "model.layers.63.mlp.down_proj.weight", {6144, 21504});
  check_tensor(inventory, "model.layers.63.post_attention_layernorm.weight", {6144});
  check_tensor(inventory, "lm_head.weight", {128256, 6144});
  check_absent(inventory, "model.layers.0.self_attn.k_proj.bias");
  check_absent(inventory, "model.layers.64.input_layernorm.weight");
  CHECK(inventory.tensors.size() == 579);  // embed + 64 x (4 + 3 + 2) + norm + lm_head
}

TEST_CASE("Hunyuan-A13B: mlp.gate.wg, mlp.shared_mlp and per-expert projections",
          "[checkpoint][names]") {
  // modular_hunyuan_v1_moe.py, vLLM hunyuan_v1.py, llama.cpp HunYuanMoEModel
  // (SOURCES-hunyuan_v1_moe.md); Hunyuan-A13B-Instruct: hidden 4096, 32 heads x 128, 8 kv heads
  // x 128 = 1024, per-head query_layernorm / key_layernorm [128], 64 experts of 3072, one shared
  // MLP of intermediate_size 3072 x num_shared_expert 1, 32 layers (0..31), tied head.
  const Inventory inventory =
      fixture_inventory("tencent--Hunyuan-A13B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {128167, 4096});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "model.layers.0.self_attn.query_layernorm.weight", {128});
  check_tensor(inventory, "model.layers.31.self_attn.key_layernorm.weight", {128});
  check_tensor(inventory, "model.layers.0.mlp.gate.wg.weight", {64, 4096});
  check_tensor(inventory, "model.layers.0.mlp.shared_mlp.gate_proj.weight", {3072, 4096});
  check_tensor(inventory, "model.layers.31.mlp.shared_mlp.down_proj.weight", {4096, 3072});
  check_tensor(inventory, "model.layers.31.mlp.experts.63.up_proj.weight", {3072, 4096});
  check_tensor(inventory, "model.layers.31.mlp.experts.63.down_proj.weight", {4096, 3072});
  check_absent(inventory, "model.layers.0.mlp.gate.weight");
  check_absent(inventory, "model.layers.0.mlp.shared_experts.gate_proj.weight");
  check_absent(inventory, "model.layers.0.mlp.experts.64.up_proj.weight");
  // The tied head: a second copy some uploads keep, a buffer, never a parameter.
  const ExpectedTensor* head = find_tensor(inventory, "lm_head.weight");
  REQUIRE(head != nullptr);
  CHECK(head->buffer);
  CHECK(head->shape == std::vector<std::int64_t>{128167, 4096});
  // embed + 32 x (4 attention + 2 QK-norms + 2 norms + wg + 3 shared + 64 x 3) + norm + head copy
  CHECK(inventory.tensors.size() == 6531);
}

TEST_CASE("dots.llm1: Qwen3 attention, DeepSeek-V3 MoE under model.*", "[checkpoint][names]") {
  // modular_dots1.py, llama.cpp Dots1Model (SOURCES-dots1-names.md); dots.llm1.inst: hidden
  // 4096, 32 heads x 128, 32 kv heads, per-head q_norm / k_norm [128]; layer 0 dense (10944),
  // layers 1..61 128 experts of 1408, 2 shared experts fused as one MLP of 2 x 1408 = 2816, a
  // router with an F32 e_score_correction_bias; untied head.
  const Inventory inventory = fixture_inventory("rednote-hilab--dots.llm1.inst.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {4096, 4096});
  check_tensor(inventory, "model.layers.0.self_attn.q_norm.weight", {128});
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {10944, 4096});
  check_tensor(inventory, "model.layers.1.mlp.gate.weight", {128, 4096});
  check_tensor(inventory, "model.layers.61.mlp.gate.e_score_correction_bias", {128});
  CHECK(dtype_of(inventory, "model.layers.61.mlp.gate.e_score_correction_bias") == "F32");
  check_tensor(inventory, "model.layers.61.mlp.experts.127.down_proj.weight", {4096, 1408});
  check_tensor(inventory, "model.layers.61.mlp.shared_experts.gate_proj.weight", {2816, 4096});
  check_tensor(inventory, "lm_head.weight", {152064, 4096});
  check_absent(inventory, "model.layers.0.mlp.gate.weight");
  check_absent(inventory, "model.layers.1.mlp.gate_proj.weight");
  check_absent(inventory, "model.layers.1.mlp.shared_expert.gate_proj.weight");
  // layer 0: 4 + 2 + 2 + 3 = 11; MoE layer: 4 + 2 + 2 + gate + bias + 128 x 3 + 3 = 397;
  // 11 + 61 x 397 + embed + norm + lm_head.
  CHECK(inventory.tensors.size() == 24231);
}

TEST_CASE("FlexOlmo: OLMo 2 post-norms and OLMoE's per-expert MoE", "[checkpoint][names]") {
  // modeling_flex_olmo.py, vLLM flex_olmo.py (SOURCES-flex_olmo.md); FlexOlmo-7x7B-1T: hidden
  // 4096, 32 heads x 128, 32 kv heads, q_norm / k_norm over the whole 4096 width, 7 experts of
  // 11008, 32 layers (0..31), untied head, stored in float32.
  const Inventory inventory = fixture_inventory("allenai--FlexOlmo-7x7B-1T.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_norm.weight", {4096});
  check_tensor(inventory, "model.layers.0.self_attn.k_norm.weight", {4096});
  check_tensor(inventory, "model.layers.0.post_attention_layernorm.weight", {4096});
  check_tensor(inventory, "model.layers.31.post_feedforward_layernorm.weight", {4096});
  check_tensor(inventory, "model.layers.0.mlp.gate.weight", {7, 4096});
  check_tensor(inventory, "model.layers.31.mlp.experts.6.gate_proj.weight", {11008, 4096});
  check_tensor(inventory, "model.layers.31.mlp.experts.6.down_proj.weight", {4096, 11008});
  check_tensor(inventory, "lm_head.weight", {100352, 4096});
  CHECK(dtype_of(inventory, "model.layers.31.mlp.experts.6.up_proj.weight") == "F32");
  check_absent(inventory, "model.layers.0.input_layernorm.weight");
  check_absent(inventory, "model.layers.0.mlp.experts.7.gate_proj.weight");
  // embed + 32 x (4 attention + 2 QK-norms + 2 norms + gate + 7 x 3) + norm + lm_head
  CHECK(inventory.tensors.size() == 963);
}

TEST_CASE("GLM-4.7-Flash: MLA, MoE and the MTP layer as model.layers.47", "[checkpoint][names]") {
  // modular_glm4_moe_lite.py and the Hub's tensor table (SOURCES-glm4_moe_lite.md): hidden 2048,
  // 20 heads; q_lora 768 -> q_b_proj [20 x (192 + 64) = 5120, 768]; kv_lora 512 + rope 64 ->
  // kv_a_proj_with_mqa [576, 2048]; kv_b_proj [20 x (192 + 256) = 8960, 512]; o_proj [2048,
  // 20 x 256]; layer 0 dense (10240), layers 1..46 64 experts of 1536 and one shared of 1536;
  // num_nextn_predict_layers 1: the MTP layer is stored after the 47 main layers.
  const Inventory inventory = fixture_inventory("unsloth--GLM-4.7-Flash.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_a_proj.weight", {768, 2048});
  check_tensor(inventory, "model.layers.0.self_attn.q_a_layernorm.weight", {768});
  check_tensor(inventory, "model.layers.0.self_attn.q_b_proj.weight", {5120, 768});
  check_tensor(inventory, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight", {576, 2048});
  check_tensor(inventory, "model.layers.0.self_attn.kv_a_layernorm.weight", {512});
  check_tensor(inventory, "model.layers.0.self_attn.kv_b_proj.weight", {8960, 512});
  check_tensor(inventory, "model.layers.0.self_attn.o_proj.weight", {2048, 5120});
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {10240, 2048});
  check_tensor(inventory, "model.layers.46.mlp.gate.weight", {64, 2048});
  check_tensor(inventory, "model.layers.46.mlp.gate.e_score_correction_bias", {64});
  check_tensor(inventory, "model.layers.46.mlp.experts.63.down_proj.weight", {2048, 1536});
  check_tensor(inventory, "model.layers.46.mlp.shared_experts.up_proj.weight", {1536, 2048});
  check_tensor(inventory, "lm_head.weight", {154880, 2048});
  // The MTP layer (DeepSeek-V3's layout): a full MoE layer plus eh_proj [H, 2H], enorm, hnorm,
  // shared_head.{norm, head} and its own embed_tokens.
  check_tensor(inventory, "model.layers.47.eh_proj.weight", {2048, 4096});
  check_tensor(inventory, "model.layers.47.enorm.weight", {2048});
  check_tensor(inventory, "model.layers.47.hnorm.weight", {2048});
  check_tensor(inventory, "model.layers.47.shared_head.norm.weight", {2048});
  check_tensor(inventory, "model.layers.47.shared_head.head.weight", {154880, 2048});
  check_tensor(inventory, "model.layers.47.embed_tokens.weight", {154880, 2048});
  check_tensor(inventory, "model.layers.47.self_attn.kv_b_proj.weight", {8960, 512});
  check_tensor(inventory, "model.layers.47.mlp.experts.63.up_proj.weight", {1536, 2048});
  check_absent(inventory, "mtp.layers.0.mlp.gate.weight");
  check_absent(inventory, "model.layers.48.input_layernorm.weight");
  CHECK(inventory.main_layers == 47);
  // 9 per layer (2 norms + 7 MLA) + 3 dense or 197 MoE (gate, bias, 192 experts, 3 shared):
  // 12 + 46 x 206 + MTP 206 + 6 + embed, norm, lm_head = the Hub's 9,703.
  CHECK(inventory.tensors.size() == 9703);
}
