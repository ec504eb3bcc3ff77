// ERNIE 4.5 MoE's checkpoint names (src/checkpoint/naming_ernie_moe.cpp): transformers' Llama
// names under model.*, one tensor per expert and projection, the router mlp.gate in F32 beside
// mlp.moe_statics.e_score_correction_bias [1, E] (F32), and the MTP layer the -PT uploads carry
// as model.mtp_block.0.* with model.mtp_emb_norm.0, mtp_hidden_norm.0 and mtp_linear_proj.0.
// Names, shapes and counts are written by hand from Baidu's remote modeling_ernie4_5_moe.py,
// transformers' modeling_ernie4_5_moe.py, vLLM's / SGLang's loaders and the MTP key list quoted
// from the released index (tests/data/configs/SOURCES-ernie4_5_moe-names.md, SOURCES-glm-ernie.md).
#include <cstdint>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_of;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

}  // namespace

TEST_CASE("ERNIE-4.5-21B-A3B-PT: model.layers.N, mlp.moe_statics, model.mtp_block.0: 5504 tensors",
          "[checkpoint][names][ernie4_5_moe]") {
  const Inventory inventory = fixture_inventory("unsloth--ERNIE-4.5-21B-A3B-PT.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // H 2560, 28 layers, 20 heads of 128 (q, o: 2560 x 2560), 4 kv heads (k, v: 512 rows), no bias;
  // layer 0 a dense SwiGLU of 12288; layers 1-27 64 experts of 1536, shared experts 2 x 1536 =
  // 3072, router [64, 2560]; vocab 103424, the head tied (not stored).
  check_tensor(inventory, "model.embed_tokens.weight", {103424, 2560});
  check_tensor(inventory, "model.norm.weight", {2560});
  check_tensor(inventory, "model.layers.0.input_layernorm.weight", {2560});
  check_tensor(inventory, "model.layers.0.post_attention_layernorm.weight", {2560});
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.weight", {2560, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {512, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.v_proj.weight", {512, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.o_proj.weight", {2560, 2560});
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {12288, 2560});
  check_tensor(inventory, "model.layers.0.mlp.up_proj.weight", {12288, 2560});
  check_tensor(inventory, "model.layers.0.mlp.down_proj.weight", {2560, 12288});
  const std::string moe = "model.layers.27.mlp.";
  check_tensor(inventory, moe + "gate.weight", {64, 2560});
  check_tensor(inventory, moe + "moe_statics.e_score_correction_bias", {1, 64});
  check_tensor(inventory, "model.layers.1.mlp.moe_statics.e_score_correction_bias", {1, 64});
  check_tensor(inventory, moe + "experts.0.gate_proj.weight", {1536, 2560});
  check_tensor(inventory, moe + "experts.63.up_proj.weight", {1536, 2560});
  check_tensor(inventory, moe + "experts.63.down_proj.weight", {2560, 1536});
  check_tensor(inventory, moe + "shared_experts.gate_proj.weight", {3072, 2560});
  check_tensor(inventory, moe + "shared_experts.up_proj.weight", {3072, 2560});
  check_tensor(inventory, moe + "shared_experts.down_proj.weight", {2560, 3072});
  // The router and its correction bias in F32, everything else BF16 (torch_dtype bfloat16).
  CHECK(dtype_of(inventory, moe + "gate.weight") == "F32");
  CHECK(dtype_of(inventory, moe + "moe_statics.e_score_correction_bias") == "F32");
  CHECK(dtype_of(inventory, moe + "experts.0.gate_proj.weight") == "BF16");
  CHECK(dtype_of(inventory, moe + "shared_experts.down_proj.weight") == "BF16");
  CHECK(dtype_of(inventory, "model.embed_tokens.weight") == "BF16");
  // The MTP layer: a dense decoder layer (attention + SwiGLU of intermediate_size) and its three
  // extras; mtp_linear_proj is nn.Linear(2h, h): [2560, 5120].
  const std::string mtp = "model.mtp_block.0.";
  check_tensor(inventory, mtp + "input_layernorm.weight", {2560});
  check_tensor(inventory, mtp + "post_attention_layernorm.weight", {2560});
  check_tensor(inventory, mtp + "self_attn.q_proj.weight", {2560, 2560});
  check_tensor(inventory, mtp + "self_attn.k_proj.weight", {512, 2560});
  check_tensor(inventory, mtp + "self_attn.v_proj.weight", {512, 2560});
  check_tensor(inventory, mtp + "self_attn.o_proj.weight", {2560, 2560});
  check_tensor(inventory, mtp + "mlp.gate_proj.weight", {12288, 2560});
  check_tensor(inventory, mtp + "mlp.up_proj.weight", {12288, 2560});
  check_tensor(inventory, mtp + "mlp.down_proj.weight", {2560, 12288});
  check_tensor(inventory, "model.mtp_emb_norm.0.weight", {2560});
  check_tensor(inventory, "model.mtp_hidden_norm.0.weight", {2560});
  check_tensor(inventory, "model.mtp_linear_proj.0.weight", {2560, 5120});
  CHECK(dtype_of(inventory, "model.mtp_linear_proj.0.weight") == "BF16");
  // Nothing of other spellings: no MoE in layer 0, no stacked experts, no bias under the router,
  // no MTP as layers.28 or mtp.layers, no stored head (tied), no dense MLP in the MTP as experts.
  check_absent(inventory, "model.layers.0.mlp.gate.weight");
  check_absent(inventory, "model.layers.0.mlp.experts.0.gate_proj.weight");
  check_absent(inventory, "model.layers.1.mlp.gate_proj.weight");
  check_absent(inventory, "model.layers.1.mlp.experts.64.gate_proj.weight");
  check_absent(inventory, "model.layers.1.mlp.experts.gate_up_proj");
  check_absent(inventory, "model.layers.1.mlp.gate.e_score_correction_bias");
  check_absent(inventory, "model.layers.28.self_attn.q_proj.weight");
  check_absent(inventory, "mtp.layers.0.self_attn.q_proj.weight");
  check_absent(inventory, "model.mtp_block.0.mlp.gate.weight");
  check_absent(inventory, "model.mtp_block.1.self_attn.q_proj.weight");
  check_absent(inventory, "lm_head.weight");
  // embed_tokens + norm; 28 layers x (2 norms + q, k, v, o); layer 0's 3 MLP Linears; 27 MoE
  // layers x (64 experts x 3 + 3 shared + router + correction bias); MTP: 9 in mtp_block.0 + 3.
  CHECK(inventory.tensors.size() ==
        static_cast<std::size_t>(2 + 28 * 6 + 3 + 27 * (64 * 3 + 3 + 1 + 1) + 9 + 3));
  CHECK(inventory.tensors.size() == 5504);
  // The hand-derived count (SOURCES-glm-ernie.md, row 226): embed 103424 x 2560, norm 2560,
  // 28 x (2 x 2560 norms + 2 x 2560^2 + 2 x 512 x 2560), layer 0 3 x 12288 x 2560, 27 MoE layers
  // x (64 x 3 x 1536 x 2560 + 3 x 3072 x 2560 + 64 x 2560 + 64), MTP (attention, 2 norms,
  // 3 x 12288 x 2560, 2 norms, 2560 x 5120).
  const std::int64_t attention = 2 * 2560LL * 2560 + 2 * 512LL * 2560;
  const std::int64_t main_model =
      103424LL * 2560 + 2560 + 28 * (2 * 2560 + attention) + 3 * 12288LL * 2560 +
      27 * (64 * 3 * 1536LL * 2560 + 3 * 3072LL * 2560 + 64 * 2560 + 64);
  const std::int64_t mtp_params =
      attention + 2 * 2560 + 3 * 12288LL * 2560 + 2 * 2560 + 2560LL * 5120;
  CHECK(main_model == 21'825'437'888);
  CHECK(mtp_params == 123'217'920);
  CHECK(inventory_params(inventory) == main_model + mtp_params);
  CHECK(inventory_params(inventory) == 21'948'655'808);
  // BF16 at 2 bytes, the 27 routers [64, 2560] and correction biases [1, 64] in F32 at 4.
  CHECK(inventory_bytes(inventory) == 2 * 21'948'655'808LL + 2 * 27 * (64 * 2560 + 64));
  CHECK(inventory_bytes(inventory) == 43'906'162'432);
}
