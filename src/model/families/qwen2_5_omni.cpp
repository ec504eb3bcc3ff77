// Qwen2.5-Omni (model_type qwen2_5_omni: Qwen/Qwen2.5-Omni-7B, -3B). The checkpoint holds:
//  - thinker.model / thinker.lm_head: thinker_config.text_config, a Qwen2 decoder (q/k/v biased),
//    its head untied (Qwen2_5OmniTextConfig's tie default true is not what the uploads hold);
//  - thinker.audio_tower: Whisper's encoder layers (q, v, out_proj biased, k_proj not), conv1
//    (mel -> d, 3 taps) and conv2 (d -> d, 3 taps) biased, ln_post, proj [output_dim, d] + bias
//    and audio_bos_eos_token [2, output_dim]; its sinusoidal positions are a buffer;
//  - thinker.visual: the Qwen2.5-VL tower (add_qwen2_5_vl_vision);
//  - talker (enable_audio_output): thinker_to_talker_proj [H, E] + bias, embed_tokens [V, E] with
//    E = embedding_size (the thinker's width), Qwen2 layers of hidden_size with an explicit
//    head_dim, norm, codec_head [V, H] without bias;
//  - token2wav, stored in F32: the DiT (time MLP 256 -> D -> D, codec_embed [num_embeds + 1,
//    emb_dim], input projection from mel + enc_dim + enc_emb_dim + emb_dim, an ECAPA-TDNN speaker
//    encoder, depth blocks of AdaLN-Zero [6D, D], q/k/v/out of heads x head_dim and a ff_mult MLP,
//    norm_out [2D, D], proj_out [mel, D], every Linear and Conv1d biased) and BigVGAN (conv_pre,
//    a ConvTranspose1d per upsample rate halving upsample_initial_channel, AMP blocks of
//    2 x len(dilations) convs and as many SnakeBeta (alpha, beta) per resblock kernel,
//    activation_post, conv_post without bias). The DiT's rotary inv_freq [head_dim / 2] is a
//    persistent buffer the original uploads store (F32): listed, not counted.
// Everything but the thinker's text model counts with the encoders (component vision).
// Sources: transformers models/qwen2_5_omni/modeling_qwen2_5_omni.py and configuration_*.py;
// derivations in tests/data/configs/SOURCES-qwen2_5_omni.md.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

void add_audio_tower(const ConfigReader& audio, ModelDescription& model) {
  const AudioEncoder encoder = read_qwen_audio_encoder(audio);
  const std::int64_t out = audio.require_int({"output_dim"}, 1, k_max_width);
  add_vision_part(model, "thinker.audio_tower.conv1", "Conv1d",
                  biased_conv_params(encoder.mel_bins, encoder.width, 3));
  add_vision_part(model, "thinker.audio_tower.conv2", "Conv1d",
                  biased_conv_params(encoder.width, encoder.width, 3));
  add_vision_part(model, "thinker.audio_tower.proj", "Linear",
                  biased_conv_params(encoder.width, out));
  add_vision_part(model, "thinker.audio_tower.audio_bos_eos_token", "Embedding",
                  checked_mul(2, out));
  model.stacks.push_back(whisper_encoder_stack("audio_tower", encoder, true, "ln_post"));
}

void add_talker(const ConfigReader& talker, ModelDescription& model) {
  ModelDescription decoder = build_qwen2(talker);
  const std::int64_t hidden = decoder.hidden_size;
  const std::int64_t vocab = decoder.vocab_size;
  const std::int64_t embedding = talker.require_int({"embedding_size"}, 1, k_max_width);
  Stack stack = std::move(decoder.stacks.front());
  stack.name = "talker";
  stack.vision = true;
  model.stacks.push_back(std::move(stack));
  add_vision_part(model, "talker.thinker_to_talker_proj", "Linear",
                  biased_conv_params(embedding, hidden));
  add_vision_part(model, "talker.model.embed_tokens", "Embedding", checked_mul(vocab, embedding));
  add_vision_part(model, "talker.codec_head", "Linear", checked_mul(hidden, vocab));
}

