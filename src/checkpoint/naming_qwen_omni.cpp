// Checkpoint naming of the Qwen Omni models (naming.hpp), listed tensor by tensor:
// Qwen2.5-Omni (Qwen/Qwen2.5-Omni-7B, -3B; Qwen2_5OmniModel) and Qwen3-Omni
// (Qwen/Qwen3-Omni-30B-A3B-Instruct, -Thinking; Qwen3OmniMoeForConditionalGeneration). Their
// descriptions (families/qwen2_5_omni.cpp, families/qwen3_omni.cpp) count the audio towers'
// stems and heads, the talkers' projections and tables and the whole token2wav / code2wav as
// per-module totals, so the tensors are listed here under the names the uploads store
// (thinker.*, talker.*, token2wav.* / code2wav.*); every group listed from a total must add up
// to it, or the inventory stays partial. tests/data/configs/SOURCES-qwen_omni-names.md.
#include <fmt/format.h>

#include <array>

#include "naming.hpp"
#include "trace/checked_math.hpp"

namespace trace::checkpoint {

namespace {

using Shape = std::vector<std::int64_t>;

// The token2wav of both Qwen2.5-Omni uploads: Qwen2_5OmniDiTConfig's and
// Qwen2_5OmniBigVGANConfig's defaults, which their token2wav_config repeats. The description
// keeps only each model's total, so the tensors are listed for this architecture alone, and only
// where the totals match it.
struct DitLayout {
  std::int64_t dim = 1024, depth = 22, ff_mult = 2, emb_dim = 512, num_embeds = 8193;
  std::int64_t mel = 80, speaker_dim = 192, enc_dim = 128, attention_channels = 64;
  std::int64_t res2net_scale = 2, se_channels = 64;
  std::array<std::int64_t, 5> channels{256, 256, 256, 256, 768};
  std::array<std::int64_t, 5> kernels{5, 3, 3, 3, 1};
};

struct BigVganLayout {
  std::int64_t mel = 80, initial_channels = 1536, dilations = 3;
  std::array<std::int64_t, 6> upsample_kernels{11, 7, 4, 4, 4, 4};
  std::array<std::int64_t, 3> resblock_kernels{3, 7, 11};
};

// Qwen3-Omni's released code predictor tables and code2wav (its code2wav_config and
// code_predictor_config), likewise listed only where the description's totals match: 15
// codec tables and heads (num_code_groups 16 - 1) of the code vocabulary 2048; the ConvNeXt
// upsampling ratios; the decoder's width and upsample rates.
struct Code2WavLayout {
  std::int64_t code_groups = 15, code_vocab = 2048, decoder_dim = 1536;
  std::array<std::int64_t, 2> upsampling_ratios{2, 2};
  std::array<std::int64_t, 4> upsample_rates{8, 5, 4, 3};
};

class OmniEmitter {
 public:
  OmniEmitter(const ModelDescription& model, Inventory& inventory, std::string_view family)
      : model_(model), inventory_(inventory), family_(family) {
    base_ = base_dtype(model).name;
  }

  // Qwen2.5-Omni: thinker (Qwen2 text, Qwen2.5-VL vision, Whisper audio), talker, token2wav.
  void emit_qwen2_5() {
    const Stack* visual = stack("visual");
    const Stack* audio = stack("audio_tower");
    if (!thinker_text() || visual == nullptr || audio == nullptr) return;
    qwen2_5_vision(*visual);
    qwen2_5_audio(*audio);
    if (const Stack* talker = stack("talker")) {
      qwen2_5_talker(*talker);
      dit();
      bigvgan();
    }
    for (const StoredExtra& extra : model_.stored_extras) buffer(extra);
  }

  // Qwen3-Omni: thinker (Qwen3-MoE text, Qwen3-VL vision, AuT audio), talker, code2wav.
  void emit_qwen3() {
    const Stack* visual = stack("visual");
    const Stack* audio = stack("audio_tower");
    if (!thinker_text() || visual == nullptr || audio == nullptr) return;
    qwen3_vision(*visual);
    qwen3_audio(*audio);
    const Stack* talker = stack("talker");
    const Stack* predictor = stack("talker.code_predictor");
    const Stack* pre_transformer = stack("code2wav.pre_transformer");
    if (talker != nullptr && predictor != nullptr && pre_transformer != nullptr) {
      qwen3_talker(*talker, *predictor);
      code2wav(*pre_transformer);
    } else if (talker != nullptr) {
      gap(fmt::format("{}'s talker is described without its code predictor or code2wav", family_));
    }
    for (const StoredExtra& extra : model_.stored_extras) buffer(extra);
  }

