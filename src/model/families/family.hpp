#pragma once
// Shared vocabulary of the family parsers: each families/<name>.cpp turns one config.json dialect
// into a ModelDescription using these helpers, and registers its builder in architectures.cpp.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../config_reader.hpp"
#include "trace/checked_math.hpp"
#include "trace/model/model_description.hpp"

namespace trace::family {

// ---- builders, one per model_type (see architectures.cpp for the table) ----
ModelDescription build_llama(const ConfigReader& config);
ModelDescription build_mistral(const ConfigReader& config);
ModelDescription build_mistral3(const ConfigReader& config);
/// The Pixtral vision tower (mistral3.cpp) from a `pixtral` vision_config: patch_conv, ln_pre and
/// RMSNorm / gated-MLP layers under vision_tower.*; no post-norm, no learned positions.
Stack pixtral_tower(const ConfigReader& vision, ModelDescription& model);
ModelDescription build_ministral3(const ConfigReader& config);
ModelDescription build_qwen2(const ConfigReader& config);
ModelDescription build_qwen3(const ConfigReader& config);
ModelDescription build_olmo2(const ConfigReader& config);
ModelDescription build_gemma(const ConfigReader& config);
ModelDescription build_gemma2(const ConfigReader& config);
ModelDescription build_gemma3_text(const ConfigReader& config);
ModelDescription build_gemma3(const ConfigReader& config);
ModelDescription build_phi(const ConfigReader& config);
ModelDescription build_phi3(const ConfigReader& config);
ModelDescription build_gpt2(const ConfigReader& config);
ModelDescription build_gpt_bigcode(const ConfigReader& config);
ModelDescription build_gpt_neox(const ConfigReader& config);
ModelDescription build_gptj(const ConfigReader& config);
ModelDescription build_stablelm(const ConfigReader& config);
ModelDescription build_falcon(const ConfigReader& config);
ModelDescription build_bloom(const ConfigReader& config);
ModelDescription build_opt(const ConfigReader& config);
ModelDescription build_bert(const ConfigReader& config);
ModelDescription build_roberta(const ConfigReader& config);
ModelDescription build_xlm_roberta(const ConfigReader& config);
ModelDescription build_camembert(const ConfigReader& config);
ModelDescription build_mpnet(const ConfigReader& config);
ModelDescription build_electra(const ConfigReader& config);
ModelDescription build_distilbert(const ConfigReader& config);
ModelDescription build_albert(const ConfigReader& config);
ModelDescription build_deberta(const ConfigReader& config);
ModelDescription build_deberta_v2(const ConfigReader& config);
ModelDescription build_modernbert(const ConfigReader& config);
ModelDescription build_bart(const ConfigReader& config);
ModelDescription build_mbart(const ConfigReader& config);
ModelDescription build_marian(const ConfigReader& config);
ModelDescription build_pegasus(const ConfigReader& config);
ModelDescription build_m2m_100(const ConfigReader& config);
/// The sizes every BERT-lineage config states: vocab_size, hidden_size, num_hidden_layers,
/// intermediate_size, max_position_embeddings (all required).
struct EncoderSizes {
  std::int64_t vocab = 0;
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t intermediate = 0;
  std::int64_t positions = 0;
};
EncoderSizes read_encoder_sizes(const ConfigReader& config);
/// Refuses a position_embedding_type other than "absolute" (BERT's relative_key variants).
void require_absolute_positions(const ConfigReader& config);
/// The BERT encoder (BertLayer, which RoBERTa, XLM-R, CamemBERT and ELECTRA reuse): `layers`
/// post-LayerNorm blocks of biased self-attention and a biased plain MLP of hidden_act (gelu).
/// Refuses a position_embedding_type other than "absolute" and add_cross_attention = true.
Stack bert_encoder_stack(const ConfigReader& config, std::int64_t hidden, std::int64_t layers,
                         std::int64_t intermediate);
/// A classification head's labels as PretrainedConfig resolves them: num_labels, else the size
/// of id2label, else 2.
std::int64_t classifier_labels(const ConfigReader& config);
/// What the head class `architecture` names tells: its training logits
/// (model.head_logits_per_token): none per token for a sequence classifier, multiple choice or a
/// bare *Model, the labels for token classification, 2 for QA; an LM / MLM head keeps the
/// vocabulary. And whether it is a bare *Model
/// (model.bare_base_model), whose upload has no wrapper prefix: `wrapper_prefix` ("bert.") is
/// then taken off the stored extras' names.
void set_head_class(ModelDescription& model, std::string_view architecture,
                    const ConfigReader& config, std::string_view wrapper_prefix = {});
/// A Linear's parameters: in x out weights, plus `out` biases.
std::int64_t linear_params(std::int64_t in, std::int64_t out, bool bias = true);
/// A biased convolution of `kernel` taps per input channel (a biased Linear for kernel 1).
std::int64_t biased_conv_params(std::int64_t in, std::int64_t out, std::int64_t kernel = 1);
/// A module of the towers and decoders off the text path (component vision: counted in the
/// total, never active): an audio stem, a projector, a vocoder.
void add_vision_part(ModelDescription& model, std::string name, const char* op,
                     std::int64_t params);
/// A tower's biased nn.MultiheadAttention(d, heads) under `name` (a resampler or attention
/// pool): in_proj_weight [3d, d] and in_proj_bias [3d] as bare parameters, beside the biased
/// out_proj Linear [d, d], as the checkpoint stores them.
void add_vision_multihead_attention(ModelDescription& model, const std::string& name,
                                    std::int64_t d);
ModelDescription build_t5(const ConfigReader& config);
ModelDescription build_umt5(const ConfigReader& config);
ModelDescription build_t5gemma(const ConfigReader& config);
ModelDescription build_mixtral(const ConfigReader& config);
ModelDescription build_qwen2_moe(const ConfigReader& config);
ModelDescription build_qwen3_moe(const ConfigReader& config);
ModelDescription build_deepseek(const ConfigReader& config);
ModelDescription build_gpt_oss(const ConfigReader& config);
ModelDescription build_minimax_m2(const ConfigReader& config);
ModelDescription build_llama4(const ConfigReader& config);
ModelDescription build_llama4_text(const ConfigReader& config);
ModelDescription build_decilm(const ConfigReader& config);
ModelDescription build_olmoe(const ConfigReader& config);
ModelDescription build_flex_olmo(const ConfigReader& config);
ModelDescription build_glm4_moe(const ConfigReader& config);
ModelDescription build_chatglm(const ConfigReader& config);
ModelDescription build_chatglm_v1(const ConfigReader& config);
ModelDescription build_qwen(const ConfigReader& config);
ModelDescription build_ernie4_5_moe(const ConfigReader& config);
ModelDescription build_nemotron_h(const ConfigReader& config);
ModelDescription build_mamba(const ConfigReader& config);
ModelDescription build_jamba(const ConfigReader& config);
ModelDescription build_granite_hybrid(const ConfigReader& config);
ModelDescription build_qwen3_next(const ConfigReader& config);
ModelDescription build_qwen3_5(const ConfigReader& config);
ModelDescription build_qwen3_5_moe(const ConfigReader& config);
ModelDescription build_qwen3_5_text(const ConfigReader& config);
ModelDescription build_qwen3_5_moe_text(const ConfigReader& config);
ModelDescription build_falcon_h1(const ConfigReader& config);
ModelDescription build_zamba2(const ConfigReader& config);
ModelDescription build_lfm2(const ConfigReader& config);
ModelDescription build_lfm2_moe(const ConfigReader& config);
ModelDescription build_kimi_linear(const ConfigReader& config);
ModelDescription build_mllama(const ConfigReader& config);
ModelDescription build_qwen2_vl(const ConfigReader& config);
ModelDescription build_qwen2_5_vl(const ConfigReader& config);
ModelDescription build_qwen3_vl(const ConfigReader& config);
ModelDescription build_qwen3_vl_moe(const ConfigReader& config);
ModelDescription build_qwen3_omni_moe(const ConfigReader& config);
ModelDescription build_qwen2_5_omni(const ConfigReader& config);
ModelDescription build_phimoe(const ConfigReader& config);
ModelDescription build_dbrx(const ConfigReader& config);
ModelDescription build_granite(const ConfigReader& config);
ModelDescription build_granitemoe(const ConfigReader& config);
ModelDescription build_granitemoeshared(const ConfigReader& config);
ModelDescription build_internlm2(const ConfigReader& config);
ModelDescription build_baichuan(const ConfigReader& config);
ModelDescription build_starcoder2(const ConfigReader& config);
ModelDescription build_cohere(const ConfigReader& config);
ModelDescription build_cohere2(const ConfigReader& config);
ModelDescription build_smollm3(const ConfigReader& config);
ModelDescription build_olmo(const ConfigReader& config);
ModelDescription build_olmo3(const ConfigReader& config);
ModelDescription build_glm(const ConfigReader& config);
ModelDescription build_glm4(const ConfigReader& config);
ModelDescription build_exaone(const ConfigReader& config);
ModelDescription build_nemotron(const ConfigReader& config);
ModelDescription build_gpt_neo(const ConfigReader& config);
ModelDescription build_llava(const ConfigReader& config);
ModelDescription build_llava_next(const ConfigReader& config);
ModelDescription build_llava_next_video(const ConfigReader& config);
ModelDescription build_helium(const ConfigReader& config);
ModelDescription build_cwm(const ConfigReader& config);
ModelDescription build_vaultgemma(const ConfigReader& config);
ModelDescription build_paligemma(const ConfigReader& config);
ModelDescription build_idefics3(const ConfigReader& config);
ModelDescription build_mpt(const ConfigReader& config);
ModelDescription build_codegen(const ConfigReader& config);
ModelDescription build_seed_oss(const ConfigReader& config);
ModelDescription build_hunyuan_v1_dense(const ConfigReader& config);
ModelDescription build_exaone4(const ConfigReader& config);
ModelDescription build_arcee(const ConfigReader& config);
ModelDescription build_afmoe(const ConfigReader& config);
ModelDescription build_deepseek_moe(const ConfigReader& config);
ModelDescription build_ernie4_5(const ConfigReader& config);
ModelDescription build_internvl_chat(const ConfigReader& config);
ModelDescription build_bamba(const ConfigReader& config);
ModelDescription build_hunyuan_v1_moe(const ConfigReader& config);
ModelDescription build_dots1(const ConfigReader& config);
ModelDescription build_bailing_moe(const ConfigReader& config);
ModelDescription build_minicpm(const ConfigReader& config);
ModelDescription build_minicpm3(const ConfigReader& config);
ModelDescription build_whisper(const ConfigReader& config);
ModelDescription build_qwen2_audio(const ConfigReader& config);
ModelDescription build_minicpmv(const ConfigReader& config);
ModelDescription build_glm4v(const ConfigReader& config);
ModelDescription build_glm4v_moe(const ConfigReader& config);
ModelDescription build_glm46v(const ConfigReader& config);
ModelDescription build_apertus(const ConfigReader& config);
ModelDescription build_mimo(const ConfigReader& config);
ModelDescription build_bailing_moe_v2(const ConfigReader& config);
ModelDescription build_gemma3n(const ConfigReader& config);
ModelDescription build_gemma3n_text(const ConfigReader& config);
ModelDescription build_internvl(const ConfigReader& config);
// The InternViT layer and the pixel-shuffle projector both InternVL builders use (internvl.cpp;
// `hf_names` selects transformers' tensor names over the remote code's).
Block intern_vit_layer(std::int64_t hidden, std::int64_t heads, std::int64_t intermediate,
                       bool qkv_bias, bool qk_norm, bool rms_norms, const std::string& activation,
                       bool hf_names);
void add_pixel_shuffle_projector(const ConfigReader& config, std::int64_t vision_hidden,
                                 std::int64_t rows, std::int64_t columns, bool hf_names,
                                 ModelDescription& model);
ModelDescription build_kimi_vl(const ConfigReader& config);
ModelDescription build_deepseek_vl_v2(const ConfigReader& config);
ModelDescription build_dots_ocr(const ConfigReader& config);
ModelDescription build_smolvlm(const ConfigReader& config);
// A multimodal wrapper's text decoder (llava.cpp): text_config through the builder of its
// model_type (`default_type` when absent; llama, mistral or qwen2), with the config class's
// defaults for the keys it omits, listed in the notes; no stored rotary buffers; the wrapper's
// torch_dtype, and a note when its top-level vocab_size disagrees.
ModelDescription build_wrapped_text(const ConfigReader& config, const char* default_type);
ModelDescription build_llava_onevision(const ConfigReader& config);
ModelDescription build_aya_vision(const ConfigReader& config);
ModelDescription build_glm5_next(const ConfigReader& config);
ModelDescription build_deepseek_v4(const ConfigReader& config);
ModelDescription build_longcat_flash(const ConfigReader& config);
ModelDescription build_minimax(const ConfigReader& config);

// ---- helpers ----
Norm rms_norm(std::string name, std::int64_t dim);
/// Kimi Delta Attention (Kimi-Linear's, also GLM-5.3-Flash's linear layers): q / k / v of
/// heads x head_dim with short convolutions, low-rank forget and output gates, A_log and dt_bias
/// kept in F32 by the checkpoints.
Ssm kimi_delta_attention(std::int64_t hidden, std::int64_t heads, std::int64_t head_dim,
                         std::int64_t conv_kernel);
/// GLM-4V's vision tail, shared by GLM-5.3-Flash: a merge x merge Conv2d downsample of the tower's
/// `hidden` to `out`, then the merger (proj, LayerNorm, SwiGLU of `projection`).
void add_glm_vision_merger(ModelDescription& model, std::int64_t hidden, std::int64_t out,
                           std::int64_t merge, std::int64_t projection);
Norm layer_norm(std::string name, std::int64_t dim, bool bias = true);
/// Multi-head latent attention (DeepSeek-V2/V3's MLA) of `heads` heads on a `hidden`-wide
/// residual: q / kv low-rank projections of `mla`, RoPE on qk_rope_head_dim, `bias` on q, kv_a
/// and o as attention_bias sets them.
Attention mla_attention(const MlaShape& mla, std::int64_t hidden, std::int64_t heads,
                        bool bias = false);

/// Heads, kv heads and head_dim with the usual keys; checks divisibility.
struct HeadShape {
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
};

/// The sizes of one Whisper-style audio encoder, read by each family with its own keys.
struct AudioEncoder {
  std::int64_t width = 0;  ///< d_model
  std::int64_t layers = 0;
  HeadShape heads;
  std::int64_t ffn = 0;
  std::int64_t mel_bins = 0;
  std::int64_t frames = 0;  ///< max_source_positions: encoder output length (30 s of audio)
  std::string activation;
};
/// Whisper's encoder layers (q, v, out_proj biased, k_proj not; LayerNorms; a biased fc1 / fc2)
/// and their final norm `final_norm` (whisper.cpp); the conv stem and positions are the caller's.
Stack whisper_encoder_stack(std::string name, const AudioEncoder& encoder, bool vision,
                            std::string final_norm = "layer_norm");
/// The audio_config keys Qwen2-Audio's and the Qwen Omni models' encoders share (d_model,
/// encoder_layers, encoder_attention_heads, encoder_ffn_dim, num_mel_bins, max_source_positions,
/// activation_function), required but the activation (gelu).
AudioEncoder read_qwen_audio_encoder(const ConfigReader& audio);

/// The BERT encoder's blocks (bert_encoder_stack) over a head shape already read, the
/// attention's norm named `attention_norm` (BERT: attention.output.LayerNorm; MPNet:
/// attention.LayerNorm); no key is refused.
Stack post_norm_encoder_stack(const ConfigReader& config, std::int64_t hidden,
                              std::int64_t layers, std::int64_t intermediate,
                              const HeadShape& shape, const char* attention_norm);

/// head_dim comes from the `head_dim` key when `explicit_head_dim_allowed`, else
/// `default_head_dim` when given (Gemma's config classes default it to 256), else hidden / heads.
HeadShape read_head_shape(const ConfigReader& config, std::int64_t hidden,
                          std::initializer_list<std::string_view> heads_keys,
                          std::initializer_list<std::string_view> kv_heads_keys,
                          bool explicit_head_dim_allowed = true,
                          std::optional<std::int64_t> default_head_dim = std::nullopt);

/// Self-attention over a residual stream of `hidden`.
Attention self_attention(std::int64_t hidden, const HeadShape& shape, bool qkv_bias, bool o_bias);

/// Per-layer sliding windows (0 = full). Reads `layer_types` when present; otherwise
/// `is_sliding(layer_index)` decides, with `window` as the size.
struct WindowRule {
  std::int64_t window = 0;  ///< 0: no sliding layers
  /// every_nth_global: layers n-1, 2n-1, ... are global; first_of_n_global: layers 0, n, 2n, ...
  enum class Pattern {
    none,
    all,
    alternate_even_sliding,
    every_nth_global,
    first_of_n_global,
    from_layer
  } pattern = Pattern::none;
  std::int64_t parameter = 0;  ///< n for every_nth_global, first sliding layer for from_layer
};
std::vector<std::int64_t> resolve_windows(const ConfigReader& config, std::int64_t layers,
                                          const WindowRule& rule);

/// The sliding_window key as config classes that default it read it: absent -> `class_default`,
/// an explicit null -> 0 (every layer attends to the whole context).
std::int64_t sliding_window_with_default(const ConfigReader& config, std::int64_t class_default,
                                         std::int64_t min = 1);

/// The rotary dims per head from partial_rotary_factor / rotary_pct / rotary_dim keys.
std::int64_t rotary_dims(const ConfigReader& config, std::int64_t head_dim);

/// Rotary inv_freq buffers that checkpoints saved by transformers < 4.31 hold (Llama-2 does).
StoredExtra rotary_inv_freq_extra(
    std::int64_t layers, std::int64_t rotary_dim,
    std::string name = "model.layers.*.self_attn.rotary_emb.inv_freq");

/// A routed-expert FFN: `num_experts` gated experts of width `expert_width`, top_k per token,
/// read from the given keys and checked (1 <= top_k <= num_experts). With `defaults` (the config
/// class's values) the keys may be left out; without, they are required.
struct ExpertDefaults {
  std::int64_t num_experts = 0;
  std::int64_t top_k = 0;
};
Moe routed_experts(const ConfigReader& config, std::int64_t hidden,
                   std::initializer_list<std::string_view> experts_keys,
                   std::initializer_list<std::string_view> top_k_keys, std::int64_t expert_width,
                   std::optional<ExpertDefaults> defaults = std::nullopt);

// The FFN keys both Bailing / Ling generations share (bailing_moe.cpp): first_k_dense_replace
// dense layers of intermediate_size, then routed experts of moe_intermediate_size on the rest
// (none when num_experts is null). Shared experts are read by each generation, whose rules
// differ.
struct BailingFfn {
  std::int64_t first_dense = 0;
  std::int64_t dense_width = 0;
  std::optional<Moe> moe;
};
BailingFfn read_bailing_ffn(const ConfigReader& config, std::int64_t hidden, std::int64_t layers,
                            std::int64_t first_dense_default, ExpertDefaults experts,
                            const std::string& activation);

/// `count` always-on shared experts of the routed experts' width and activation, stored as one
/// gated MLP `count` times as wide (DeepSeek's shared_experts); none when `count` is 0.
void set_shared_experts(Moe& moe, std::int64_t count, bool bias = false);

/// A key a nested config may omit, and the value its config class's __init__ gives it.
struct KeyDefault {
  const char* key;
  std::int64_t value;
};
/// Sets each of `defaults` that `object` lacks (or holds as null) to its value, as transformers'
/// config classes do; returns those set, as "key<separator>value" joined by ", " ("" when none).
std::string fill_absent_keys(nlohmann::json& object, std::span<const KeyDefault> defaults,
                             std::string_view separator);

/// The first class named in `architectures`, or "" when the config names none.
std::string first_architecture(const ConfigReader& config);

/// The checkpoint's dtype as config.json names it: torch_dtype, else dtype (what transformers
/// writes from v4.56 on), else "".
std::string read_torch_dtype(const ConfigReader& config);

/// Layer indices listed under `key` (e.g. Qwen-MoE's mlp_only_layers), each checked < layers.
std::vector<std::int64_t> read_layer_list(const ConfigReader& config, std::string_view key,
                                          std::int64_t layers);

/// A required, non-empty list of sizes under `key` (channel counts, kernel sizes, strides), each in
/// 1..max.
std::vector<std::int64_t> read_size_list(const ConfigReader& config, std::string_view key,
                                         std::int64_t max);

/// Per-layer strings under `key` (e.g. mlp_layer_types), each one of `allowed`; empty when the
/// key is absent. Throws when the length differs from `layers`.
std::vector<std::string> read_string_list(const ConfigReader& config, std::string_view key,
                                          std::int64_t layers,
                                          std::initializer_list<std::string_view> allowed);

/// The tensors an MTP layer adds around its decoder block (DeepSeek-V3 / GLM layout): enorm,
/// hnorm, eh_proj (2h -> h), shared_head.norm, and optionally its own embedding and head copies.
void add_mtp_extras(ModelDescription& model, std::int64_t layer, std::int64_t vocab,
                    std::int64_t hidden, bool embedding_and_head_copies);

/// The sizes every Llama-style decoder config gives: vocab_size, hidden_size, num_hidden_layers,
/// num_attention_heads / num_key_value_heads / head_dim. Also fills the model's basics.
struct DecoderDims {
  std::int64_t vocab = 0;
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  HeadShape heads;
};
DecoderDims read_decoder_dims(const ConfigReader& config, ModelDescription& model,
                              bool tie_default);

/// The layer layout the Llama lineage varies: where the norms sit and their kind (the final norm
/// and any QK-norm share it), the biases, QK-norm, every layer's FFN, and per layer the sliding
/// window and whether RoPE applies. Names default to transformers' Llama spelling.
struct DecoderLayout {
  enum class Norms {
    pre,       ///< input_layernorm, post_attention_layernorm (before attention, before the FFN)
    post,      ///< post_attention_layernorm, post_feedforward_layernorm (after each; OLMo 2)
    sandwich,  ///< before and after attention, before and after the FFN (GLM-4-0414)
    parallel,  ///< one input_layernorm feeding attention and the FFN side by side (Cohere)
  };
  enum class QkNorm { none, per_head, full_width };
  NormKind norm_kind = NormKind::rms_norm;
  Norms norms = Norms::pre;
  QkNorm qk_norm = QkNorm::none;
  bool qkv_bias = false;
  bool o_bias = false;
  bool fused_qkv = false;
  Mlp mlp;                            ///< every layer's FFN (kind none: the caller adds an MoE)
  std::int64_t rotary_dim = 0;        ///< per head, on the layers that apply RoPE
  std::vector<std::int64_t> windows;  ///< per layer (0 = full attention); empty: none slide
  std::vector<bool> rope_layers;      ///< per layer; empty: every layer applies RoPE
  std::string attention_name = "self_attn";
  std::pair<std::string, std::string> qk_norm_names{"q_norm", "k_norm"};
  std::vector<std::string> norm_names;  ///< empty: the placement's transformers names
  std::string final_norm_name = "norm";
};
Stack decoder_stack(std::int64_t hidden, std::int64_t layers, const HeadShape& shape,
                    const DecoderLayout& layout);

/// Adds one note listing the `defaults` (key, value as the config class sets it) for the keys
/// this config leaves out, e.g. "JambaConfig defaults used: mamba_d_conv = 4".
void note_defaults(ModelDescription& model, const ConfigReader& config, const char* config_class,
                   std::initializer_list<std::pair<const char*, const char*>> defaults);

/// input_layernorm + post_attention_layernorm, the pre-norm pair of Llama-style layers.
std::vector<Norm> pre_norm_pair(std::int64_t hidden);

/// A layer whose FFN is the given MoE (no dense MLP).
void set_moe(Block& block, const Moe& moe, std::int64_t hidden);

/// The Qwen vision towers (qwen_vision.cpp): Qwen2-VL, Qwen2.5-VL and Qwen3-VL / Qwen3.5 layouts.
/// Each adds its stack ("visual") and its patch embedding / merger tensors (component "vision").
void add_qwen2_vl_vision(const ConfigReader& vision, ModelDescription& model);
void add_qwen2_5_vl_vision(const ConfigReader& vision, ModelDescription& model);
void add_qwen3_vl_vision(const ConfigReader& vision, std::int64_t text_hidden,
                         ModelDescription& model);

/// A SigLIP-layout vision encoder (siglip.cpp) whose tensors sit under `prefix`; `defaults` are
/// the config class's sizes for keys vision_config leaves out (none: the keys are required).
struct SiglipDefaults {
  const char* config_class = "";
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t intermediate = 0;
  std::int64_t heads = 0;
  std::int64_t patch = 0;
  std::int64_t image = 0;
};
struct SiglipLayout {
  enum class PoolingHead { never, refused, unless_disabled };
  std::string prefix;      ///< e.g. "vision_tower.vision_model"
  std::string stack_name;  ///< the encoder's name in the graph
  std::optional<SiglipDefaults> defaults;
  PoolingHead head = PoolingHead::never;  ///< unless_disabled: built unless vision_use_head false
};
Stack siglip_tower(const ConfigReader& vision, const SiglipLayout& layout,
                   ModelDescription& model);

/// The encoder layers SigLIP and CLIP share: non-causal, biased q/k/v/out_proj, LayerNorms
/// layer_norm1 / layer_norm2, a biased fc1 -> fc2 MLP, then post_layernorm; marked vision.
Stack vit_encoder_stack(std::string name, std::int64_t layers, const HeadShape& shape,
                        std::int64_t intermediate, const std::string& activation);

/// A Mamba-2 mixer from the flat mamba_* keys Granite 4.0 and Bamba share (mamba_expand,
/// mamba_n_heads, mamba_d_head, mamba_d_state, mamba_n_groups, mamba_d_conv, mamba_chunk_size,
/// mamba_conv_bias, mamba_proj_bias), with their config classes' defaults (granite_hybrid.cpp).
Ssm read_mamba2_keys(const ConfigReader& config, std::int64_t hidden);

/// A wrapper's text_config as a reader over `storage`, with the wrapper's tie_word_embeddings and
/// torch_dtype filled in where text_config leaves them out (transformers reads them there).
ConfigReader nested_text_config(const ConfigReader& config, nlohmann::json& storage);

/// Common top-level fields every decoder-only family sets; the positions from the first of
/// `position_keys` present (two that disagree are refused).
void fill_decoder_basics(
    ModelDescription& model, const ConfigReader& config, std::int64_t vocab, std::int64_t hidden,
    bool tie_default,
    std::initializer_list<std::string_view> position_keys = {"max_position_embeddings",
                                                             "n_positions", "seq_length"});

}  // namespace trace::family
