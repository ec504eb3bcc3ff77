// Gemma 3n's checkpoint names (src/checkpoint/naming_gemma3n.cpp): Gemma3nForConditionalGeneration
// as convert_gemma3n_weights.py names every tensor: model.language_model.* (Gemma 3 attention,
// AltUp, LAuReL, per-layer embeddings; KV-shared layers keep k_proj / v_proj / k_norm),
// model.audio_tower.* (subsampler + conformer), model.vision_tower.timm_model.* (timm's
// mobilenetv5_300m_enc) and model.embed_audio / model.embed_vision. Shapes, counts and totals
// are written by hand from the converter, modeling_gemma3n.py, timm's mobilenetv5.py and the Hub
// totals (tests/data/configs/SOURCES-gemma3n-names.md, SOURCES-gemma3n.md).
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
using trace::test::dtype_tensor_count;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;
using trace::test::names_distinct;

// Tensors per text layer: q/k/v/o_proj, q_norm, k_norm, gate/up/down_proj, 4 norms (13);
// altup.{correct_output_scale, correction_coefs, prediction_coefs, modality_router,
// router_norm} (5); laurel.{linear_left, linear_right, post_laurel_norm} (3);
// per_layer_input_gate, per_layer_projection, post_per_layer_input_norm (3).
constexpr std::int64_t k_text_layer_tensors = 13 + 5 + 3 + 3;
// embed_tokens, norm, embed_tokens_per_layer, per_layer_model_projection,
// per_layer_projection_norm, altup_projections.{0,1,2}, altup_unembed_projections.{0,1,2}.
constexpr std::int64_t k_text_model_tensors = 5 + 3 + 3;
// Subsampler: conv_{0,1}.conv, conv_{0,1}.norm, input_proj_linear (5); per conformer block:
// two feed-forwards of 4, attention 8 (pre_attn_norm, per_dim_scale, q/k/v, pos_proj, post,
// post_norm), lconv1d 5, norm 1: 22, in 12 blocks.
constexpr std::int64_t k_audio_tensors = 5 + 12 * (2 * 4 + 8 + 5 + 1);
// Two embedders of 4 (embedding, hard / soft norm, projection).
constexpr std::int64_t k_embedder_tensors = 2 * 4;
// MobileNetV5-300M: stem 3 (conv weight + bias, bn); stage 0: 3 EdgeResiduals of 4; stage 1:
// block 0 with dw_start and dw_mid (9), 4 with dw_start (7); stage 2: block 0 (9), 7 with
// dw_start (7), 15 plain UIRs (5), 14 MobileAttentions with strided key / value (10); stage 3:
// block 0 (9), 19 UIRs (5), 19 MobileAttentions without kv stride (6); msfa 5.
constexpr std::int64_t k_vision_tensors =
    3 + 3 * 4 + (9 + 4 * 7) + (9 + 7 * 7 + 15 * 5 + 14 * 10) + (9 + 19 * 5 + 19 * 6) + 5;

}  // namespace

