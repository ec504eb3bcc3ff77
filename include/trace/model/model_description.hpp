#pragma once
/// One typed description of a model, whatever config.json dialect it came from. Every family
/// parser fills this; the layer graph, the parameter count and the memory estimate read only it.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trace {

enum class NormKind {
  rms_norm,            ///< weight only
  layer_norm,          ///< weight and bias
  layer_norm_no_bias,  ///< weight only (OLMo-style / bias=False)
  layer_norm_no_affine,  ///< no learned tensor (OPT with layer_norm_elementwise_affine=false)
};

struct Norm {
  std::string name;  ///< the checkpoint's module name, e.g. "input_layernorm"
  NormKind kind = NormKind::rms_norm;
  std::int64_t dim = 0;
};

enum class PositionKind {
  rope,                ///< rotary: no learned tensor
  learned,             ///< an absolute position-embedding table
  alibi,               ///< linear biases: no learned tensor
  relative_bias,       ///< T5 bucketed relative bias tables
  relative_embedding,  ///< DeBERTa's disentangled attention: a shared relative position table
  none,
};

enum class AttentionKind {
  standard,  ///< q/k/v/o projections (MHA, GQA, MQA)
  mla,       ///< multi-head latent attention (DeepSeek-V2/V3): low-rank q and a shared kv latent
  linear,    ///< replaced by one Linear(hidden, hidden) (DeciLM replace_with_linear)
  none,      ///< no attention in this layer (DeciLM no_op)
};

/// MLA widths (DeepSeek-V2/V3 config keys of the same names).
struct MlaShape {
  std::int64_t q_lora_rank = 0;  ///< 0: queries come straight from q_proj
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

/// DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2).
struct SparseIndexer {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t query_input_dim = 0;  ///< width of the query latent feeding wq_b
};

/// DeepSeek-V4's compressed attention: besides its sliding window the layer caches one pooled
/// row of the cached key/value width per `ratio` tokens of context, and with a lightning indexer
/// (ratio 4) one index key of `index_key_dim` per pooled row, from which it attends to the
/// `index_topk` best rows. Its compressors keep the unfinished window per sequence in F32.
struct CompressedKv {
  std::int64_t ratio = 0;
  std::int64_t index_heads = 0;  ///< 0: no indexer, every pooled row is attended
  std::int64_t index_key_dim = 0;
  std::int64_t index_topk = 0;