 private:
  void gap(std::string why) { add_gap(inventory_, std::move(why)); }

  const Stack* stack(std::string_view name) const {
    for (const Stack& s : model_.stacks) {
      if (s.name == name && !s.mtp) return &s;
    }
    return nullptr;
  }

  const ExtraParameter* extra(std::string_view name) const {
    for (const ExtraParameter& e : model_.extra_parameters) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }

  // The count of the description's extra of this name; -1 when it has none.
  std::int64_t params_of(std::string_view name) const {
    const ExtraParameter* e = extra(name);
    return e == nullptr ? -1 : e->params;
  }

  // `total` / `parts`; 0 (and a gap) when it does not divide.
  std::int64_t per(std::int64_t total, std::int64_t parts, std::string_view what) {
    if (total < 0 || parts <= 0 || total % parts != 0) {
      gap(fmt::format("{}'s {} does not split into the tensors named", family_, what));
      return 0;
    }
    return total / parts;
  }

  // The description's total for `what` must be `listed`, the tensors named for it.
  void expect(std::int64_t total, std::int64_t listed, std::string_view what) {
    if (total != listed) {
      gap(fmt::format("{}'s {} total does not match the tensors named", family_, what));
    }
  }

  void add(std::string name, Shape shape, std::string_view dtype) {
    add_tensor(inventory_, std::move(name), std::move(shape), dtype);
  }

  // A Linear or Conv: weight [out, in, kernel...] and, when biased, bias [out].
  void add_module(const std::string& at, Shape weight, bool bias, std::string_view dtype) {
    const std::int64_t out = weight.front();
    add(at + ".weight", std::move(weight), dtype);
    if (bias) add(at + ".bias", {out}, dtype);
  }

  // A biased module at the checkpoint dtype.
  void biased(const std::string& at, Shape weight) {
    add_module(at, std::move(weight), true, base_);
  }

  // A ConvTranspose1d: weight [in, out, k], bias [out].
  void transposed_conv(const std::string& at, std::int64_t in, std::int64_t out, std::int64_t k,
                       std::string_view dtype) {
    add(at + ".weight", {in, out, k}, dtype);
    add(at + ".bias", {out}, dtype);
  }

  void add_norm(const std::string& at, const Norm& norm) {
    if (norm.kind == NormKind::layer_norm_no_affine) return;
    add(at + ".weight", {norm.dim}, base_);
    if (norm.kind == NormKind::layer_norm) add(at + ".bias", {norm.dim}, base_);
  }

  // A LayerNorm of the description's total (weight and bias).
  void layer_norm(const std::string& at, std::int64_t params, std::string_view what) {
    const std::int64_t dim = per(params, 2, what);
    add(at + ".weight", {dim}, base_);
    add(at + ".bias", {dim}, base_);
  }

  // The tensors listed since `first` must hold `expected` parameters (a description's total);
  // otherwise they are dropped and the inventory stays partial.
  void close(std::size_t first, std::int64_t expected, std::string_view what) {
    std::int64_t listed = 0;
    for (std::size_t i = first; i < inventory_.tensors.size(); ++i) {
      listed = checked_add(listed, inventory_.tensors[i].logical_params);
    }
    if (listed != expected) {
      inventory_.tensors.resize(first);
      gap(
          fmt::format("{}'s {} ({} parameters) is not the released architecture, which alone "
                      "is named tensor by tensor",
                      family_, what, expected));
    }
  }

  // The thinker's text model (thinker.model, thinker.lm_head); false (and a gap) when the
  // description cannot be named.
  bool thinker_text() {
    if (model_.quantization) {
      gap(fmt::format("a quantized {} checkpoint is not named tensor by tensor", family_));
      return false;
    }
    const Stack* text = stack("decoder");
    if (text == nullptr || stack("visual") == nullptr || stack("audio_tower") == nullptr) {
      gap(fmt::format("a {} description without its thinker's text, vision or audio stack",
                      family_));
      return false;
    }
    add("thinker.model.embed_tokens.weight", {model_.vocab_size, model_.embedding_dim}, base_);
    decoder_layers("thinker.model.", *text);
    if (model_.has_lm_head && !model_.tie_word_embeddings) {
      add("thinker.lm_head.weight", {model_.vocab_size, model_.hidden_size}, base_);
    }
    return true;
  }