TEST_CASE("gemma-3n-E2B-it (gemma3n): 1,556 tensors named, 5,439,438,272 parameters",
          "[checkpoint][names][gemma3n_names]") {
  const Inventory inventory = fixture_inventory("google--gemma-3n-E2B-it.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  CHECK(k_vision_tensors == 548);
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) ==
        30 * k_text_layer_tensors + k_text_model_tensors + k_audio_tensors + k_embedder_tensors +
            k_vision_tensors);
  CHECK(buffer_count(inventory) == 0);
  CHECK(names_distinct(inventory));  // no name listed twice
  // The Hub's safetensors total; every tensor BF16.
  CHECK(inventory_params(inventory) == 5'439'438'272);
  CHECK(inventory_bytes(inventory) == 2 * std::int64_t{5'439'438'272});
  CHECK(dtype_tensor_count(inventory, "BF16") ==
        static_cast<std::int64_t>(inventory.tensors.size()));

  // Text: V 262400, H 2048, 8 heads x 256, 2 KV heads, FFN 8192, AltUp n = 4, rank 64, p 256.
  const std::string lm = "model.language_model.";
  check_tensor(inventory, lm + "embed_tokens.weight", {262400, 2048});
  check_absent(inventory, "lm_head.weight");  // tied
  check_tensor(inventory, lm + "norm.weight", {2048});
  check_tensor(inventory, lm + "embed_tokens_per_layer.weight", {262144, 30 * 256});
  check_tensor(inventory, lm + "per_layer_model_projection.weight", {30 * 256, 2048});
  check_tensor(inventory, lm + "per_layer_projection_norm.weight", {256});
  check_tensor(inventory, lm + "altup_projections.2.weight", {2048, 2048});
  check_tensor(inventory, lm + "altup_unembed_projections.0.weight", {2048, 2048});
  check_absent(inventory, lm + "altup_projections.3.weight");
  // Layer 0 and layer 29 (KV-shared: it still stores its k/v projections and k_norm).
  for (const std::string& layer : {lm + "layers.0.", lm + "layers.29."}) {
    check_tensor(inventory, layer + "self_attn.q_proj.weight", {8 * 256, 2048});
    check_tensor(inventory, layer + "self_attn.k_proj.weight", {2 * 256, 2048});
    check_tensor(inventory, layer + "self_attn.v_proj.weight", {2 * 256, 2048});
    check_tensor(inventory, layer + "self_attn.o_proj.weight", {2048, 8 * 256});
    check_tensor(inventory, layer + "self_attn.q_norm.weight", {256});
    check_tensor(inventory, layer + "self_attn.k_norm.weight", {256});
    check_absent(inventory, layer + "self_attn.v_norm.weight");  // no scale
    check_tensor(inventory, layer + "mlp.gate_proj.weight", {8192, 2048});
    check_tensor(inventory, layer + "mlp.down_proj.weight", {2048, 8192});
    for (const char* norm : {"input_layernorm", "post_attention_layernorm",
                             "pre_feedforward_layernorm", "post_feedforward_layernorm"}) {
      check_tensor(inventory, layer + norm + ".weight", {2048});
    }
    check_tensor(inventory, layer + "altup.correct_output_scale", {2048});
    check_tensor(inventory, layer + "altup.correction_coefs.weight", {4, 4});
    check_tensor(inventory, layer + "altup.prediction_coefs.weight", {16, 4});
    check_tensor(inventory, layer + "altup.modality_router.weight", {4, 2048});
    check_tensor(inventory, layer + "altup.router_norm.weight", {2048});
    check_tensor(inventory, layer + "laurel.linear_left.weight", {64, 2048});
    check_tensor(inventory, layer + "laurel.linear_right.weight", {2048, 64});
    check_tensor(inventory, layer + "laurel.post_laurel_norm.weight", {2048});
    check_tensor(inventory, layer + "per_layer_input_gate.weight", {256, 2048});
    check_tensor(inventory, layer + "per_layer_projection.weight", {2048, 256});
    check_tensor(inventory, layer + "post_per_layer_input_norm.weight", {2048});
  }
  check_absent(inventory, lm + "layers.30.input_layernorm.weight");

  // Audio: width 1536, 12 blocks, 8 heads of 192, conv kernel 5, sscp channels 128 / 32,
  // 128 mel bins -> 64 -> 32 after the two stride-2 convs.
  const std::string audio = "model.audio_tower.";
  check_tensor(inventory, audio + "subsample_conv_projection.conv_0.conv.weight", {128, 1, 3, 3});
  check_tensor(inventory, audio + "subsample_conv_projection.conv_0.norm.weight", {128});
  check_tensor(inventory, audio + "subsample_conv_projection.conv_1.conv.weight", {32, 128, 3, 3});
  check_tensor(inventory, audio + "subsample_conv_projection.input_proj_linear.weight",
               {1536, 32 * 32});
  for (const std::string& block : {audio + "conformer.0.", audio + "conformer.11."}) {
    check_tensor(inventory, block + "ffw_layer_start.ffw_layer_1.weight", {4 * 1536, 1536});
    check_tensor(inventory, block + "ffw_layer_end.ffw_layer_2.weight", {1536, 4 * 1536});
    check_tensor(inventory, block + "ffw_layer_end.post_layer_norm.weight", {1536});
    check_tensor(inventory, block + "attention.pre_attn_norm.weight", {1536});
    check_tensor(inventory, block + "attention.attn.per_dim_scale", {1536 / 8});
    check_tensor(inventory, block + "attention.attn.k_proj.weight", {1536, 1536});
    check_tensor(inventory, block + "attention.attn.relative_position_embedding.pos_proj.weight",
                 {1536, 1536});
    check_tensor(inventory, block + "attention.post.weight", {1536, 1536});
    check_tensor(inventory, block + "lconv1d.linear_start.weight", {2 * 1536, 1536});
    check_tensor(inventory, block + "lconv1d.depthwise_conv1d.weight", {1536, 1, 5});
    check_tensor(inventory, block + "lconv1d.conv_norm.weight", {1536});
    check_tensor(inventory, block + "norm.weight", {1536});
  }
  check_absent(inventory, audio + "conformer.12.norm.weight");

  // Embedders: 128 soft tokens each; projections into the text width.
  check_tensor(inventory, "model.embed_audio.embedding.weight", {128, 1536});
  check_tensor(inventory, "model.embed_audio.embedding_projection.weight", {2048, 1536});
  check_tensor(inventory, "model.embed_vision.embedding.weight", {128, 2048});
  check_tensor(inventory, "model.embed_vision.soft_embedding_norm.weight", {2048});
  check_tensor(inventory, "model.embed_vision.embedding_projection.weight", {2048, 2048});
  check_absent(inventory, "model.embed_vision.embedding_post_projection_norm.weight");

  // Vision: timm's names as the converter writes them.
  const std::string timm = "model.vision_tower.timm_model.";
  check_tensor(inventory, timm + "conv_stem.conv.weight", {64, 3, 3, 3});
  check_tensor(inventory, timm + "conv_stem.conv.bias", {64});
  check_tensor(inventory, timm + "blocks.0.0.conv_exp.weight", {4 * 64, 64, 3, 3});
  check_tensor(inventory, timm + "blocks.0.2.conv_pwl.weight", {128, 4 * 128, 1, 1});
  check_tensor(inventory, timm + "blocks.1.0.dw_start.conv.weight", {128, 1, 3, 3});
  check_tensor(inventory, timm + "blocks.1.0.dw_mid.conv.weight", {6 * 128, 1, 5, 5});
  check_tensor(inventory, timm + "blocks.1.4.layer_scale.gamma", {256});
  check_absent(inventory, timm + "blocks.1.1.dw_mid.conv.weight");
  check_tensor(inventory, timm + "blocks.2.7.dw_start.conv.weight", {640, 1, 5, 5});
  check_absent(inventory, timm + "blocks.2.8.dw_start.conv.weight");
  // Stage 2 block 9: the first MobileAttention (12 heads x 64, key / value strided by 2).
  check_tensor(inventory, timm + "blocks.2.9.attn.query.proj.weight", {12 * 64, 640, 1, 1});
  check_tensor(inventory, timm + "blocks.2.9.attn.key.down_conv.weight", {640, 1, 3, 3});
  check_tensor(inventory, timm + "blocks.2.9.attn.value.norm.weight", {640});
  check_tensor(inventory, timm + "blocks.2.9.attn.value.proj.weight", {64, 640, 1, 1});
  check_tensor(inventory, timm + "blocks.2.9.attn.output.proj.weight", {640, 12 * 64, 1, 1});
  check_tensor(inventory, timm + "blocks.2.36.pw_exp.conv.weight", {2 * 640, 640, 1, 1});
  check_absent(inventory, timm + "blocks.2.37.norm.weight");
  // Stage 3: MobileAttention at odd indices, 16 heads x 96, no kv stride.
  check_tensor(inventory, timm + "blocks.3.37.attn.key.proj.weight", {96, 1280, 1, 1});
  check_absent(inventory, timm + "blocks.3.37.attn.key.down_conv.weight");
  check_tensor(inventory, timm + "blocks.3.38.pw_proj.bn.weight", {1280});
  check_tensor(inventory, timm + "msfa.ffn.pw_exp.conv.weight", {3840, 640 + 1280, 1, 1});
  check_tensor(inventory, timm + "msfa.ffn.pw_proj.conv.weight", {2048, 3840, 1, 1});
  check_tensor(inventory, timm + "msfa.norm.weight", {2048});
}

TEST_CASE("gemma-3n-E4B-it (gemma3n): 35 layers of FFN 16384, 7,849,978,192 parameters",
          "[checkpoint][names][gemma3n_names]") {
  const Inventory inventory = fixture_inventory("google--gemma-3n-E4B-it.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) ==
        35 * k_text_layer_tensors + k_text_model_tensors + k_audio_tensors + k_embedder_tensors +
            k_vision_tensors);
  CHECK(inventory_params(inventory) == 7'849'978'192);
  CHECK(inventory_bytes(inventory) == 2 * std::int64_t{7'849'978'192});
  const std::string lm = "model.language_model.";
  check_tensor(inventory, lm + "layers.34.mlp.up_proj.weight", {16384, 2048});
  check_tensor(inventory, lm + "layers.34.self_attn.k_proj.weight", {512, 2048});
  check_tensor(inventory, lm + "embed_tokens_per_layer.weight", {262144, 35 * 256});
  check_tensor(inventory, lm + "per_layer_model_projection.weight", {35 * 256, 2048});
  check_absent(inventory, lm + "layers.35.mlp.up_proj.weight");
  // The towers are E2B's.
  check_tensor(inventory, "model.audio_tower.conformer.11.lconv1d.linear_end.weight", {1536, 1536});
  check_tensor(inventory, "model.vision_tower.timm_model.blocks.3.0.pw_exp.conv.weight",
               {6 * 640, 640, 1, 1});
}
