// The Qwen Omni models' checkpoint names (src/checkpoint/naming_qwen_omni.cpp).
// Qwen2.5-Omni (Qwen2_5OmniModel): thinker.model / thinker.lm_head (Qwen2), thinker.visual
// (Qwen2.5-VL's tower with q / k / v / proj apart), thinker.audio_tower (Whisper layers, conv
// stem, proj, audio_bos_eos_token), talker.* (Qwen2 layers, thinker_to_talker_proj, codec_head)
// in BF16, and token2wav.code2wav_dit_model (with its ECAPA-TDNN) and code2wav_bigvgan_model in
// F32. Qwen3-Omni (Qwen3OmniMoeForConditionalGeneration): a Qwen3-MoE thinker with one tensor
// per expert, the Qwen3-VL tower in Omni's names (merger_list, ln_q, mlp.0 / mlp.2), the AuT
// audio tower, a MoE talker with its code predictor, and code2wav, all BF16. Shapes, counts and
// totals are written by hand from the modeling files, the ports that read the real headers, the
// published Qwen3-Omni weight listing and the Hub's totals
// (tests/data/configs/SOURCES-qwen_omni-names.md, SOURCES-qwen2_5_omni.md, SOURCES-qwen3_omni.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "header_builder.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/checkpoint/reconcile.hpp"
#include "trace/estimate/parameters.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::buffer_count;
using trace::test::bytes_under;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::count_under;
using trace::test::dtype_elements;
using trace::test::dtype_of;
using trace::test::dtype_tensor_count;
using trace::test::find_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;
using trace::test::names_distinct;

// A Qwen2 decoder layer (thinker and talker): q / k / v_proj weight + bias, o_proj weight,
// gate / up / down_proj, input_layernorm and post_attention_layernorm.
constexpr std::int64_t k_decoder_layer_tensors = 3 * 2 + 1 + 3 + 2;
// thinker.model.embed_tokens, thinker.model.norm, thinker.lm_head (untied).
constexpr std::int64_t k_thinker_extra_tensors = 3;
// patch_embed.proj (no bias); 32 blocks of norm1, norm2, q / k / v / proj and gate / up /
// down_proj, each weight + bias; merger ln_q + mlp.0 and mlp.2 (weight + bias).
constexpr std::int64_t k_vision_tensors = 1 + 32 * (2 + 4 * 2 + 3 * 2) + 1 + 2 * 2;
// conv1, conv2 (+ bias); 32 layers of q_proj, k_proj (no bias), v_proj, out_proj, fc1, fc2,
// two LayerNorms; ln_post, proj (+ bias), audio_bos_eos_token.
constexpr std::int64_t k_audio_tensors = 2 * 2 + 32 * (2 + 1 + 2 + 2 + 2 + 2 + 2 * 2) + 2 + 2 + 1;
// thinker_to_talker_proj (+ bias), model.embed_tokens, 24 layers, model.norm, codec_head.
constexpr std::int64_t k_talker_tensors = 2 + 1 + 24 * k_decoder_layer_tensors + 1 + 1;
// time_mlp.0 / .2, codec_embed, input_embed.proj; the ECAPA-TDNN's 20 biased Conv1d (blocks.0,
// three SE-Res2Net blocks of tdnn1, one res2net conv, tdnn2, se conv1 / conv2; mfa, asp.tdnn,
// asp.conv, fc); 22 blocks of attn_norm.linear, to_q, to_k, to_v, to_out.0, ff.ff.0, ff.ff.3
// (each + bias); norm_out.linear, proj_out.
constexpr std::int64_t k_dit_tensors = 2 * 2 + 1 + 2 + 2 * (1 + 3 * 5 + 4) + 22 * 7 * 2 + 2 * 2;
// conv_pre (+ bias), six ups (+ bias), 18 AMP blocks of six convs (+ bias) and six SnakeBeta
// (alpha, beta), activation_post (alpha, beta), conv_post (no bias).
constexpr std::int64_t k_bigvgan_tensors = 2 + 6 * 2 + 18 * (6 * 2 + 6 * 2) + 2 + 1;

// The token2wav's F32 parameters, both sizes (SOURCES-qwen2_5_omni.md, "Derivation").
constexpr std::int64_t k_dit_params = 333'607'760;
constexpr std::int64_t k_bigvgan_params = 115'443'504;

// Qwen2.5-Omni-7B: the Whisper-style audio tower at d 1280, 32 layers, FFN 5120, 128 mel bins,
// output 3584.
constexpr std::int64_t k_audio_layer_params =
    3 * (1280 * 1280 + 1280) + 1280 * 1280 + 2 * (5120 * 1280) + 5120 + 1280 + 2 * 2 * 1280;
constexpr std::int64_t k_audio_7b_params = (1280 * 128 * 3 + 1280) + (1280 * 1280 * 3 + 1280) +
                                           32 * k_audio_layer_params + 2 * 1280 +
                                           (3584 * 1280 + 3584) + 2 * 3584;