  /// The compressors' kv_state + score_state one sequence holds for rows of `row_dim`: [c ratio,
  /// c row_dim] each, c = 2 where the windows overlap (ratio 4); the indexer's compressor too.
  std::int64_t state_fp32_values(std::int64_t row_dim) const {
    const std::int64_t overlap = ratio == 4 ? 2 : 1;
    const std::int64_t width = row_dim + (index_heads > 0 ? index_key_dim : 0);
    return 2 * (overlap * ratio) * (overlap * width);
  }
};

struct Attention {
  AttentionKind kind = AttentionKind::standard;
  MlaShape mla;                         ///< kind == mla
  std::optional<SparseIndexer> indexer;
  std::optional<CompressedKv> compressed_kv;
  bool sinks = false;                   ///< one learned sink logit per head (gpt-oss)
  std::string name = "self_attn";
  std::int64_t input_dim = 0;     ///< width of the residual stream feeding the queries
  std::int64_t kv_input_dim = 0;  ///< width feeding keys and values (differs for cross attention)
  std::int64_t output_dim = 0;    ///< width the output projection writes back
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  bool q_bias = false;
  bool k_bias = false;
  bool v_bias = false;
  bool o_bias = false;
  bool fused_qkv = false;  ///< stored as one qkv tensor (same count, shown in the graph)
  /// Qwen3-Next / Qwen3.5 gated attention: q_proj also emits a sigmoid output gate per head, so
  /// it is twice as wide (heads x head_dim x 2).
  bool output_gate = false;
  /// Reads the keys and values an earlier layer cached (Gemma 3n's KV-shared layers, cross-layer
  /// attention): this layer holds no KV cache of its own, whatever projections it stores.
  bool kv_from_earlier_layer = false;
  std::optional<Norm> q_norm;  ///< QK-norm; its dim is per head or full width, as stored
  std::optional<Norm> k_norm;
  std::int64_t sliding_window = 0;  ///< 0: attends to the whole context
  std::int64_t rotary_dim = 0;      ///< dims per head that get RoPE (0 when not rotary)
  std::int64_t relative_attention_buckets = 0;  ///< T5: rows of the bias table held here
  bool is_cross = false;
  /// is_cross: keys and values come from a source of this many tokens per sequence, cached once
  /// whatever the text context (Mllama: one image's tiles x patches). 0: the source is as long as
  /// the context (T5's encoder).
  std::int64_t cross_source_tokens = 0;
};

enum class MlpKind {
  gated,   ///< act(gate(x)) * up(x) -> down: SwiGLU, GeGLU
  plain,   ///< act(up(x)) -> down
  linear,  ///< one Linear(hidden, hidden) (DeciLM replace_with_linear)
  none,    ///< no dense FFN in this layer (an MoE layer, or DeciLM no_op)
};

struct Mlp {
  MlpKind kind = MlpKind::gated;
  std::string activation;
  std::int64_t input_dim = 0;
  std::int64_t intermediate = 0;
  bool up_bias = false;  ///< bias on gate/up (fc1)
  bool down_bias = false;
  bool fused_gate_up = false;
};

/// A state-space mixer (Mamba). Its state per sequence is fixed, whatever the context length.
enum class SsmKind {
  mamba1,  ///< in_proj, conv1d, x_proj, dt_proj, A_log [d_inner, N], D, out_proj
  mamba2,  ///< in_proj (z, xBC, dt), conv1d over xBC, A_log/D/dt_bias per head, gated norm,
           ///< out_proj
  /// Gated DeltaNet (Qwen3-Next, Qwen3.5 linear_attention layers): in_proj to q, k, v, z and two
  /// per-head gates (b, a); conv1d over q, k, v; A_log and dt_bias per value head; a gated
  /// RMSNorm of one head's width; out_proj. Mapped onto the fields below as: num_heads = value
  /// heads, head_dim = value head dim, inner = value width, groups = key heads, state = key head
  /// dim, so the recurrent state per layer is value heads x key dim x value dim.
  gated_delta_net,
  /// Kimi Delta Attention (Kimi-Linear KDA layers): q_proj / k_proj / v_proj, one depthwise
  /// conv1d each (no bias), beta b_proj [heads, hidden], a low-rank forget gate f_a_proj
  /// [head_dim, hidden] -> f_b_proj [inner, head_dim] with dt_bias per channel [inner], A_log per
  /// head, a low-rank output gate g_a_proj -> g_b_proj of the same shapes, a gated RMSNorm of one
  /// head's width, o_proj. Fields as for gated_delta_net (num_heads = value heads, head_dim =
  /// value head dim, groups = key heads, state = key head dim); the recurrent state per layer is
  /// value heads x key dim x value dim, one decay per key channel.
  kimi_delta,
  /// LFM2's gated short convolution (no recurrent state): in_proj [3 x inner, hidden] gives the
  /// gates B and C and the input x; B*x runs through a depthwise conv1d of conv_kernel taps over
  /// inner channels, C gates the result, out_proj [hidden, inner]. proj_bias / conv_bias as the
  /// config's conv_bias. The only per-sequence state is the conv's last conv_kernel - 1 inputs;
  /// num_heads = state = 0.
  short_conv,
  /// MiniMax's lightning attention (linear attention with a fixed per-head decay, MiniMax-01 /
  /// M1): qkv_proj [3 x inner, hidden], output_gate [inner, hidden], an RMSNorm over inner,
  /// out_proj [hidden, inner]; no convolution, no learned decay. num_heads x head_dim = inner and
  /// state = head_dim, so the recurrent state per layer is heads x head_dim x head_dim.
  lightning,
};

struct Ssm {
  SsmKind kind = SsmKind::mamba2;
  /// The checkpoint's module name within the layer ("mamba", "conv" for LFM2, "self_attn" for
  /// Kimi-Linear's KDA); single-mixer blocks call it "mixer" whatever this says.
  std::string name = "mamba";
  std::int64_t hidden = 0;
  std::int64_t num_heads = 0;  ///< mamba2 heads (mamba1: 0)
  std::int64_t head_dim = 0;   ///< mamba2
  std::int64_t inner = 0;      ///< d_inner: mamba2 heads x head_dim; mamba1 expand x hidden
  std::int64_t state = 0;      ///< d_state (N)
  std::int64_t groups = 1;     ///< mamba2 B/C groups (n_groups)
  std::int64_t conv_kernel = 4;
  std::int64_t dt_rank = 0;    ///< mamba1 time_step_rank
  std::int64_t chunk_size = 256;  ///< mamba2 SSD chunk length (training saves one state per chunk)
  bool proj_bias = false;      ///< in_proj / out_proj biases
  bool conv_bias = true;
  bool gated_norm = true;      ///< mamba2 RMSNorm over d_inner (delta net: over one head) before out_proj
  /// Jamba's Mamba-1 mixer: RMSNorms over dt (dt_rank), B and C (d_state) after x_proj.
  bool dt_bc_norms = false;
  /// Kimi Delta Attention: the checkpoint keeps A_log [heads] and dt_bias [inner] in F32 whatever
  /// its dtype (Kimi-Linear, GLM-5.3-Flash).
  bool decay_fp32 = false;
  /// Gated DeltaNet as Qwen3.5 stores it: four input projections (in_proj_qkv [conv channels],
  /// in_proj_z [inner], in_proj_b and in_proj_a [heads]) where Qwen3-Next fuses in_proj_qkvz and
  /// in_proj_ba. The same parameters; two more tensors, named as the checkpoint names them.
  bool split_in_proj = false;

