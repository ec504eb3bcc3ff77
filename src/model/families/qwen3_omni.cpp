// Qwen3-Omni (model_type qwen3_omni_moe: Qwen3-Omni-30B-A3B-Instruct, -Thinking, -Captioner). The
// checkpoint holds, every part counted:
//  - thinker.model / lm_head: thinker_config.text_config, a Qwen3-MoE decoder (QK-norm GQA,
//    routed experts only), built by the qwen3_moe builder: the text path;
//  - thinker.visual: the Qwen3-VL tower (patch Conv3d, learned positions, LayerNorm blocks, the
//    merger and one deepstack merger per deepstack_visual_indexes entry);
//  - thinker.audio_tower (AuT): three 3x3 stride-2 Conv2d (1 -> D', D' -> D', biased), conv_out
//    [d, D' x F] without bias (F = num_mel_bins halved three times, rounding up), encoder_layers
//    Whisper-style layers whose q, k, v and out_proj are all biased, ln_post, proj1 [d, d] and
//    proj2 [output_dim, d], both biased; its sinusoidal positions are a buffer;
//  - talker (when talker_config is given and enable_audio_output is not false): a Qwen3-MoE
//    decoder over the codec vocabulary (codec_embedding replaces embed_tokens) whose MoE adds one
//    shared expert of shared_expert_intermediate_size behind shared_expert_gate [1, H];
//    text_projection and hidden_projection (biased Linear thinker_hidden -> intermediate ->
//    hidden); codec_head [V, H], untied; a code_predictor: a dense Qwen3 decoder with
//    num_code_groups - 1 codec embeddings and as many heads of [vocab, hidden];
//  - code2wav: a pre-transformer (Qwen3 layers without QK-norm, head_dim hidden / heads, a
//    LayerScale vector after attention and after the MLP), code_embedding [codebook_size x
//    num_quantizers, H], per upsampling_ratios entry a ConvTranspose1d(H, H, r) and a ConvNeXt
//    block (depthwise 7-tap conv, LayerNorm, 4H pointwise MLP, gamma), then a decoder: a 7-tap
//    conv H -> decoder_dim, per upsample_rates entry a SnakeBeta, a ConvTranspose1d halving the
//    channels and three residual units (SnakeBeta, 7-tap conv, SnakeBeta, 1-tap conv), a last
//    SnakeBeta and a 7-tap conv to one channel. Every convolution is biased.
// Everything but the thinker's text model sits off the text path: trace counts it with the
// encoders (component "vision", as Qwen2-Audio's audio tower), outside the active parameters.
// Sources: transformers models/qwen3_omni_moe/modular_qwen3_omni_moe.py and
// configuration_qwen3_omni_moe.py; derivations in tests/data/configs/SOURCES-qwen3_omni.md.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// Marks a decoder's stack as off the text path: its weights counted, its activations and cache not.
Stack off_text_path(Stack stack, std::string name) {
  stack.name = std::move(name);
  stack.vision = true;
  return stack;
}

void add_audio_tower(const ConfigReader& audio, ModelDescription& model) {
  const AudioEncoder encoder = read_qwen_audio_encoder(audio);
  const std::int64_t down = audio.require_int({"downsample_hidden_size"}, 1, k_max_width);
  const std::int64_t out = audio.require_int({"output_dim"}, 1, k_max_width);
  const std::int64_t frequencies = (((encoder.mel_bins + 1) / 2 + 1) / 2 + 1) / 2;
  const std::int64_t width = encoder.width;

  add_vision_part(model, "thinker.audio_tower.conv2d1", "Conv2d", biased_conv_params(1, down, 9));
  add_vision_part(model, "thinker.audio_tower.conv2d2", "Conv2d",
                  biased_conv_params(down, down, 9));
  add_vision_part(model, "thinker.audio_tower.conv2d3", "Conv2d",
                  biased_conv_params(down, down, 9));
  add_vision_part(model, "thinker.audio_tower.conv_out", "Linear",
                  checked_product({down, frequencies, width}));
  add_vision_part(model, "thinker.audio_tower.proj1", "Linear", biased_conv_params(width, width));
  add_vision_part(model, "thinker.audio_tower.proj2", "Linear", biased_conv_params(width, out));
  // Whisper's layers, except that Qwen3-Omni biases k_proj too.
  Stack stack = whisper_encoder_stack("audio_tower", encoder, true, "ln_post");
  for (Block& block : stack.blocks) block.attention.k_bias = true;
  model.stacks.push_back(std::move(stack));
}