std::int64_t tensor_count(const Inventory& inventory) {
  return static_cast<std::int64_t>(inventory.tensors.size());
}

}  // namespace

TEST_CASE("Qwen2.5-Omni-7B (qwen2_5_omni): 2,448 tensors named, 10,732,225,408 parameters",
          "[checkpoint][names][qwen_omni_names]") {
  const Inventory inventory = fixture_inventory("Qwen--Qwen2.5-Omni-7B.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  CHECK(k_vision_tensors == 518);   // Ovis-Omni-Embedding-3B's weight map (SOURCES)
  CHECK(k_audio_tensors == 489);    // the same
  CHECK(k_bigvgan_tensors == 449);  // nntrainer's notes on the 3B header
  CHECK(k_dit_tensors == 359);      // 318 Linear tensors + 40 ECAPA + codec_embed
  // 28 thinker layers; the DiT's inv_freq is the one buffer.
  CHECK(count_under(inventory, "thinker.model.") + count_under(inventory, "thinker.lm_head.") ==
        28 * k_decoder_layer_tensors + k_thinker_extra_tensors);
  CHECK(count_under(inventory, "thinker.visual.") == k_vision_tensors);
  CHECK(count_under(inventory, "thinker.audio_tower.") == k_audio_tensors);
  CHECK(count_under(inventory, "talker.") == k_talker_tensors);
  CHECK(count_under(inventory, "token2wav.code2wav_dit_model.") == k_dit_tensors + 1);
  CHECK(count_under(inventory, "token2wav.code2wav_bigvgan_model.") == k_bigvgan_tensors);
  CHECK(tensor_count(inventory) == 28 * k_decoder_layer_tensors + k_thinker_extra_tensors +
                                       k_vision_tensors + k_audio_tensors + k_talker_tensors +
                                       k_dit_tensors + 1 + k_bigvgan_tensors);
  CHECK(buffer_count(inventory) == 1);
  CHECK(names_distinct(inventory));  // no name listed twice

  // The parameters; with the stored inv_freq [32], the Hub's safetensors total 10,732,225,440.
  CHECK(inventory_params(inventory) == 10'732'225'408);
  CHECK(inventory_params(inventory) + 32 == 10'732'225'440);
  // BF16 thinker and talker, F32 token2wav (449 tensors of BigVGAN, 359 + inv_freq of the DiT):
  // 22,362,553,472 bytes, MTEB's memory_usage_mb 21,327 once rounded.
  CHECK(dtype_tensor_count(inventory, "F32") == k_dit_tensors + 1 + k_bigvgan_tensors);
  CHECK(dtype_tensor_count(inventory, "BF16") ==
        tensor_count(inventory) - (k_dit_tensors + 1 + k_bigvgan_tensors));
  CHECK(dtype_elements(inventory, "F32") == k_dit_params + k_bigvgan_params + 32);
  CHECK(dtype_elements(inventory, "BF16") == 10'732'225'408 - k_dit_params - k_bigvgan_params);
  CHECK(inventory_bytes(inventory) == 22'362'553'472);
  CHECK((inventory_bytes(inventory) + (1 << 19)) / (1 << 20) == 21'327);

  // Per module, as the derivation table of SOURCES-qwen2_5_omni.md splits them.
  CHECK(bytes_under(inventory, "thinker.model.") + bytes_under(inventory, "thinker.lm_head.") ==
        2 * std::int64_t{7'615'616'512});
  CHECK(bytes_under(inventory, "thinker.audio_tower.") == 2 * k_audio_7b_params);
  CHECK(k_audio_7b_params == 639'647'232);
  CHECK(bytes_under(inventory, "thinker.visual.") == 2 * std::int64_t{676'550'144});
  CHECK(bytes_under(inventory, "talker.") == 2 * std::int64_t{1'351'360'256});
  CHECK(bytes_under(inventory, "token2wav.code2wav_dit_model.") == 4 * (k_dit_params + 32));
  CHECK(bytes_under(inventory, "token2wav.code2wav_bigvgan_model.") == 4 * k_bigvgan_params);

  // Thinker: V 152064, H 3584, 28 heads x 128, 4 KV heads, FFN 18944; q / k / v biased.
  const std::string text = "thinker.model.";
  check_tensor(inventory, text + "embed_tokens.weight", {152064, 3584});
  check_tensor(inventory, "thinker.lm_head.weight", {152064, 3584});
  check_tensor(inventory, text + "layers.27.self_attn.q_proj.weight", {28 * 128, 3584});
  check_tensor(inventory, text + "layers.27.self_attn.k_proj.bias", {4 * 128});
  check_tensor(inventory, text + "layers.27.self_attn.o_proj.weight", {3584, 28 * 128});
  check_absent(inventory, text + "layers.27.self_attn.o_proj.bias");
  check_tensor(inventory, text + "layers.0.mlp.down_proj.weight", {3584, 18944});
  check_tensor(inventory, text + "layers.0.post_attention_layernorm.weight", {3584});
  check_tensor(inventory, text + "norm.weight", {3584});
  check_absent(inventory, text + "layers.28.input_layernorm.weight");
  CHECK(dtype_of(inventory, text + "norm.weight") == "BF16");

  // Vision: 1280 wide, 16 heads, SwiGLU 3420, patches 3 x 2 x 14 x 14, merged 2 x 2 into 3584.
  const std::string visual = "thinker.visual.";
  check_tensor(inventory, visual + "patch_embed.proj.weight", {1280, 3, 2, 14, 14});
  check_absent(inventory, visual + "patch_embed.proj.bias");
  check_tensor(inventory, visual + "blocks.31.attn.q.weight", {1280, 1280});
  check_tensor(inventory, visual + "blocks.31.attn.v.bias", {1280});
  check_tensor(inventory, visual + "blocks.31.attn.proj.weight", {1280, 1280});
  check_absent(inventory, visual + "blocks.0.attn.qkv.weight");  // stored apart
  check_tensor(inventory, visual + "blocks.0.mlp.gate_proj.bias", {3420});
  check_tensor(inventory, visual + "blocks.0.mlp.down_proj.weight", {1280, 3420});
  check_tensor(inventory, visual + "blocks.0.norm2.weight", {1280});
  check_absent(inventory, visual + "blocks.0.norm2.bias");  // RMSNorm
  check_tensor(inventory, visual + "merger.ln_q.weight", {1280});
  check_tensor(inventory, visual + "merger.mlp.0.weight", {1280 * 4, 1280 * 4});
  check_tensor(inventory, visual + "merger.mlp.2.weight", {3584, 1280 * 4});
  check_tensor(inventory, visual + "merger.mlp.2.bias", {3584});
  CHECK(dtype_of(inventory, visual + "merger.mlp.2.bias") == "BF16");

  // Audio: k_proj without bias; the sinusoidal positions are not stored.
  const std::string audio = "thinker.audio_tower.";
  check_tensor(inventory, audio + "conv1.weight", {1280, 128, 3});
  check_tensor(inventory, audio + "conv2.weight", {1280, 1280, 3});
  check_tensor(inventory, audio + "layers.31.self_attn.k_proj.weight", {1280, 1280});
  check_absent(inventory, audio + "layers.31.self_attn.k_proj.bias");
  check_tensor(inventory, audio + "layers.31.self_attn.out_proj.bias", {1280});
  check_tensor(inventory, audio + "layers.0.fc1.weight", {5120, 1280});
  check_tensor(inventory, audio + "layers.0.final_layer_norm.bias", {1280});
  check_tensor(inventory, audio + "ln_post.bias", {1280});
  check_tensor(inventory, audio + "proj.weight", {3584, 1280});
  check_tensor(inventory, audio + "audio_bos_eos_token.weight", {2, 3584});
  check_absent(inventory, audio + "positional_embedding.positional_embedding");

  // Talker: 896 wide, 12 heads x 128, 4 KV heads, FFN 18944, codec vocab 8448, E 3584.
  check_tensor(inventory, "talker.thinker_to_talker_proj.weight", {896, 3584});
  check_tensor(inventory, "talker.thinker_to_talker_proj.bias", {896});
  check_tensor(inventory, "talker.model.embed_tokens.weight", {8448, 3584});
  check_tensor(inventory, "talker.model.layers.23.self_attn.q_proj.weight", {12 * 128, 896});
  check_tensor(inventory, "talker.model.layers.23.self_attn.v_proj.bias", {4 * 128});
  check_tensor(inventory, "talker.model.layers.23.self_attn.o_proj.weight", {896, 12 * 128});
  check_tensor(inventory, "talker.model.layers.0.mlp.up_proj.weight", {18944, 896});
  check_tensor(inventory, "talker.model.norm.weight", {896});
  check_tensor(inventory, "talker.codec_head.weight", {8448, 896});
  check_absent(inventory, "talker.codec_head.bias");
  CHECK(dtype_of(inventory, "talker.codec_head.weight") == "BF16");

  // DiT: dim 1024, 22 blocks, ff 2048, codec table num_embeds + 1 = 8194 x 512, mel 80.
  const std::string dit = "token2wav.code2wav_dit_model.";
  check_tensor(inventory, dit + "time_embed.time_mlp.0.weight", {1024, 256});
  check_tensor(inventory, dit + "text_embed.codec_embed.weight", {8193 + 1, 512});
  check_tensor(inventory, dit + "input_embed.proj.weight", {1024, 80 + 128 + 192 + 512});
  check_tensor(inventory, dit + "transformer_blocks.21.attn_norm.linear.weight", {6 * 1024, 1024});
  check_tensor(inventory, dit + "transformer_blocks.21.attn.to_out.0.bias", {1024});
  check_tensor(inventory, dit + "transformer_blocks.21.ff.ff.3.weight", {1024, 2048});
  check_absent(inventory, dit + "transformer_blocks.22.ff.ff.3.weight");
  check_tensor(inventory, dit + "norm_out.linear.weight", {2 * 1024, 1024});
  check_tensor(inventory, dit + "proj_out.weight", {80, 1024});
  CHECK(dtype_of(inventory, dit + "proj_out.weight") == "F32");
  const std::string ecapa = dit + "input_embed.spk_encoder.";
  check_tensor(inventory, ecapa + "blocks.0.conv.weight", {256, 80, 5});
  check_tensor(inventory, ecapa + "blocks.3.res2net_block.blocks.0.conv.weight", {128, 128, 3});
  check_absent(inventory, ecapa + "blocks.3.res2net_block.blocks.1.conv.weight");  // scale 2
  check_tensor(inventory, ecapa + "blocks.1.se_block.conv1.weight", {64, 256, 1});
  check_tensor(inventory, ecapa + "mfa.conv.weight", {768, 3 * 256, 1});
  check_tensor(inventory, ecapa + "asp.tdnn.conv.weight", {64, 3 * 768, 1});
  check_tensor(inventory, ecapa + "asp.conv.weight", {768, 64, 1});
  check_tensor(inventory, ecapa + "fc.weight", {128, 2 * 768, 1});
  check_tensor(inventory, ecapa + "fc.bias", {128});
  // The persistent rotary buffer: head_dim 64 / 2, F32, no parameter.
  const trace::checkpoint::ExpectedTensor* inv_freq =
      find_tensor(inventory, dit + "rotary_embed.inv_freq");
  REQUIRE(inv_freq != nullptr);
  CHECK(inv_freq->buffer);
  CHECK(inv_freq->logical_params == 0);
  CHECK(inv_freq->shape == std::vector<std::int64_t>{64 / 2});
  CHECK(inv_freq->dtype == "F32");

  // BigVGAN: conv_pre 80 -> 1536, six ConvTranspose1d ([in, out, k]) to 24 channels.
  const std::string vocoder = "token2wav.code2wav_bigvgan_model.";
  check_tensor(inventory, vocoder + "conv_pre.weight", {1536, 80, 7});
  check_tensor(inventory, vocoder + "ups.0.0.weight", {1536, 768, 11});
  check_tensor(inventory, vocoder + "ups.0.0.bias", {768});
  check_tensor(inventory, vocoder + "ups.1.0.weight", {768, 384, 7});
  check_tensor(inventory, vocoder + "ups.5.0.weight", {48, 24, 4});
  check_tensor(inventory, vocoder + "resblocks.0.convs1.0.weight", {768, 768, 3});
  check_tensor(inventory, vocoder + "resblocks.2.convs2.2.weight", {768, 768, 11});
  check_tensor(inventory, vocoder + "resblocks.17.convs1.2.weight", {24, 24, 11});
  check_tensor(inventory, vocoder + "resblocks.17.activations.5.act.beta", {24});
  check_absent(inventory, vocoder + "resblocks.18.convs1.0.weight");
  check_tensor(inventory, vocoder + "activation_post.act.alpha", {24});
  check_tensor(inventory, vocoder + "conv_post.weight", {1, 24, 7});
  check_absent(inventory, vocoder + "conv_post.bias");
  CHECK(dtype_of(inventory, vocoder + "resblocks.17.activations.5.act.beta") == "F32");
}

TEST_CASE("Qwen2.5-Omni-3B (qwen2_5_omni): 2,544 tensors named, 5,537,120,640 parameters",
          "[checkpoint][names][qwen_omni_names]") {
  const Inventory inventory = fixture_inventory("Qwen--Qwen2.5-Omni-3B.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // 36 thinker layers; the towers, the talker's layer count and the token2wav are the 7B's.
  CHECK(tensor_count(inventory) == 36 * k_decoder_layer_tensors + k_thinker_extra_tensors +
                                       k_vision_tensors + k_audio_tensors + k_talker_tensors +
                                       k_dit_tensors + 1 + k_bigvgan_tensors);
  CHECK(buffer_count(inventory) == 1);
  CHECK(inventory_params(inventory) == 5'537'120'640);
  CHECK(dtype_elements(inventory, "F32") == k_dit_params + k_bigvgan_params + 32);
  CHECK(inventory_bytes(inventory) == 2 * (5'537'120'640 - k_dit_params - k_bigvgan_params) +
                                          4 * (k_dit_params + k_bigvgan_params + 32));
  // Thinker: V 151936, H 2048, 16 heads x 128, 2 KV heads, FFN 11008; lm_head untied.
  check_tensor(inventory, "thinker.lm_head.weight", {151936, 2048});
  check_tensor(inventory, "thinker.model.layers.35.self_attn.k_proj.weight", {2 * 128, 2048});
  check_tensor(inventory, "thinker.model.layers.35.mlp.gate_proj.weight", {11008, 2048});
  // Towers project into 2048.
  check_tensor(inventory, "thinker.visual.merger.mlp.2.weight", {2048, 1280 * 4});
  check_tensor(inventory, "thinker.audio_tower.proj.weight", {2048, 1280});
  check_tensor(inventory, "thinker.audio_tower.audio_bos_eos_token.weight", {2, 2048});
  // Talker: 14 heads x 64, 2 KV heads, FFN 4864, E 2048.
  check_tensor(inventory, "talker.thinker_to_talker_proj.weight", {896, 2048});
  check_tensor(inventory, "talker.model.embed_tokens.weight", {8448, 2048});
  check_tensor(inventory, "talker.model.layers.0.self_attn.q_proj.weight", {14 * 64, 896});
  check_tensor(inventory, "talker.model.layers.0.self_attn.k_proj.weight", {2 * 64, 896});
  check_tensor(inventory, "talker.model.layers.23.mlp.down_proj.weight", {896, 4864});
  check_tensor(inventory, "token2wav.code2wav_bigvgan_model.ups.0.0.weight", {1536, 768, 11});
}

TEST_CASE("Qwen2.5-Omni-3B reconciles with or without the stored inv_freq",
          "[checkpoint][names][qwen_omni_names]") {
  const trace::ModelDescription model =
      trace::test::fixture("Qwen--Qwen2.5-Omni-3B.reconstructed.json");
  const Inventory inventory = trace::checkpoint::build_inventory(model);
  const std::int64_t params = trace::count_parameters(model).total;
  const std::string inv_freq = "token2wav.code2wav_dit_model.rotary_embed.inv_freq";
  // Headers holding the inventory's tensors, `skipped` left out and `bf16` stored in BF16.
  const auto reconcile = [&](const std::string& skipped, const std::string& bf16) {
    std::vector<trace::test::TensorSpec> specs;
    for (const trace::checkpoint::ExpectedTensor& tensor : inventory.tensors) {
      if (tensor.name == skipped) continue;
      specs.push_back(
          {tensor.name, tensor.name == bf16 ? "BF16" : std::string(tensor.dtype), tensor.shape});
    }
    const std::vector<trace::checkpoint::SafetensorsHeader> shards = {
        trace::checkpoint::parse_safetensors_header(trace::test::header_json(specs), 0,
                                                    "model.safetensors")};
    return trace::checkpoint::reconcile(inventory, shards, params);
  };
  // The original uploads store inv_freq; a transformers-5 re-save drops it: both agree.
  for (const std::string& skipped : {std::string(), inv_freq}) {
    INFO(skipped);
    const trace::checkpoint::Reconciliation r = reconcile(skipped, "");
    CHECK(r.only_in_checkpoint_count == 0);
    CHECK(r.only_in_trace_count == 0);
    CHECK(r.mismatch_count == 0);
    CHECK(r.delta_params == 0);
  }
  // A token2wav tensor stored in BF16 is not what the uploads hold.
  CHECK(reconcile("", "token2wav.code2wav_dit_model.proj_out.weight").mismatch_count == 1);
}

TEST_CASE("Qwen2.5-Omni without audio output: the thinker alone, complete",
          "[checkpoint][names][qwen_omni_names]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("Qwen--Qwen2.5-Omni-7B.reconstructed.json"));
  config["enable_audio_output"] = false;
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
  CHECK(inventory.complete);
  CHECK(tensor_count(inventory) == 28 * k_decoder_layer_tensors + k_thinker_extra_tensors +
                                       k_vision_tensors + k_audio_tensors);
  CHECK(count_under(inventory, "talker.") == 0);
  CHECK(count_under(inventory, "token2wav.") == 0);
  CHECK(buffer_count(inventory) == 0);
  CHECK(inventory_params(inventory) == 7'615'616'512 + 639'647'232 + 676'550'144);
  CHECK(dtype_tensor_count(inventory, "F32") == 0);
}

namespace {

// Qwen3-Omni-30B-A3B. A thinker layer: q / k / v / o_proj, q_norm, k_norm, two norms, the router
// mlp.gate and 128 experts of gate / up / down_proj.
constexpr std::int64_t k_thinker_moe_layer_tensors = 4 + 2 + 2 + 1 + 128 * 3;
// conv2d1-3 (+ bias), conv_out (no bias); 32 layers of q / k / v / out_proj (all biased), fc1,
// fc2, two LayerNorms; ln_post, proj1, proj2 (+ bias).
constexpr std::int64_t k_aut_tensors = 3 * 2 + 1 + 32 * (4 * 2 + 2 * 2 + 2 * 2) + 3 * 2;
// patch_embed.proj (+ bias), pos_embed; 27 blocks of attn.qkv, attn.proj, mlp.linear_fc1,
// mlp.linear_fc2, norm1, norm2 (each weight + bias); the merger and three merger_list entries of
// ln_q, mlp.0, mlp.2 (each weight + bias).
constexpr std::int64_t k_qwen3_vision_tensors = 2 + 1 + 27 * 6 * 2 + (1 + 3) * 3 * 2;
// A talker layer: a thinker layer's attention and norms, the router, 128 experts, the
// shared_expert's three projections and shared_expert_gate.
constexpr std::int64_t k_talker_moe_layer_tensors = 4 + 2 + 2 + 1 + 128 * 3 + 3 + 1;
// 20 layers; codec_embedding, norm, codec_head; text_projection and hidden_projection
// (linear_fc1 / linear_fc2, each + bias); the code predictor: 5 dense layers (q / k / v / o,
// q_norm, k_norm, two norms, gate / up / down), norm, 15 codec tables and 15 heads.
constexpr std::int64_t k_qwen3_talker_tensors =
    20 * k_talker_moe_layer_tensors + 3 + 2 * 4 + 5 * (4 + 2 + 2 + 3) + 1 + 15 + 15;
// pre_transformer: 8 layers of q / k / v / o, gate / up / down, two norms and two layer scales,
// its norm; code_embedding; two upsample stages (ConvTranspose1d + bias, dwconv + bias,
// LayerNorm, pwconv1 / pwconv2 + bias, gamma); the decoder: a conv (+ bias), four blocks of a
// SnakeBeta, a ConvTranspose1d (+ bias) and three residual units (two SnakeBeta, two convs, each
// a pair), a SnakeBeta and a last conv (+ bias).
constexpr std::int64_t k_code2wav_tensors =
    8 * (4 + 3 + 2 + 2) + 1 + 1 + 2 * (2 + 2 + 2 + 4 + 1) + 2 + 4 * (2 + 2 + 3 * 8) + 2 + 2;

// The Qwen3-Omni-30B-A3B parts (SOURCES-qwen3_omni.md, "Derivation").
constexpr std::int64_t k_qwen3_thinker_text_params = 30'532'646'912;
constexpr std::int64_t k_aut_params = 647'927'168;
constexpr std::int64_t k_qwen3_vision_params = 538'631'408;
constexpr std::int64_t k_qwen3_talker_params = 3'324'596'480;
constexpr std::int64_t k_code2wav_params = 216'016'577;
// code2wav.upsample at H 1024, ratios 2 and 2 (the ConvTranspose1d, the depthwise conv, the
// LayerNorm, pwconv1 / pwconv2, gamma).
constexpr std::int64_t k_code2wav_upsample_params =
    2 * ((1024 * 1024 * 2 + 1024) + (1024 * 7 + 1024) + 2 * 1024 + (4096 * 1024 + 4096) +
         (1024 * 4096 + 1024) + 1024);

}  // namespace

TEST_CASE("Qwen3-Omni-30B-A3B-Instruct (qwen3_omni_moe): 28,010 tensors, 35,259,818,545 params",
          "[checkpoint][names][qwen_omni_names]") {
  const Inventory inventory =
      fixture_inventory("Qwen--Qwen3-Omni-30B-A3B-Instruct.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  CHECK(count_under(inventory, "thinker.model.") + count_under(inventory, "thinker.lm_head.") ==
        48 * k_thinker_moe_layer_tensors + 3);
  CHECK(count_under(inventory, "thinker.audio_tower.") == k_aut_tensors);
  CHECK(count_under(inventory, "thinker.visual.") == k_qwen3_vision_tensors);
  CHECK(count_under(inventory, "talker.") == k_qwen3_talker_tensors);
  CHECK(count_under(inventory, "code2wav.") == k_code2wav_tensors);
  // The published weight listing's 28,010 tensors (15 shards), all BF16, no buffer.
  CHECK(48 * k_thinker_moe_layer_tensors + 3 + k_aut_tensors + k_qwen3_vision_tensors +
            k_qwen3_talker_tensors + k_code2wav_tensors ==
        28'010);
  CHECK(tensor_count(inventory) == 28'010);
  CHECK(dtype_tensor_count(inventory, "BF16") == 28'010);
  CHECK(buffer_count(inventory) == 0);
  CHECK(names_distinct(inventory));
  // The listing's parameter total; the index's total_size, 2 bytes each.
  CHECK(inventory_params(inventory) == 35'259'818'545);
  CHECK(inventory_bytes(inventory) == 70'519'637'090);
  CHECK(bytes_under(inventory, "thinker.model.") + bytes_under(inventory, "thinker.lm_head.") ==
        2 * k_qwen3_thinker_text_params);
  CHECK(bytes_under(inventory, "thinker.audio_tower.") == 2 * k_aut_params);
  CHECK(bytes_under(inventory, "thinker.visual.") == 2 * k_qwen3_vision_params);
  CHECK(bytes_under(inventory, "talker.") == 2 * k_qwen3_talker_params);
  CHECK(bytes_under(inventory, "code2wav.") == 2 * k_code2wav_params);
  CHECK(bytes_under(inventory, "code2wav.upsample.") == 2 * k_code2wav_upsample_params);
  CHECK(k_code2wav_upsample_params == 21'006'336);

  // Thinker: V 152064, H 2048, 32 heads x 128, 4 KV heads, QK-norm, 128 experts of 768, stored
  // one tensor per expert.
  const std::string text = "thinker.model.";
  check_tensor(inventory, text + "embed_tokens.weight", {152064, 2048});
  check_tensor(inventory, "thinker.lm_head.weight", {152064, 2048});
  check_tensor(inventory, text + "layers.47.self_attn.q_proj.weight", {32 * 128, 2048});
  check_tensor(inventory, text + "layers.47.self_attn.k_proj.weight", {4 * 128, 2048});
  check_tensor(inventory, text + "layers.47.self_attn.o_proj.weight", {2048, 32 * 128});
  check_tensor(inventory, text + "layers.47.self_attn.q_norm.weight", {128});
  check_absent(inventory, text + "layers.47.self_attn.q_proj.bias");
  check_tensor(inventory, text + "layers.0.mlp.gate.weight", {128, 2048});
  check_tensor(inventory, text + "layers.0.mlp.experts.0.gate_proj.weight", {768, 2048});
  check_tensor(inventory, text + "layers.47.mlp.experts.127.down_proj.weight", {2048, 768});
  check_absent(inventory, text + "layers.0.mlp.experts.128.up_proj.weight");
  check_absent(inventory, text + "layers.0.mlp.experts.gate_up_proj");
  check_absent(inventory, text + "layers.0.mlp.shared_expert.up_proj.weight");
  check_tensor(inventory, text + "norm.weight", {2048});

  // AuT: 480 downsampling channels, 128 mel bins halved three times (16), d 1280, output 2048.
  const std::string audio = "thinker.audio_tower.";
  check_tensor(inventory, audio + "conv2d1.weight", {480, 1, 3, 3});
  check_tensor(inventory, audio + "conv2d3.weight", {480, 480, 3, 3});
  check_tensor(inventory, audio + "conv2d3.bias", {480});
  check_tensor(inventory, audio + "conv_out.weight", {1280, 480 * 16});
  check_absent(inventory, audio + "conv_out.bias");
  check_tensor(inventory, audio + "layers.31.self_attn.k_proj.bias", {1280});
  check_tensor(inventory, audio + "layers.31.fc1.weight", {5120, 1280});
  check_tensor(inventory, audio + "ln_post.bias", {1280});
  check_tensor(inventory, audio + "proj1.weight", {1280, 1280});
  check_tensor(inventory, audio + "proj2.weight", {2048, 1280});
  check_tensor(inventory, audio + "proj2.bias", {2048});

  // Vision: 1152 wide, 27 blocks, MLP 4304, patches 3 x 2 x 16 x 16, 2304 positions, merged
  // 2 x 2 (4608) into 2048; deepstack mergers as merger_list.
  const std::string visual = "thinker.visual.";
  check_tensor(inventory, visual + "patch_embed.proj.weight", {1152, 3, 2, 16, 16});
  check_tensor(inventory, visual + "patch_embed.proj.bias", {1152});
  check_tensor(inventory, visual + "pos_embed.weight", {2304, 1152});
  check_tensor(inventory, visual + "blocks.26.attn.qkv.weight", {3 * 1152, 1152});
  check_tensor(inventory, visual + "blocks.26.attn.qkv.bias", {3 * 1152});
  check_tensor(inventory, visual + "blocks.26.mlp.linear_fc1.weight", {4304, 1152});
  check_tensor(inventory, visual + "blocks.26.mlp.linear_fc2.bias", {1152});
  check_tensor(inventory, visual + "blocks.26.norm1.bias", {1152});
  check_tensor(inventory, visual + "merger.ln_q.weight", {1152});
  check_tensor(inventory, visual + "merger.mlp.0.weight", {4 * 1152, 4 * 1152});
  check_tensor(inventory, visual + "merger.mlp.2.weight", {2048, 4 * 1152});
  check_tensor(inventory, visual + "merger_list.2.ln_q.bias", {4 * 1152});
  check_tensor(inventory, visual + "merger_list.0.mlp.2.bias", {2048});
  check_absent(inventory, visual + "merger_list.3.ln_q.weight");
  check_absent(inventory, visual + "deepstack_merger_list.0.norm.weight");

  // Talker: H 1024, 16 heads x 128, 2 KV heads, 128 experts of 384, shared expert of 768, codec
  // vocabulary 3072; projections from the thinker's 2048 through 2048.
  const std::string talker = "talker.model.";
  check_tensor(inventory, talker + "codec_embedding.weight", {3072, 1024});
  check_absent(inventory, talker + "embed_tokens.weight");
  check_tensor(inventory, talker + "layers.19.self_attn.q_proj.weight", {16 * 128, 1024});
  check_tensor(inventory, talker + "layers.19.self_attn.v_proj.weight", {2 * 128, 1024});
  check_tensor(inventory, talker + "layers.19.self_attn.k_norm.weight", {128});
  check_tensor(inventory, talker + "layers.19.mlp.gate.weight", {128, 1024});
  check_tensor(inventory, talker + "layers.19.mlp.experts.127.up_proj.weight", {384, 1024});
  check_tensor(inventory, talker + "layers.19.mlp.shared_expert.down_proj.weight", {1024, 768});
  check_tensor(inventory, talker + "layers.19.mlp.shared_expert_gate.weight", {1, 1024});
  check_tensor(inventory, talker + "norm.weight", {1024});
  check_tensor(inventory, "talker.text_projection.linear_fc1.weight", {2048, 2048});
  check_tensor(inventory, "talker.text_projection.linear_fc2.weight", {1024, 2048});
  check_tensor(inventory, "talker.hidden_projection.linear_fc2.bias", {1024});
  check_tensor(inventory, "talker.codec_head.weight", {3072, 1024});
  // Code predictor: 5 dense layers, 16 heads x 128, 8 KV heads, MLP 3072; 15 tables and heads
  // of 2048 codes.
  const std::string predictor = "talker.code_predictor.";
  check_tensor(inventory, predictor + "model.layers.4.self_attn.q_proj.weight", {16 * 128, 1024});
  check_tensor(inventory, predictor + "model.layers.4.self_attn.k_proj.weight", {8 * 128, 1024});
  check_tensor(inventory, predictor + "model.layers.4.self_attn.o_proj.weight", {1024, 16 * 128});
  check_tensor(inventory, predictor + "model.layers.4.mlp.gate_proj.weight", {3072, 1024});
  check_tensor(inventory, predictor + "model.norm.weight", {1024});
  check_tensor(inventory, predictor + "model.codec_embedding.14.weight", {2048, 1024});
  check_tensor(inventory, predictor + "lm_head.14.weight", {2048, 1024});
  check_absent(inventory, predictor + "lm_head.15.weight");

  // code2wav: H 1024, 8 pre-transformer layers of 16 heads x 64 without QK-norm, MLP 3072;
  // 2048 codes x 16 quantizers; decoder 1536 halved by rates 8, 5, 4, 3 to 96.
  const std::string wav = "code2wav.";
  check_tensor(inventory, wav + "code_embedding.weight", {2048 * 16, 1024});
  check_tensor(inventory, wav + "pre_transformer.layers.7.self_attn.q_proj.weight", {1024, 1024});
  check_absent(inventory, wav + "pre_transformer.layers.7.self_attn.q_norm.weight");
  check_tensor(inventory, wav + "pre_transformer.layers.7.mlp.down_proj.weight", {1024, 3072});
  check_tensor(inventory, wav + "pre_transformer.layers.7.self_attn_layer_scale.scale", {1024});
  check_tensor(inventory, wav + "pre_transformer.layers.7.mlp_layer_scale.scale", {1024});
  check_tensor(inventory, wav + "pre_transformer.norm.weight", {1024});
  check_tensor(inventory, wav + "upsample.0.0.conv.weight", {1024, 1024, 2});
  check_tensor(inventory, wav + "upsample.1.1.dwconv.conv.weight", {1024, 1, 7});
  check_tensor(inventory, wav + "upsample.1.1.norm.bias", {1024});
  check_tensor(inventory, wav + "upsample.1.1.pwconv1.weight", {4 * 1024, 1024});
  check_tensor(inventory, wav + "upsample.1.1.gamma", {1024});
  check_tensor(inventory, wav + "decoder.0.conv.weight", {1536, 1024, 7});
  check_tensor(inventory, wav + "decoder.1.block.0.alpha", {1536});
  check_tensor(inventory, wav + "decoder.1.block.1.conv.weight", {1536, 768, 2 * 8});
  check_tensor(inventory, wav + "decoder.1.block.1.conv.bias", {768});
  check_tensor(inventory, wav + "decoder.1.block.2.act1.beta", {768});
  check_tensor(inventory, wav + "decoder.2.block.1.conv.weight", {768, 384, 2 * 5});
  check_tensor(inventory, wav + "decoder.3.block.2.conv2.conv.weight", {192, 192, 1});
  check_tensor(inventory, wav + "decoder.4.block.1.conv.weight", {192, 96, 2 * 3});
  check_tensor(inventory, wav + "decoder.4.block.4.conv1.conv.weight", {96, 96, 7});
  check_tensor(inventory, wav + "decoder.5.alpha", {96});
  check_tensor(inventory, wav + "decoder.6.conv.weight", {1, 96, 7});
  check_tensor(inventory, wav + "decoder.6.conv.bias", {1});
  check_absent(inventory, wav + "decoder.7.conv.weight");
}

TEST_CASE("Qwen3-Omni-30B-A3B-Thinking (qwen3_omni_moe): the thinker alone, 31,719,205,488",
          "[checkpoint][names][qwen_omni_names]") {
  const Inventory inventory =
      fixture_inventory("Qwen--Qwen3-Omni-30B-A3B-Thinking.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  CHECK(tensor_count(inventory) ==
        48 * k_thinker_moe_layer_tensors + 3 + k_aut_tensors + k_qwen3_vision_tensors);
  CHECK(count_under(inventory, "talker.") == 0);
  CHECK(count_under(inventory, "code2wav.") == 0);
  // The published total and total_size.
  CHECK(inventory_params(inventory) == 31'719'205'488);
  CHECK(inventory_params(inventory) ==
        k_qwen3_thinker_text_params + k_aut_params + k_qwen3_vision_params);
  CHECK(inventory_bytes(inventory) == 63'438'410'976);
  CHECK(dtype_of(inventory, "thinker.visual.pos_embed.weight") == "BF16");
}