  /// Channels the causal conv runs over (mamba2: x, B, C; delta nets: q, k, v; mamba1: x;
  /// short_conv: B*x).
  std::int64_t conv_channels() const {
    if (kind == SsmKind::lightning) return 0;
    return kind == SsmKind::mamba1 || kind == SsmKind::short_conv ? inner
                                                                  : inner + 2 * groups * state;
  }
  /// Output width of in_proj (all of its splits together).
  std::int64_t in_proj_width() const {
    switch (kind) {
      case SsmKind::mamba1: return 2 * inner;                             // x, z
      case SsmKind::mamba2: return inner + conv_channels() + num_heads;   // z, xBC, dt
      case SsmKind::gated_delta_net: return inner + conv_channels() + 2 * num_heads;  // z, qkv, b, a
      // q, k, v, b_proj and the two gates' down projections (every Linear reading the hidden state)
      case SsmKind::kimi_delta: return conv_channels() + num_heads + 2 * head_dim;
      case SsmKind::short_conv: return 3 * inner;  // B, C, x
      case SsmKind::lightning:
        return 4 * inner;  // q, k, v and the output gate
    }
    return 0;
  }
  /// Elements of the recurrent state one sequence holds in this layer (short_conv: none).
  std::int64_t state_elements() const {
    if (kind == SsmKind::short_conv) return 0;
    return kind == SsmKind::mamba1 ? inner * state : num_heads * head_dim * state;
  }
};

/// A mixture-of-experts FFN: a router picks top_k of num_experts routed experts per token;
/// shared experts (if any) see every token.
struct Moe {
  std::int64_t num_experts = 0;
  std::int64_t top_k = 0;
  Mlp expert;                         ///< one routed expert
  std::int64_t num_shared_experts = 0;
  std::optional<Mlp> shared;          ///< all shared experts as one MLP of their summed width
  bool shared_expert_gate = false;    ///< Qwen2-MoE: sigmoid gate Linear(hidden, 1)
  bool router_bias = false;           ///< gpt-oss: the router Linear has a bias
  bool router_correction_bias = false;  ///< DeepSeek-V3 e_score_correction_bias (num_experts)
  std::int64_t hidden_dim = 0;   ///< residual width feeding the router (and shared experts)
  std::int64_t latent_dim = 0;   ///< Nemotron LatentMoE: experts work in this width (fc1/fc2_latent_proj)
  /// The router weight is stored in F32 whatever the checkpoint's dtype (Nemotron 3 Nano).
  bool router_fp32 = false;
};

/// One layer as it really is.
struct Block {
  std::vector<Norm> norms;  ///< every norm held by the layer, in checkpoint order
  Attention attention;
  std::optional<Attention> cross_attention;
  Mlp mlp;                ///< the dense FFN (kind none in a pure MoE layer)
  std::optional<Moe> moe; ///< the MoE FFN, when this layer has one
  std::optional<Ssm> ssm; ///< a Mamba mixer, when this layer has one
  /// Nemotron-H / Mamba blocks: one norm, then exactly one mixer (attention, SSM, MLP or MoE).
  bool single_mixer = false;
  bool parallel_residual = false;  ///< attention and MLP read the same input (GPT-J, NeoX, Falcon)
  /// Where `norms` sit. Pre-norm (default): 1 norm = before both (parallel blocks); 2 = before
  /// attention, before MLP; 3 = before self-attention, cross-attention, MLP; 4 = before and after
  /// attention, before and after MLP (Gemma 2/3). Post-norm (BERT, OLMo 2): after attention,
  /// after MLP.
  bool post_norm = false;
  /// Every weight of this block is a tensor of an earlier block run again (Zamba2's shared
  /// transformer blocks): it adds activations and KV cache, but no parameters, storage or
  /// LoRA adapters of its own.
  bool shared_weights = false;
  /// Copies of the residual stream the layer carries (Gemma 3n's AltUp: altup_num_inputs); the
  /// layer's mixers read one of them. Changes activations only.
  std::int64_t residual_streams = 1;
};

/// A stack of layers: the decoder of a decoder-only model, or the encoder / decoder of T5.
struct Stack {
  std::string name;  ///< "decoder", "encoder"
  std::vector<Block> blocks;
  std::optional<Norm> final_norm;
  bool causal = true;
  bool vision = false;  ///< an image encoder: no KV cache, not on the text path
  bool mtp = false;     ///< multi-token-prediction layers: stored, never active, not served
  /// An encoder that runs this many positions per sequence whatever the text length (Whisper:
  /// max_source_positions audio frames); 0: as many as the sequence has tokens.
  std::int64_t fixed_tokens = 0;
};

/// A learnable tensor outside the layer stacks that does not fit the shapes above
/// (BERT's pooler and pre-training heads, OPT's project_in/out, ...).
struct ExtraParameter {
  std::string name;
  std::string component;  ///< by_component key: "embedding", "head", "norm", "other"...
  std::string op;         ///< what the graph shows, e.g. "Linear", "LayerNorm"
  std::int64_t params = 0;
  /// The weight's stored shape where the family knows it (a Conv3d's [out, in, T, P, P]); params
  /// beyond its elements are a bias of shape[0]. Empty: the tensor inventory infers it.
  std::vector<std::int64_t> shape{};
  /// A bare nn.Parameter, stored under its own name without ".weight" (Llama 4's class_embedding,
  /// Gemma 3's mm_input_projection_weight).
  bool bare = false;
  /// Elements of the weight at `shape`; 0 without a shape. Throws ConfigError on overflow.
  std::int64_t weight_elements() const;
  /// With a shape: params holds a bias of shape[0] beside the weight.
  bool shape_has_bias() const {
    return !shape.empty() && params - weight_elements() == shape.front();
  }
};

/// A tensor some checkpoints store that is not a parameter (GPT-2's causal masks, rotary
/// inv_freq buffers). Reported apart, never counted.
struct StoredExtra {
  std::string name;
  std::int64_t count = 0;          ///< how many such tensors
  std::int64_t elements_each = 0;  ///< elements in each
  std::string dtype;               ///< as stored, e.g. "F32"
  bool certain = false;            ///< false: only some uploads of this family store it
  std::string note;
  /// Each tensor's stored shape where the family knows it (a causal mask's [1, 1, n, n]); empty:
  /// a scalar where it holds one element, else the tensor inventory reads it from the name.
  std::vector<std::int64_t> shape{};
};

/// How the checkpoint stores its weights, from config.json's quantization_config.
enum class QuantFormat {
  fp8_block,   ///< FP8 E4M3 weights + F32 scale_inv per block (DeepSeek, Qwen3-FP8, MiniMax)
  fp8_tensor,  ///< FP8 E4M3 weights + one F32 scale per matrix
  mxfp4,       ///< MoE experts as U8 blocks (2 values per byte) + U8 scale per 32 (gpt-oss)
  gptq,        ///< int4/int8 packed in I32 (qweight), I32 qzeros, F16 scales per group, g_idx
  awq,         ///< int4 packed in I32 along the output, I32 qzeros, F16 scales per group
  bnb_4bit,    ///< bitsandbytes nf4/fp4: U8 (2 values per byte) + absmax per 64 values
  bnb_8bit,    ///< bitsandbytes LLM.int8: I8 + F32 SCB per output row
  modelopt,    ///< NVIDIA ModelOpt: NVFP4 and/or FP8 per module (see ModeloptScheme)
  compressed_tensors,  ///< llm-compressor / vLLM compressed-tensors (see CompressedTensorsScheme)
};

/// How one Linear is stored in a ModelOpt checkpoint.
enum class ModuleFormat {
  unquantized,  ///< the checkpoint's dtype (BF16)
  nvfp4,  ///< U8 [out, in/2] (two E2M1 per byte) + F8_E4M3 scale per group_size inputs + 2 F32
  fp8,    ///< F8_E4M3 [out, in] + F32 weight_scale + F32 input_scale
};

/// ModelOpt's quantization map (config.json quantization_config with quant_method "modelopt", or
/// hf_quant_config.json). Module names are kept without their "backbone." / "model." prefix.
struct ModeloptScheme {
  std::string quant_algo;  ///< NVFP4, FP8 or MIXED_PRECISION, as written
  ModuleFormat default_format = ModuleFormat::unquantized;  ///< Linears neither listed nor excluded
  std::int64_t group_size = 16;
  std::vector<std::string> exclude;  ///< names or '*' patterns kept unquantized
  /// quantized_layers: exact names, then '*' patterns, each with its format.
  std::vector<std::pair<std::string, ModuleFormat>> module_formats;
  std::vector<std::pair<std::string, ModuleFormat>> module_patterns;
  bool kv_cache_fp8 = false;      ///< kv_cache_quant_algo FP8: the checkpoint expects an FP8 KV cache
  bool kv_scales_stored = false;  ///< k_scale / v_scale tensors per attention layer (kv_cache_scheme)
  std::string producer;           ///< e.g. "modelopt 0.43.0"
  std::string source;             ///< "config.json" or "hf_quant_config.json"
};

/// How a compressed-tensors config group stores each weight it quantizes (the compressor named
/// by "format"; compressed_tensors/compressors/quantized_compressors/).
enum class CtStorage {
  pack_quantized,  ///< I32 weight_packed [out, ceil(in / (32/bits))] + I64 weight_shape [2]
  int8,            ///< naive-quantized / int-quantized: I8 weight [out, in]
  fp8,             ///< float-quantized (or naive with float 8): F8_E4M3 weight [out, in]
  nvfp4,           ///< nvfp4-pack-quantized: U8 weight_packed [out, in/2] + F32 weight_global_scale
};

/// How the scales (and zero points) of a weight are laid out (quant_args.py QuantizationStrategy).
enum class CtStrategy { tensor, channel, group, block, tensor_group };

/// One config_groups entry.
struct CtGroup {
  std::string name;                  ///< "group_0", ...
  bool all_linears = false;          ///< targets holds "Linear"
  std::vector<std::string> names;    ///< exact module names (wrapper prefix dropped)
  std::vector<std::string> regexes;  ///< "re:" targets, wrapper prefix dropped
  CtStorage storage = CtStorage::pack_quantized;
  std::int64_t num_bits = 4;
  CtStrategy strategy = CtStrategy::group;
  std::int64_t group_size = 128;  ///< group / tensor_group
  std::int64_t block_rows = 128;  ///< block: block_structure[0]
  std::int64_t block_cols = 128;  ///< block: block_structure[1]
  bool symmetric = true;
  bool g_idx = false;  ///< actorder "group": an I32 weight_g_idx [in]
  /// Input activations: a static per-tensor input_scale [1] (at the weight dtype), or for NVFP4
  /// an F32 input_global_scale [1]; dynamic activations store nothing.
  bool input_scale = false;
  bool input_global_scale = false;
};

/// compressed-tensors' quantization_config (quant_method "compressed-tensors"). A Linear is
/// quantized by the group whose targets match it, unless `ignore` matches it. Names and regexes
/// are matched on the module name with its wrapper prefix ("model.") dropped; a regex matches
/// from the start of the name, as Python's re.match does (compressed_tensors/utils/match.py).
struct CompressedTensorsScheme {
  std::string format;  ///< the top-level "format", as written
  std::vector<CtGroup> groups;
  std::vector<std::string> ignore_names;
  std::vector<std::string> ignore_regexes;
};

/// A run of a checkpoint's tensors sharing a dtype and a role, as a family derives them where
/// the formats above do not describe its checkpoint (DeepSeek-V4: FP4 experts and FP8 Linears
/// with UE8M0 scales, compressors kept in BF16).
struct StoredTensorRun {
  std::string dtype;            ///< safetensors name: "I8", "F8_E4M3", "F8_E8M0", "BF16", ...
  std::int64_t bytes_each = 0;  ///< bytes per stored element
  std::int64_t elements = 0;    ///< stored elements (a byte holding two FP4 values counts once)
  std::int64_t tensors = 0;
  std::int64_t values = 0;  ///< parameters the elements hold (0 for scales)
  bool quantized = false;   ///< values held below the checkpoint's dtype (FP8, FP4)
  bool expert = false;      ///< routed experts
  bool mtp = false;         ///< inside the multi-token-prediction layers
};

struct Quantization {
  QuantFormat format = QuantFormat::fp8_block;
  std::string method;               ///< quant_method as written
  std::int64_t block_rows = 128;    ///< fp8_block: weight_block_size[0] (output dim)
  std::int64_t block_cols = 128;    ///< fp8_block: weight_block_size[1] (input dim)
  std::int64_t bits = 4;            ///< gptq / awq
  std::int64_t group_size = 128;    ///< gptq / awq; -1 = one group per column
  bool double_quant = false;        ///< bnb_4bit: bnb_4bit_use_double_quant
  /// fp8 with activation_scheme "static": transformers' FP8Linear stores an F32 activation_scale
  /// scalar beside each quantized weight (Ministral 3's FP8 uploads); dynamic stores none.
  bool static_activation_scale = false;
  bool attention_quantized = true;  ///< false when modules_to_not_convert names self_attn
  /// Mamba / delta-net projections quantized too (a serving engine's own quantization, which
  /// takes every Linear: --quantize); a checkpoint's simple format leaves them at its dtype.
  bool ssm_quantized = false;
  /// SSM projections left unconverted although ssm_quantized, by the last part of their name
  /// (Qwen's block-FP8 uploads of Qwen3.5 / 3.6: the per-head in_proj_a and in_proj_b).
  std::vector<std::string> ssm_unconverted;
  /// fp8_block: weight_scale_inv stored in BF16 (Qwen's own uploads), not F32.
  bool block_scales_bf16 = false;
  std::optional<ModeloptScheme> modelopt;  ///< format == modelopt
  std::optional<CompressedTensorsScheme> compressed_tensors;  ///< format == compressed_tensors
  /// The checkpoint tensor by tensor, when its family derives it (family_layout_name says which
  /// layout); storage then sums these runs instead of applying `format`'s table. It belongs to
  /// the checkpoint's own quantization: a re-quantization replaces it.
  std::vector<StoredTensorRun> family_layout;
  std::string family_layout_name;