  // Qwen2 / Qwen3 decoder layers (thinker.model, talker.model, the code predictor, code2wav's
  // pre_transformer): q / k / v / o_proj with the description's biases and QK-norms, a gated MLP
  // or a routed MoE, the layer's norms; then the final norm.
  void decoder_layers(const std::string& root, const Stack& s) {
    for (std::size_t i = 0; i < s.blocks.size(); ++i) {
      const Block& block = s.blocks[i];
      const std::string at = fmt::format("{}layers.{}.", root, i);
      self_attention(at + "self_attn.", block.attention);
      if (block.moe) {
        moe(at + "mlp.", *block.moe);
      } else if (block.mlp.kind == MlpKind::gated && !block.mlp.fused_gate_up && !block.ssm) {
        gated_mlp(at + "mlp.", block.mlp);
      } else {
        gap(fmt::format("a {} decoder layer with fused or state-space modules is not named",
                        family_));
      }
      for (const Norm& norm : block.norms) add_norm(at + norm.name, norm);
    }
    if (s.final_norm) add_norm(root + s.final_norm->name, *s.final_norm);
  }

  void self_attention(const std::string& at, const Attention& a) {
    if (a.fused_qkv) gap(fmt::format("a fused {} decoder attention is not named", family_));
    const std::int64_t h = a.input_dim;
    const std::int64_t q = checked_mul(a.num_heads, a.head_dim, "the tensor inventory");
    const std::int64_t kv = checked_mul(a.num_kv_heads, a.head_dim, "the tensor inventory");
    add_module(at + "q_proj", {q, h}, a.q_bias, base_);
    add_module(at + "k_proj", {kv, h}, a.k_bias, base_);
    add_module(at + "v_proj", {kv, h}, a.v_bias, base_);
    add_module(at + "o_proj", {a.output_dim, q}, a.o_bias, base_);
    if (a.q_norm) add_norm(at + "q_norm", *a.q_norm);
    if (a.k_norm) add_norm(at + "k_norm", *a.k_norm);
  }

  void gated_mlp(const std::string& at, const Mlp& mlp) {
    add_module(at + "gate_proj", {mlp.intermediate, mlp.input_dim}, mlp.up_bias, base_);
    add_module(at + "up_proj", {mlp.intermediate, mlp.input_dim}, mlp.up_bias, base_);
    add_module(at + "down_proj", {mlp.input_dim, mlp.intermediate}, mlp.down_bias, base_);
  }

  // Qwen3-MoE's sparse block as the uploads store it: the router mlp.gate [E, H], one tensor
  // per expert and projection, and (the talker's) shared_expert with its [1, H] gate.
  void moe(const std::string& at, const Moe& m) {
    if (m.router_bias || m.router_correction_bias || m.latent_dim > 0) {
      gap(fmt::format("a {} MoE with router biases or latent experts is not named", family_));
    }
    add(at + "gate.weight", {m.num_experts, m.hidden_dim}, base_);
    for (std::int64_t e = 0; e < m.num_experts; ++e) {
      gated_mlp(fmt::format("{}experts.{}.", at, e), m.expert);
    }
    if (m.shared) gated_mlp(at + "shared_expert.", *m.shared);
    if (m.shared_expert_gate) add(at + "shared_expert_gate.weight", {1, m.hidden_dim}, base_);
  }

  // An extra the description gives a weight shape for: weight (and the bias its count holds).
  void shaped_extra(const std::string& description_name, const std::string& at) {
    const ExtraParameter* e = extra(description_name);
    if (e == nullptr || e->shape.empty()) {
      gap(fmt::format("{}'s {} is not described with its shape", family_, description_name));
      return;
    }
    add_module(at, e->shape, e->shape_has_bias(), base_);
  }

  // The audio tower's width (its ln_post's); 0 (and a gap) when the description lacks its layers.
  std::int64_t audio_width(const Stack& audio) {
    if (!audio.final_norm || audio.blocks.empty()) {
      gap(fmt::format("{}'s audio tower is not described", family_));
      return 0;
    }
    return audio.final_norm->dim;
  }

