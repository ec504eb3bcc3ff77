// MiniCPM-V's checkpoint names (src/checkpoint/naming_minicpmv.cpp): the text model under
// llm.model.* with llm.lm_head, the SigLIP / Idefics2 tower under vpm.* (vpm.embeddings.*,
// vpm.encoder.layers.N, vpm.post_layernorm) and the resampler's resampler.{query, kv_proj,
// attn.in_proj_weight, attn.in_proj_bias, attn.out_proj, ln_q, ln_kv, ln_post, proj}
// (tests/data/configs/SOURCES-minicpmv-names.md: MiniCPM-V 2.6's 789-tensor index, vLLM's
// minicpmv.py, llama.cpp's minicpmv-surgery.py). Shapes are written by hand from the configs'
// hyperparameters (SOURCES-minicpmv.md); counts are derived in the comments.
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
using trace::test::dtype_of;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

// The SigLIP-400M tower every release stores (d 1152, 27 layers, MLP 4304, patch 14, image
// 980: (980 / 14)^2 = 70 x 70 = 4900 positions), drop_vision_last_layer false.
void check_vpm(const Inventory& inventory) {
  check_tensor(inventory, "vpm.embeddings.patch_embedding.weight", {1152, 3, 14, 14});
  check_tensor(inventory, "vpm.embeddings.patch_embedding.bias", {1152});
  check_tensor(inventory, "vpm.embeddings.position_embedding.weight", {4900, 1152});
  const std::string layer = "vpm.encoder.layers.26.";
  check_tensor(inventory, layer + "layer_norm1.weight", {1152});
  check_tensor(inventory, layer + "layer_norm1.bias", {1152});
  check_tensor(inventory, layer + "layer_norm2.bias", {1152});
  check_tensor(inventory, layer + "self_attn.q_proj.weight", {1152, 1152});
  check_tensor(inventory, layer + "self_attn.q_proj.bias", {1152});
  check_tensor(inventory, layer + "self_attn.k_proj.weight", {1152, 1152});
  check_tensor(inventory, layer + "self_attn.v_proj.bias", {1152});
  check_tensor(inventory, layer + "self_attn.out_proj.weight", {1152, 1152});
  check_tensor(inventory, layer + "self_attn.out_proj.bias", {1152});
  check_tensor(inventory, layer + "mlp.fc1.weight", {4304, 1152});
  check_tensor(inventory, layer + "mlp.fc1.bias", {4304});
  check_tensor(inventory, layer + "mlp.fc2.weight", {1152, 4304});
  check_tensor(inventory, layer + "mlp.fc2.bias", {1152});
  check_absent(inventory, layer + "self_attn.o_proj.weight");
  check_absent(inventory, layer + "mlp.up_proj.weight");
  check_absent(inventory, "vpm.encoder.layers.27.layer_norm1.weight");
  check_tensor(inventory, "vpm.post_layernorm.weight", {1152});
  check_tensor(inventory, "vpm.post_layernorm.bias", {1152});
  check_absent(inventory, "vpm.encoder.post_layernorm.weight");
  check_absent(inventory, "vpm.head.probe");  // no pooling head
}

// The resampler of text width `d` and `queries` learned queries (kv_dim 1152 != d: kv_proj).
void check_resampler(const Inventory& inventory, std::int64_t d, std::int64_t queries) {
  check_tensor(inventory, "resampler.query", {queries, d});
  check_tensor(inventory, "resampler.kv_proj.weight", {d, 1152});
  check_absent(inventory, "resampler.kv_proj.bias");
  check_tensor(inventory, "resampler.attn.in_proj_weight", {3 * d, d});
  check_tensor(inventory, "resampler.attn.in_proj_bias", {3 * d});
  check_tensor(inventory, "resampler.attn.out_proj.weight", {d, d});
  check_tensor(inventory, "resampler.attn.out_proj.bias", {d});
  for (const char* norm : {"ln_q", "ln_kv", "ln_post"}) {
    check_tensor(inventory, std::string("resampler.") + norm + ".weight", {d});
    check_tensor(inventory, std::string("resampler.") + norm + ".bias", {d});
  }
  check_tensor(inventory, "resampler.proj", {d, d});
  check_absent(inventory, "resampler.proj.weight");
  check_absent(inventory, "resampler.query.weight");
  check_absent(inventory, "resampler.attn.weight");
  // Non-persistent sin-cos buffers.
  check_absent(inventory, "resampler.pos_embed");
  check_absent(inventory, "resampler.temporal_pos_embed");
}