void add_talker(const ConfigReader& talker, ModelDescription& model) {
  const ConfigReader text = talker.child("text_config");
  // The talker's decoder: Qwen3-MoE layers plus one gated shared expert each.
  ModelDescription decoder = build_qwen3_moe(text);
  const std::int64_t hidden = decoder.hidden_size;
  const std::int64_t shared_width =
      text.require_int({"shared_expert_intermediate_size"}, 1, k_max_width);
  Stack stack = off_text_path(std::move(decoder.stacks.front()), "talker");
  for (Block& block : stack.blocks) {
    if (!block.moe) continue;
    block.moe->num_shared_experts = 1;
    block.moe->shared = Mlp{
        MlpKind::gated, block.moe->expert.activation, hidden, shared_width, false, false, false};
    block.moe->shared_expert_gate = true;
  }
  model.stacks.push_back(std::move(stack));
  const std::int64_t codec_vocab = decoder.vocab_size;
  add_vision_part(model, "talker.model.codec_embedding", "Embedding",
                  checked_mul(codec_vocab, hidden));
  add_vision_part(model, "talker.codec_head", "Linear", checked_mul(hidden, codec_vocab));
  const std::int64_t thinker_hidden = talker.require_int({"thinker_hidden_size"}, 1, k_max_width);
  const std::int64_t projection = text.require_int({"intermediate_size"}, 1, k_max_width);
  for (const char* name : {"talker.text_projection", "talker.hidden_projection"}) {
    add_vision_part(model, name, "Linear",
                    checked_add(biased_conv_params(thinker_hidden, projection),
                                biased_conv_params(projection, hidden)));
  }

  // The code predictor: a dense Qwen3 decoder, one codec embedding and one head per code group
  // after the first.
  const ConfigReader predictor = talker.child("code_predictor_config");
  ModelDescription dense = build_qwen3(predictor);
  const std::int64_t groups = predictor.int_or(
      {"num_code_groups"}, talker.int_or({"num_code_groups"}, 32, 2, 4096), 2, 4096);
  model.stacks.push_back(off_text_path(std::move(dense.stacks.front()), "talker.code_predictor"));
  const std::int64_t tables = checked_product({groups - 1, dense.vocab_size, dense.hidden_size});
  add_vision_part(model, "talker.code_predictor.model.codec_embedding", "Embedding", tables);
  add_vision_part(model, "talker.code_predictor.lm_head", "Linear", tables);
}