  // Whisper-style encoder layers (the audio towers): q / k / v / out_proj with the description's
  // biases, fc1 / fc2, two LayerNorms; then ln_post.
  void audio_layers(const std::string& at, const Stack& audio, std::int64_t w) {
    for (std::size_t i = 0; i < audio.blocks.size(); ++i) {
      const Block& block = audio.blocks[i];
      const Attention& a = block.attention;
      const std::string b = fmt::format("{}layers.{}.", at, i);
      add_module(b + "self_attn.q_proj", {w, w}, a.q_bias, base_);
      add_module(b + "self_attn.k_proj", {w, w}, a.k_bias, base_);
      add_module(b + "self_attn.v_proj", {w, w}, a.v_bias, base_);
      add_module(b + "self_attn.out_proj", {w, w}, a.o_bias, base_);
      add_module(b + "fc1", {block.mlp.intermediate, w}, block.mlp.up_bias, base_);
      add_module(b + "fc2", {w, block.mlp.intermediate}, block.mlp.down_bias, base_);
      for (const Norm& norm : block.norms) add_norm(b + norm.name, norm);
    }
    add_norm(at + audio.final_norm->name, *audio.final_norm);
  }

  // ---- Qwen2.5-Omni ----

  // thinker.visual: Qwen2.5-VL's tower, except that Qwen2_5OmniVisionAttention stores q, k, v
  // and proj apart (the description counts them as one fused qkv: the same parameters).
  void qwen2_5_vision(const Stack& visual) {
    const std::string at = "thinker.visual.";
    shaped_extra("visual.patch_embed.proj", at + "patch_embed.proj");
    for (std::size_t i = 0; i < visual.blocks.size(); ++i) {
      const Block& block = visual.blocks[i];
      const Attention& a = block.attention;
      const std::string b = fmt::format("{}blocks.{}.", at, i);
      const std::int64_t d = a.input_dim;
      const std::int64_t inner = checked_mul(a.num_heads, a.head_dim, "the tensor inventory");
      add_module(b + "attn.q", {inner, d}, a.q_bias, base_);
      add_module(b + "attn.k", {inner, d}, a.k_bias, base_);
      add_module(b + "attn.v", {inner, d}, a.v_bias, base_);
      add_module(b + "attn.proj", {d, inner}, a.o_bias, base_);
      gated_mlp(b + "mlp.", block.mlp);
      for (const Norm& norm : block.norms) add_norm(b + norm.name, norm);
    }
    const std::int64_t width = params_of("visual.merger.ln_q");  // an RMSNorm of the tower width
    if (width <= 0) gap("Qwen2.5-Omni's vision merger is not described");
    add(at + "merger.ln_q.weight", {width}, base_);
    shaped_extra("visual.merger.mlp.0", at + "merger.mlp.0");
    shaped_extra("visual.merger.mlp.2", at + "merger.mlp.2");
  }

  // thinker.audio_tower: conv1 (mel -> w, 3 taps), conv2 (w -> w, 3 taps), Whisper's layers
  // (k_proj unbiased), ln_post, proj [out, w] and audio_bos_eos_token [2, out]. Its sinusoidal
  // positions are not persistent.
  void qwen2_5_audio(const Stack& audio) {
    const std::string at = "thinker.audio_tower.";
    const std::int64_t w = audio_width(audio);
    if (w == 0) return;
    const std::int64_t out = per(params_of(at + "audio_bos_eos_token"), 2, "audio BOS / EOS table");
    const std::int64_t mel = per(params_of(at + "conv1") - w, 3 * w, "audio conv1");
    biased(at + "conv1", {w, mel, 3});
    biased(at + "conv2", {w, w, 3});
    audio_layers(at, audio, w);
    biased(at + "proj", {out, w});
    add(at + "audio_bos_eos_token.weight", {2, out}, base_);
    expect(params_of(at + "conv2"), w * w * 3 + w, "audio conv2");
    expect(params_of(at + "proj"), out * w + out, "audio proj");
  }

  // talker: thinker_to_talker_proj [H, E] + bias, model.embed_tokens [V, E] (E the thinker's
  // width), Qwen2 layers of width H, model.norm, codec_head [V, H] without bias.
  void qwen2_5_talker(const Stack& s) {
    if (!s.final_norm) {
      gap("Qwen2.5-Omni's talker is not described");
      return;
    }
    const std::int64_t h = s.final_norm->dim;
    const std::int64_t e =
        per(params_of("talker.thinker_to_talker_proj") - h, h, "talker's thinker_to_talker_proj");
    const std::int64_t vocab = per(params_of("talker.model.embed_tokens"), e, "talker table");
    expect(params_of("talker.codec_head"), vocab * h, "talker codec_head");
    biased("talker.thinker_to_talker_proj", {h, e});
    add("talker.model.embed_tokens.weight", {vocab, e}, base_);
    decoder_layers("talker.model.", s);
    add("talker.codec_head.weight", {vocab, h}, base_);
  }

