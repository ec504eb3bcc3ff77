// Whisper and the audio tower built on its encoder.
//  - whisper (WhisperForConditionalGeneration: openai/whisper-tiny ... large-v3,
//    whisper-large-v3-turbo, distil-whisper/*): an encoder-decoder. The encoder reads log-mel
//    frames through conv1 (mel -> d, kernel 3) and conv2 (d -> d, kernel 3, stride 2), both with
//    bias, adds embed_positions [max_source_positions, d] (a sinusoidal table stored as a weight),
//    then pre-LayerNorm layers (self_attn q/v/out_proj biased, k_proj bias-free;
//    self_attn_layer_norm; fc1 / fc2 biased; final_layer_norm) and layer_norm. It always runs
//    max_source_positions frames (30 s of audio), whatever the text length: its stack has
//    fixed_tokens. The decoder has embed_tokens, a learned embed_positions
//    [max_target_positions, d], layers that add encoder_attn (same projections) with
//    encoder_attn_layer_norm, and layer_norm; proj_out is tied to embed_tokens
//    (tie_word_embeddings, default true) and not stored.
//  - qwen2_audio (Qwen2AudioForConditionalGeneration: Qwen/Qwen2-Audio-7B, -7B-Instruct): the
//    Whisper encoder alone as audio_tower (plus an AvgPool1d(2), no parameters),
//    multi_modal_projector.linear (d -> text hidden, biased) and a Qwen2 text decoder under
//    language_model.* built by build_wrapped_text.
// Tensor lists: transformers models/whisper/modeling_whisper.py,
// models/qwen2_audio/modeling_qwen2_audio.py (Qwen2AudioEncoder is a copy of WhisperEncoder).
// Derivation and published totals: tests/data/configs/SOURCES-whisper.md.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "family.hpp"