  /// Whether the SSM projection `linear_name` (a Mamba / delta-net Linear, by its dotted name)
  /// is converted: ssm_quantized and its last part not in ssm_unconverted.
  bool converts_ssm_projection(std::string_view linear_name) const;
};

struct ModelDescription {
  std::string model_type;    ///< as config.json says (for wrappers, the outer type)
  /// A wrapper's language model's model_type where it is another family's (InternVL's
  /// llm_config), for its checkpoint names; or a layout tag where one model_type spans two
  /// checkpoint layouts (ChatGLM-6B's "chatglm_v1"); empty otherwise.
  std::string text_model_type;
  std::string family;        ///< human name, e.g. "Llama (decoder-only, RoPE, RMSNorm, SwiGLU)"
  std::string architecture;  ///< "decoder-only", "encoder-only", "encoder-decoder"
  std::int64_t vocab_size = 0;
  std::int64_t hidden_size = 0;
  std::int64_t embedding_dim = 0;  ///< usually hidden_size
  PositionKind position = PositionKind::rope;
  std::int64_t learned_positions = 0;  ///< rows of the position table (PositionKind::learned)
  std::int64_t token_types = 0;        ///< BERT segment embeddings
  /// Width of the position and token-type tables when it is not hidden_size (ALBERT and
  /// ELECTRA's embedding_size); 0: hidden_size.
  std::int64_t position_dim = 0;
  std::int64_t position_width() const { return position_dim > 0 ? position_dim : hidden_size; }
  /// Logit values the training head computes per token when not vocab_size: a classifier's
  /// labels (token classification), 2 (extractive QA), 1 (ELECTRA's discriminator), 0 (a head
  /// over the pooled sequence, or none). -1: the vocabulary (an LM or MLM head).
  std::int64_t head_logits_per_token = -1;
  /// The config names the bare base class (BertModel, RobertaModel, MPNetModel: what
  /// sentence-transformers saves): save_pretrained writes its tensors without the wrapper prefix
  /// ("bert.", "mpnet.") the task classes add (checkpoint names: docs/checkpoint.md).
  bool bare_base_model = false;
  std::int64_t training_logits_width() const {
    return head_logits_per_token >= 0 ? head_logits_per_token : vocab_size;
  }
  /// transformers has no SDPA / flash path for this model's attention (DeBERTa): a training job
  /// keeps the score matrix whatever --attention says.
  bool eager_attention_only = false;
  /// Score-sized tensors (heads x tokens x tokens) an eager-only attention holds at once in an
  /// inference forward: the scores and their softmax (2); DeBERTa's disentangled attention adds
  /// its content-to-position and position-to-content terms (docs/memory.md, "Encoder serving").
  std::int64_t eager_score_tensors = 2;
  /// [tokens, tokens] int64 index tensors each attention layer saves for its backward, shared by
  /// every sequence and head of the batch: DeBERTa's gathers of the content-to-position and
  /// position-to-content terms keep their clamped relative positions (docs/memory.md, "Jobs").
  std::int64_t saved_position_index_tensors = 0;
  /// Parameters outside a vision / audio tower that never train: fixed sinusoidal position
  /// tables kept as frozen parameters (Marian's, Pegasus's, Whisper's encoder's). Counted in the
  /// total, as num_parameters() does; a full fine-tune keeps no gradient or optimizer state for
  /// them. (A tower's own frozen table, Qwen2-Audio's, trains unless --freeze-vision.)
  std::int64_t frozen_parameters = 0;
  /// The position table (learned_positions rows) holds fixed sinusoids, not learned values.
  bool sinusoidal_position_table = false;
  std::optional<Norm> embedding_norm;  ///< BLOOM word_embeddings_layernorm, BERT embeddings LN
  double embedding_scale = 1.0;        ///< Gemma multiplies by sqrt(hidden): shown, not counted
  std::vector<Stack> stacks;
  /// No text stack generates (BERT and the other encoder-only models): serving encodes whole
  /// sequences in one forward pass, with no KV cache and no sampling step.
  bool encoder_only() const {
    return std::none_of(stacks.begin(), stacks.end(), [](const Stack& stack) {
      return stack.causal && !stack.vision && !stack.mtp;
    });
  }
  /// Multi-token-prediction depths in the MTP stacks: each predicts one token further, through
  /// the shared head, with a loss of its own when trained (Megatron's --mtp-num-layers).
  std::int64_t mtp_depths = 0;
  bool has_lm_head = true;
  bool tie_word_embeddings = false;
  bool lm_head_bias = false;
  std::vector<ExtraParameter> extra_parameters;
  std::vector<StoredExtra> stored_extras;
  /// Parameters outside the layers' blocks (extra_parameters, not the MTP layers', never
  /// quantized) the checkpoint keeps in F32 whatever its dtype: GLM-5.3-Flash's mHC base / scale.
  /// A block's own are its description's (Ssm::decay_fp32).
  std::int64_t fp32_stored_params = 0;
  /// Names (a stack's, or an extra parameter's prefix before ".") of parts a serving engine does
  /// not load: Qwen-Omni's talker and token2wav / code2wav, which vLLM leaves out (it registers
  /// the model as its thinker). Counted in the total; ParameterCount::not_served.
  std::vector<std::string> not_served;
  /// The routers' correction biases are stored at the checkpoint's dtype (Kimi-Linear), not in
  /// F32 as DeepSeek-V3 keeps them.
  bool router_bias_at_checkpoint_dtype = false;
  std::int64_t max_position_embeddings = 0;  ///< 0 when the config does not say
  std::string torch_dtype;                   ///< "bfloat16", ... or empty
  /// What the family's published uploads store when config.json names no dtype (configs from
  /// before transformers wrote torch_dtype): "float32" for the BERT-era families, "float16" for
  /// Microsoft's DeBERTa; empty: bf16 is assumed (docs/parameters.md, "Storage").
  std::string unspecified_dtype;
  /// torch_dtype, else unspecified_dtype.
  const std::string& stored_dtype() const {
    return torch_dtype.empty() ? unspecified_dtype : torch_dtype;
  }
  std::optional<Quantization> quantization;  ///< absent: every tensor at torch_dtype
  std::string ssm_cache_dtype;  ///< mamba_ssm_cache_dtype when the config names one
  /// Dropout probabilities active in training (0 when the config names none): on the attention
  /// probabilities, and on the residual branches / embeddings. They decide which masks a
  /// training step saves (docs/memory.md, "Jobs").
  double attention_dropout = 0.0;
  double hidden_dropout = 0.0;
  std::vector<std::string> notes;            ///< facts the parser inferred, shown in the report
};

}  // namespace trace
