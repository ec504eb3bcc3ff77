// Per family, as more_family_names_test.cpp: tensor names and shapes the published checkpoints of
// the families naming_custom_layouts.cpp names hold, written by hand from the source in each
// test (tests/data/configs/SOURCES-*.md) and the fixture's hyperparameters.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::find_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_params;

}  // namespace

TEST_CASE("OPT: model.decoder.*, learned positions offset by 2, fc1/fc2, stored head copy",
          "[checkpoint][names]") {
  // modeling_opt.py as facebook/opt-125m stores it (SOURCES-opt.md): vocab 50272, hidden 768
  // (word_embed_proj_dim 768: no project_in / project_out), 12 heads, ffn_dim 3072, 12 layers
  // (0..11), max_position_embeddings 2048 -> 2048 + 2 = 2050 position rows; every Linear and
  // LayerNorm biased; do_layer_norm_before true, so a final_layer_norm; lm_head.weight is the tied
  // embedding stored again.
  const Inventory inventory = fixture_inventory("facebook--opt-125m.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.decoder.embed_tokens.weight", {50272, 768});
  check_tensor(inventory, "model.decoder.embed_positions.weight", {2050, 768});
  check_tensor(inventory, "model.decoder.layers.0.self_attn.q_proj.weight", {768, 768});
  check_tensor(inventory, "model.decoder.layers.0.self_attn.q_proj.bias", {768});
  check_tensor(inventory, "model.decoder.layers.11.self_attn.out_proj.weight", {768, 768});
  check_tensor(inventory, "model.decoder.layers.0.self_attn_layer_norm.bias", {768});
  check_tensor(inventory, "model.decoder.layers.11.fc1.weight", {3072, 768});
  check_tensor(inventory, "model.decoder.layers.11.fc1.bias", {3072});
  check_tensor(inventory, "model.decoder.layers.11.fc2.weight", {768, 3072});
  check_tensor(inventory, "model.decoder.layers.11.final_layer_norm.weight", {768});
  check_tensor(inventory, "model.decoder.final_layer_norm.weight", {768});
  const auto* head = find_tensor(inventory, "lm_head.weight");
  REQUIRE(head != nullptr);
  CHECK(head->shape == std::vector<std::int64_t>{50272, 768});
  CHECK(head->buffer);
  check_absent(inventory, "model.decoder.layers.0.self_attn.o_proj.weight");
  check_absent(inventory, "model.decoder.layers.0.mlp.fc1.weight");
  // 12 x (4 Linears + 2 LayerNorms + fc1 + fc2, weight and bias each = 16) + embed_tokens +
  // embed_positions + final_layer_norm (2) = 196 parameters, and the head copy: 197 tensors.
  CHECK(inventory.tensors.size() == 197);
  // 50272 x 768 + 2050 x 768 + 12 x (4 x 590,592 + 2,362,368 + 2,360,064 + 3,072) + 1,536 =
  // 125,239,296, the count of OPT-125m's parameters (SOURCES-opt.md).
  CHECK(inventory_params(inventory) == 125239296);
}

TEST_CASE("OPT-350m: project_in / project_out at the shapes OPTDecoder builds",
          "[checkpoint][names]") {
  // facebook/opt-350m: word_embed_proj_dim 512 != hidden 1024, so bias-free project_in [1024, 512]
  // and project_out [512, 1024]; the rest is spelled as OPT-125m: embed_tokens 512 wide,
  // embed_positions hidden wide (2050 x 1024), ffn_dim 4096, 24 layers (0..23),
  // do_layer_norm_before false, so no final_layer_norm. 331,196,416 parameters
  // (SOURCES-gpt-families.md). Its upload spells them decoder.* (Naming::bare_prefix).
  const Inventory inventory = fixture_inventory("facebook--opt-350m.json");
  CHECK(inventory.complete);
  CHECK(inventory_params(inventory) == 331'196'416);
  check_tensor(inventory, "model.decoder.project_in.weight", {1024, 512});
  check_tensor(inventory, "model.decoder.project_out.weight", {512, 1024});
  check_absent(inventory, "model.decoder.project_in.bias");
  check_tensor(inventory, "model.decoder.embed_tokens.weight", {50272, 512});
  check_tensor(inventory, "model.decoder.embed_positions.weight", {2050, 1024});
  check_tensor(inventory, "model.decoder.layers.23.fc1.weight", {4096, 1024});
  check_absent(inventory, "model.decoder.final_layer_norm.weight");
}