// The DiT's parameters (its inv_freq buffer apart); `head_dim` returned for that buffer.
std::int64_t dit_params(const ConfigReader& dit, std::int64_t& head_dim) {
  const std::int64_t dim = dit.require_int({"dim", "hidden_size"}, 1, k_max_width);
  const std::int64_t depth = dit.require_int({"depth", "num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = dit.require_int({"heads", "num_attention_heads"}, 1, k_max_heads);
  head_dim = dit.require_int({"head_dim"}, 1, k_max_width);
  const std::int64_t ff = dit.require_int({"ff_mult"}, 1, 64);
  const std::int64_t emb = dit.require_int({"emb_dim"}, 1, k_max_width);
  const std::int64_t embeds = dit.require_int({"num_embeds"}, 1, k_max_vocab);
  const std::int64_t mel = dit.require_int({"mel_dim"}, 1, 4096);
  const std::int64_t speaker = dit.require_int({"enc_emb_dim"}, 1, k_max_width);
  const std::int64_t enc = dit.require_int({"enc_dim"}, 1, k_max_width);
  const std::int64_t attention = dit.require_int({"enc_attention_channels"}, 1, k_max_width);
  const std::int64_t scale = dit.require_int({"enc_res2net_scale"}, 1, 64);
  const std::int64_t se = dit.require_int({"enc_se_channels"}, 1, k_max_width);
  const std::vector<std::int64_t> channels = read_size_list(dit, "enc_channels", k_max_width);
  const std::vector<std::int64_t> kernels = read_size_list(dit, "enc_kernel_sizes", k_max_width);
  if (channels.size() < 2 || kernels.size() != channels.size()) {
    dit.fail("enc_kernel_sizes", "must give one kernel per enc_channels entry (two or more)");
  }
  const std::int64_t inner = checked_mul(heads, head_dim);
  // ECAPA-TDNN: an initial TDNN, SE-Res2Net blocks, multi-layer feature aggregation, attentive
  // statistics pooling and the embedding projection; every Conv1d biased.
  std::int64_t ecapa = biased_conv_params(mel, channels.front(), kernels.front());
  for (std::size_t i = 1; i + 1 < channels.size(); ++i) {
    const std::int64_t in = channels[i - 1];
    const std::int64_t out = channels[i];
    if (out % scale != 0) dit.fail("enc_res2net_scale", "must divide every enc_channels entry");
    const std::int64_t split = out / scale;
    ecapa = checked_add(ecapa, biased_conv_params(in, out));  // tdnn1
    ecapa =
        checked_add(ecapa, checked_mul(scale - 1, biased_conv_params(split, split, kernels[i])));
    ecapa = checked_add(ecapa, biased_conv_params(out, out));  // tdnn2
    ecapa = checked_add(
        ecapa, checked_add(biased_conv_params(out, se), biased_conv_params(se, out)));  // SE block
  }
  const std::int64_t last = channels.back();
  ecapa = checked_add(ecapa, biased_conv_params(last, last, kernels.back()));  // mfa
  ecapa = checked_add(ecapa, checked_add(biased_conv_params(3 * last, attention),
                                         biased_conv_params(attention, last)));
  ecapa = checked_add(ecapa, biased_conv_params(2 * last, enc));  // fc
  std::int64_t total =
      checked_add(biased_conv_params(256, dim), biased_conv_params(dim, dim));  // time MLP
  total = checked_add(total, checked_mul(embeds + 1, emb));              // codec_embed
  total = checked_add(total, biased_conv_params(mel + enc + speaker + emb, dim));  // input proj
  total = checked_add(total, ecapa);
  const std::int64_t block = checked_add(
      checked_add(biased_conv_params(dim, 6 * dim), checked_mul(3, biased_conv_params(dim, inner))),
      checked_add(biased_conv_params(inner, dim), checked_add(biased_conv_params(dim, ff * dim),
                                                              biased_conv_params(ff * dim, dim))));
  total = checked_add(total, checked_mul(depth, block));
  return checked_add(total,
                     checked_add(biased_conv_params(dim, 2 * dim), biased_conv_params(dim, mel)));
}

std::int64_t bigvgan_params(const ConfigReader& vocoder) {
  const std::int64_t mel = vocoder.require_int({"mel_dim"}, 1, 4096);
  const std::int64_t initial = vocoder.require_int({"upsample_initial_channel"}, 1, k_max_width);
  const std::vector<std::int64_t> rates = read_size_list(vocoder, "upsample_rates", k_max_width);
  const std::vector<std::int64_t> kernels =
      read_size_list(vocoder, "upsample_kernel_sizes", k_max_width);
  const std::vector<std::int64_t> resblocks =
      read_size_list(vocoder, "resblock_kernel_sizes", k_max_width);
  const nlohmann::json& dilations = vocoder.json().contains("resblock_dilation_sizes")
                                        ? vocoder.json().at("resblock_dilation_sizes")
                                        : nlohmann::json();
  if (kernels.size() != rates.size()) {
    vocoder.fail("upsample_kernel_sizes", "must give one kernel per upsample_rates entry");
  }
  if (!dilations.is_array() || dilations.size() != resblocks.size()) {
    vocoder.fail("resblock_dilation_sizes", "must give one list per resblock_kernel_sizes entry");
  }
  if (initial % (std::int64_t{1} << rates.size()) != 0) {
    vocoder.fail("upsample_initial_channel", "must halve evenly once per upsample_rates entry");
  }
  std::int64_t total = biased_conv_params(mel, initial, 7);  // conv_pre
  std::int64_t channels = initial;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const std::int64_t out = channels / 2;
    total = checked_add(total, biased_conv_params(channels, out, kernels[i]));  // ConvTranspose1d
    for (std::size_t j = 0; j < resblocks.size(); ++j) {
      if (!dilations[j].is_array()) vocoder.fail("resblock_dilation_sizes", "must hold lists");
      const auto convs = static_cast<std::int64_t>(2 * dilations[j].size());
      total = checked_add(
          total,
          checked_mul(convs, checked_add(biased_conv_params(out, out, resblocks[j]), 2 * out)));
    }
    channels = out;
  }
  // activation_post (SnakeBeta) and conv_post, which has no bias.
  return checked_add(total, checked_add(2 * channels, checked_mul(channels, 7)));
}

}  // namespace

