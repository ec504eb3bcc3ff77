// LongCat-Flash's checkpoint names (src/checkpoint/naming_longcat.cpp): each of the 28 stored
// layers holds two sub-layers (self_attn.{0,1} MLA, mlps.{0,1} SwiGLU, input_layernorm.{0,1},
// post_attention_layernorm.{0,1}) and one shortcut MoE (mlp.router.classifier and
// e_score_correction_bias over 512 + 256 experts, the 256 zero-computation ones holding no
// weights; mlp.experts.E.{gate,up,down}_proj); one MTP layer as model.mtp.*. Names, shapes and
// counts are written by hand from vLLM's longcat_flash.py / longcat_flash_mtp.py, SGLang's
// LongCat NextN loader, Megatron-Bridge's LongCatFlashBridge and the config
// (tests/data/configs/SOURCES-longcat-names.md, SOURCES-longcat.md).
#include <cstdint>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::ExpectedTensor;
using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_of;
using trace::test::find_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

constexpr const char* k_chat = "meituan-longcat--LongCat-Flash-Chat.json";

// H 6144, 64 heads, q_lora 1536, kv_lora 512, qk 128 + 64, v 128 (SOURCES-longcat.md).
void check_mla(const Inventory& inventory, const std::string& at) {
  check_tensor(inventory, at + "q_a_proj.weight", {1536, 6144});
  check_tensor(inventory, at + "q_a_layernorm.weight", {1536});
  check_tensor(inventory, at + "q_b_proj.weight", {64 * (128 + 64), 1536});
  check_tensor(inventory, at + "kv_a_proj_with_mqa.weight", {512 + 64, 6144});
  check_tensor(inventory, at + "kv_a_layernorm.weight", {512});
  check_tensor(inventory, at + "kv_b_proj.weight", {64 * (128 + 128), 512});
  check_tensor(inventory, at + "o_proj.weight", {6144, 64 * 128});
}

// A dense SwiGLU of ffn_hidden_size 12288.
void check_dense(const Inventory& inventory, const std::string& at) {
  check_tensor(inventory, at + "gate_proj.weight", {12288, 6144});
  check_tensor(inventory, at + "up_proj.weight", {12288, 6144});
  check_tensor(inventory, at + "down_proj.weight", {6144, 12288});
}

}  // namespace

