// Per family: a few tensor names and shapes the published checkpoints hold, written by hand from
// the source named in each test (transformers' modeling code, a published model.safetensors.index
// weight map or header listing) and the fixture's hyperparameters; the inventory must list them.
#include <algorithm>
#include <string>
#include <vector>

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
using trace::test::find_tensor;
using trace::test::fixture_inventory;

}  // namespace

TEST_CASE("Gemma: model.* with GeGLU projections and a tied head", "[checkpoint][names]") {
  // modeling_gemma.py; gemma-7b: 16 heads x head_dim 256 = 4096-wide q on a 3072 residual.
  const Inventory inventory = fixture_inventory("google--gemma-7b.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {256000, 3072});
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.weight", {4096, 3072});
  check_tensor(inventory, "model.layers.27.mlp.gate_proj.weight", {24576, 3072});
  check_tensor(inventory, "model.layers.27.post_attention_layernorm.weight", {3072});
  check_tensor(inventory, "model.norm.weight", {3072});
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("Gemma 2: four norms per layer", "[checkpoint][names]") {
  // modeling_gemma2.py Gemma2DecoderLayer; google/gemma-2-9b (bundled): 16 x 256 queries, 8 kv
  // heads.
  const Inventory inventory = trace::checkpoint::build_inventory(
      trace::parse_model_config(trace::test::catalog_text("google/gemma-2-9b")));
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_proj.weight", {4096, 3584});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {2048, 3584});
  check_tensor(inventory, "model.layers.41.pre_feedforward_layernorm.weight", {3584});
  check_tensor(inventory, "model.layers.41.post_feedforward_layernorm.weight", {3584});
}

TEST_CASE("Gemma 3 text: per-head QK-norm", "[checkpoint][names]") {
  // modeling_gemma3.py Gemma3Attention q_norm / k_norm over head_dim; gemma-3-1b-it: 1 kv head.
  const Inventory inventory = fixture_inventory("google--gemma-3-1b-it.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.embed_tokens.weight", {262144, 1152});
  check_tensor(inventory, "model.layers.0.self_attn.q_norm.weight", {256});
  check_tensor(inventory, "model.layers.25.self_attn.k_proj.weight", {256, 1152});
  check_tensor(inventory, "model.layers.25.mlp.down_proj.weight", {1152, 6912});
}

TEST_CASE("Phi-3: fused qkv_proj and gate_up_proj", "[checkpoint][names]") {
  // modeling_phi3.py; Phi-3-mini: 32 heads x 96, qkv 3 x 3072 = 9216, gate_up 2 x 8192.
  const Inventory inventory = fixture_inventory("microsoft--Phi-3-mini-4k-instruct.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.qkv_proj.weight", {9216, 3072});
  check_tensor(inventory, "model.layers.0.self_attn.o_proj.weight", {3072, 3072});
  check_tensor(inventory, "model.layers.31.mlp.gate_up_proj.weight", {16384, 3072});
  check_tensor(inventory, "model.layers.31.mlp.down_proj.weight", {3072, 8192});
  check_tensor(inventory, "lm_head.weight", {32064, 3072});
}

TEST_CASE("Qwen2-MoE: routed experts, one shared_expert and its gate", "[checkpoint][names]") {
  // modeling_qwen2_moe.py Qwen2MoeSparseMoeBlock; Qwen1.5-MoE-A2.7B: 60 experts of 1408.
  const Inventory inventory = fixture_inventory("Qwen--Qwen1.5-MoE-A2.7B.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mlp.gate.weight", {60, 2048});
  check_tensor(inventory, "model.layers.0.mlp.experts.59.down_proj.weight", {2048, 1408});
  check_tensor(inventory, "model.layers.0.mlp.shared_expert.gate_proj.weight", {5632, 2048});
  check_tensor(inventory, "model.layers.0.mlp.shared_expert_gate.weight", {1, 2048});
  check_tensor(inventory, "model.layers.23.self_attn.q_proj.bias", {2048});
  check_absent(inventory, "model.layers.0.mlp.shared_experts.gate_proj.weight");
}

TEST_CASE("OLMo 2: full-width QK-norm, norms after attention and MLP", "[checkpoint][names]") {
  // modeling_olmo2.py Olmo2Attention q_norm = RMSNorm(heads x head_dim); no input_layernorm.
  const Inventory inventory = fixture_inventory("allenai--OLMo-2-1124-13B.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.q_norm.weight", {5120});
  check_tensor(inventory, "model.layers.39.post_feedforward_layernorm.weight", {5120});
  check_absent(inventory, "model.layers.0.input_layernorm.weight");
}

TEST_CASE("Phi-2: self_attn.dense, mlp.fc1/fc2, final_layernorm, biased head",
          "[checkpoint][names]") {
  // modeling_phi.py (microsoft/phi-2's index uses the same names); F16 as its torch_dtype.
  const Inventory inventory = fixture_inventory("microsoft--phi-2.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.dense.weight", {2560, 2560});
  check_tensor(inventory, "model.layers.0.self_attn.dense.bias", {2560});
  check_tensor(inventory, "model.layers.0.mlp.fc1.weight", {10240, 2560});
  check_tensor(inventory, "model.layers.31.mlp.fc2.weight", {2560, 10240});
  check_tensor(inventory, "model.final_layernorm.weight", {2560});
  check_tensor(inventory, "lm_head.bias", {51200});
  check_absent(inventory, "model.layers.0.self_attn.o_proj.weight");
  CHECK(find_tensor(inventory, "model.layers.0.mlp.fc1.weight")->dtype == "F16");
}

TEST_CASE("GPT-2: wte/wpe, h.N, Conv1D [in, out], attn.bias masks", "[checkpoint][names]") {
  // openai-community/gpt2's model.safetensors: no prefix, c_attn [768, 2304] (Conv1D), and
  // h.N.attn.bias causal masks (160 tensors for 12 layers = 148 parameters + 12 masks).
  // gpt2-medium: 24 layers of 1024, 1024 positions.
  const Inventory inventory = fixture_inventory("openai-community--gpt2-medium.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "wte.weight", {50257, 1024});
  check_tensor(inventory, "wpe.weight", {1024, 1024});
  check_tensor(inventory, "h.0.attn.c_attn.weight", {1024, 3072});
  check_tensor(inventory, "h.0.attn.c_attn.bias", {3072});
  check_tensor(inventory, "h.0.mlp.c_fc.weight", {1024, 4096});
  check_tensor(inventory, "h.23.mlp.c_proj.weight", {4096, 1024});
  check_tensor(inventory, "ln_f.bias", {1024});
  check_tensor(inventory, "h.23.attn.bias", {1, 1, 1024, 1024});
  CHECK(find_tensor(inventory, "h.23.attn.bias")->buffer);
  // 2 embeddings + 24 x 12 + ln_f's 2 = 292 parameters, + 24 masks.
  CHECK(inventory.tensors.size() == 316);
}

TEST_CASE("GPT-2 (distilgpt2): 12 + 2 + 2 tensors per 6 layers", "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("distilbert--distilgpt2.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "h.5.attn.c_proj.weight", {768, 768});
  CHECK(inventory.tensors.size() == 2 + 6 * 12 + 2 + 6);
}

TEST_CASE("Falcon-7B: transformer.h.N, multi-query query_key_value, stored head copy",
          "[checkpoint][names]") {
  // modeling_falcon.py; 71 heads x 64 + 2 x 64 = 4672 qkv rows; ffn 4 x 4544 = 18176.
  const Inventory inventory = fixture_inventory("tiiuae--falcon-7b-instruct.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.word_embeddings.weight", {65024, 4544});
  check_tensor(inventory, "transformer.h.0.self_attention.query_key_value.weight", {4672, 4544});
  check_tensor(inventory, "transformer.h.0.self_attention.dense.weight", {4544, 4544});
  check_tensor(inventory, "transformer.h.0.mlp.dense_h_to_4h.weight", {18176, 4544});
  check_tensor(inventory, "transformer.h.31.mlp.dense_4h_to_h.weight", {4544, 18176});
  check_tensor(inventory, "transformer.h.0.input_layernorm.bias", {4544});
  check_tensor(inventory, "transformer.ln_f.weight", {4544});
  check_tensor(inventory, "lm_head.weight", {65024, 4544});
  CHECK(find_tensor(inventory, "lm_head.weight")->buffer);
  check_absent(inventory, "transformer.h.0.self_attention.query_key_value.bias");
}

TEST_CASE("Falcon-40B: ln_attn / ln_mlp, grouped query_key_value", "[checkpoint][names]") {
  // (128 + 2 x 8) heads x 64 = 9216 qkv rows.
  const Inventory inventory = fixture_inventory("tiiuae--falcon-40b.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.h.0.self_attention.query_key_value.weight", {9216, 8192});
  check_tensor(inventory, "transformer.h.59.ln_attn.weight", {8192});
  check_tensor(inventory, "transformer.h.59.ln_mlp.bias", {8192});
  check_absent(inventory, "transformer.h.0.input_layernorm.weight");
}

TEST_CASE("GPT-NeoX (Pythia-410M): gpt_neox.*, embed_out, optional mask buffers",
          "[checkpoint][names]") {
  // modeling_gpt_neox.py; head_dim 64, rotary_pct 0.25 -> 16 rotary dims -> inv_freq [8].
  const Inventory inventory = fixture_inventory("EleutherAI--pythia-410m.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "gpt_neox.embed_in.weight", {50304, 1024});
  check_tensor(inventory, "gpt_neox.layers.0.attention.query_key_value.weight", {3072, 1024});
  check_tensor(inventory, "gpt_neox.layers.0.attention.query_key_value.bias", {3072});
  check_tensor(inventory, "gpt_neox.layers.0.attention.dense.weight", {1024, 1024});
  check_tensor(inventory, "gpt_neox.layers.23.mlp.dense_h_to_4h.weight", {4096, 1024});
  check_tensor(inventory, "gpt_neox.layers.23.mlp.dense_4h_to_h.bias", {1024});
  check_tensor(inventory, "gpt_neox.final_layer_norm.weight", {1024});
  check_tensor(inventory, "embed_out.weight", {50304, 1024});
  check_tensor(inventory, "gpt_neox.layers.0.attention.rotary_emb.inv_freq", {8});
  check_tensor(inventory, "gpt_neox.layers.0.attention.bias", {1, 1, 2048, 2048});
  check_tensor(inventory, "gpt_neox.layers.0.attention.masked_bias", {});
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("BERT: bert.encoder.layer.N, gamma/beta LayerNorms, pre-training heads",
          "[checkpoint][names]") {
  // modeling_bert.py BertForPreTraining; Google's uploads keep the TF LayerNorm names.
  const Inventory inventory = fixture_inventory("google-bert--bert-base-uncased.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "bert.embeddings.word_embeddings.weight", {30522, 768});
  check_tensor(inventory, "bert.embeddings.position_embeddings.weight", {512, 768});
  check_tensor(inventory, "bert.embeddings.token_type_embeddings.weight", {2, 768});
  check_tensor(inventory, "bert.embeddings.LayerNorm.gamma", {768});
  check_tensor(inventory, "bert.encoder.layer.0.attention.self.query.weight", {768, 768});
  check_tensor(inventory, "bert.encoder.layer.0.attention.self.value.bias", {768});
  check_tensor(inventory, "bert.encoder.layer.0.attention.output.dense.weight", {768, 768});
  check_tensor(inventory, "bert.encoder.layer.0.attention.output.LayerNorm.beta", {768});
  check_tensor(inventory, "bert.encoder.layer.11.intermediate.dense.weight", {3072, 768});
  check_tensor(inventory, "bert.encoder.layer.11.output.dense.weight", {768, 3072});
  check_tensor(inventory, "bert.encoder.layer.11.output.LayerNorm.gamma", {768});
  check_tensor(inventory, "bert.pooler.dense.weight", {768, 768});
  check_tensor(inventory, "cls.predictions.transform.dense.bias", {768});
  check_tensor(inventory, "cls.predictions.transform.LayerNorm.gamma", {768});
  check_tensor(inventory, "cls.predictions.bias", {30522});
  check_tensor(inventory, "cls.seq_relationship.weight", {2, 768});
  check_absent(inventory, "cls.predictions.decoder.weight");
  // 5 embedding tensors + 12 x 16 + pooler 2 + transform 4 + bias 1 + seq_relationship 2, and
  // the position_ids buffer later transformers saved (listed, never reported missing).
  CHECK(inventory.tensors.size() == 206 + 1);
  const ExpectedTensor* position_ids = find_tensor(inventory, "bert.embeddings.position_ids");
  REQUIRE(position_ids != nullptr);
  CHECK(position_ids->buffer);
}

TEST_CASE("gpt-oss: MXFP4 stacked experts, router, sinks", "[checkpoint][names]") {
  // modeling_gpt_oss.py; openai/gpt-oss-20b's headers: gate_up_proj_blocks U8 [32, 5760, 90, 16],
  // _scales U8 [32, 5760, 90], _bias BF16 [32, 5760]; 120b has 128 experts of the same width.
  const Inventory inventory = fixture_inventory("openai--gpt-oss-120b.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mlp.experts.gate_up_proj_blocks", {128, 5760, 90, 16});
  check_tensor(inventory, "model.layers.0.mlp.experts.gate_up_proj_scales", {128, 5760, 90});
  check_tensor(inventory, "model.layers.0.mlp.experts.gate_up_proj_bias", {128, 5760});
  check_tensor(inventory, "model.layers.35.mlp.experts.down_proj_blocks", {128, 2880, 90, 16});
  check_tensor(inventory, "model.layers.35.mlp.experts.down_proj_scales", {128, 2880, 90});
  check_tensor(inventory, "model.layers.35.mlp.experts.down_proj_bias", {128, 2880});
  check_tensor(inventory, "model.layers.0.mlp.router.weight", {128, 2880});
  check_tensor(inventory, "model.layers.0.mlp.router.bias", {128});
  check_tensor(inventory, "model.layers.0.self_attn.sinks", {64});
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {512, 2880});
  check_absent(inventory, "model.layers.0.mlp.experts.0.gate_proj.weight");
  CHECK(find_tensor(inventory, "model.layers.0.mlp.experts.gate_up_proj_blocks")->dtype == "U8");
  // gate_up blocks hold 128 x 5760 x 2880 four-bit values.
  CHECK(find_tensor(inventory, "model.layers.0.mlp.experts.gate_up_proj_blocks")->logical_params ==
        2'123'366'400);
}

TEST_CASE("StarCoder2: biased LayerNorms and mlp.c_fc / c_proj", "[checkpoint][names]") {
  // modeling_starcoder2.py; starcoder2-15b: 48 heads x 128, 4 kv heads, 24576-wide MLP, untied.
  const Inventory inventory = fixture_inventory("bigcode--starcoder2-15b.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.weight", {512, 6144});
  check_tensor(inventory, "model.layers.0.self_attn.o_proj.bias", {6144});
  check_tensor(inventory, "model.layers.39.mlp.c_fc.weight", {24576, 6144});
  check_tensor(inventory, "model.layers.39.mlp.c_proj.bias", {6144});
  check_tensor(inventory, "model.layers.0.input_layernorm.bias", {6144});
  check_tensor(inventory, "model.norm.bias", {6144});
  check_tensor(inventory, "lm_head.weight", {49152, 6144});
  check_absent(inventory, "model.layers.0.mlp.up_proj.weight");
}

TEST_CASE("EXAONE: transformer.h.N with attn.attention and c_fc_0 / c_fc_1",
          "[checkpoint][names]") {
  // EXAONE-3.0-7.8B's remote modeling_exaone.py: 32 heads x 128, 8 kv heads, 14336-wide MLP.
  const Inventory inventory =
      fixture_inventory("LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.wte.weight", {102400, 4096});
  check_tensor(inventory, "transformer.h.0.ln_1.weight", {4096});
  check_tensor(inventory, "transformer.h.0.attn.attention.k_proj.weight", {1024, 4096});
  check_tensor(inventory, "transformer.h.31.attn.attention.out_proj.weight", {4096, 4096});
  check_tensor(inventory, "transformer.h.31.mlp.c_fc_0.weight", {14336, 4096});
  check_tensor(inventory, "transformer.h.31.mlp.c_fc_1.weight", {14336, 4096});
  check_tensor(inventory, "transformer.h.31.mlp.c_proj.weight", {4096, 14336});
  check_tensor(inventory, "transformer.ln_f.weight", {4096});
  check_tensor(inventory, "lm_head.weight", {102400, 4096});
}

TEST_CASE("Baichuan: q, k and v packed in W_pack", "[checkpoint][names]") {
  // Baichuan-7B's remote modeling_baichuan.py: W_pack = Linear(4096, 3 x 4096, bias=False).
  const Inventory inventory = fixture_inventory("baichuan-inc--Baichuan-7B.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.W_pack.weight", {12288, 4096});
  check_tensor(inventory, "model.layers.31.mlp.gate_proj.weight", {11008, 4096});
  check_absent(inventory, "model.layers.0.self_attn.q_proj.weight");
}

TEST_CASE("GLM-4-0414: fused gate_up_proj and four norms per layer", "[checkpoint][names]") {
  // modeling_glm4.py Glm4DecoderLayer; GLM-4-9B-0414: 2 kv heads x 128, q/k/v biased, o not.
  const Inventory inventory = fixture_inventory("THUDM--GLM-4-9B-0414.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.self_attn.k_proj.bias", {256});
  check_absent(inventory, "model.layers.0.self_attn.o_proj.bias");
  check_tensor(inventory, "model.layers.0.mlp.gate_up_proj.weight", {27392, 4096});
  check_tensor(inventory, "model.layers.39.post_self_attn_layernorm.weight", {4096});
  check_tensor(inventory, "model.layers.39.post_mlp_layernorm.weight", {4096});
}

TEST_CASE("Phi-3.5-MoE: block_sparse_moe experts, LayerNorm biases, lm_head bias",
          "[checkpoint][names]") {
  // modeling_phimoe.py as the upload stores it; 16 experts of 6400, 8 kv heads x 128.
  const Inventory inventory =
      fixture_inventory("microsoft--Phi-3.5-MoE-instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.block_sparse_moe.gate.weight", {16, 4096});
  check_tensor(inventory, "model.layers.0.block_sparse_moe.experts.15.w1.weight", {6400, 4096});
  check_tensor(inventory, "model.layers.31.block_sparse_moe.experts.0.w2.weight", {4096, 6400});
  check_tensor(inventory, "model.layers.0.self_attn.v_proj.bias", {1024});
  check_tensor(inventory, "model.layers.0.input_layernorm.bias", {4096});
  check_tensor(inventory, "lm_head.bias", {32064});
}

TEST_CASE("OLMo-1: its LayerNorms store no tensor", "[checkpoint][names]") {
  // modeling_olmo.py OlmoLayerNorm calls F.layer_norm without weight or bias; OLMo-1B-hf ties.
  const Inventory inventory = fixture_inventory("allenai--OLMo-1B-hf.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.15.mlp.down_proj.weight", {2048, 8192});
  check_absent(inventory, "model.layers.0.input_layernorm.weight");
  check_absent(inventory, "model.norm.weight");
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("MPT: transformer.blocks.N with attn.Wqkv and ffn, no biases", "[checkpoint][names]") {
  // MPT-7B's remote modeling_mpt.py / blocks.py: d_model 4096, 32 heads, expansion 4, no_bias.
  const Inventory inventory = fixture_inventory("mosaicml--mpt-7b-instruct.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.wte.weight", {50432, 4096});
  check_tensor(inventory, "transformer.blocks.0.norm_1.weight", {4096});
  check_tensor(inventory, "transformer.blocks.0.attn.Wqkv.weight", {12288, 4096});
  check_tensor(inventory, "transformer.blocks.31.attn.out_proj.weight", {4096, 4096});
  check_tensor(inventory, "transformer.blocks.31.ffn.up_proj.weight", {16384, 4096});
  check_tensor(inventory, "transformer.norm_f.weight", {4096});
  check_absent(inventory, "transformer.blocks.0.norm_1.bias");
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("Nemotron and Hunyuan: plain names, squared-ReLU MLP, renamed QK-norms",
          "[checkpoint][names]") {
  // modeling_nemotron.py: Minitron-4B has 24 heads x 128 (3,072 wide q on a 3,072 residual),
  // 8 kv heads, up_proj / down_proj only, LayerNorm1P with a bias.
  const Inventory minitron = fixture_inventory("nvidia--Minitron-4B-Base.json");
  CHECK(minitron.complete);
  check_tensor(minitron, "model.layers.0.mlp.up_proj.weight", {9216, 3072});
  check_absent(minitron, "model.layers.0.mlp.gate_proj.weight");
  check_tensor(minitron, "model.layers.31.input_layernorm.bias", {3072});
  check_tensor(minitron, "lm_head.weight", {256000, 3072});
  // modeling_hunyuan_v1_dense.py: query_layernorm / key_layernorm over one head (128).
  const Inventory hunyuan = fixture_inventory("tencent--Hy-MT2-7B.json");
  CHECK(hunyuan.complete);
  check_tensor(hunyuan, "model.layers.0.self_attn.query_layernorm.weight", {128});
  check_tensor(hunyuan, "model.layers.0.self_attn.key_layernorm.weight", {128});
  check_absent(hunyuan, "lm_head.weight");
}

TEST_CASE("DeepSeekMoE 16B: one dense layer, then routed and shared experts",
          "[checkpoint][names]") {
  // DeepSeekMoE's remote modeling_deepseek.py: layer 0 dense (10,944 wide), layers 1-27 hold
  // mlp.gate [64, 2,048], 64 experts of 1,408 and 2 shared experts as one 2,816-wide MLP.
  const Inventory inventory =
      fixture_inventory("deepseek-ai--deepseek-moe-16b-base.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.mlp.gate_proj.weight", {10944, 2048});
  check_tensor(inventory, "model.layers.1.mlp.gate.weight", {64, 2048});
  check_tensor(inventory, "model.layers.1.mlp.experts.63.down_proj.weight", {2048, 1408});
  check_tensor(inventory, "model.layers.27.mlp.shared_experts.up_proj.weight", {2816, 2048});
  check_tensor(inventory, "lm_head.weight", {102400, 2048});
}

TEST_CASE("Qwen3-Next: linear_attn, gated q_proj, shared_expert and the mtp.* module",
          "[checkpoint][names]") {
  // modeling_qwen3_next.py and vLLM's qwen3_next_mtp.py; the names as converters and loaders list
  // them for Qwen/Qwen3-Next-80B-A3B (model.layers.L.linear_attn.in_proj_qkvz / in_proj_ba /
  // conv1d / A_log / dt_bias / norm, mtp.fc, mtp.pre_fc_norm_*). Fixture: H 2048, DeltaNet 16 key
  // heads x 128 and 32 value heads x 128, conv 4; attention 16 x 256 queries (+ gate), 2 KV heads;
  // 512 experts of 512 and one shared expert of 512.
  const Inventory inventory =
      fixture_inventory("Qwen--Qwen3-Next-80B-A3B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.layers.0.linear_attn.in_proj_qkvz.weight",
               {2 * 16 * 128 + 2 * 32 * 128, 2048});
  check_tensor(inventory, "model.layers.0.linear_attn.in_proj_ba.weight", {2 * 32, 2048});
  check_tensor(inventory, "model.layers.0.linear_attn.conv1d.weight",
               {2 * 16 * 128 + 32 * 128, 1, 4});
  check_tensor(inventory, "model.layers.0.linear_attn.A_log", {32});
  check_tensor(inventory, "model.layers.0.linear_attn.dt_bias", {32});
  check_tensor(inventory, "model.layers.0.linear_attn.norm.weight", {128});
  check_tensor(inventory, "model.layers.0.linear_attn.out_proj.weight", {2048, 32 * 128});
  check_tensor(inventory, "model.layers.3.self_attn.q_proj.weight", {2 * 16 * 256, 2048});
  check_tensor(inventory, "model.layers.3.self_attn.q_norm.weight", {256});
  check_tensor(inventory, "model.layers.3.mlp.shared_expert.gate_proj.weight", {512, 2048});
  check_tensor(inventory, "model.layers.3.mlp.shared_expert_gate.weight", {1, 2048});
  check_tensor(inventory, "model.layers.47.mlp.experts.511.down_proj.weight", {2048, 512});
  check_tensor(inventory, "mtp.fc.weight", {2048, 2 * 2048});
  check_tensor(inventory, "mtp.pre_fc_norm_embedding.weight", {2048});
  check_tensor(inventory, "mtp.pre_fc_norm_hidden.weight", {2048});
  check_tensor(inventory, "mtp.layers.0.self_attn.k_proj.weight", {2 * 256, 2048});
  check_tensor(inventory, "mtp.norm.weight", {2048});
  check_absent(inventory, "model.layers.0.mamba.in_proj_qkvz.weight");
  check_absent(inventory, "model.layers.3.mlp.shared_experts.gate_proj.weight");
}
