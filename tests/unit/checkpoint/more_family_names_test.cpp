// Per family, as checkpoint_names_test.cpp: a few tensor names and shapes the published
// checkpoints hold, written by hand from the source named in each test (transformers' modeling
// code, the family's remote code, tests/data/configs/SOURCES-*.md) and the fixture's
// hyperparameters; the inventory must list them.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::find_tensor;
using trace::test::fixture_inventory;

// A fixture's text with `from` replaced by `to` (once; the fixture must hold it).
std::string edited_fixture(const std::string& config, const std::string& from,
                           const std::string& to) {
  std::string text = trace::test::config_text(config);
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("Cohere: model.*, one LayerNorm per layer, tied head", "[checkpoint][names]") {
  // modeling_cohere.py; aya-expanse-8b: hidden 4096, 32 heads x 128 -> q_proj [4096, 4096], 8 kv
  // heads x 128 -> k_proj [1024, 4096]; intermediate 14336; 32 layers (0..31); tied (no head).
  const Inventory inventory = fixture_inventory("CohereForAI--aya-expanse-8b.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {256000, 4096});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "model.layers.31.mlp.down_proj.weight", {4096, 14336});
  check_tensor(inventory, "model.layers.31.input_layernorm.weight", {4096});
  check_absent(inventory, "model.layers.0.post_attention_layernorm.weight");
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("Cohere: use_qk_norm stores [heads, head_dim] norm weights", "[checkpoint][names]") {
  // CohereAttention: q_norm = CohereLayerNorm((num_attention_heads, head_dim)), k_norm over
  // (num_key_value_heads, head_dim): 32 x 128 and 8 x 128 matrices, weight only.
  const Inventory inventory = trace::checkpoint::build_inventory(
      trace::parse_model_config(edited_fixture("CohereForAI--aya-expanse-8b.reconstructed.json",
                                               "\"use_qk_norm\": false", "\"use_qk_norm\": true")));
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_norm.weight", {32, 128});
  check_tensor(inventory, "model.layers.31.self_attn.k_norm.weight", {8, 128});
  check_absent(inventory, "model.layers.0.self_attn.q_norm.bias");
}

TEST_CASE("Helium and Ministral: Llama's model.* names", "[checkpoint][names]") {
  // modular_helium.py (LlamaAttention, LlamaMLP, HeliumRMSNorm); helium-1-preview-2b: 20 heads x
  // head_dim 128 = 2560 on a 2560 residual, 20 kv heads, intermediate 7040, 24 layers, untied.
  const Inventory helium = fixture_inventory("kyutai--helium-1-preview-2b.reconstructed.json");
  CHECK(helium.complete);
  check_tensor(helium, "model.layers.0.self_attn.v_proj.weight", {2560, 2560});
  check_tensor(helium, "model.layers.23.mlp.gate_proj.weight", {7040, 2560});
  check_tensor(helium, "lm_head.weight", {48000, 2560});
  // modular_ministral.py (Qwen2's modules, q/k/v without bias); Ministral-8B: 32 x 128 queries,
  // 8 x 128 = 1024 keys, intermediate 12288, 36 layers (0..35).
  const Inventory ministral =
      fixture_inventory("mistralai--Ministral-8B-Instruct-2410.reconstructed.json");
  CHECK(ministral.complete);
  check_tensor(ministral, "model.layers.35.self_attn.k_proj.weight", {1024, 4096});
  check_absent(ministral, "model.layers.0.self_attn.k_proj.bias");
  check_tensor(ministral, "model.layers.35.mlp.up_proj.weight", {12288, 4096});
  check_tensor(ministral, "model.norm.weight", {4096});
}

TEST_CASE("Apertus: renamed norms and the xIELU activation's tensors", "[checkpoint][names]") {
  // modular_apertus.py, activations.py XIELUActivation (SOURCES-apertus.md); Apertus-8B:
  // hidden 4096, 32 heads -> head_dim 128, q_norm / k_norm RMSNorm(head_dim); up / down only
  // (intermediate 21504); alpha_p / alpha_n parameters [1], beta / eps 0-dim buffers.
  const Inventory inventory = fixture_inventory("swiss-ai--Apertus-8B-2509.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.attention_layernorm.weight", {4096});
  check_tensor(inventory, "model.layers.0.feedforward_layernorm.weight", {4096});
  check_tensor(inventory, "model.layers.0.self_attn.q_norm.weight", {128});
  check_tensor(inventory, "model.layers.31.mlp.up_proj.weight", {21504, 4096});
  check_tensor(inventory, "model.layers.31.mlp.act_fn.alpha_p", {1});
  check_tensor(inventory, "model.layers.31.mlp.act_fn.eps", {});
  const auto* beta = find_tensor(inventory, "model.layers.0.mlp.act_fn.beta");
  REQUIRE(beta != nullptr);
  CHECK(beta->buffer);
}

TEST_CASE("OLMoE: mlp.gate and per-expert projections", "[checkpoint][names]") {
  // modeling_olmoe.py OlmoeSparseMoeBlock (gate Linear(hidden, num_experts), experts of
  // OlmoeMLP), OlmoeAttention q_norm RMSNorm(hidden), k_norm RMSNorm(head_dim x kv heads);
  // OLMoE-1B-7B: hidden 2048, 16 heads, 16 kv heads, 64 experts of 1024, 16 layers.
  const Inventory inventory = fixture_inventory("allenai--OLMoE-1B-7B-0924.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mlp.gate.weight", {64, 2048});
  check_tensor(inventory, "model.layers.15.mlp.experts.63.up_proj.weight", {1024, 2048});
  check_tensor(inventory, "model.layers.15.mlp.experts.63.down_proj.weight", {2048, 1024});
  check_tensor(inventory, "model.layers.0.self_attn.k_norm.weight", {2048});
  check_tensor(inventory, "lm_head.weight", {50304, 2048});
}

TEST_CASE("InternLM2: tok_embeddings, attention.wqkv, feed_forward, output",
          "[checkpoint][names]") {
  // InternLM2's remote modeling_internlm2.py (SOURCES-internlm2.md); internlm2_5-7b-chat:
  // (32 + 2 x 8) x 128 = 6144 wqkv rows on 4096, intermediate 14336, 32 layers, untied head.
  const Inventory inventory = fixture_inventory("internlm--internlm2_5-7b-chat.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.tok_embeddings.weight", {92544, 4096});
  check_tensor(inventory, "model.layers.0.attention.wqkv.weight", {6144, 4096});
  check_tensor(inventory, "model.layers.0.attention.wo.weight", {4096, 4096});
  check_tensor(inventory, "model.layers.31.feed_forward.w1.weight", {14336, 4096});
  check_tensor(inventory, "model.layers.31.feed_forward.w2.weight", {4096, 14336});
  check_tensor(inventory, "model.layers.31.ffn_norm.weight", {4096});
  check_tensor(inventory, "output.weight", {92544, 4096});
  check_absent(inventory, "lm_head.weight");
  CHECK(inventory.tensors.size() == 227);  // 1 + 32 x 7 + norm + output (SOURCES-internlm2.md)
}

TEST_CASE("StableLM: biased LayerNorms, q/k/v bias per use_qkv_bias", "[checkpoint][names]") {
  // modeling_stablelm.py; stablelm-2-1_6b: hidden 2048, 32 heads x 64, use_qkv_bias (o_proj
  // never), nn.LayerNorm with bias, intermediate 5632, 24 layers, untied head.
  const Inventory inventory = fixture_inventory("stabilityai--stablelm-2-zephyr-1_6b.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.bias", {2048});
  check_absent(inventory, "model.layers.0.self_attn.o_proj.bias");
  check_tensor(inventory, "model.layers.23.post_attention_layernorm.bias", {2048});
  check_tensor(inventory, "model.norm.bias", {2048});
  check_tensor(inventory, "lm_head.weight", {100352, 2048});
}

TEST_CASE("StableLM: qk_layernorm stores one LayerNorm per head", "[checkpoint][names]") {
  // StableLmLayerNormPerHead(head_dim, heads): norms = ModuleList of LayerNorm(head_dim,
  // bias=False); 32 query heads and 32 kv heads of 64.
  const Inventory inventory = trace::checkpoint::build_inventory(trace::parse_model_config(
      edited_fixture("stabilityai--stablelm-2-zephyr-1_6b.json", "{", "{\"qk_layernorm\": true,")));
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_layernorm.norms.0.weight", {64});
  check_tensor(inventory, "model.layers.23.self_attn.k_layernorm.norms.31.weight", {64});
  check_absent(inventory, "model.layers.0.self_attn.q_layernorm.norms.32.weight");
  check_absent(inventory, "model.layers.0.self_attn.q_layernorm.weight");
}

TEST_CASE("MiniCPM: Llama's model.* names", "[checkpoint][names]") {
  // openbmb's modeling_minicpm.py (SOURCES-minicpm.md); MiniCPM4-8B: hidden 4096, 32 heads ->
  // head_dim 128, 2 kv heads -> k_proj [256, 4096], intermediate 16384, untied head.
  const Inventory inventory = fixture_inventory("openbmb--MiniCPM4-8B.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {256, 4096});
  check_tensor(inventory, "model.layers.31.mlp.gate_proj.weight", {16384, 4096});
  check_tensor(inventory, "lm_head.weight", {73448, 4096});
  // MiniCPM4-0.5B ties its head.
  check_absent(fixture_inventory("openbmb--MiniCPM4-0.5B.reconstructed.json"), "lm_head.weight");
}

TEST_CASE("GLM-4.5-Air: MoE layers and the MTP layer after the main stack", "[checkpoint][names]") {
  // modeling_glm4_moe.py (SOURCES-moe-families.md); hidden 4096, 96 heads x 128 = 12288 biased
  // queries, first_k_dense_replace 1 (layer 0 dense, intermediate 10944), 128 experts of 1408,
  // one shared expert; 46 layers, the MTP layer stored as model.layers.46.
  const Inventory inventory = fixture_inventory("zai-org--GLM-4.5-Air.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {10944, 4096});
  check_tensor(inventory, "model.layers.1.self_attn.q_proj.bias", {12288});
  check_tensor(inventory, "model.layers.45.mlp.experts.127.down_proj.weight", {4096, 1408});
  check_tensor(inventory, "model.layers.45.mlp.gate.e_score_correction_bias", {128});
  check_tensor(inventory, "model.layers.46.eh_proj.weight", {4096, 8192});
  check_tensor(inventory, "model.layers.46.shared_head.head.weight", {151552, 4096});
  check_absent(inventory, "mtp.layers.0.mlp.gate.weight");
}

TEST_CASE("MiniMax-M2: block_sparse_moe with w1/w2/w3 and the block's correction bias",
          "[checkpoint][names]") {
  // MiniMax-M2's modeling_minimax_m2.py; M2.7: hidden 3072, 48 heads x 128 = 6144 queries, 8 kv
  // heads -> 1024; 256 experts of 1536; FP8 blocks of 128 x 128; 62 layers (0..61).
  const Inventory inventory = fixture_inventory("MiniMaxAI--MiniMax-M2.7.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.block_sparse_moe.gate.weight", {256, 3072});
  check_tensor(inventory, "model.layers.0.block_sparse_moe.e_score_correction_bias", {256});
  check_tensor(inventory, "model.layers.61.block_sparse_moe.experts.255.w1.weight", {1536, 3072});
  check_tensor(inventory, "model.layers.61.block_sparse_moe.experts.255.w2.weight_scale_inv",
               {24, 12});  // ceil(3072 / 128) x ceil(1536 / 128)
  check_tensor(inventory, "model.layers.0.self_attn.q_norm.weight", {6144});
  check_absent(inventory, "model.layers.0.block_sparse_moe.gate.e_score_correction_bias");
}

TEST_CASE("BLOOM: word_embeddings and h.N without a wrapper prefix", "[checkpoint][names]") {
  // modeling_bloom.py, bloom-560m's 293 tensors (SOURCES-gpt-families.md): hidden 1024, fused
  // query_key_value 3 x 1024 = 3072, 4 x 1024 = 4096 MLP, 24 layers, tied head.
  const Inventory inventory = fixture_inventory("bigscience--bloom-560m.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "word_embeddings.weight", {250880, 1024});
  check_tensor(inventory, "word_embeddings_layernorm.bias", {1024});
  check_tensor(inventory, "h.0.self_attention.query_key_value.weight", {3072, 1024});
  check_tensor(inventory, "h.23.mlp.dense_4h_to_h.weight", {1024, 4096});
  check_tensor(inventory, "ln_f.weight", {1024});
  CHECK(inventory.tensors.size() == 293);
}

TEST_CASE("GPT-BigCode: transformer.h.N with nn.Linear c_attn", "[checkpoint][names]") {
  // modeling_gpt_bigcode.py; starcoderbase-1b: n_embd 2048, 16 heads -> head_dim 128,
  // multi_query -> c_attn [2048 + 2 x 128 = 2304, 2048] ([out, in]: nn.Linear), n_inner 8192,
  // n_positions 8192, 24 layers, tied head.
  const Inventory inventory = fixture_inventory("bigcode--starcoderbase-1b.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.wpe.weight", {8192, 2048});
  check_tensor(inventory, "transformer.h.0.attn.c_attn.weight", {2304, 2048});
  check_tensor(inventory, "transformer.h.0.attn.c_attn.bias", {2304});
  check_tensor(inventory, "transformer.h.23.mlp.c_fc.weight", {8192, 2048});
  check_tensor(inventory, "transformer.ln_f.bias", {2048});
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("GPT-J and CodeGen: transformer.h.N, fc_in / fc_out, biased head",
          "[checkpoint][names]") {
  // modeling_gptj.py (SOURCES-gpt-families.md); gpt-j-6b: n_embd 4096, 4 x 4096 = 16384 MLP,
  // 28 layers, n_positions 2048, untied lm_head with bias; the old .bin's attn.bias masks
  // [1, 1, 2048, 2048] are buffers.
  const Inventory gptj = fixture_inventory("EleutherAI--gpt-j-6b.json");
  CHECK(gptj.complete);
  check_tensor(gptj, "transformer.h.0.attn.q_proj.weight", {4096, 4096});
  check_tensor(gptj, "transformer.h.27.attn.out_proj.weight", {4096, 4096});
  check_tensor(gptj, "transformer.h.27.mlp.fc_in.bias", {16384});
  check_tensor(gptj, "lm_head.bias", {50400});
  check_tensor(gptj, "transformer.h.27.attn.bias", {1, 1, 2048, 2048});
  // modeling_codegen.py (SOURCES-codegen.md); codegen-350M-mono: n_embd 1024, fused qkv_proj
  // 3 x 1024, 20 layers; causal_mask [1, 1, 2048, 2048] and masked_bias [] per layer.
  const Inventory codegen = fixture_inventory("Salesforce--codegen-350M-mono.reconstructed.json");
  CHECK(codegen.complete);
  check_tensor(codegen, "transformer.h.0.attn.qkv_proj.weight", {3072, 1024});
  check_tensor(codegen, "transformer.h.19.mlp.fc_out.weight", {1024, 4096});
  check_tensor(codegen, "transformer.h.19.attn.causal_mask", {1, 1, 2048, 2048});
  check_tensor(codegen, "transformer.h.19.attn.masked_bias", {});
}

TEST_CASE("GPT-Neo: attn.attention, masks of the global layers", "[checkpoint][names]") {
  // modeling_gpt_neo.py (SOURCES-gpt_neo.md); gpt-neo-125m: hidden 768, out_proj biased, q/k/v
  // not, 4 x 768 = 3072 MLP, 2048 positions, 12 layers alternating global / local: the uint8
  // masks sit on layers 0, 2, ..., 10 only.
  const Inventory inventory = fixture_inventory("EleutherAI--gpt-neo-125m.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.wpe.weight", {2048, 768});
  check_tensor(inventory, "transformer.h.0.attn.attention.q_proj.weight", {768, 768});
  check_absent(inventory, "transformer.h.0.attn.attention.q_proj.bias");
  check_tensor(inventory, "transformer.h.11.attn.attention.out_proj.bias", {768});
  check_tensor(inventory, "transformer.h.11.mlp.c_proj.weight", {768, 3072});
  check_tensor(inventory, "transformer.h.10.attn.attention.bias", {1, 1, 2048, 2048});
  check_absent(inventory, "transformer.h.11.attn.attention.bias");
}

TEST_CASE("GLM-5: DeepSeek-V3.2's names, the MTP layer without embedding or head copies",
          "[checkpoint][names]") {
  // SOURCES-moe-families.md: Megatron-Bridge's GLM-5 card counts 59,079 tensors in the 78 layers
  // and 791 under model.layers.78 (787 layer tensors + enorm, hnorm, eh_proj, shared_head.norm);
  // Hub total 753,864,139,008. hidden 6144, q_lora 2048, 64 heads x (192 + 64) = 16,384 query
  // rows, indexer 32 heads x 128 = 4,096, 256 experts of 2,048, dense layers 0..2 of 12,288.
  const Inventory inventory = fixture_inventory("zai-org--GLM-5.json");
  CHECK(inventory.complete);
  CHECK(inventory.tensors.size() == 59'079 + 791);
  CHECK(trace::test::inventory_params(inventory) == 753'864'139'008);
  check_tensor(inventory, "model.layers.0.self_attn.q_b_proj.weight", {16384, 2048});
  check_tensor(inventory, "model.layers.0.self_attn.indexer.wq_b.weight", {4096, 2048});
  check_tensor(inventory, "model.layers.0.self_attn.indexer.weights_proj.weight", {32, 6144});
  check_tensor(inventory, "model.layers.2.mlp.gate_proj.weight", {12288, 6144});
  check_tensor(inventory, "model.layers.3.mlp.experts.255.down_proj.weight", {6144, 2048});
  check_tensor(inventory, "model.layers.78.eh_proj.weight", {6144, 12288});
  check_tensor(inventory, "model.layers.78.shared_head.norm.weight", {6144});
  check_absent(inventory, "model.layers.78.embed_tokens.weight");
  check_absent(inventory, "model.layers.78.shared_head.head.weight");
  // GLM-5.2: 57 "shared" indexer layers hold no indexer (5 tensors each): 59,585 tensors,
  // 753,329,940,480 parameters (its card and the Hub).
  const Inventory shared = fixture_inventory("zai-org--GLM-5.2.json");
  CHECK(shared.complete);
  CHECK(shared.tensors.size() == 59'585);
  CHECK(trace::test::inventory_params(shared) == 753'329'940'480);
  // The FP8 repo: 128 x 128 block scales of every projection, 45,885,024 values (the Hub's FP8
  // total less the BF16 one).
  const Inventory fp8 = fixture_inventory("zai-org--GLM-5-FP8.json");
  CHECK(fp8.complete);
  std::int64_t scales = 0;
  for (const auto& tensor : fp8.tensors) {
    if (!tensor.name.ends_with("weight_scale_inv")) continue;
    std::int64_t elements = 1;
    for (const std::int64_t dim : tensor.shape) elements *= dim;
    scales += elements;
  }
  CHECK(scales == 45'885'024);
}

TEST_CASE("Nemotron-NAS (DeciLM): a no-op attention holds neither self_attn nor its norm",
          "[checkpoint][names]") {
  // Llama-3.3-Nemotron-Super-49B-v1: 80 blocks, hidden 8192, 64 heads x 128; block 0 groups 8
  // heads per K/V head (8 kv heads: k_proj [1024, 8192]), ffn_mult 2.625 -> int(2 x 2.625 x
  // 8192 / 3) = 14,336; block 6 has a no-op attention; block 62's ffn_mult 0.5 -> 2,730, rounded
  // up to a multiple of 256: 2,816. 49 attention blocks x 5 tensors + 80 FFNs x 4 + embedding,
  // final norm and head = 568 tensors; 49,867,145,216 parameters (SOURCES-moe-families.md).
  const Inventory inventory = fixture_inventory("nvidia--Llama-3_3-Nemotron-Super-49B-v1.json");
  CHECK(inventory.complete);
  CHECK(inventory.tensors.size() == 568);
  CHECK(trace::test::inventory_params(inventory) == 49'867'145'216);
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {1024, 8192});
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {14336, 8192});
  check_absent(inventory, "model.layers.6.self_attn.q_proj.weight");
  check_absent(inventory, "model.layers.6.input_layernorm.weight");
  check_tensor(inventory, "model.layers.6.post_attention_layernorm.weight", {8192});
  check_tensor(inventory, "model.layers.62.mlp.down_proj.weight", {8192, 2816});
}

TEST_CASE("Nemotron-NAS: replace_with_linear is self_attn.linear_attn / mlp.linear_mlp",
          "[checkpoint][names]") {
  // Block 6's attention and block 7's FFN each replaced by one bias-free [8192, 8192] Linear.
  std::string text = trace::test::config_text("nvidia--Llama-3_3-Nemotron-Super-49B-v1.json");
  nlohmann::json config = nlohmann::json::parse(text);
  config["block_configs"][6]["attention"]["no_op"] = false;
  config["block_configs"][6]["attention"]["replace_with_linear"] = true;
  config["block_configs"][7]["ffn"]["replace_with_linear"] = true;
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.6.self_attn.linear_attn.weight", {8192, 8192});
  check_tensor(inventory, "model.layers.6.input_layernorm.weight", {8192});
  check_tensor(inventory, "model.layers.7.mlp.linear_mlp.weight", {8192, 8192});
  check_absent(inventory, "model.layers.7.mlp.down_proj.weight");
}

TEST_CASE("Kimi-Linear: KDA under self_attn, block_sparse_moe with its shared experts",
          "[checkpoint][names]") {
  // SOURCES-lfm2-kimi-linear.md, from Kimi-Linear-48B-A3B-Instruct's header listing (20,493
  // tensors, 49,122,681,728 parameters): hidden 2304; KDA 32 heads x 128 = 4,096 channels, conv
  // kernel 4, A_log [1, 1, 32, 1] and dt_bias [4096] in F32; MLA layers 3, 7, ..., 26; 256
  // experts of 1,024 with w1 / w3 / w2 and BF16 router biases; layer 0's dense MLP of 9,216.
  const Inventory inventory =
      fixture_inventory("moonshotai--Kimi-Linear-48B-A3B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.tensors.size() == 20'493);
  CHECK(trace::test::inventory_params(inventory) == 49'122'681'728);
  check_tensor(inventory, "model.layers.0.self_attn.q_conv1d.weight", {4096, 1, 4});
  check_tensor(inventory, "model.layers.0.self_attn.f_b_proj.weight", {4096, 128});
  check_tensor(inventory, "model.layers.0.self_attn.o_norm.weight", {128});
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {9216, 2304});
  check_tensor(inventory, "model.layers.3.self_attn.kv_b_proj.weight", {8192, 512});
  check_absent(inventory, "model.layers.3.self_attn.q_conv1d.weight");
  check_tensor(inventory, "model.layers.26.block_sparse_moe.experts.255.w2.weight", {2304, 1024});
  check_tensor(inventory, "model.layers.26.block_sparse_moe.shared_experts.up_proj.weight",
               {1024, 2304});
  CHECK(trace::test::dtype_of(inventory, "model.layers.0.self_attn.A_log") == "F32");
  CHECK(trace::test::dtype_of(inventory, "model.layers.0.self_attn.dt_bias") == "F32");
  CHECK(trace::test::dtype_of(
            inventory, "model.layers.1.block_sparse_moe.gate.e_score_correction_bias") == "BF16");
  check_tensor(inventory, "model.layers.0.self_attn.A_log", {1, 1, 32, 1});
}

TEST_CASE("MiniMax-M1: lightning self_attn, block_sparse_moe with F32 routers",
          "[checkpoint][names]") {
  // SOURCES-minimax.md: the index beside MiniMax-AI/MiniMax-M1's modeling_minimax_m1.py holds
  // 8,243 tensors and 912,210,767,872 bytes, 456,089,655,296 parameters with the 80 routers
  // [32, 6144] in F32. 80 layers x (2 norms + gate + 32 x 3 experts) + 70 lightning x 4
  // (qkv_proj, output_gate, norm, out_proj) + 10 softmax x 4 + embedding, head, norm = 8,243.
  // Lightning: 64 heads x 128 = 8,192 wide, qkv_proj [3 x 8192, 6144]; softmax layers 7, 15, ...
  const Inventory inventory = fixture_inventory("MiniMaxAI--MiniMax-M1-80k.json");
  CHECK(inventory.complete);
  CHECK(inventory.tensors.size() == 8'243);
  CHECK(trace::test::inventory_params(inventory) == 456'089'655'296);
  std::int64_t bytes = 0;
  for (const auto& tensor : inventory.tensors) bytes += tensor.bytes();
  CHECK(bytes == 912'210'767'872);
  check_tensor(inventory, "model.layers.0.self_attn.qkv_proj.weight", {24576, 6144});
  check_tensor(inventory, "model.layers.0.self_attn.output_gate.weight", {8192, 6144});
  check_tensor(inventory, "model.layers.0.self_attn.norm.weight", {8192});
  check_tensor(inventory, "model.layers.7.self_attn.k_proj.weight", {1024, 6144});
  check_absent(inventory, "model.layers.7.self_attn.qkv_proj.weight");
  check_tensor(inventory, "model.layers.79.block_sparse_moe.experts.31.w2.weight", {6144, 9216});
  const auto* gate = find_tensor(inventory, "model.layers.0.block_sparse_moe.gate.weight");
  REQUIRE(gate != nullptr);
  CHECK(gate->shape == std::vector<std::int64_t>{32, 6144});
  CHECK(gate->dtype == "F32");
}

TEST_CASE("DeepSeek-VL2: language.model.*, the SigLIP tower in timm's names, projector.layers",
          "[checkpoint][names]") {
  // SOURCES-deepseek_vl_v2.md: deepseek-vl2-tiny, 3,370,501,440 parameters (its loaded-model
  // count). The tower: width 1152, 27 blocks, patch 14 at 384 -> 27 x 27 = 729 positions, MLP
  // int(1152 x 3.7362) = 4,304; the attention-pooling head stored though unused; the projector
  // downsample_mlp_gelu: Linear(1152 x 2 x 2 = 4608 -> 1280), Linear(1280 -> 1280); the
  // DeepSeek-V2 text model (hidden 1280, 12 layers, 64 experts of 896, dense layer 0 of 6848).
  const Inventory inventory =
      fixture_inventory("deepseek-ai--deepseek-vl2-tiny.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(trace::test::inventory_params(inventory) == 3'370'501'440);
  check_tensor(inventory, "language.model.embed_tokens.weight", {129280, 1280});
  check_tensor(inventory, "language.lm_head.weight", {129280, 1280});
  check_tensor(inventory, "language.model.layers.0.mlp.gate_proj.weight", {6848, 1280});
  check_tensor(inventory, "language.model.layers.11.mlp.experts.63.down_proj.weight", {1280, 896});
  check_tensor(inventory, "vision.patch_embed.proj.weight", {1152, 3, 14, 14});
  check_tensor(inventory, "vision.pos_embed", {1, 729, 1152});
  check_tensor(inventory, "vision.blocks.26.attn.qkv.weight", {3456, 1152});
  check_tensor(inventory, "vision.blocks.26.attn.proj.bias", {1152});
  check_tensor(inventory, "vision.blocks.26.mlp.fc1.weight", {4304, 1152});
  check_tensor(inventory, "vision.blocks.26.norm2.bias", {1152});
  check_tensor(inventory, "vision.norm.weight", {1152});
  check_tensor(inventory, "vision.attn_pool.latent", {1, 1, 1152});
  check_tensor(inventory, "vision.attn_pool.kv.weight", {2304, 1152});
  check_tensor(inventory, "projector.layers.0.weight", {1280, 4608});
  check_tensor(inventory, "projector.layers.2.bias", {1280});
  check_tensor(inventory, "image_newline", {1280});
  check_tensor(inventory, "view_seperator", {1280});
  check_absent(inventory, "vision.blocks.27.attn.qkv.weight");
  // DeepSeek-OCR (the same model_type) is named apart: ocr_names_test.cpp.
}

TEST_CASE("InternVL chat: language_model.* in its LLM's names, InternViT, mlp1",
          "[checkpoint][names]") {
  // SOURCES-internvl.md: InternVL2_5-8B's index names vision_model.embeddings.*,
  // vision_model.encoder.layers.N.{attn.qkv, attn.proj, mlp.fc1, mlp.fc2, norm1, norm2, ls1,
  // ls2}, mlp1.{0,1,3} and the InternLM2 text model under language_model.*; 8,075,365,376
  // parameters (its total_size / 2). InternViT-300M: d 1024, 24 layers, LayerNorm, qkv bias, 448 /
  // 14 = 32 patches a side -> 1,025 positions; mlp1 reads 1024 x 2 x 2 = 4,096 values. Tensors:
  // the tower 24 x 14 + 4, mlp1 6, InternLM2-7B 32 x 7 + 3 = 573.
  const Inventory eight = fixture_inventory("OpenGVLab--InternVL2_5-8B.reconstructed.json");
  CHECK(eight.complete);
  CHECK(eight.tensors.size() == 573);
  CHECK(trace::test::inventory_params(eight) == 8'075'365'376);
  check_tensor(eight, "vision_model.embeddings.patch_embedding.weight", {1024, 3, 14, 14});
  check_tensor(eight, "vision_model.embeddings.class_embedding", {1, 1, 1024});
  check_tensor(eight, "vision_model.embeddings.position_embedding", {1, 1025, 1024});
  check_tensor(eight, "vision_model.encoder.layers.23.attn.qkv.bias", {3072});
  check_tensor(eight, "vision_model.encoder.layers.23.mlp.fc1.weight", {4096, 1024});
  check_tensor(eight, "vision_model.encoder.layers.23.ls2", {1024});
  check_tensor(eight, "mlp1.0.weight", {4096});
  check_tensor(eight, "mlp1.1.weight", {4096, 4096});
  check_tensor(eight, "mlp1.3.weight", {4096, 4096});
  check_tensor(eight, "language_model.model.tok_embeddings.weight", {92553, 4096});
  check_tensor(eight, "language_model.model.layers.31.feed_forward.w2.weight", {4096, 14336});
  check_tensor(eight, "language_model.output.weight", {92553, 4096});
  check_absent(eight, "language_model.lm_head.weight");
  // InternVL2_5-26B: InternViT-6B (d 3200, 45 layers, RMSNorm, QK-norm over all heads, no qkv
  // bias) and InternLM2-20B; 25,514,186,112 parameters (the Hub's).
  const Inventory twenty_six = fixture_inventory("OpenGVLab--InternVL2_5-26B.reconstructed.json");
  CHECK(twenty_six.complete);
  CHECK(trace::test::inventory_params(twenty_six) == 25'514'186'112);
  check_tensor(twenty_six, "vision_model.encoder.layers.44.attn.q_norm.weight", {3200});
  check_absent(twenty_six, "vision_model.encoder.layers.44.attn.qkv.bias");
  check_absent(twenty_six, "vision_model.encoder.layers.44.norm1.bias");
  check_tensor(twenty_six, "mlp1.1.weight", {6144, 12800});
  // InternVL2_5-1B: Qwen2-0.5B's names (vocabulary 151,674 in its llm_config) and an untied
  // lm_head; 938,193,024 parameters.
  const Inventory one = fixture_inventory("OpenGVLab--InternVL2_5-1B.reconstructed.json");
  CHECK(one.complete);
  CHECK(trace::test::inventory_params(one) == 938'193'024);
  check_tensor(one, "language_model.model.embed_tokens.weight", {151674, 896});
  check_tensor(one, "language_model.model.layers.23.self_attn.k_proj.bias", {128});
  check_tensor(one, "language_model.lm_head.weight", {151674, 896});
}

TEST_CASE("LFM2: conv.{in_proj, conv, out_proj}, self_attn.out_proj, feed_forward.w1/w3/w2",
          "[checkpoint][names]") {
  // SOURCES-lfm2-kimi-linear.md: LFM2-1.2B, hidden 2048, 16 layers, attention at 2, 5, 8, 10,
  // 12, 14 (32 heads x 64, 8 kv heads); the other ten a short conv of conv_L_cache 3 over 2048
  // channels: conv.conv [2048, 1, 3]; feed-forward 8,192 (block_ff_dim 12288 x 2 / 3);
  // 1,170,340,608 parameters (its card).
  const Inventory inventory = fixture_inventory("LiquidAI--LFM2-1.2B.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(trace::test::inventory_params(inventory) == 1'170'340'608);
  check_tensor(inventory, "model.layers.0.conv.conv.weight", {2048, 1, 3});
  check_tensor(inventory, "model.layers.0.conv.in_proj.weight", {6144, 2048});
  check_absent(inventory, "model.layers.0.conv.conv.bias");
  check_absent(inventory, "model.layers.2.conv.conv.weight");
  check_tensor(inventory, "model.layers.2.self_attn.out_proj.weight", {2048, 2048});
  check_tensor(inventory, "model.layers.2.self_attn.q_layernorm.weight", {64});
  check_tensor(inventory, "model.layers.15.feed_forward.w2.weight", {2048, 8192});
  check_tensor(inventory, "model.layers.15.operator_norm.weight", {2048});
  check_tensor(inventory, "model.embedding_norm.weight", {2048});
  check_absent(inventory, "lm_head.weight");
  // LFM2-8B-A1B (SOURCES-lfm2_moe.md): the Hub's split {F32: 704, BF16: 8,339,929,856} is the 22
  // MoE layers' expert_bias [32] in F32 and the rest; dense layers 0 and 1.
  const Inventory moe = fixture_inventory("LiquidAI--LFM2-8B-A1B.reconstructed.json");
  CHECK(moe.complete);
  CHECK(trace::test::inventory_params(moe) == 8'339'930'560);
  check_tensor(moe, "model.layers.1.feed_forward.w1.weight", {7168, 2048});
  check_tensor(moe, "model.layers.2.feed_forward.gate.weight", {32, 2048});
  check_tensor(moe, "model.layers.2.feed_forward.expert_bias", {32});
  CHECK(trace::test::dtype_of(moe, "model.layers.2.feed_forward.expert_bias") == "F32");
  check_tensor(moe, "model.layers.23.feed_forward.experts.31.w2.weight", {2048, 1792});
}

TEST_CASE("MiMo: Qwen2's names, the MTP layer as model.mtp_layers.0", "[checkpoint][names]") {
  // SOURCES-mimo.md: MiMo-7B-Base, hidden 4096, 36 layers (q/k/v biased, 8 kv heads x 128), MLP
  // 11,008, vocabulary 151,680, untied; one MTP layer of 16 tensors (a decoder layer's 12 +
  // token_layernorm, hidden_layernorm, input_proj [4096, 8192], final_layernorm): 36 x 12 + 3 +
  // 16 = 451 tensors, 7,833,409,536 parameters (210,790,400 of them the MTP layer's).
  const Inventory inventory = fixture_inventory("XiaomiMiMo--MiMo-7B-Base.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.tensors.size() == 451);
  CHECK(trace::test::inventory_params(inventory) == 7'833'409'536);
  check_tensor(inventory, "model.mtp_layers.0.input_proj.weight", {4096, 8192});
  check_tensor(inventory, "model.mtp_layers.0.token_layernorm.weight", {4096});
  check_tensor(inventory, "model.mtp_layers.0.hidden_layernorm.weight", {4096});
  check_tensor(inventory, "model.mtp_layers.0.final_layernorm.weight", {4096});
  check_tensor(inventory, "model.mtp_layers.0.self_attn.k_proj.bias", {1024});
  check_tensor(inventory, "model.mtp_layers.0.mlp.down_proj.weight", {4096, 11008});
  check_absent(inventory, "mtp.layers.0.mlp.down_proj.weight");
  check_absent(inventory, "model.layers.36.mlp.down_proj.weight");
  CHECK(trace::checkpoint::component_of("model.mtp_layers.0.input_proj.weight", inventory) ==
        "mtp");
}

TEST_CASE("InternVL-HF: the legacy layout transformers saves, lambda_1 / lambda_2 per layer",
          "[checkpoint][names]") {
  // SOURCES-internvl_hf.md: InternVL3_5-8B-HF's index, 841 tensors = 4 embeddings + 24 x 18
  // tower + 6 projector + Qwen3-8B's 36 x 11 + 3; 8,528,318,464 parameters. InternVL3-1B-hf: 733
  // tensor keys, 938,193,024 parameters. Tower: d 1024, 448 / 14 = 32 patches a side -> 1,025
  // positions, MLP 4,096, q/k/v biased; projector from 1024 x 2 x 2 = 4,096 values.
  const Inventory eight = fixture_inventory("OpenGVLab--InternVL3_5-8B-HF.json");
  CHECK(eight.complete);
  CHECK(eight.tensors.size() == 841);
  CHECK(trace::test::inventory_params(eight) == 8'528'318'464);
  check_tensor(eight, "vision_tower.embeddings.cls_token", {1, 1, 1024});
  check_tensor(eight, "vision_tower.embeddings.patch_embeddings.projection.weight",
               {1024, 3, 14, 14});
  check_tensor(eight, "vision_tower.embeddings.position_embeddings", {1, 1025, 1024});
  check_tensor(eight, "vision_tower.encoder.layer.23.attention.projection_layer.weight",
               {1024, 1024});
  check_tensor(eight, "vision_tower.encoder.layer.23.attention.k_proj.bias", {1024});
  check_tensor(eight, "vision_tower.encoder.layer.23.mlp.fc2.weight", {1024, 4096});
  check_tensor(eight, "vision_tower.encoder.layer.23.lambda_1", {1024});
  check_tensor(eight, "vision_tower.encoder.layer.23.layernorm_after.bias", {1024});
  check_tensor(eight, "multi_modal_projector.linear_1.weight", {4096, 4096});
  check_tensor(eight, "language_model.model.layers.35.self_attn.q_norm.weight", {128});
  check_tensor(eight, "language_model.lm_head.weight", {151936, 4096});
  check_absent(eight, "vision_tower.layernorm.weight");
  const Inventory one = fixture_inventory("OpenGVLab--InternVL3-1B-hf.reconstructed.json");
  CHECK(one.complete);
  CHECK(one.tensors.size() == 733);
  CHECK(trace::test::inventory_params(one) == 938'193'024);
}