  // A biased F32 Linear or Conv1d of token2wav.
  void f32(const std::string& at, Shape weight) { add_module(at, std::move(weight), true, "F32"); }

  // token2wav.code2wav_dit_model (F32): time MLP, codec table, input projection with the
  // ECAPA-TDNN speaker encoder, the AdaLN-Zero blocks, norm_out and proj_out.
  void dit() {
    const std::string at = "token2wav.code2wav_dit_model.";
    const std::size_t first = inventory_.tensors.size();
    const DitLayout d;
    f32(at + "time_embed.time_mlp.0", {d.dim, 256});  // 256 sinusoidal features
    f32(at + "time_embed.time_mlp.2", {d.dim, d.dim});
    add(at + "text_embed.codec_embed.weight", {d.num_embeds + 1, d.emb_dim}, "F32");
    f32(at + "input_embed.proj", {d.dim, d.mel + d.enc_dim + d.speaker_dim + d.emb_dim});
    ecapa(at + "input_embed.spk_encoder.", d);
    const std::int64_t ff = d.ff_mult * d.dim;
    for (std::int64_t i = 0; i < d.depth; ++i) {
      const std::string b = fmt::format("{}transformer_blocks.{}.", at, i);
      f32(b + "attn_norm.linear", {6 * d.dim, d.dim});
      for (const char* projection : {"to_q", "to_k", "to_v", "to_out.0"}) {
        f32(b + "attn." + projection, {d.dim, d.dim});  // heads x head_dim = dim
      }
      f32(b + "ff.ff.0", {ff, d.dim});
      f32(b + "ff.ff.3", {d.dim, ff});
    }
    f32(at + "norm_out.linear", {2 * d.dim, d.dim});
    f32(at + "proj_out", {d.mel, d.dim});
    close(first, params_of("token2wav.code2wav_dit_model"), "DiT");
  }

  // ECAPA_TimeDelayNet: blocks.0 (a TDNN), SE-Res2Net blocks.1..n-2 (tdnn1, the scale - 1
  // res2net convs, tdnn2, the SE block), mfa over their concatenated outputs, attentive
  // statistics pooling (asp) and fc; every Conv1d biased.
  void ecapa(const std::string& at, const DitLayout& d) {
    const std::size_t n = d.channels.size();
    f32(at + "blocks.0.conv", {d.channels[0], d.mel, d.kernels[0]});
    for (std::size_t i = 1; i + 1 < n; ++i) {
      const std::string b = fmt::format("{}blocks.{}.", at, i);
      const std::int64_t c = d.channels[i];
      const std::int64_t split = c / d.res2net_scale;
      f32(b + "tdnn1.conv", {c, d.channels[i - 1], 1});
      for (std::int64_t j = 0; j + 1 < d.res2net_scale; ++j) {
        f32(fmt::format("{}res2net_block.blocks.{}.conv", b, j), {split, split, d.kernels[i]});
      }
      f32(b + "tdnn2.conv", {c, c, 1});
      f32(b + "se_block.conv1", {d.se_channels, c, 1});
      f32(b + "se_block.conv2", {c, d.se_channels, 1});
    }
    const std::int64_t last = d.channels[n - 1];
    const auto blocks = static_cast<std::int64_t>(n - 2);
    f32(at + "mfa.conv", {last, d.channels[n - 2] * blocks, d.kernels[n - 1]});
    f32(at + "asp.tdnn.conv", {d.attention_channels, 3 * last, 1});
    f32(at + "asp.conv", {last, d.attention_channels, 1});
    f32(at + "fc", {d.enc_dim, 2 * last, 1});
  }