ModelDescription build_qwen2_5_omni(const ConfigReader& config) {
  const ConfigReader thinker = config.child("thinker_config");
  const ConfigReader text = thinker.child("text_config");
  nlohmann::json text_json = text.json();
  if (!text.has("tie_word_embeddings")) {
    text_json["tie_word_embeddings"] = thinker.bool_or("tie_word_embeddings", false);
  }
  ModelDescription model =
      build_qwen2(ConfigReader(text_json, "thinker_config.text_config", config.model_type()));
  model.family =
      "Qwen2.5-Omni (Qwen2 thinker + Whisper-style audio + Qwen2.5-VL vision; talker "
      "and token2wav counted off the text path)";
  model.stored_extras.clear();  // the thinker's rotary tables are not persistent
  if (model.torch_dtype.empty()) model.torch_dtype = read_torch_dtype(config);

  add_qwen2_5_vl_vision(thinker.child("vision_config"), model);
  add_audio_tower(thinker.child("audio_config"), model);
  if (!config.bool_or("enable_audio_output", true) || !config.has("talker_config")) {
    model.notes.push_back(
        "no talker or token2wav: enable_audio_output is false or "
        "talker_config absent (the thinker alone)");
    return model;
  }
  add_talker(config.child("talker_config"), model);
  // vLLM registers the model as its thinker: a serving engine loads neither part.
  model.not_served = {"talker", "token2wav"};
  const ConfigReader token2wav = config.child("token2wav_config");
  std::int64_t head_dim = 0;
  const std::int64_t dit = dit_params(token2wav.child("dit_config"), head_dim);
  const std::int64_t vocoder = bigvgan_params(token2wav.child("bigvgan_config"));
  add_vision_part(model, "token2wav.code2wav_dit_model", "DiT", dit);
  add_vision_part(model, "token2wav.code2wav_bigvgan_model", "BigVGAN", vocoder);
  // The uploads keep the whole token2wav in F32 beside the BF16 thinker and talker.
  model.fp32_stored_params = checked_add(dit, vocoder);
  model.stored_extras.push_back(StoredExtra{
      "token2wav.code2wav_dit_model.rotary_embed.inv_freq", 1, head_dim / 2, "F32", false,
      "a persistent rotary buffer the original Qwen uploads store (re-saves drop it)"});
  model.notes.push_back(
      fmt::format("token2wav ({} DiT + {} BigVGAN parameters) is stored in F32", dit, vocoder));
  return model;
}

}  // namespace trace::family