void add_code2wav(const ConfigReader& code2wav, ModelDescription& model) {
  const std::int64_t hidden = code2wav.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = code2wav.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = code2wav.require_int({"intermediate_size"}, 1, k_max_width);
  const HeadShape heads =
      read_head_shape(code2wav, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  DecoderLayout layout;
  layout.mlp = Mlp{MlpKind::gated, code2wav.optional_string("hidden_act").value_or("silu"),
                   hidden,         intermediate,
                   false,          false,
                   false};
  layout.rotary_dim = heads.head_dim;
  model.stacks.push_back(
      off_text_path(decoder_stack(hidden, layers, heads, layout), "code2wav.pre_transformer"));
  // MimiLayerScale: self_attn_layer_scale.scale and mlp_layer_scale.scale, [H] each.
  add_vision_part(model, "code2wav.pre_transformer.layers.*.layer_scales", "LayerScale",
                  checked_product({layers, 2, hidden}));
  add_vision_part(model, "code2wav.code_embedding", "Embedding",
                  checked_product({code2wav.require_int({"codebook_size"}, 1, k_max_vocab),
                                   code2wav.require_int({"num_quantizers"}, 1, 4096), hidden}));

  std::int64_t upsample = 0;
  for (const std::int64_t ratio : read_size_list(code2wav, "upsampling_ratios", 1024)) {
    upsample = checked_add(upsample, biased_conv_params(hidden, hidden, ratio));  // ConvTranspose1d
    // ConvNeXt: depthwise 7-tap conv, LayerNorm, pwconv1 / pwconv2 (4H), gamma.
    upsample = checked_add(upsample, checked_add(biased_conv_params(1, hidden, 7), 2 * hidden));
    upsample = checked_add(upsample, checked_add(biased_conv_params(hidden, 4 * hidden),
                                                 biased_conv_params(4 * hidden, hidden)));
    upsample = checked_add(upsample, hidden);
  }
  add_vision_part(model, "code2wav.upsample", "ConvNeXt", upsample);

  const std::vector<std::int64_t> rates = read_size_list(code2wav, "upsample_rates", 1024);
  std::int64_t channels = code2wav.require_int({"decoder_dim"}, 1, k_max_width);
  if (channels % (std::int64_t{1} << rates.size()) != 0) {
    code2wav.fail("decoder_dim", "must halve evenly once per upsample_rates entry");
  }
  std::int64_t decoder = biased_conv_params(hidden, channels, 7);
  for (const std::int64_t rate : rates) {
    const std::int64_t out = channels / 2;
    decoder = checked_add(decoder, 2 * channels);                          // SnakeBeta alpha, beta
    decoder = checked_add(decoder, biased_conv_params(channels, out, 2 * rate));  // ConvTranspose1d
    // Three residual units (dilations 1, 3, 9): SnakeBeta, 7-tap conv, SnakeBeta, 1-tap conv.
    const std::int64_t unit = checked_add(checked_add(4 * out, biased_conv_params(out, out, 7)),
                                          biased_conv_params(out, out, 1));
    decoder = checked_add(decoder, checked_mul(3, unit));
    channels = out;
  }
  decoder = checked_add(decoder, checked_add(2 * channels, biased_conv_params(channels, 1, 7)));
  add_vision_part(model, "code2wav.decoder", "Conv1d", decoder);
}

}  // namespace

ModelDescription build_qwen3_omni_moe(const ConfigReader& config) {
  const ConfigReader thinker = config.child("thinker_config");
  const ConfigReader text = thinker.child("text_config");
  ModelDescription model = build_qwen3_moe(text);
  model.family =
      "Qwen3-Omni (Qwen3-MoE thinker + AuT audio tower + Qwen3-VL vision; talker and "
      "code2wav counted off the text path)";
  if (model.torch_dtype.empty()) model.torch_dtype = read_torch_dtype(config);
  if (model.torch_dtype.empty()) model.torch_dtype = read_torch_dtype(thinker);

  add_qwen3_vl_vision(thinker.child("vision_config"), model.hidden_size, model);
  add_audio_tower(thinker.child("audio_config"), model);
  const bool audio_output = config.bool_or("enable_audio_output", true);
  if (audio_output && config.has("talker_config")) {
    if (!config.has("code2wav_config")) {
      config.fail("code2wav_config", "is missing beside talker_config; the checkpoint holds both");
    }
    add_talker(config.child("talker_config"), model);
    add_code2wav(config.child("code2wav_config"), model);
    // vLLM registers the model as its thinker: a serving engine loads neither part.
    model.not_served = {"talker", "code2wav"};
  } else {
    model.notes.push_back(
        "no talker: enable_audio_output is false or talker_config absent (Thinking / Captioner "
        "checkpoints hold the thinker alone)");
  }
  return model;
}

}  // namespace trace::family
