// Qwen-VL's and Qwen2-Audio's checkpoint names (src/checkpoint/naming_qwen_vl_audio.cpp): the
// first Qwen generation's remote layout (transformer.wte, transformer.h.N.{ln_1, attn.c_attn,
// attn.c_proj, ln_2, mlp.w1 / w2 / c_proj}, transformer.ln_f, lm_head) with Qwen-VL's tower inside
// the transformer (transformer.visual.{conv1, positional_embedding, ln_pre,
// transformer.resblocks.N, attn_pool.*, ln_post, proj}); Qwen2-Audio's language_model.model.*,
// language_model.lm_head, audio_tower.* (Whisper's encoder names) and multi_modal_projector.linear
// (tests/data/configs/SOURCES-qwen_vl-qwen2_audio-names.md). Shapes are written by hand from the
// configs' hyperparameters (SOURCES-vlm.md, SOURCES-whisper.md); counts are derived in the
// comments.
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

}  // namespace

TEST_CASE("Qwen-VL-Chat: transformer.h.N and transformer.visual.*: 853 tensors",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("Qwen--Qwen-VL-Chat.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text (Qwen-7B): H 4096, 32 layers, 32 heads x kv_channels 128, intermediate_size 22016 (two
  // halves of 11008), vocab 151936, untied, no_bias.
  check_tensor(inventory, "transformer.wte.weight", {151936, 4096});
  check_tensor(inventory, "lm_head.weight", {151936, 4096});
  check_tensor(inventory, "transformer.ln_f.weight", {4096});
  check_absent(inventory, "transformer.ln_f.bias");  // RMSNorm
  const std::string layer = "transformer.h.31.";
  check_tensor(inventory, layer + "ln_1.weight", {4096});
  check_tensor(inventory, layer + "ln_2.weight", {4096});
  check_tensor(inventory, layer + "attn.c_attn.weight", {3 * 32 * 128, 4096});
  check_tensor(inventory, layer + "attn.c_attn.bias", {3 * 32 * 128});  // always biased
  check_tensor(inventory, layer + "attn.c_proj.weight", {4096, 32 * 128});
  check_absent(inventory, layer + "attn.c_proj.bias");  // no_bias true
  check_tensor(inventory, layer + "mlp.w1.weight", {22016 / 2, 4096});
  check_tensor(inventory, layer + "mlp.w2.weight", {22016 / 2, 4096});
  check_tensor(inventory, layer + "mlp.c_proj.weight", {4096, 22016 / 2});
  check_absent(inventory, layer + "mlp.w1.bias");
  check_absent(inventory, "transformer.h.32.ln_1.weight");
  check_absent(inventory, "model.layers.0.self_attn.q_proj.weight");
  check_absent(inventory, "transformer.h.0.mlp.gate_proj.weight");
  check_absent(inventory, "transformer.h.0.attn.qkv_proj.weight");
  // Tower (ViT-bigG): width 1664, 48 resblocks, 16 heads, patch 14, MLP int(1664 x 4.9231) =
  // 8192, the Resampler to output_dim 4096 with 256 queries.
  const std::string visual = "transformer.visual.";
  check_tensor(inventory, visual + "conv1.weight", {1664, 3, 14, 14});
  check_absent(inventory, visual + "conv1.bias");
  check_tensor(inventory, visual + "positional_embedding", {256, 1664});  // bare Parameter
  check_absent(inventory, visual + "positional_embedding.weight");
  check_tensor(inventory, visual + "ln_pre.weight", {1664});
  check_tensor(inventory, visual + "ln_pre.bias", {1664});
  const std::string block = visual + "transformer.resblocks.47.";
  check_tensor(inventory, block + "ln_1.weight", {1664});
  check_tensor(inventory, block + "ln_1.bias", {1664});
  check_tensor(inventory, block + "attn.in_proj.weight", {3 * 1664, 1664});
  check_tensor(inventory, block + "attn.in_proj.bias", {3 * 1664});
  check_tensor(inventory, block + "attn.out_proj.weight", {1664, 1664});
  check_tensor(inventory, block + "attn.out_proj.bias", {1664});
  check_tensor(inventory, block + "ln_2.weight", {1664});
  check_tensor(inventory, block + "ln_2.bias", {1664});
  check_tensor(inventory, block + "mlp.c_fc.weight", {8192, 1664});
  check_tensor(inventory, block + "mlp.c_fc.bias", {8192});
  check_tensor(inventory, block + "mlp.c_proj.weight", {1664, 8192});
  check_tensor(inventory, block + "mlp.c_proj.bias", {1664});
  check_absent(inventory, visual + "transformer.resblocks.48.ln_1.weight");
  check_absent(inventory, visual + "transformer.resblocks.0.attn.c_attn.weight");
  check_absent(inventory, visual + "blocks.0.attn.qkv.weight");
  check_tensor(inventory, visual + "attn_pool.pos_embed", {256, 4096});
  check_tensor(inventory, visual + "attn_pool.query", {256, 4096});
  check_tensor(inventory, visual + "attn_pool.kv_proj.weight", {4096, 1664});
  check_absent(inventory, visual + "attn_pool.kv_proj.bias");
  check_tensor(inventory, visual + "attn_pool.attn.in_proj_weight", {3 * 4096, 4096});
  check_tensor(inventory, visual + "attn_pool.attn.in_proj_bias", {3 * 4096});
  check_tensor(inventory, visual + "attn_pool.attn.out_proj.weight", {4096, 4096});
  check_tensor(inventory, visual + "attn_pool.attn.out_proj.bias", {4096});
  check_tensor(inventory, visual + "attn_pool.ln_q.weight", {4096});
  check_tensor(inventory, visual + "attn_pool.ln_kv.bias", {4096});
  check_tensor(inventory, visual + "ln_post.weight", {4096});
  check_tensor(inventory, visual + "ln_post.bias", {4096});
  check_tensor(inventory, visual + "proj", {4096, 4096});  // bare Parameter, used as x @ proj
  check_absent(inventory, visual + "proj.weight");
  CHECK(dtype_of(inventory, visual + "attn_pool.pos_embed") == "BF16");
  // Text: wte, ln_f, lm_head + 32 x 8 (ln_1, c_attn weight + bias, c_proj, ln_2, w1, w2,
  // mlp.c_proj) = 259. Tower: conv1, positional_embedding, ln_pre (2) = 4; 48 resblocks x 12
  // (ln_1, in_proj, out_proj, ln_2, c_fc, c_proj, each weight + bias) = 576; attn_pool: pos_embed,
  // query, kv_proj, attn.in_proj_weight / in_proj_bias / out_proj weight + bias, ln_q (2),
  // ln_kv (2) = 11; ln_post (2), proj = 3: 594 (rtp-llm's QWen-VL table: 7 + 12 per layer + 11).
  constexpr std::size_t k_text = 3 + 32 * 8;
  constexpr std::size_t k_tower = 4 + 48 * 12 + 11 + 3;
  CHECK(k_text == 259);
  CHECK(k_tower == 594);
  CHECK(inventory.tensors.size() == k_text + k_tower);
  CHECK(inventory.tensors.size() == 853);
  // The published total (SOURCES-vlm.md), all BF16 (torch_dtype bfloat16): 2 bytes each.
  CHECK(inventory_params(inventory) == 9'656'935'168LL);
  CHECK(inventory_bytes(inventory) == 2 * 9'656'935'168LL);
}

TEST_CASE("Qwen-7B (model_type qwen without visual): the same text names in 259 tensors",
          "[checkpoint][names]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("Qwen--Qwen-VL-Chat.reconstructed.json"));
  config.erase("visual");
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.h.0.attn.c_attn.weight", {12288, 4096});
  check_tensor(inventory, "transformer.h.0.mlp.w2.weight", {11008, 4096});
  check_absent(inventory, "transformer.visual.proj");
  CHECK(inventory.tensors.size() == 3 + 32 * 8);
  // Qwen-7B as printed at load (SOURCES-vlm.md).
  CHECK(inventory_params(inventory) == 7'721'324'544LL);
}

TEST_CASE("Qwen2-Audio-7B: language_model.* and audio_tower.* beside the projector: 876 tensors",
          "[checkpoint][names]") {
  const Inventory inventory = fixture_inventory("Qwen--Qwen2-Audio-7B.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // Text (Qwen2Config defaults, SOURCES-whisper.md): H 4096, 32 layers, 32 heads and 32 kv heads
  // of 128, I 11008, vocab 156032, untied.
  check_tensor(inventory, "language_model.model.embed_tokens.weight", {156032, 4096});
  check_tensor(inventory, "language_model.lm_head.weight", {156032, 4096});
  check_absent(inventory, "lm_head.weight");
  check_absent(inventory, "language_model.model.lm_head.weight");
  check_tensor(inventory, "language_model.model.norm.weight", {4096});
  const std::string layer = "language_model.model.layers.31.";
  check_tensor(inventory, layer + "input_layernorm.weight", {4096});
  check_tensor(inventory, layer + "post_attention_layernorm.weight", {4096});
  check_tensor(inventory, layer + "self_attn.q_proj.weight", {4096, 4096});
  check_tensor(inventory, layer + "self_attn.q_proj.bias", {4096});
  check_tensor(inventory, layer + "self_attn.k_proj.weight", {32 * 128, 4096});
  check_tensor(inventory, layer + "self_attn.k_proj.bias", {32 * 128});
  check_tensor(inventory, layer + "self_attn.v_proj.bias", {32 * 128});
  check_tensor(inventory, layer + "self_attn.o_proj.weight", {4096, 4096});
  check_absent(inventory, layer + "self_attn.o_proj.bias");
  check_absent(inventory, layer + "self_attn.out_proj.weight");
  check_tensor(inventory, layer + "mlp.gate_proj.weight", {11008, 4096});
  check_tensor(inventory, layer + "mlp.up_proj.weight", {11008, 4096});
  check_tensor(inventory, layer + "mlp.down_proj.weight", {4096, 11008});
  check_absent(inventory, "language_model.model.layers.32.input_layernorm.weight");
  // Audio tower (Whisper-large-v3's encoder): d 1280, 128 mel bins, 1500 positions, 32 layers,
  // 20 heads of 64, F 5120.
  check_tensor(inventory, "audio_tower.conv1.weight", {1280, 128, 3});
  check_tensor(inventory, "audio_tower.conv1.bias", {1280});
  check_tensor(inventory, "audio_tower.conv2.weight", {1280, 1280, 3});
  check_tensor(inventory, "audio_tower.conv2.bias", {1280});
  check_tensor(inventory, "audio_tower.embed_positions.weight", {1500, 1280});
  const std::string audio = "audio_tower.layers.31.";
  check_tensor(inventory, audio + "self_attn.q_proj.weight", {1280, 1280});
  check_tensor(inventory, audio + "self_attn.q_proj.bias", {1280});
  check_tensor(inventory, audio + "self_attn.k_proj.weight", {1280, 1280});
  check_absent(inventory, audio + "self_attn.k_proj.bias");  // WhisperAttention's k_proj
  check_tensor(inventory, audio + "self_attn.v_proj.bias", {1280});
  check_tensor(inventory, audio + "self_attn.out_proj.weight", {1280, 1280});
  check_tensor(inventory, audio + "self_attn.out_proj.bias", {1280});
  check_absent(inventory, audio + "self_attn.o_proj.weight");
  check_tensor(inventory, audio + "self_attn_layer_norm.weight", {1280});
  check_tensor(inventory, audio + "self_attn_layer_norm.bias", {1280});
  check_tensor(inventory, audio + "fc1.weight", {5120, 1280});
  check_tensor(inventory, audio + "fc1.bias", {5120});
  check_tensor(inventory, audio + "fc2.weight", {1280, 5120});
  check_tensor(inventory, audio + "fc2.bias", {1280});
  check_tensor(inventory, audio + "final_layer_norm.weight", {1280});
  check_tensor(inventory, audio + "final_layer_norm.bias", {1280});
  check_absent(inventory, audio + "mlp.fc1.weight");
  check_absent(inventory, "audio_tower.layers.32.fc1.weight");
  check_tensor(inventory, "audio_tower.layer_norm.weight", {1280});
  check_tensor(inventory, "audio_tower.layer_norm.bias", {1280});
  check_absent(inventory, "model.encoder.layer_norm.weight");
  check_tensor(inventory, "multi_modal_projector.linear.weight", {4096, 1280});
  check_tensor(inventory, "multi_modal_projector.linear.bias", {4096});
  CHECK(dtype_of(inventory, "audio_tower.embed_positions.weight") == "BF16");
  // Text: embed_tokens, norm, lm_head + 32 x 12 (2 norms, q/k/v weights and biases, o_proj,
  // gate/up/down_proj) = 387. Audio: conv1, conv2 (weight + bias) and embed_positions = 5;
  // 32 layers x 15 (q, v, out_proj weight + bias, k_proj weight, 2 LayerNorms x 2, fc1, fc2
  // weight + bias) = 480; layer_norm (2): 487. Projector: weight + bias = 2.
  constexpr std::size_t k_text = 3 + 32 * 12;
  constexpr std::size_t k_audio = 5 + 32 * 15 + 2;
  CHECK(k_text == 387);
  CHECK(k_audio == 487);
  CHECK(inventory.tensors.size() == k_text + k_audio + 2);
  CHECK(inventory.tensors.size() == 876);
  // The Hub's safetensors total (SOURCES-whisper.md), all BF16: 2 bytes each.
  CHECK(inventory_params(inventory) == 8'397'094'912LL);
  CHECK(inventory_bytes(inventory) == 2 * 8'397'094'912LL);
}