  // token2wav.code2wav_bigvgan_model (F32): conv_pre, one ConvTranspose1d per upsample stage
  // halving the channels, per stage one AMPBlock per resblock kernel (convs1 / convs2 and twice
  // as many SnakeBeta activations, each alpha and beta), activation_post and conv_post without
  // bias. The anti-aliasing filters are not persistent.
  void bigvgan() {
    const std::string at = "token2wav.code2wav_bigvgan_model.";
    const std::size_t first = inventory_.tensors.size();
    const BigVganLayout v;
    f32(at + "conv_pre", {v.initial_channels, v.mel, 7});
    std::int64_t channels = v.initial_channels;
    std::size_t resblock = 0;
    for (std::size_t stage = 0; stage < v.upsample_kernels.size(); ++stage) {
      const std::int64_t out = channels / 2;
      transposed_conv(fmt::format("{}ups.{}.0", at, stage), channels, out,
                      v.upsample_kernels[stage], "F32");
      for (const std::int64_t kernel : v.resblock_kernels) {
        const std::string b = fmt::format("{}resblocks.{}.", at, resblock++);
        for (std::int64_t j = 0; j < v.dilations; ++j) {
          f32(fmt::format("{}convs1.{}", b, j), {out, out, kernel});
          f32(fmt::format("{}convs2.{}", b, j), {out, out, kernel});
        }
        for (std::int64_t j = 0; j < 2 * v.dilations; ++j) {
          snake(fmt::format("{}activations.{}.act", b, j), out, "F32");
        }
      }
      channels = out;
    }
    snake(at + "activation_post.act", channels, "F32");
    add_module(at + "conv_post", {1, channels, 7}, false, "F32");
    close(first, params_of("token2wav.code2wav_bigvgan_model"), "BigVGAN");
  }

  // SnakeBeta(channels): alpha and beta, bare [channels] Parameters.
  void snake(const std::string& at, std::int64_t channels, std::string_view dtype) {
    add(at + ".alpha", {channels}, dtype);
    add(at + ".beta", {channels}, dtype);
  }

  // A persistent buffer the original uploads store (Qwen2.5-Omni's DiT rotary inv_freq):
  // listed, never reported missing, not a parameter.
  void buffer(const StoredExtra& extra) {
    if (extra.count != 1 || extra.dtype != "F32") {
      gap(fmt::format("stored tensor '{}' is not named", extra.name));
      return;
    }
    add_tensor(inventory_, extra.name,
               extra.shape.empty() ? Shape{extra.elements_each} : extra.shape, "F32", false);
    inventory_.tensors.back().buffer = true;
  }

  // ---- Qwen3-Omni ----

  // thinker.visual: the Qwen3-VL tower in Qwen3-Omni's names: patch_embed.proj (biased Conv3d),
  // pos_embed, blocks with a fused attn.qkv and mlp.linear_fc1 / fc2, LayerNorms; the merger and
  // the deepstack mergers (merger_list.N) as ln_q, mlp.0, mlp.2.
  void qwen3_vision(const Stack& visual) {
    const std::string at = "thinker.visual.";
    shaped_extra("visual.patch_embed.proj", at + "patch_embed.proj");
    const ExtraParameter* positions = extra("visual.pos_embed");
    if (positions == nullptr || positions->shape.size() != 2) {
      gap("Qwen3-Omni's vision positions are not described");
    } else {
      add(at + "pos_embed.weight", positions->shape, base_);
    }
    for (std::size_t i = 0; i < visual.blocks.size(); ++i) {
      const Block& block = visual.blocks[i];
      const Attention& a = block.attention;
      const std::string b = fmt::format("{}blocks.{}.", at, i);
      const std::int64_t d = a.input_dim;
      const std::int64_t inner = checked_mul(a.num_heads, a.head_dim, "the tensor inventory");
      if (!a.fused_qkv || !a.q_bias || block.mlp.kind != MlpKind::plain) {
        gap("Qwen3-Omni's vision blocks are not the fused, biased Qwen3-VL blocks named");
      }
      biased(b + "attn.qkv", {3 * inner, d});
      biased(b + "attn.proj", {d, inner});
      biased(b + "mlp.linear_fc1", {block.mlp.intermediate, d});
      biased(b + "mlp.linear_fc2", {d, block.mlp.intermediate});
      for (const Norm& norm : block.norms) add_norm(b + norm.name, norm);
    }
    vision_merger("visual.merger", at + "merger");
    for (int i = 0; extra(fmt::format("visual.deepstack_merger_list.{}.norm", i)) != nullptr; ++i) {
      vision_merger(fmt::format("visual.deepstack_merger_list.{}", i),
                    fmt::format("{}merger_list.{}", at, i));
    }
  }

  // A Qwen3-VL merger (the description's norm / linear_fc1 / linear_fc2) stored as
  // Qwen3OmniMoeVisionPatchMerger's ln_q / mlp.0 / mlp.2.
  void vision_merger(const std::string& description, const std::string& at) {
    layer_norm(at + ".ln_q", params_of(description + ".norm"), "vision merger norm");
    shaped_extra(description + ".linear_fc1", at + ".mlp.0");
    shaped_extra(description + ".linear_fc2", at + ".mlp.2");
  }

