// Per family, as more_family_names_test.cpp: the state-space and hybrid families (Granite 4.0,
// Bamba, Jamba, Mamba, Mamba-2) and Ling's MoE, a few tensor names and shapes the published
// checkpoints hold, written by hand from the source named in each test (transformers' modeling
// code, the family's remote code, tests/data/configs/SOURCES-*.md) and the fixture's
// hyperparameters; the inventory must list them.
#include <algorithm>
#include <string>

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

}  // namespace

TEST_CASE("Granite 4.0 dense: shared_mlp.input_linear / output_linear, tied head",
          "[checkpoint][names]") {
  // modular_granitemoehybrid.py: every layer's FFN is shared_mlp (GraniteMoeSharedMLP:
  // input_linear [2S, H] holding gate and up, output_linear [H, S]); no block_sparse_moe when
  // num_local_experts is 0. granite-4.0-micro: H 2560, 40 heads -> head_dim 64, 8 kv heads ->
  // k_proj [8 x 64 = 512, 2560]; shared_intermediate_size 8192 -> input_linear [16384, 2560],
  // output_linear [2560, 8192]; 40 attention layers (0..39); tied, so no lm_head.
  const Inventory inventory =
      fixture_inventory("ibm-granite--granite-4.0-micro.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {100352, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {512, 2560});
  check_tensor(inventory, "model.layers.0.shared_mlp.input_linear.weight", {16384, 2560});
  check_tensor(inventory, "model.layers.39.shared_mlp.output_linear.weight", {2560, 8192});
  check_tensor(inventory, "model.layers.39.post_attention_layernorm.weight", {2560});
  check_absent(inventory, "model.layers.0.mlp.gate_up_proj.weight");
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("Granite 4.0 hybrid: mamba mixers beside self_attn layers", "[checkpoint][names]") {
  // GraniteMoeHybridMambaLayer is BambaMixer. granite-4.0-h-micro: H 2048, mamba 64 heads x 64
  // -> d_inner 4096; n_groups 1, d_state 128 -> conv channels 4096 + 2 x 1 x 128 = 4352;
  // in_proj rows d_inner + conv + heads = 4096 + 4352 + 64 = 8512; the gated norm over d_inner;
  // out_proj [2048, 4096]. Attention at layers 5, 15, 25, 35: 32 heads x 64 -> q_proj
  // [2048, 2048], 8 kv heads -> v_proj [512, 2048]; shared_mlp input_linear [2 x 8192, 2048].
  const Inventory inventory =
      fixture_inventory("ibm-granite--granite-4.0-h-micro.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mamba.in_proj.weight", {8512, 2048});
  check_tensor(inventory, "model.layers.0.mamba.conv1d.weight", {4352, 1, 4});
  check_tensor(inventory, "model.layers.0.mamba.A_log", {64});
  check_tensor(inventory, "model.layers.0.mamba.norm.weight", {4096});
  check_tensor(inventory, "model.layers.0.mamba.out_proj.weight", {2048, 4096});
  check_tensor(inventory, "model.layers.5.self_attn.q_proj.weight", {2048, 2048});
  check_tensor(inventory, "model.layers.35.self_attn.v_proj.weight", {512, 2048});
  check_tensor(inventory, "model.layers.5.shared_mlp.input_linear.weight", {16384, 2048});
  check_absent(inventory, "model.layers.5.mamba.in_proj.weight");
  check_absent(inventory, "model.layers.0.self_attn.q_proj.weight");
}

TEST_CASE("Granite 4.0 MoE: stacked block_sparse_moe experts", "[checkpoint][names]") {
  // GraniteMoeHybridMoE (JetMoe's ParallelExperts, weight [E, out, in]): router.layer [E, H],
  // input_linear [E, 2I, H], output_linear [E, H, I]. granite-4.0-h-tiny: H 1536, 64 experts,
  // intermediate 512 -> input_linear [64, 1024, 1536], output_linear [64, 1536, 512]; shared
  // 1024 -> shared_mlp.input_linear [2048, 1536]. 40 layers (4 attention, 36 Mamba-2), every
  // one with a router, two stacked expert tensors and the shared MLP's two: the experts are
  // 40 x 2 = 80 tensors, where one per expert and projection would be 40 x 64 x 3 = 7,680.
  const Inventory inventory =
      fixture_inventory("ibm-granite--granite-4.0-h-tiny.reconstructed.json");
  CHECK(inventory.complete);
  const auto stacked =
      std::count_if(inventory.tensors.begin(), inventory.tensors.end(), [](const auto& tensor) {
        return tensor.name.find("block_sparse_moe.input_linear") != std::string::npos ||
               tensor.name.find("block_sparse_moe.output_linear") != std::string::npos;
      });
  CHECK(stacked == 80);
  check_tensor(inventory, "model.layers.0.block_sparse_moe.router.layer.weight", {64, 1536});
  check_tensor(inventory, "model.layers.0.block_sparse_moe.input_linear.weight", {64, 1024, 1536});
  check_tensor(inventory, "model.layers.39.block_sparse_moe.output_linear.weight", {64, 1536, 512});
  check_tensor(inventory, "model.layers.0.shared_mlp.input_linear.weight", {2048, 1536});
  check_absent(inventory, "model.layers.0.block_sparse_moe.experts.0.gate_up_proj.weight");
}

TEST_CASE("Bamba: mamba / self_attn, feed_forward, final_layernorm", "[checkpoint][names]") {
  // modeling_bamba.py BambaDecoderLayer. Bamba-9B: H 4096, mamba 128 heads x 64 -> d_inner 8192;
  // 1 group, d_state 128 -> conv 8192 + 256 = 8448; in_proj 8192 + 8448 + 128 = 16768.
  // Attention at layers 9, 18, 27: 32 heads x 128 -> q_proj [4096, 4096], 8 kv -> k_proj
  // [1024, 4096]. feed_forward gate_proj [14336, 4096]; untied lm_head [128256, 4096].
  const Inventory inventory = fixture_inventory("ibm-ai-platform--Bamba-9B.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mamba.in_proj.weight", {16768, 4096});
  check_tensor(inventory, "model.layers.0.mamba.conv1d.bias", {8448});
  check_tensor(inventory, "model.layers.9.self_attn.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "model.layers.31.feed_forward.gate_proj.weight", {14336, 4096});
  check_tensor(inventory, "model.layers.31.pre_ff_layernorm.weight", {4096});
  check_tensor(inventory, "model.final_layernorm.weight", {4096});
  check_tensor(inventory, "lm_head.weight", {128256, 4096});
  check_absent(inventory, "model.layers.0.mlp.gate_proj.weight");
}

TEST_CASE("Jamba: Mamba-1 mixers with dt/B/C norms, feed_forward router and experts",
          "[checkpoint][names]") {
  // modeling_jamba.py. Jamba-v0.1: H 4096, expand 2 -> d_inner 8192, d_state 16, dt_rank 256,
  // d_conv 4: in_proj [2 x 8192, 4096], x_proj [256 + 2 x 16 = 288, 8192], dt_proj [8192, 256],
  // A_log [8192, 16], dt_layernorm [256], b_layernorm [16]. Attention every 8th layer from 4:
  // k_proj [8 x 128 = 1024, 4096]. Experts on odd layers: router [16, 4096], experts.15.
  // down_proj [4096, 14336]; dense feed_forward on even layers.
  const Inventory inventory = fixture_inventory("ai21labs--Jamba-v0.1.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mamba.in_proj.weight", {16384, 4096});
  check_tensor(inventory, "model.layers.0.mamba.x_proj.weight", {288, 8192});
  check_tensor(inventory, "model.layers.0.mamba.A_log", {8192, 16});
  check_tensor(inventory, "model.layers.0.mamba.conv1d.weight", {8192, 1, 4});
  check_tensor(inventory, "model.layers.0.mamba.dt_layernorm.weight", {256});
  check_tensor(inventory, "model.layers.0.mamba.b_layernorm.weight", {16});
  check_tensor(inventory, "model.layers.4.self_attn.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "model.layers.1.feed_forward.router.weight", {16, 4096});
  check_tensor(inventory, "model.layers.1.feed_forward.experts.15.down_proj.weight", {4096, 14336});
  check_tensor(inventory, "model.layers.0.feed_forward.up_proj.weight", {14336, 4096});
  check_absent(inventory, "model.layers.4.mamba.in_proj.weight");
}

TEST_CASE("Mamba: backbone.layers.N.mixer, backbone.embeddings", "[checkpoint][names]") {
  // modeling_mamba.py (base_model_prefix "backbone"). mamba-130m-hf: H 768, expand 2 -> d_inner
  // 1536, state 16, time_step_rank 48, conv_kernel 4: in_proj [3072, 768], x_proj [48 + 32 = 80,
  // 1536], dt_proj [1536, 48] + bias [1536], A_log [1536, 16], D [1536]; 24 layers; norm_f;
  // the head tied (a stored copy is a buffer).
  const Inventory inventory = fixture_inventory("state-spaces--mamba-130m-hf.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "backbone.embeddings.weight", {50280, 768});
  check_tensor(inventory, "backbone.layers.0.mixer.in_proj.weight", {3072, 768});
  check_tensor(inventory, "backbone.layers.0.mixer.x_proj.weight", {80, 1536});
  check_tensor(inventory, "backbone.layers.0.mixer.dt_proj.bias", {1536});
  check_tensor(inventory, "backbone.layers.23.mixer.A_log", {1536, 16});
  check_tensor(inventory, "backbone.layers.23.mixer.D", {1536});
  check_tensor(inventory, "backbone.layers.23.norm.weight", {768});
  check_tensor(inventory, "backbone.norm_f.weight", {768});
  const trace::checkpoint::ExpectedTensor* head = find_tensor(inventory, "lm_head.weight");
  REQUIRE(head != nullptr);
  CHECK(head->buffer);
}

TEST_CASE("Mamba-2: backbone.layers.N.mixer with dt_bias and the gated norm",
          "[checkpoint][names]") {
  // modeling_mamba2.py. mamba2-8b-3t-4k: H 4096, 128 heads x 64 -> d_inner 8192, 8 groups,
  // state 128 -> conv 8192 + 2 x 8 x 128 = 10240; in_proj 8192 + 10240 + 128 = 18560; 56 layers;
  // untied head [256000, 4096].
  const Inventory inventory = fixture_inventory("nvidia--mamba2-8b-3t-4k.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "backbone.layers.0.mixer.in_proj.weight", {18560, 4096});
  check_tensor(inventory, "backbone.layers.0.mixer.conv1d.weight", {10240, 1, 4});
  check_tensor(inventory, "backbone.layers.55.mixer.dt_bias", {128});
  check_tensor(inventory, "backbone.layers.55.mixer.norm.weight", {8192});
  check_tensor(inventory, "backbone.layers.55.mixer.out_proj.weight", {4096, 8192});
  check_tensor(inventory, "lm_head.weight", {256000, 4096});
  check_absent(inventory, "model.embed_tokens.weight");
}

TEST_CASE("Bailing MoE (Ling v1): word_embeddings, attention.query_key_value, dense",
          "[checkpoint][names]") {
  // modeling_bailing_moe.py. Ling-lite-1.5: H 2048, 16 heads + 2 x 4 kv heads of 128 ->
  // query_key_value [3072, 2048], dense [2048, 2048]; 64 experts of 1408 -> gate [64, 2048],
  // down_proj [2048, 1408]; 2 shared experts -> shared_experts.gate_proj [2816, 2048]; 28 layers;
  // untied head.
  const Inventory inventory = fixture_inventory("inclusionAI--Ling-lite-1.5.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.word_embeddings.weight", {126464, 2048});
  check_tensor(inventory, "model.layers.0.attention.query_key_value.weight", {3072, 2048});
  check_tensor(inventory, "model.layers.0.attention.dense.weight", {2048, 2048});
  check_tensor(inventory, "model.layers.27.mlp.gate.weight", {64, 2048});
  check_tensor(inventory, "model.layers.27.mlp.experts.63.down_proj.weight", {2048, 1408});
  check_tensor(inventory, "model.layers.0.mlp.shared_experts.gate_proj.weight", {2816, 2048});
  check_tensor(inventory, "lm_head.weight", {126464, 2048});
  check_absent(inventory, "model.embed_tokens.weight");
}

TEST_CASE("Bailing MoE (Ling 2.0): QK-norms, the router's F32 expert_bias, a dense first layer",
          "[checkpoint][names]") {
  // modeling_bailing_moe_v2.py. Ling-mini-2.0: first_k_dense_replace 1 -> layer 0 mlp.gate_proj
  // [5120, 2048]; head_dim 128 -> query_layernorm [128]; 256 experts of 512 -> expert_bias [256]
  // (F32), experts.255.up_proj [512, 2048]; one shared expert of 512 -> shared_experts.down_proj
  // [2048, 512]; 20 layers (0..19).
  const Inventory inventory = fixture_inventory("inclusionAI--Ling-mini-2.0.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {5120, 2048});
  check_tensor(inventory, "model.layers.0.attention.query_layernorm.weight", {128});
  check_tensor(inventory, "model.layers.19.mlp.gate.expert_bias", {256});
  CHECK(find_tensor(inventory, "model.layers.19.mlp.gate.expert_bias")->dtype == "F32");
  check_tensor(inventory, "model.layers.19.mlp.experts.255.up_proj.weight", {512, 2048});
  check_tensor(inventory, "model.layers.1.mlp.shared_experts.down_proj.weight", {2048, 512});
  check_absent(inventory, "model.layers.1.mlp.gate.e_score_correction_bias");
}
