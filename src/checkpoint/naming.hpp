// How each family's checkpoint spells trace's module names: the wrapper prefix, rename tables
// and layout switches the tensor inventory (inventory.cpp) builds its names with. Every family's
// table cites the modeling file or published checkpoint it was written from (docs/checkpoint.md,
// "Naming"). Internal to the checkpoint library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/checkpoint/inventory.hpp"

namespace trace::checkpoint {

// Shared by the builder (inventory.cpp) and the families that list their tensors themselves
// (Naming::family_tensors), defined in inventory.cpp.
// The stored dtype of a tensor left at the checkpoint's precision: F32 for a float32 checkpoint,
// F16 for float16, else BF16 (storage.cpp's default too).
struct BaseDtype {
  std::string_view name;
  std::int64_t bits;
};
BaseDtype base_dtype(const ModelDescription& model);
// Records why the inventory is partial, once per reason.
void add_gap(Inventory& inventory, std::string why);
// Lists a stored tensor: a parameter holds its elements (or `logical`, when >= 0, for a packed
// one), anything else (scales, buffers) none.
void add_tensor(Inventory& inventory, std::string name, std::vector<std::int64_t> shape,
                std::string_view dtype, bool parameter = true, std::int64_t logical = -1);

// A checkpoint spelling of one of trace's module names, applied to names containing `scope`.
struct Rename {
  std::string_view scope;
  std::string_view from;
  std::string_view to;
};

// Stored tensors that are not parameters and that only some uploads hold (causal-mask buffers,
// rotary inv_freq, a second copy of a tied embedding): listed so their names are known, never
// reported missing. Shapes per family below.
// stored_extras: the description's own StoredExtra entries (RoBERTa's position_ids, ELECTRA's
// unused embeddings_project, BART's final_logits_bias; per-layer ones named with ".*." such as
// CodeGen's h.*.attn.causal_mask or Apertus's xIELU constants), shaped here; seq2seq adds the
// copies of a tied model.shared that older encoder-decoder uploads keep.
enum class Buffers { none, gpt2_masks, neox_masks, tied_head_copy, stored_extras, seq2seq };

// How a family stores routed experts: one tensor per expert and projection (none), or one
// tensor per projection holding them all, gate and up fused in gate_up_proj, as gpt-oss does
// ([E, in, out]) or as Qwen3.5-MoE does ([E, out, in], nn.Linear's order); or, as DBRX does,
// one 2-D tensor per projection, gate, up and down apart, each [E x intermediate, hidden] (the
// down projection's per-expert [H, I] stored transposed), a bare nn.Parameter.
enum class StackedExperts { none, in_out, out_in, rows_2d };

// How a family stores a full-width QK-norm (one weight per head): as one vector (flat), as a
// [heads, head_dim] matrix (Cohere's CohereLayerNorm((heads, head_dim))), or as one bias-free
// LayerNorm per head (StableLM's StableLmLayerNormPerHead: q_layernorm.norms.{h}.weight
// [head_dim]). A per-head norm (dim head_dim) is stored flat whatever the family.
enum class QkNormLayout { flat, head_matrix, head_modules };

struct Naming {
  std::string_view label{};
  std::string_view root = "model.";  // wrapper prefix of the decoder: "model.", "backbone."
  std::string_view embedding = "embed_tokens";  // module name of the token embedding
  std::vector<Rename> renames{};
  bool known = true;
  bool mtp_after_layers = false;       // DeepSeek: MTP layer i is stored as layers.{main + i}
  std::string_view mtp_norm{};         // the MTP stack's own final norm ("mtp.norm": Qwen3-Next)
  std::string_view layers = "layers";  // the block list under root: "layers", "h", "encoder.layer"
  std::string_view positions{};    // learned position table under root ("wpe"); empty: not named
  std::string_view token_types{};  // BERT segment table under root
  bool conv1d = false;      // GPT-2 Conv1D: weights stored [in, out], transposed from nn.Linear
  bool gamma_beta = false;  // TF-converted BERT: LayerNorm weight/bias spelled gamma/beta
  StackedExperts stacked_experts = StackedExperts::none;
  QkNormLayout qk_norm_layout = QkNormLayout::flat;
  // Qwen3.5-MoE: the MTP layer's experts are stored one tensor per expert and projection, while
  // the main layers' are stacked.
  bool mtp_experts_per_expert = false;
  // The wrapper prefix of a vision tower's tensors ("model." -> "model.visual.blocks.N...", "" ->
  // "visual.blocks.N..."); none: the tower is not named and the inventory stays partial.
  std::optional<std::string_view> vision_root{};
  std::string_view vision_layers = "blocks";  // the tower's block list: "blocks", "model.layers"
  // The tower stack this naming spells (LLaVA's CLIP "vision_tower.vision_model.encoder"); a
  // tower of another stack name is named only when other_towers lists it. Empty: any.
  std::string_view vision_stack{};
  // Further towers a wrapper takes, by stack name, each with its own block list (LLaVA's Pixtral
  // tower of pixtral-12b: "vision_tower" with "transformer.layers").
  struct OtherTower {
    std::string_view stack;
    std::string_view layers;
  };
  std::vector<OtherTower> other_towers{};