  // thinker.audio_tower (AuT): conv2d1 (1 -> c, 3 x 3), conv2d2 / conv2d3 (c -> c), all
  // biased; conv_out [w, c x F] without bias; Whisper-style layers with every projection
  // biased; ln_post; proj1 [w, w] and proj2 [out, w], biased. Its sinusoidal positions are not
  // persistent.
  void qwen3_audio(const Stack& audio) {
    const std::string at = "thinker.audio_tower.";
    const std::int64_t w = audio_width(audio);
    if (w == 0) return;
    const std::int64_t c = per(params_of(at + "conv2d1"), 3 * 3 + 1, "audio conv2d1");
    const std::int64_t out = per(params_of(at + "proj2"), w + 1, "audio proj2");
    biased(at + "conv2d1", {c, 1, 3, 3});
    biased(at + "conv2d2", {c, c, 3, 3});
    biased(at + "conv2d3", {c, c, 3, 3});
    add(at + "conv_out.weight", {w, per(params_of(at + "conv_out"), w, "audio conv_out")}, base_);
    audio_layers(at, audio, w);
    biased(at + "proj1", {w, w});
    biased(at + "proj2", {out, w});
    for (const char* conv : {"conv2d2", "conv2d3"}) {
      expect(params_of(at + conv), c * c * 9 + c, fmt::format("audio {}", conv));
    }
    expect(params_of(at + "proj1"), w * w + w, "audio proj1");
  }

  // talker: Qwen3-MoE layers with a shared expert (talker.model), codec_embedding [V, H] in
  // place of embed_tokens, norm; text_projection / hidden_projection (linear_fc1 [I, T],
  // linear_fc2 [H, I], biased; T the thinker's width); codec_head [V, H]; and the code
  // predictor.
  void qwen3_talker(const Stack& s, const Stack& predictor) {
    if (!s.final_norm || !predictor.final_norm) {
      gap("Qwen3-Omni's talker is not described");
      return;
    }
    const std::int64_t h = s.final_norm->dim;
    const std::int64_t t = model_.hidden_size;
    const std::int64_t vocab = per(params_of("talker.model.codec_embedding"), h, "talker table");
    expect(params_of("talker.codec_head"), vocab * h, "talker codec_head");
    decoder_layers("talker.model.", s);
    add("talker.model.codec_embedding.weight", {vocab, h}, base_);
    add("talker.codec_head.weight", {vocab, h}, base_);
    for (const char* projection : {"text_projection", "hidden_projection"}) {
      const std::string at = fmt::format("talker.{}", projection);
      const std::int64_t inner = per(params_of(at) - h, t + 1 + h, at);
      biased(at + ".linear_fc1", {inner, t});
      biased(at + ".linear_fc2", {h, inner});
    }
    code_predictor(predictor);
  }

  // talker.code_predictor: dense Qwen3 layers, model.norm, one codec_embedding and one lm_head
  // [code vocab, H] per code group after the first (the released counts, Code2WavLayout).
  void code_predictor(const Stack& predictor) {
    const std::string at = "talker.code_predictor.";
    decoder_layers(at + "model.", predictor);
    const Code2WavLayout layout;
    const std::int64_t h = predictor.final_norm->dim;
    for (const char* table : {"model.codec_embedding", "lm_head"}) {
      const std::size_t first = inventory_.tensors.size();
      for (std::int64_t g = 0; g < layout.code_groups; ++g) {
        add(fmt::format("{}{}.{}.weight", at, table, g), {layout.code_vocab, h}, base_);
      }
      close(first, params_of(at + table), fmt::format("code predictor {}", table));
    }
  }

  // code2wav: the pre_transformer (Qwen3 layers without QK-norm, each with
  // self_attn_layer_scale.scale and mlp_layer_scale.scale [H]), code_embedding, the ConvNeXt
  // upsampler and the SnakeBeta decoder. Every conv is biased and wrapped in a `.conv` module.
  void code2wav(const Stack& pre_transformer) {
    if (!pre_transformer.final_norm) {
      gap("Qwen3-Omni's code2wav is not described");
      return;
    }
    const std::string root = "code2wav.pre_transformer.";
    const std::int64_t h = pre_transformer.final_norm->dim;
    decoder_layers(root, pre_transformer);
    for (std::size_t i = 0; i < pre_transformer.blocks.size(); ++i) {
      for (const char* scale : {"self_attn_layer_scale", "mlp_layer_scale"}) {
        add(fmt::format("{}layers.{}.{}.scale", root, i, scale), {h}, base_);
      }
    }
    expect(params_of(root + "layers.*.layer_scales"),
           2 * h * static_cast<std::int64_t>(pre_transformer.blocks.size()),
           "code2wav layer scales");
    add("code2wav.code_embedding.weight",
        {per(params_of("code2wav.code_embedding"), h, "code2wav code_embedding"), h}, base_);
    code2wav_upsample(h);
    code2wav_decoder(h);
  }