namespace trace::family {

namespace {

// The attention of every Whisper layer, self or cross: q / v / out_proj biased, k_proj not.
Attention whisper_attention(std::int64_t width, const HeadShape& heads, const char* name) {
  Attention attention = self_attention(width, heads, true, true);
  attention.k_bias = false;
  attention.name = name;
  return attention;
}

Mlp whisper_mlp(std::int64_t width, std::int64_t ffn, const std::string& activation) {
  return Mlp{MlpKind::plain, activation, width, ffn, true, true, false};
}

// conv1, conv2 and the encoder's position table under `prefix`.
void add_encoder_stem(ModelDescription& model, const std::string& prefix,
                      const AudioEncoder& encoder, const char* stem_component,
                      const char* positions_component) {
  const std::int64_t d = encoder.width;
  // Conv1d weights are [out, in, kernel], each with a bias of out.
  model.extra_parameters.push_back({prefix + ".conv1",
                                    stem_component,
                                    "Conv1d",
                                    checked_add(checked_product({d, encoder.mel_bins, 3}), d),
                                    {d, encoder.mel_bins, 3}});
  model.extra_parameters.push_back({prefix + ".conv2",
                                    stem_component,
                                    "Conv1d",
                                    checked_add(checked_product({d, d, 3}), d),
                                    {d, d, 3}});
  model.extra_parameters.push_back({prefix + ".embed_positions",
                                    positions_component,
                                    "Embedding",
                                    checked_mul(encoder.frames, d),
                                    {encoder.frames, d}});
}

// Qwen2AudioEncoderConfig's field defaults (configuration_qwen2_audio.py), which are also the
// values Qwen2AudioConfig builds when audio_config is absent.
constexpr std::array<KeyDefault, 6> k_qwen2_audio_encoder_defaults{{
    {"num_mel_bins", 128},
    {"encoder_layers", 32},
    {"encoder_attention_heads", 20},
    {"encoder_ffn_dim", 5120},
    {"d_model", 1280},
    {"max_source_positions", 1500},
}};

}  // namespace

Stack whisper_encoder_stack(std::string name, const AudioEncoder& encoder, bool vision,
                            std::string final_norm) {
  Stack stack;
  stack.name = std::move(name);
  stack.causal = false;
  stack.vision = vision;
  stack.fixed_tokens = encoder.frames;  // the 30 s window, padded, whatever the transcript
  stack.blocks.reserve(static_cast<std::size_t>(encoder.layers));
  for (std::int64_t i = 0; i < encoder.layers; ++i) {
    Block block;
    block.attention = whisper_attention(encoder.width, encoder.heads, "self_attn");
    block.mlp = whisper_mlp(encoder.width, encoder.ffn, encoder.activation);
    block.norms = {layer_norm("self_attn_layer_norm", encoder.width),
                   layer_norm("final_layer_norm", encoder.width)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = layer_norm(std::move(final_norm), encoder.width);
  return stack;
}

AudioEncoder read_qwen_audio_encoder(const ConfigReader& audio) {
  AudioEncoder encoder;
  encoder.width = audio.require_int({"d_model"}, 1, k_max_width);
  // Qwen2AudioEncoderConfig's attribute_map: num_hidden_layers is encoder_layers.
  encoder.layers = audio.require_int({"encoder_layers", "num_hidden_layers"}, 1, k_max_layers);
  encoder.heads = read_head_shape(audio, encoder.width, {"encoder_attention_heads"}, {}, false);
  encoder.ffn = audio.require_int({"encoder_ffn_dim"}, 1, k_max_width);
  encoder.mel_bins = audio.require_int({"num_mel_bins"}, 1, 4096);
  encoder.frames = audio.require_int({"max_source_positions"}, 2, k_max_positions);
  encoder.activation = audio.optional_string("activation_function").value_or("gelu");
  return encoder;
}

ModelDescription build_whisper(const ConfigReader& config) {
  const std::string architecture = first_architecture(config);
  if (!architecture.empty() && architecture != "WhisperForConditionalGeneration" &&
      architecture != "WhisperModel") {
    config.fail("architectures",
                fmt::format("names {}, whose heads trace does not know; supported: "
                            "WhisperForConditionalGeneration, WhisperModel",
                            architecture));
  }
  // WhisperConfig's layer, head and width defaults changed between transformers releases (6
  // layers x 4 heads x 256 before, 4 x 6 x 384 now), so those keys are required; the aliases are
  // WhisperConfig's attribute_map and must agree when both are written (large-v3 writes
  // num_hidden_layers = encoder_layers).
  AudioEncoder encoder;
  encoder.width = config.require_int({"d_model", "hidden_size"}, 1, k_max_width);
  encoder.layers = config.require_int({"encoder_layers", "num_hidden_layers"}, 1, k_max_layers);
  // WhisperAttention: head_dim = d_model / heads, which must divide evenly.
  encoder.heads = read_head_shape(config, encoder.width,
                                  {"encoder_attention_heads", "num_attention_heads"}, {}, false);
  encoder.ffn = config.int_or({"encoder_ffn_dim"}, 1536, 1, k_max_width);
  encoder.mel_bins = config.int_or({"num_mel_bins"}, 80, 1, 4096);
  encoder.frames = config.int_or({"max_source_positions"}, 1500, 1, k_max_positions);
  encoder.activation = config.optional_string("activation_function").value_or("gelu");
  const std::int64_t decoder_layers = config.require_int({"decoder_layers"}, 1, k_max_layers);
  const HeadShape decoder_heads =
      read_head_shape(config, encoder.width, {"decoder_attention_heads"}, {}, false);
  const std::int64_t decoder_ffn = config.int_or({"decoder_ffn_dim"}, 1536, 1, k_max_width);
  const std::int64_t vocab = config.int_or({"vocab_size"}, 51'865, 1, k_max_vocab);
  const std::int64_t target = config.int_or({"max_target_positions"}, 448, 1, k_max_positions);
  const std::int64_t d = encoder.width;

  ModelDescription model;
  model.architecture = "encoder-decoder";
  model.family = "Whisper (audio encoder-decoder, conv stem, learned positions, pre-LayerNorm)";
  model.vocab_size = vocab;
  model.hidden_size = d;
  model.embedding_dim = d;
  model.position = PositionKind::learned;
  model.learned_positions = target;  // model.decoder.embed_positions
  model.max_position_embeddings = target;
  model.tie_word_embeddings = config.bool_or("tie_word_embeddings", true);
  model.has_lm_head = architecture != "WhisperModel";
  model.torch_dtype =
      config.optional_string("torch_dtype").value_or(config.optional_string("dtype").value_or(""));
  if (config.bool_or("scale_embedding", false)) {
    model.embedding_scale = std::sqrt(static_cast<double>(d));
  }
  // transformers' get_input_embeddings() of the encoder is conv1: the stem is the audio side's
  // embedding.
  add_encoder_stem(model, "model.encoder", encoder, "embedding", "position_embedding");

  model.stacks.push_back(whisper_encoder_stack("encoder", encoder, false));
  Stack decoder;
  decoder.name = "decoder";
  decoder.blocks.reserve(static_cast<std::size_t>(decoder_layers));
  for (std::int64_t i = 0; i < decoder_layers; ++i) {
    Block block;
    block.attention = whisper_attention(d, decoder_heads, "self_attn");
    // Keys and values come from the encoder output, always max_source_positions frames long
    // (the encoder refuses any other input length), and are cached once per sequence.
    Attention cross = whisper_attention(d, decoder_heads, "encoder_attn");
    cross.is_cross = true;
    cross.cross_source_tokens = encoder.frames;
    block.cross_attention = cross;
    block.mlp = whisper_mlp(d, decoder_ffn, encoder.activation);
    block.norms = {layer_norm("self_attn_layer_norm", d), layer_norm("encoder_attn_layer_norm", d),
                   layer_norm("final_layer_norm", d)};
    decoder.blocks.push_back(std::move(block));
  }
  decoder.final_norm = layer_norm("layer_norm", d);
  model.stacks.push_back(std::move(decoder));

  note_defaults(model, config, "WhisperConfig",
                {{"vocab_size", "51865"},
                 {"num_mel_bins", "80"},
                 {"encoder_ffn_dim", "1536"},
                 {"decoder_ffn_dim", "1536"},
                 {"max_source_positions", "1500"},
                 {"max_target_positions", "448"},
                 {"activation_function", "gelu"},
                 {"tie_word_embeddings", "true"}});
  model.frozen_parameters = checked_mul(encoder.frames, d);
  model.notes.push_back(fmt::format(
      "model.encoder.embed_positions [{}, {}] is a fixed sinusoidal table that the checkpoint "
      "stores as a weight (transformers freezes it): counted, though never trained (no "
      "gradients or optimizer state)",
      encoder.frames, d));
  model.notes.push_back(fmt::format(
      "the encoder always runs {} frames (30 s of audio, {} mel frames before conv2's stride "
      "2), whatever the text length: its activations and FLOPs are counted over those frames, "
      "and the decoder's cross-attention caches them",
      encoder.frames, checked_mul(2, encoder.frames)));
  return model;
}

ModelDescription build_qwen2_audio(const ConfigReader& config) {
  // Text decoder: text_config (Qwen2 by default) with its config class's defaults filled in:
  // Qwen2-Audio-7B's gives only intermediate_size and vocab_size, so hidden 4096 / 32 layers /
  // 32 heads / 32 kv heads come from Qwen2Config (a Qwen-7B-shaped decoder).
  ModelDescription model = build_wrapped_text(config, "qwen2");
  model.family = "Qwen2-Audio (Qwen2 text decoder + Whisper audio encoder + linear projector)";

  // Audio tower: audio_config (absent: Qwen2AudioConfig builds the same defaults).
  nlohmann::json audio_storage =
      config.has("audio_config") ? config.child("audio_config").json() : nlohmann::json::object();
  const ConfigReader audio(audio_storage, "audio_config", config.model_type());
  const std::string audio_type =
      audio.optional_string("model_type").value_or("qwen2_audio_encoder");
  if (audio_type != "qwen2_audio_encoder") {
    audio.fail("model_type", fmt::format("= \"{}\" is not supported inside qwen2_audio (supported: "
                                         "qwen2_audio_encoder)",
                                         audio_type));
  }
  const std::string audio_used =
      fill_absent_keys(audio_storage, k_qwen2_audio_encoder_defaults, " = ");
  if (!audio_used.empty()) {
    model.notes.push_back(fmt::format(
        "audio_config omits keys; transformers' Qwen2AudioEncoderConfig defaults used: {}",
        audio_used));
  }
  const AudioEncoder encoder = read_qwen_audio_encoder(audio);
  add_encoder_stem(model, "audio_tower", encoder, "vision", "vision");
  // nn.Linear(d, text hidden) with its bias: weight [hidden, d].
  model.extra_parameters.push_back(
      {"multi_modal_projector.linear",
       "vision",
       "Linear",
       checked_add(checked_mul(encoder.width, model.hidden_size), model.hidden_size),
       {model.hidden_size, encoder.width}});
  model.stacks.push_back(whisper_encoder_stack("audio_tower", encoder, true));
  model.notes.push_back(fmt::format(
      "audio tower: a 30 s clip gives {} encoder frames, average-pooled by 2 to {} audio tokens "
      "in the text sequence; audio_tower.embed_positions is a stored sinusoidal table",
      encoder.frames, encoder.frames / 2));
  return model;
}

}  // namespace trace::family