TEST_CASE("Falcon-H1: mamba beside self_attn, feed_forward, final_layernorm",
          "[checkpoint][names]") {
  // modeling_falcon_h1.py (SOURCES-falcon_h1.md); Falcon-H1-0.5B-Base: hidden 1024, 8 heads x
  // head_dim 64 = 512 query rows, 2 kv heads x 64 = 128; the mixer's d_ssm 1536 in 24 heads,
  // d_state 128, 1 group, d_conv 4: conv channels 1536 + 2 x 128 = 1792, in_proj rows
  // 1536 + 1792 + 24 = 3352; mamba_conv_bias true, mamba_proj_bias / projectors_bias false,
  // mamba_rms_norm false (no mamba.norm); intermediate 2048; 36 layers (0..35); vocab 32784,
  // untied.
  const Inventory inventory = fixture_inventory("tiiuae--Falcon-H1-0.5B-Base.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {32784, 1024});
  check_tensor(inventory, "model.layers.0.input_layernorm.weight", {1024});
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.weight", {512, 1024});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {128, 1024});
  check_tensor(inventory, "model.layers.0.self_attn.o_proj.weight", {1024, 512});
  check_tensor(inventory, "model.layers.0.mamba.in_proj.weight", {3352, 1024});
  check_tensor(inventory, "model.layers.0.mamba.conv1d.weight", {1792, 1, 4});
  check_tensor(inventory, "model.layers.0.mamba.conv1d.bias", {1792});
  check_tensor(inventory, "model.layers.35.mamba.A_log", {24});
  check_tensor(inventory, "model.layers.35.mamba.D", {24});
  check_tensor(inventory, "model.layers.35.mamba.dt_bias", {24});
  check_tensor(inventory, "model.layers.35.mamba.out_proj.weight", {1024, 1536});
  check_tensor(inventory, "model.layers.35.pre_ff_layernorm.weight", {1024});
  check_tensor(inventory, "model.layers.35.feed_forward.gate_proj.weight", {2048, 1024});
  check_tensor(inventory, "model.layers.35.feed_forward.down_proj.weight", {1024, 2048});
  check_tensor(inventory, "model.final_layernorm.weight", {1024});
  check_tensor(inventory, "lm_head.weight", {32784, 1024});
  check_absent(inventory, "model.layers.0.mamba.norm.weight");
  check_absent(inventory, "model.layers.0.mamba.in_proj.bias");
  check_absent(inventory, "model.layers.0.mlp.gate_proj.weight");
  // 36 x (4 attention + 7 mixer + 3 feed_forward + 2 norms) + embed_tokens + final_layernorm +
  // lm_head = 579 tensors holding 521,411,104 parameters (SOURCES-falcon-h1-zamba2.md).
  CHECK(inventory.tensors.size() == 579);
  CHECK(inventory_params(inventory) == 521411104);
}

TEST_CASE("MiniCPM3: model.*, DeepSeek-V2's MLA names under self_attn, tied head",
          "[checkpoint][names]") {
  // MiniCPM3's modeling (SOURCES-minicpm3.md); MiniCPM3-4B: hidden 2560, 40 heads, q_lora_rank
  // 768, kv_lora_rank 256, qk_nope 64 + qk_rope 32 = 96 per query head, v_head_dim 64 (absent:
  // qk_nope_head_dim = 2560 / 40 under both defaults); q_b_proj 40 x 96 = 3840 rows,
  // kv_a_proj_with_mqa 256 + 32 = 288, kv_b_proj 40 x (64 + 64) = 5120, o_proj from 40 x 64 =
  // 2560; intermediate 6400; 62 layers (0..61); vocab 73448, tied (no lm_head).
  const Inventory inventory = fixture_inventory("openbmb--MiniCPM3-4B.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {73448, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.q_a_proj.weight", {768, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.q_a_layernorm.weight", {768});
  check_tensor(inventory, "model.layers.0.self_attn.q_b_proj.weight", {3840, 768});
  check_tensor(inventory, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight", {288, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.kv_a_layernorm.weight", {256});
  check_tensor(inventory, "model.layers.61.self_attn.kv_b_proj.weight", {5120, 256});
  check_tensor(inventory, "model.layers.61.self_attn.o_proj.weight", {2560, 2560});
  check_tensor(inventory, "model.layers.61.mlp.gate_proj.weight", {6400, 2560});
  check_tensor(inventory, "model.layers.61.mlp.down_proj.weight", {2560, 6400});
  check_tensor(inventory, "model.layers.61.post_attention_layernorm.weight", {2560});
  check_tensor(inventory, "model.norm.weight", {2560});
  check_absent(inventory, "model.layers.0.self_attn.q_proj.weight");
  check_absent(inventory, "lm_head.weight");
  // 62 x (7 attention tensors + 3 MLP + 2 norms) + embed_tokens + norm = 746 tensors holding
  // 4,073,875,968 parameters (SOURCES-minicpm.md, section 4).
  CHECK(inventory.tensors.size() == 746);
  CHECK(inventory_params(inventory) == 4073875968);
}