  // code2wav.upsample.N: a ConvTranspose1d(H, H, r) (.0.conv) and a ConvNeXt block (.1):
  // depthwise dwconv.conv [H, 1, 7], LayerNorm, pwconv1 [4H, H], pwconv2 [H, 4H], gamma [H].
  void code2wav_upsample(std::int64_t h) {
    const std::size_t first = inventory_.tensors.size();
    const Code2WavLayout layout;
    for (std::size_t i = 0; i < layout.upsampling_ratios.size(); ++i) {
      const std::string at = fmt::format("code2wav.upsample.{}.", i);
      transposed_conv(at + "0.conv", h, h, layout.upsampling_ratios[i], base_);
      biased(at + "1.dwconv.conv", {h, 1, 7});
      add(at + "1.norm.weight", {h}, base_);
      add(at + "1.norm.bias", {h}, base_);
      biased(at + "1.pwconv1", {4 * h, h});
      biased(at + "1.pwconv2", {h, 4 * h});
      add(at + "1.gamma", {h}, base_);
    }
    close(first, params_of("code2wav.upsample"), "code2wav upsampler");
  }

  // code2wav.decoder: 0.conv [D, H, 7]; per upsample rate r a block (N.block.0 SnakeBeta,
  // N.block.1.conv ConvTranspose1d(C, C / 2, 2r), three residual units N.block.2-4 of act1,
  // conv1.conv [C/2, C/2, 7], act2, conv2.conv [C/2, C/2, 1]); a last SnakeBeta and a conv to one
  // channel.
  void code2wav_decoder(std::int64_t h) {
    const std::string at = "code2wav.decoder.";
    const std::size_t first = inventory_.tensors.size();
    const Code2WavLayout layout;
    std::int64_t channels = layout.decoder_dim;
    biased(at + "0.conv", {channels, h, 7});
    std::size_t index = 1;
    for (const std::int64_t rate : layout.upsample_rates) {
      const std::string b = fmt::format("{}{}.block.", at, index++);
      const std::int64_t out = channels / 2;
      snake(b + "0", channels, base_);
      transposed_conv(b + "1.conv", channels, out, 2 * rate, base_);
      for (int unit = 2; unit <= 4; ++unit) {
        const std::string u = fmt::format("{}{}.", b, unit);
        snake(u + "act1", out, base_);
        biased(u + "conv1.conv", {out, out, 7});
        snake(u + "act2", out, base_);
        biased(u + "conv2.conv", {out, out, 1});
      }
      channels = out;
    }
    snake(fmt::format("{}{}", at, index), channels, base_);
    biased(fmt::format("{}{}.conv", at, index + 1), {1, channels, 7});
    close(first, params_of("code2wav.decoder"), "code2wav decoder");
  }

  const ModelDescription& model_;
  Inventory& inventory_;
  std::string_view family_;
  std::string_view base_;
};

void qwen2_5_omni_tensors(const ModelDescription& model, Inventory& inventory) {
  OmniEmitter(model, inventory, "Qwen2.5-Omni").emit_qwen2_5();
}

void qwen3_omni_tensors(const ModelDescription& model, Inventory& inventory) {
  OmniEmitter(model, inventory, "Qwen3-Omni").emit_qwen3();
}

}  // namespace

std::optional<Naming> qwen_omni_naming(const std::string& type) {
  if (type == "qwen2_5_omni") {
    return Naming{.label =
                      "Qwen2.5-Omni (thinker.model / thinker.visual / thinker.audio_tower, "
                      "talker.model, token2wav.code2wav_dit_model / code2wav_bigvgan_model)",
                  .root = "thinker.model.",
                  .family_tensors = qwen2_5_omni_tensors};
  }
  if (type == "qwen3_omni_moe") {
    return Naming{.label =
                      "Qwen3-Omni (thinker.model with per-expert MoE / thinker.visual / "
                      "thinker.audio_tower, talker.model + code_predictor, code2wav)",
                  .root = "thinker.model.",
                  .family_tensors = qwen3_omni_tensors};
  }
  return std::nullopt;
}

}  // namespace trace::checkpoint
