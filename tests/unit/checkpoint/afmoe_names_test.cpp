// AFMoE's checkpoint names (src/checkpoint/naming_afmoe.cpp): Arcee Trinity-Mini and
// Trinity-Nano-Preview in transformers' AfmoeForCausalLM module names: model.layers.N with four
// RMSNorms, self_attn.{q,k,v,o}_proj beside the output gate self_attn.gate_proj (stored apart,
// not fused into q_proj), per-head q_norm / k_norm, a dense SwiGLU in the first num_dense_layers,
// then mlp.router.gate, mlp.expert_bias (F32), mlp.shared_experts and mlp.experts.E one by one.
// Names, shapes and counts are written by hand from modeling_afmoe.py, vLLM's afmoe.py and the
// configs (tests/data/configs/SOURCES-afmoe-names.md, SOURCES-afmoe.md).
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
using trace::test::dtype_elements;
using trace::test::dtype_of;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

}  // namespace

TEST_CASE("Trinity-Mini (afmoe): gate_proj apart, router.gate, expert_bias: 12,031 tensors",
          "[checkpoint][names][afmoe]") {
  const Inventory inventory = fixture_inventory("arcee-ai--Trinity-Mini.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // V 200192, H 2048, 32 layers (2 dense of 6144, then 30 MoE), 32 query heads of 128 (4096
  // wide), 4 KV heads (512 wide), 128 routed experts of 1024, one shared expert of 1024.
  check_tensor(inventory, "model.embed_tokens.weight", {200192, 2048});
  check_tensor(inventory, "lm_head.weight", {200192, 2048});
  check_tensor(inventory, "model.norm.weight", {2048});
  for (const std::string layer : {"model.layers.0.", "model.layers.31."}) {
    check_tensor(inventory, layer + "input_layernorm.weight", {2048});
    check_tensor(inventory, layer + "post_attention_layernorm.weight", {2048});
    check_tensor(inventory, layer + "pre_mlp_layernorm.weight", {2048});
    check_tensor(inventory, layer + "post_mlp_layernorm.weight", {2048});
    check_tensor(inventory, layer + "self_attn.q_proj.weight", {4096, 2048});
    check_tensor(inventory, layer + "self_attn.gate_proj.weight", {4096, 2048});
    check_tensor(inventory, layer + "self_attn.k_proj.weight", {512, 2048});
    check_tensor(inventory, layer + "self_attn.v_proj.weight", {512, 2048});
    check_tensor(inventory, layer + "self_attn.o_proj.weight", {2048, 4096});
    check_tensor(inventory, layer + "self_attn.q_norm.weight", {128});
    check_tensor(inventory, layer + "self_attn.k_norm.weight", {128});
    check_absent(inventory, layer + "self_attn.q_proj.bias");
    check_absent(inventory, layer + "self_attn.gate_proj.bias");
  }
  // Layers 0 and 1: the dense SwiGLU.
  check_tensor(inventory, "model.layers.1.mlp.gate_proj.weight", {6144, 2048});
  check_tensor(inventory, "model.layers.1.mlp.up_proj.weight", {6144, 2048});
  check_tensor(inventory, "model.layers.1.mlp.down_proj.weight", {2048, 6144});
  check_absent(inventory, "model.layers.1.mlp.router.gate.weight");
  check_absent(inventory, "model.layers.1.mlp.expert_bias");
  // Layers 2 to 31: the MoE.
  for (const std::string mlp : {"model.layers.2.mlp.", "model.layers.31.mlp."}) {
    check_tensor(inventory, mlp + "router.gate.weight", {128, 2048});
    check_tensor(inventory, mlp + "expert_bias", {128});
    check_tensor(inventory, mlp + "shared_experts.gate_proj.weight", {1024, 2048});
    check_tensor(inventory, mlp + "shared_experts.up_proj.weight", {1024, 2048});
    check_tensor(inventory, mlp + "shared_experts.down_proj.weight", {2048, 1024});
    check_tensor(inventory, mlp + "experts.0.gate_proj.weight", {1024, 2048});
    check_tensor(inventory, mlp + "experts.127.up_proj.weight", {1024, 2048});
    check_tensor(inventory, mlp + "experts.127.down_proj.weight", {2048, 1024});
    check_absent(inventory, mlp + "experts.128.down_proj.weight");
    check_absent(inventory, mlp + "gate_proj.weight");
    // trace's own spellings of the router and its bias are not the checkpoint's.
    check_absent(inventory, mlp + "gate.weight");
    check_absent(inventory, mlp + "gate.e_score_correction_bias");
    check_absent(inventory, mlp + "router.gate.e_score_correction_bias");
  }
  check_absent(inventory, "model.layers.32.input_layernorm.weight");
  check_absent(inventory, "model.layers.0.self_attn.qkv_proj.weight");
  check_absent(inventory, "model.layers.2.mlp.experts.gate_up_proj");
  // expert_bias is the one F32 tensor (the Nano index's bytes, SOURCES-afmoe.md); the router and
  // the norms are BF16.
  CHECK(dtype_of(inventory, "model.layers.2.mlp.expert_bias") == "F32");
  CHECK(dtype_of(inventory, "model.layers.2.mlp.router.gate.weight") == "BF16");
  CHECK(dtype_of(inventory, "model.layers.2.self_attn.gate_proj.weight") == "BF16");
  CHECK(dtype_of(inventory, "model.norm.weight") == "BF16");
  CHECK(dtype_elements(inventory, "F32") == 30 * 128);
  CHECK(buffer_count(inventory) == 0);  // the rotary inv_freq buffers are non-persistent
  // Tensors: embed_tokens, norm, lm_head; 11 per layer (4 norms, q / gate / k / v / o, q_norm,
  // k_norm); 3 dense projections in each of 2 layers; router, expert_bias, 3 shared and 128 x 3
  // routed projections in each of 30 layers.
  CHECK(inventory.tensors.size() == 3 + 32 * 11 + 2 * 3 + 30 * (2 + 3 + 128 * 3));
  CHECK(inventory.tensors.size() == 12'031);
  // The published count (SOURCES-afmoe.md): 26,123,974,400, element by element.
  CHECK(inventory_params(inventory) == 26'123'974'400);
  // Bytes: two per element, four for the 30 x 128 expert_bias values.
  CHECK(inventory_bytes(inventory) == 2 * (26'123'974'400 - 30 * 128) + 4 * 30 * 128);
}

TEST_CASE("Trinity-Nano-Preview (afmoe): 21,631 tensors and the index's 12,240,020,480 bytes",
          "[checkpoint][names][afmoe]") {
  const Inventory inventory =
      fixture_inventory("arcee-ai--Trinity-Nano-Preview.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // V 200192, H 1024, 56 layers (2 dense of 3072, then 54 MoE), 8 query heads of 128 (1024
  // wide), 2 KV heads (256 wide), 128 routed experts of 256, one shared expert of 256.
  check_tensor(inventory, "model.embed_tokens.weight", {200192, 1024});
  check_tensor(inventory, "lm_head.weight", {200192, 1024});
  check_tensor(inventory, "model.layers.55.self_attn.q_proj.weight", {1024, 1024});
  check_tensor(inventory, "model.layers.55.self_attn.gate_proj.weight", {1024, 1024});
  check_tensor(inventory, "model.layers.55.self_attn.k_proj.weight", {256, 1024});
  check_tensor(inventory, "model.layers.55.self_attn.v_proj.weight", {256, 1024});
  check_tensor(inventory, "model.layers.55.self_attn.o_proj.weight", {1024, 1024});
  check_tensor(inventory, "model.layers.55.self_attn.k_norm.weight", {128});
  check_tensor(inventory, "model.layers.0.mlp.down_proj.weight", {1024, 3072});
  // The router's shape as the Neuron port's conversion test feeds it (SOURCES-afmoe-names.md).
  check_tensor(inventory, "model.layers.2.mlp.router.gate.weight", {128, 1024});
  check_tensor(inventory, "model.layers.2.mlp.expert_bias", {128});
  check_tensor(inventory, "model.layers.55.mlp.shared_experts.down_proj.weight", {1024, 256});
  check_tensor(inventory, "model.layers.55.mlp.experts.127.gate_proj.weight", {256, 1024});
  check_absent(inventory, "model.layers.56.input_layernorm.weight");
  CHECK(dtype_of(inventory, "model.layers.55.mlp.expert_bias") == "F32");
  CHECK(dtype_elements(inventory, "F32") == 54 * 128);
  CHECK(inventory.tensors.size() == 3 + 56 * 11 + 2 * 3 + 54 * (2 + 3 + 128 * 3));
  CHECK(inventory.tensors.size() == 21'631);
  // The index at revision b576b32b: 6,120,003,328 parameters in 12,240,020,480 bytes, which is
  // 2 x (6,120,003,328 - 6,912) + 4 x 6,912: the 54 x 128 = 6,912 expert_bias values in F32.
  CHECK(inventory_params(inventory) == 6'120'003'328);
  CHECK(inventory_bytes(inventory) == 12'240'020'480);
}