// Tower: 27 layers x 16 (layer_norm1 / 2 w+b 4, q/k/v/out_proj w+b 8, fc1 / fc2 w+b 4) = 432,
// plus patch_embedding w+b 2, position_embedding 1, post_layernorm w+b 2: 437.
constexpr std::int64_t k_vpm_tensors = 27 * 16 + 2 + 1 + 2;
// Resampler: query, kv_proj.weight, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj w+b
// (2), ln_q / ln_kv / ln_post w+b (6), proj: 13.
constexpr std::int64_t k_resampler_tensors = 1 + 1 + 2 + 2 + 3 * 2 + 1;

}  // namespace

TEST_CASE("MiniCPM-V 2.6: llm.model.* (Qwen2), vpm.*, resampler.*: the index's 789 tensors",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("openbmb--MiniCPM-V-2_6.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text (Qwen2: H 3584, 28 layers, 28 heads of 128, 4 kv heads, I 18944, vocab 151666,
  // untied, biased q/k/v).
  check_tensor(inventory, "llm.model.embed_tokens.weight", {151666, 3584});
  check_tensor(inventory, "llm.lm_head.weight", {151666, 3584});
  check_tensor(inventory, "llm.model.norm.weight", {3584});
  const std::string layer = "llm.model.layers.27.";
  check_tensor(inventory, layer + "input_layernorm.weight", {3584});
  check_tensor(inventory, layer + "post_attention_layernorm.weight", {3584});
  check_tensor(inventory, layer + "self_attn.q_proj.weight", {3584, 3584});
  check_tensor(inventory, layer + "self_attn.q_proj.bias", {3584});
  check_tensor(inventory, layer + "self_attn.k_proj.weight", {4 * 128, 3584});
  check_tensor(inventory, layer + "self_attn.k_proj.bias", {4 * 128});
  check_tensor(inventory, layer + "self_attn.v_proj.weight", {4 * 128, 3584});
  check_tensor(inventory, layer + "self_attn.v_proj.bias", {4 * 128});
  check_tensor(inventory, layer + "self_attn.o_proj.weight", {3584, 3584});
  check_absent(inventory, layer + "self_attn.o_proj.bias");
  check_tensor(inventory, layer + "mlp.gate_proj.weight", {18944, 3584});
  check_tensor(inventory, layer + "mlp.up_proj.weight", {18944, 3584});
  check_tensor(inventory, layer + "mlp.down_proj.weight", {3584, 18944});
  check_absent(inventory, "llm.model.layers.28.input_layernorm.weight");
  check_absent(inventory, "llm.model.rotary_emb.inv_freq");
  // The RKLLM copy of the index renamed the text part to Qwen2's own names; the upload's are
  // llm.*, and the bare names are not expected.
  check_absent(inventory, "model.embed_tokens.weight");
  check_absent(inventory, "lm_head.weight");
  check_absent(inventory, "llm.model.lm_head.weight");
  check_vpm(inventory);
  check_resampler(inventory, 3584, 64);
  CHECK(dtype_of(inventory, "resampler.attn.in_proj_weight") == "BF16");
  CHECK(dtype_of(inventory, "vpm.embeddings.position_embedding.weight") == "BF16");
  // Text: embed_tokens, norm, lm_head + 28 layers x 12 (2 norms, q/k/v weights and biases,
  // o_proj, gate/up/down_proj) = 3 + 336 = 339; tower 437; resampler 13: 789, the index's
  // count (SOURCES-minicpmv-names.md).
  CHECK(inventory.tensors.size() ==
        static_cast<std::size_t>(3 + 28 * 12 + k_vpm_tensors + k_resampler_tensors));
  CHECK(inventory.tensors.size() == 789);
  // The Hub's BF16 count; the index's total_size 16,198,350,304 bytes is 2 bytes each.
  CHECK(inventory_params(inventory) == 8'099'175'152);
  CHECK(inventory_bytes(inventory) == 16'198'350'304LL);
  // The resampler alone (SOURCES-minicpmv.md): query 64 x 3584, kv_proj 3584 x 1152,
  // attn 4 x 3584^2 + 4 x 3584, three LayerNorms 6 x 3584, proj 3584^2.
  std::int64_t resampler = 0;
  for (const auto& tensor : inventory.tensors) {
    if (tensor.name.starts_with("resampler.")) resampler += tensor.logical_params;
  }
  CHECK(resampler ==
        64LL * 3584 + 3584LL * 1152 + 4LL * 3584 * 3584 + 4 * 3584 + 6 * 3584 + 3584LL * 3584);
  CHECK(resampler == 68'619'264);
}

TEST_CASE("MiniCPM-Llama3-V 2.5: llm.model.* (Llama 3), the Idefics2 tower, 96 queries",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("openbmb--MiniCPM-Llama3-V-2_5.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text (Llama-3-8B: H 4096, 32 layers, 32 heads of 128, 8 kv heads, I 14336, vocab 128256,
  // untied, no biases).
  check_tensor(inventory, "llm.model.embed_tokens.weight", {128256, 4096});
  check_tensor(inventory, "llm.lm_head.weight", {128256, 4096});
  check_tensor(inventory, "llm.model.norm.weight", {4096});
  const std::string layer = "llm.model.layers.31.";
  check_tensor(inventory, layer + "self_attn.q_proj.weight", {4096, 4096});
  check_absent(inventory, layer + "self_attn.q_proj.bias");
  check_tensor(inventory, layer + "self_attn.k_proj.weight", {8 * 128, 4096});
  check_tensor(inventory, layer + "self_attn.o_proj.weight", {4096, 4096});
  check_tensor(inventory, layer + "mlp.gate_proj.weight", {14336, 4096});
  check_tensor(inventory, layer + "mlp.down_proj.weight", {4096, 14336});
  check_tensor(inventory, layer + "post_attention_layernorm.weight", {4096});
  check_absent(inventory, "llm.model.layers.32.input_layernorm.weight");
  // Idefics2VisionTransformer stores SigLIP's names.
  check_vpm(inventory);
  check_resampler(inventory, 4096, 96);
  // Text: 3 + 32 x 9 (2 norms, q/k/v/o_proj, gate/up/down_proj) = 291; tower 437; resampler
  // 13: 741.
  CHECK(inventory.tensors.size() ==
        static_cast<std::size_t>(3 + 32 * 9 + k_vpm_tensors + k_resampler_tensors));
  CHECK(inventory.tensors.size() == 741);
  // SOURCES-minicpmv.md: text 8,030,261,248 + tower 417,792,240 + resampler (96 x 4096 +
  // 4096 x 1152 + 4 x 4096^2 + 4 x 4096 + 6 x 4096 + 4096^2) 89,038,848.
  CHECK(8'030'261'248LL + 417'792'240LL + 96LL * 4096 + 4096LL * 1152 + 4LL * 4096 * 4096 +
            4 * 4096 + 6 * 4096 + 4096LL * 4096 ==
        8'537'092'336LL);
  CHECK(inventory_params(inventory) == 8'537'092'336LL);
  CHECK(inventory_bytes(inventory) == 2 * 8'537'092'336LL);
}

TEST_CASE("MiniCPM-V 4.5: llm.model.* (Qwen3, QK-norm), vpm.*, resampler.*",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("openbmb--MiniCPM-V-4_5.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text (Qwen3-8B: H 4096, 36 layers, 32 heads of 128, 8 kv heads, I 12288, vocab 151748,
  // untied, no biases, per-head q_norm / k_norm [128]).
  check_tensor(inventory, "llm.model.embed_tokens.weight", {151748, 4096});
  check_tensor(inventory, "llm.lm_head.weight", {151748, 4096});
  const std::string layer = "llm.model.layers.35.";
  check_tensor(inventory, layer + "self_attn.q_proj.weight", {32 * 128, 4096});
  check_absent(inventory, layer + "self_attn.q_proj.bias");
  check_tensor(inventory, layer + "self_attn.v_proj.weight", {8 * 128, 4096});
  check_tensor(inventory, layer + "self_attn.q_norm.weight", {128});
  check_tensor(inventory, layer + "self_attn.k_norm.weight", {128});
  check_tensor(inventory, layer + "mlp.up_proj.weight", {12288, 4096});
  check_tensor(inventory, layer + "mlp.down_proj.weight", {4096, 12288});
  check_absent(inventory, "llm.model.layers.36.input_layernorm.weight");
  check_vpm(inventory);
  check_resampler(inventory, 4096, 64);
  // Text: 3 + 36 x 11 (2 norms, q/k norms, q/k/v/o_proj, gate/up/down_proj) = 399; tower 437;
  // resampler 13: 849.
  CHECK(inventory.tensors.size() ==
        static_cast<std::size_t>(3 + 36 * 11 + k_vpm_tensors + k_resampler_tensors));
  CHECK(inventory.tensors.size() == 849);
  // SOURCES-minicpmv.md: text 8,189,195,264 + tower 417,792,240 + resampler 88,907,776.
  CHECK(8'189'195'264LL + 417'792'240LL + 88'907'776LL == 8'695'895'280LL);
  CHECK(inventory_params(inventory) == 8'695'895'280LL);
  CHECK(inventory_bytes(inventory) == 2 * 8'695'895'280LL);
}

TEST_CASE("MiniCPM-V: drop_vision_last_layer leaves vpm.encoder.layers.26 unstored",
          "[checkpoint][names]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("openbmb--MiniCPM-V-2_6.reconstructed.json"));
  config["drop_vision_last_layer"] = true;
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
  CHECK(inventory.complete);
  check_tensor(inventory, "vpm.encoder.layers.25.mlp.fc2.weight", {1152, 4304});
  check_absent(inventory, "vpm.encoder.layers.26.layer_norm1.weight");
  check_tensor(inventory, "vpm.post_layernorm.weight", {1152});
  // 789 less one layer's 16 tensors; 8,099,175,152 less its 15,239,504 parameters
  // (SOURCES-minicpmv.md: 8,083,935,648).
  CHECK(inventory.tensors.size() == 789 - 16);
  CHECK(inventory_params(inventory) == 8'099'175'152LL - 15'239'504LL);
  CHECK(inventory_params(inventory) == 8'083'935'648LL);
}

TEST_CASE("MiniCPM-V: no resampler.kv_proj where the tower is as wide as the text model",
          "[checkpoint][names]") {
  // Resampler: kv_proj = nn.Linear(kv_dim, embed_dim, bias=False) if kv_dim != embed_dim, else
  // nn.Identity(). A 3584-wide tower (16 heads of 224) feeds MiniCPM-V 2.6's decoder as is.
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("openbmb--MiniCPM-V-2_6.reconstructed.json"));
  config["vision_config"]["hidden_size"] = 3584;
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
  CHECK(inventory.complete);
  check_absent(inventory, "resampler.kv_proj.weight");
  check_tensor(inventory, "resampler.attn.in_proj_weight", {3 * 3584, 3584});
  check_tensor(inventory, "vpm.encoder.layers.0.self_attn.q_proj.weight", {3584, 3584});
  CHECK(inventory.tensors.size() == 789 - 1);
}