TEST_CASE("LongCat-Flash-Chat: model.layers.N.{self_attn,mlps}.{0,1}, mlp.router, model.mtp.*",
          "[checkpoint][names][longcat_flash]") {
  const Inventory inventory = fixture_inventory(k_chat);
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());

  check_tensor(inventory, "model.embed_tokens.weight", {131072, 6144});
  check_tensor(inventory, "model.norm.weight", {6144});
  check_tensor(inventory, "lm_head.weight", {131072, 6144});

  // Layer 27, the last stored layer: both sub-layers, then the shortcut MoE.
  const std::string layer = "model.layers.27.";
  for (const char* sub : {"0", "1"}) {
    check_tensor(inventory, layer + "input_layernorm." + sub + ".weight", {6144});
    check_tensor(inventory, layer + "post_attention_layernorm." + sub + ".weight", {6144});
    check_mla(inventory, layer + "self_attn." + sub + ".");
    check_dense(inventory, layer + "mlps." + sub + ".");
  }
  // The router over 512 routed + 256 zero-computation experts.
  check_tensor(inventory, layer + "mlp.router.classifier.weight", {512 + 256, 6144});
  check_tensor(inventory, layer + "mlp.router.e_score_correction_bias", {512 + 256});
  for (const char* expert : {"0", "511"}) {
    const std::string at = layer + "mlp.experts." + expert + ".";
    check_tensor(inventory, at + "gate_proj.weight", {2048, 6144});
    check_tensor(inventory, at + "up_proj.weight", {2048, 6144});
    check_tensor(inventory, at + "down_proj.weight", {6144, 2048});
  }
  // Layer 0 too (block 0 and block 1 of trace's graph).
  check_mla(inventory, "model.layers.0.self_attn.0.");
  check_mla(inventory, "model.layers.0.self_attn.1.");
  check_dense(inventory, "model.layers.0.mlps.1.");
  check_tensor(inventory, "model.layers.0.mlp.router.classifier.weight", {768, 6144});

  // The MTP layer (vLLM's longcat_flash_mtp.py names; no head of its own).
  const std::string mtp = "model.mtp.layers.0.";
  check_tensor(inventory, "model.mtp.embed_tokens.weight", {131072, 6144});
  check_tensor(inventory, mtp + "eh_proj.weight", {6144, 2 * 6144});
  check_tensor(inventory, mtp + "enorm.m.weight", {6144});
  check_tensor(inventory, mtp + "hnorm.m.weight", {6144});
  check_tensor(inventory, mtp + "input_layernorm.weight", {6144});
  check_tensor(inventory, mtp + "post_attention_layernorm.weight", {6144});
  check_mla(inventory, mtp + "self_attn.");
  check_dense(inventory, mtp + "transformer_layer.mlp.");
  check_tensor(inventory, "model.mtp.norm.weight", {6144});

  // No trace-internal spellings: 28 stored layers, not 56 blocks; no mlp.gate; no dense "mlp.".
  check_absent(inventory, "model.layers.28.input_layernorm.0.weight");
  check_absent(inventory, "model.layers.55.self_attn.1.o_proj.weight");
  check_absent(inventory, "model.layers.0.mlp.gate.weight");
  check_absent(inventory, "model.layers.0.mlp.gate.e_score_correction_bias");
  check_absent(inventory, "model.layers.0.mlp.gate_proj.weight");
  check_absent(inventory, "model.layers.0.mlp.experts.512.gate_proj.weight");
  check_absent(inventory, "model.mtp.layers.0.mlp.gate_proj.weight");
  check_absent(inventory, "mtp.layers.0.eh_proj.weight");
  check_absent(inventory, "model.mtp.layers.0.enorm.weight");
  check_absent(inventory, "model.mtp.lm_head.weight");

  // Dtypes: BF16 (the config has no torch_dtype; SOURCES-longcat.md); the router's classifier at
  // BF16 and its correction bias in F32, each also accepted in the other (no published header).
  CHECK(dtype_of(inventory, layer + "mlp.experts.0.gate_proj.weight") == "BF16");
  CHECK(dtype_of(inventory, layer + "self_attn.1.kv_b_proj.weight") == "BF16");
  CHECK(dtype_of(inventory, layer + "mlp.router.classifier.weight") == "BF16");
  CHECK(dtype_of(inventory, layer + "mlp.router.e_score_correction_bias") == "F32");
  CHECK(find_tensor(inventory, layer + "mlp.router.classifier.weight")->also_stored_as == "F32");
  CHECK(find_tensor(inventory, layer + "mlp.router.e_score_correction_bias")->also_stored_as ==
        "BF16");
  CHECK(find_tensor(inventory, layer + "mlps.0.gate_proj.weight")->also_stored_as.empty());

  // Tensors: per layer 4 norms + 2 x 7 MLA + 2 x 3 dense + 2 router + 512 x 3 experts = 1562;
  // embed_tokens, norm, lm_head; MTP: embed_tokens, eh_proj, enorm.m, hnorm.m, 2 norms, 7 MLA,
  // 3 dense, norm = 17.
  CHECK(inventory.tensors.size() ==
        static_cast<std::size_t>(28 * (4 + 2 * 7 + 2 * 3 + 2 + 512 * 3) + 3 + 17));
  CHECK(inventory.tensors.size() == 43'756);
  std::int64_t buffers = 0;
  for (const ExpectedTensor& tensor : inventory.tensors) buffers += tensor.buffer ? 1 : 0;
  CHECK(buffers == 0);
  // The published total (SOURCES-longcat.md).
  CHECK(inventory_params(inventory) == 561'862'880'256);
  // Bytes: 2 a value, the 28 x 768 correction-bias values 4.
  CHECK(inventory_bytes(inventory) == 2 * 561'862'880'256LL + 2 * (28LL * 768));
  CHECK(inventory_bytes(inventory) == 1'123'725'803'520);
}