  // Qwen3.5's own uploads keep each DeltaNet's A_log and gated norm in F32; later ones (Qwen3.6)
  // in the checkpoint dtype: either reconciles (ExpectedTensor::also_stored_as).
  bool delta_vectors_also_f32 = false;
  // Encoders: every extra parameter is a head module (biased Linear, LayerNorm, bias vector)
  // stored under its own name, at top level unless a rename moves it under root.
  bool encoder_heads = false;
  // Encoder-decoders: each stack's layers under root + the stack's name ("model.encoder.layers",
  // "model.decoder.layers"), its final norm beside them.
  bool stack_layers = false;
  Buffers buffers = Buffers::none;
  // ALBERT: the stack lists every layer run, but only a group's first run owns weights, stored
  // as root + layers + ".{group}." + inner_layers + ".{inner}" ("albert_layers").
  std::string_view inner_layers{};
  // Extras whose names start so sit under root (DeBERTa's "encoder.rel_embeddings", ALBERT's
  // "pooler"); the other heads stay at top level.
  std::vector<std::string_view> under_root{};
  // DeBERTa v1: in_proj has no bias; its q_bias and v_bias are separate attention parameters.
  bool split_qkv_bias = false;
  // ModernBERT: a head Linear or LayerNorm holds a bias only when its size says so
  // (classifier_bias, norm_bias); the tied head (decoder) stores its bias alone.
  bool bias_optional = false;
  // The [1, max_position_embeddings] I64 buffer transformers < 4.31 saved (DeBERTa).
  std::string_view position_ids{};
  // Marian, Pegasus: each stack's embed_positions is a fixed sinusoidal table the model rebuilds
  // at load, which uploads may leave out (ExpectedTensor::droppable).
  bool droppable_positions = false;
  // T5: a plain (ReLU / GELU) feed-forward's input projection is `wi`, a gated one's `wi_1`
  // beside its gate `wi_0`; the rename a plain one takes ahead of `renames`.
  std::optional<Rename> plain_mlp_up{};
  // An attention's relative-position bias table, under the attention's name (T5's
  // "relative_attention_bias"); empty: such tables are not named.
  std::string_view relative_bias{};
  // The unquantized checkpoint keeps the MoE routers' weights in F32 (MiniMax-M1's index).
  bool routers_f32 = false;
  // transformers' FP8Linear without a block size (quant_method fp8, weight_block_size null: the
  // Ministral 3 uploads): each quantized Linear stores a 0-dim weight_scale_inv beside its
  // F8_E4M3 weight, and under activation_scheme static a 0-dim activation_scale (F32 as the class
  // builds them; BF16 also reconciles); the vision tower and projector stay unquantized.
  bool fp8_tensor_scale_inv = false;
  // Mllama: the token table holds rows past vocab_size (MllamaTextModel's nn.Embedding(
  // vocab_size + 8, H)), which the description counts as an Embedding extra of component
  // "embedding": folded into the table's first dimension.
  bool embedding_rows_extra = false;
  // Mllama: per-layer gates as one Parameter extra, "<layers>.*.<a> + <b>": a bare [width]
  // tensor per leaf in every layer of the stack the prefix names, or in its cross-attention
  // layers where the count says so (cross_attn_attn_gate / cross_attn_mlp_gate; the global
  // tower's gate_attn / gate_ffn).
  bool layer_gates = false;
  // Uploads saved from the family's bare base class spell every name without this wrapper
  // (OPTModel, BartModel: "decoder.*" for "model.decoder.*"); the reconciliation takes either.
  std::string_view bare_prefix{};
  // The main stack's final norm sits under this prefix instead of root (ChatGLM2 / 3's
  // "transformer.encoder." beside encoder.layers); empty: under root.
  std::string_view final_norm_root{};
  // AFMoE: an attention's sigmoid output gate (Attention::output_gate, which layout counts inside
  // a q_proj twice as wide) is stored apart, as <attention>.gate_proj beside a q_proj of its own
  // width, each [heads x head_dim, in].
  bool split_output_gate = false;
  // ERNIE 4.5 MoE: the router's correction bias is stored [1, E] (Ernie4_5_MoeStatics, one
  // expert group), not [E].
  bool router_bias_row = false;
  // LongCat-Flash: a stored layer holds sub_layers.size() of trace's blocks (its two sub-layers,
  // the shortcut MoE with the first): block b is stored as layer b / n, and sub_layers[b % n]
  // respells its names ahead of `renames` (sub-layer s's dense MLP is mlps.{s}). Empty: one
  // block a layer.
  std::vector<std::vector<Rename>> sub_layers{};
  // The MTP stack's layers under this prefix (LongCat-Flash's "model." of model.mtp.layers.N);
  // empty: mtp.layers.N as trace names them.
  std::string_view mtp_root{};
  // LongCat-Flash: the description's "router" Linear extra over every MoE layer (the rows of the
  // zero-computation experts: a classifier row of H and a correction-bias entry each) is stored
  // inside each layer's router weight and correction bias, which it widens.
  bool router_rows_extra = false;
  // The routers' stored dtype is not established by a published header: each router weight and
  // correction bias reconciles at F32 and at the checkpoint's dtype (ExpectedTensor::
  // also_stored_as), expected as the storage estimate counts it.
  bool routers_either_dtype = false;
  // DeepSeek-V4: the family lists its checkpoint's tensors itself (its attention, compressors,
  // indexers, mHC and FP4 / FP8 tensors are no rename of trace's module names); the builder then
  // adds nothing of its own. Null: the builder names the tensors.
  void (*family_tensors)(const ModelDescription& model, Inventory& inventory) = nullptr;
  // GLM-5.3-Flash: KDA's A_log is stored as a [heads] vector (Glm5NextTextForgetGate's), not as
  // Kimi-Linear's [1, 1, heads, 1].
  bool kda_a_log_vector = false;
  // GLM-5.3-Flash: every main-stack layer of residual_streams n > 1 stores, per mHC site listed
  // ("attn", "ffn"), the bare tensors hc_<site>_fn [(2 + n) n, n H] at the checkpoint's dtype and
  // hc_<site>_base [(2 + n) n], hc_<site>_scale [3] in F32; the description's "mHC" extras must
  // add up to them. Empty: mHC extras are not named.
  std::vector<std::string_view> mhc_sites{};
  // GLM-5.3-Flash: every DSA indexer stores the k-pool compression's bare tensors
  // index_kpool_compress_ape [kpool, index_head_dim] and index_kpool_compress_gate
  // [index_head_dim, H]; the description's "...index_kpool_compress_ape, ..." extras must add up
  // to them (kpool is read from their count).
  bool indexer_kpool = false;
  // Qwen's own block-FP8 uploads of Qwen3.5 / 3.6 (quant_method fp8, weight_block_size
  // [128, 128]): modules_to_not_convert lists every model.visual.* module, so the tower stays at
  // the base dtype without scales. (Their DeltaNet projections and BF16 scales are the
  // description's: Quantization::ssm_unconverted, block_scales_bf16.) Qwen3.6-27B-FP8's shard
  // sizes and tensor counts, SOURCES-qwen3_6-fp8-names.md.
  bool qwen_fp8_block = false;
};

/// The naming of a config's model_type (a wrapper's also of its language model's,
/// ModelDescription::text_model_type); `known` false (model.* assumed) for a family not listed.
Naming naming_for(const std::string& type, const std::string& text_type = "");

/// Families named in files of their own, which naming_for asks in turn; nullopt for a type that
/// is not theirs. naming_decoders.cpp: decoders in transformers' module names with a few
/// renames; naming_custom_layouts.cpp: decoders whose checkpoints lay their modules out
/// otherwise.
std::optional<Naming> decoder_naming(const std::string& type);
std::optional<Naming> custom_layout_naming(const std::string& type);
/// naming_mistral3_mllama.cpp: Mistral 3 (Pixtral tower) and Mllama (Llama 3.2 Vision).
std::optional<Naming> mistral3_mllama_naming(const std::string& type);
/// naming_glm4v.cpp: GLM-4V (GLM-4.1V, GLM-4.6V-Flash) and GLM-4.5V's MoE.
std::optional<Naming> glm4v_naming(const std::string& type);
/// naming_t5gemma_kimi_vl.cpp: T5Gemma (encoder-decoder of Gemma 2 layers) and Kimi-VL.
std::optional<Naming> t5gemma_kimi_vl_naming(const std::string& type);
/// naming_minicpmv.cpp: MiniCPM-V (the SigLIP / Idefics2 tower, the resampler).
std::optional<Naming> minicpmv_naming(const std::string& type);
/// naming_chatglm.cpp: ChatGLM (the first release's layout and ChatGLM2 / 3's).
std::optional<Naming> chatglm_naming(const std::string& type, const std::string& text_type);
/// naming_qwen_vl_audio.cpp: Qwen-VL (remote code) and Qwen2-Audio.
std::optional<Naming> qwen_vl_audio_naming(const std::string& type);
/// naming_afmoe.cpp: AFMoE (Arcee's Trinity).
std::optional<Naming> afmoe_naming(const std::string& type);
/// naming_longcat.cpp: LongCat-Flash.
std::optional<Naming> longcat_naming(const std::string& type);
/// naming_ernie_moe.cpp: ERNIE 4.5 MoE.
std::optional<Naming> ernie_moe_naming(const std::string& type);
/// naming_glm5_next.cpp: GLM-5.3-Flash (glm5_next).
std::optional<Naming> glm5_next_naming(const std::string& type);
/// naming_deepseek_v4.cpp: DeepSeek-V4 (DeepSeek-V4-Flash), listed tensor by tensor.
std::optional<Naming> deepseek_v4_naming(const std::string& type);
/// naming_dots_ocr.cpp: dots.ocr; and DeepSeek-OCR, a deepseek_vl_v2 its family tags with
/// text_model_type "deepseek_ocr" (DeepEncoder, every tensor under model.*).
std::optional<Naming> dots_ocr_naming(const std::string& type);
Naming deepseek_ocr_naming();
/// naming_gemma3n.cpp: Gemma 3n (Gemma3nForConditionalGeneration), listed tensor by tensor.
std::optional<Naming> gemma3n_naming(const std::string& type);
/// naming_qwen_omni.cpp: Qwen2.5-Omni (thinker, talker, token2wav) and Qwen3-Omni (thinker,
/// talker with its code predictor, code2wav), listed tensor by tensor.
std::optional<Naming> qwen_omni_naming(const std::string& type);

}  // namespace trace::checkpoint
