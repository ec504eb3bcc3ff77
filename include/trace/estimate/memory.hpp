#pragma once
/// Memory estimates for full fine-tuning, LoRA and serving. Every constant is a named field of
/// MemoryAssumptions with its default documented in docs/memory.md; every term is a formula
/// there, with its source.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/dtype.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/serve_quantization.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

inline constexpr std::int64_t k_gib = 1LL << 30;
inline constexpr std::int64_t k_mib = 1LL << 20;

/// How an engine caches an MLA layer (DeepSeek-V2/V3, Kimi): the compressed latent, or K and V
/// decompressed per head (docs/memory.md, "KV cache").
enum class MlaCache {
  latent,           ///< kv_lora_rank + rope key, one copy on every TP rank (vLLM >= 0.7.1, SGLang)
  per_head,         ///< heads x (qk_nope + qk_rope) K + heads x v_head_dim V (transformers)
  per_head_padded,  ///< V zero-padded to K's width: heads x 2 x (qk_nope + qk_rope) (vLLM < 0.7.1)
};

/// How one sequence's cache (KV and SSM state) splits over the GPUs serving it.
struct KvSplit {
  std::int64_t tp = 1;
  MlaCache mla = MlaCache::latent;
  /// Pipeline stages: each GPU caches its stage's layers only; the figure is the busiest
  /// stage's (pipeline_stage_of).
  std::int64_t pp = 1;
  /// The MTP layers are served too (speculative decoding, --serve-mtp) and hold their cache.
  bool mtp = false;
};

/// The pipeline stage (0-based) of decoder layer `layer` of `layers` split over `pp` stages as
/// vLLM's get_pp_indices splits them: layers / pp each, the remainder one each to the stages
/// just before the last (which also holds the head).
std::int64_t pipeline_stage_of(std::int64_t layer, std::int64_t layers, std::int64_t pp);

/// `of(block)` summed per pipeline stage over the blocks of the stacks `counted` keeps, in
/// order, split as pipeline_stage_of splits them: one total per stage (pp clamped to 1..layers).
/// `what` names the quantity in an overflow error.
std::vector<std::int64_t> stage_totals(const ModelDescription& model, std::int64_t pp,
                                       const std::function<bool(const Stack&)>& counted,
                                       const std::function<std::int64_t(const Block&)>& of,
                                       const char* what);

struct MemoryAssumptions {
  // Workload.
  std::int64_t seq_len = 2048;  ///< training tokens per sequence
  std::int64_t batch = 1;       ///< training micro-batch (sequences)
  std::int64_t context = 4096;  ///< serving tokens per sequence held in the KV cache
  std::int64_t concurrency = 1; ///< serving sequences held at once
  std::int64_t lora_rank = 16;
  // Full fine-tune: AdamW under bf16 autocast with fp32 master weights.
  std::int64_t master_weight_bytes = 4;     ///< fp32 parameters
  std::int64_t autocast_copy_bytes = 2;     ///< bf16 copies autocast caches and saves for backward
  std::int64_t gradient_bytes = 4;          ///< fp32 gradients
  std::int64_t optimizer_bytes = 8;         ///< AdamW: two fp32 moments
  std::int64_t activation_bytes = 2;        ///< bf16 activations saved for backward
  /// Logits bytes per vocabulary value per token when the backward pass starts, by loss
  /// implementation (docs/memory.md, "Logits and loss"):
  std::int64_t logits_bytes_per_value = 12;  ///< full: fp32 upcast 4 + shifted copy 4 + log-softmax 4
  /// full, at the loss's forward (transformers >= 4.48 shifts the labels, not the logits): the
  /// bf16 logits the model's output holds 2 + their fp32 upcast 4 + the log-softmax 4
  std::int64_t logits_bytes_full_forward = 10;
  std::int64_t logits_bytes_chunked = 6;     ///< chunked: bf16 logits 2 + fp32 log-softmax 4
  std::int64_t logits_bytes_fused = 2;       ///< fused: the bf16 logits, gradient written in place
  std::int64_t logits_bytes_cut = 0;         ///< cut: only a chunk of logits ever exists
  std::int64_t logits_bytes_vocab_parallel = 6;  ///< Megatron: bf16 logits 2 + their fp32 upcast 4
  /// Online RL (TRL's GRPO): copies of the completion tokens' logits, in the activation dtype,
  /// alive at once in the loss's backward: the saved log-softmax rows, the logits' gradient
  /// buffer and one row's full-size select gradient (docs/memory.md, "Online RL").
  std::int64_t rl_logits_copies = 3;
  std::int64_t softmax_bytes = 4;  ///< eager attention: the fp32 softmax output saved for backward
  std::int64_t dropout_mask_bytes = 1;  ///< a dropout mask (bool) per value, kept for backward
  /// Hidden-sized gradients a decoder layer's backward holds at once, per token: the incoming
  /// gradient of its output, the residual gradient accumulated between its two branches and the
  /// branch gradient being added to it (docs/memory.md, "Activations").
  std::int64_t backward_gradient_vectors = 3;
  // LoRA: frozen base in bf16, adapters trained in fp32 with AdamW.
  Dtype lora_base_dtype = Dtype::bf16;
  std::int64_t adapter_bytes_per_param = 16;  ///< fp32 weight 4 + gradient 4 + AdamW moments 8
  // Serving.
  Dtype serve_weight_dtype = Dtype::bf16;
  /// When >= 0, the serving weights take exactly this many bytes (the checkpoint's own quantized
  /// format) instead of params x serve_weight_dtype.
  std::int64_t serve_weight_bytes = -1;
  /// Bytes of the routed experts inside serve_weight_bytes (expert-parallel plans), or -1.
  std::int64_t serve_expert_bytes = -1;
  /// An unquantized checkpoint served quantized (--quantize; --dtype fp8, int8, int4): the
  /// layout make_report prices into serve_weight_bytes, and whose matmuls the serving cost
  /// runs in (fp8, nvfp4). Unset: the checkpoint's own format or serve_weight_dtype.
  std::optional<ServeQuantization> serve_quantization;
  /// Serving shards MoE experts across cards (expert parallel, attention replicated) instead of
  /// tensor parallel.
  bool expert_parallel = false;
  Dtype kv_dtype = Dtype::bf16;
  MlaCache mla_cache = MlaCache::latent;  ///< MLA layers' cache layout (--mla-cache)
  /// Serving loads the MTP layers too (speculative decoding). Off by default: vLLM and SGLang
  /// load them only when speculative decoding is configured.
  bool serve_mtp = false;
  /// Mamba SSM state dtype; unset: the config's mamba_ssm_cache_dtype, else fp32.
  std::optional<Dtype> ssm_dtype;
  std::int64_t conv_state_bytes = 2;  ///< Mamba conv state element size (the model's bf16)
  /// Serving: prompt tokens one forward pass takes at most (chunked prefill: vLLM's
  /// max_num_batched_tokens, SGLang's chunked_prefill_size, both 8,192 by default on large
  /// GPUs); 0 = the whole prompt at once (transformers' generate).
  std::int64_t prefill_chunk_tokens = 8192;
  /// Serving: bytes per logit the sampling step holds at once (vLLM's sampler from 0.17, which
  /// masks top-k/top-p in place with Triton kernels, docs/memory.md "Serve jobs": the bf16
  /// logits 2, their fp32 copy 4, the fp32 probabilities 4 and the exponential noise it divides
  /// them by 4). vLLM before 0.17 sorted the logits: 38 (--sampler-bytes 38).
  std::int64_t sampler_bytes_per_logit = 14;
  /// Serving: sequences the engine samples in one step at most and reserves memory for,
  /// whatever the load (vLLM's max_num_seqs, 256); the sampling step covers
  /// max(concurrency, this). 0: the concurrency only (transformers' generate).
  std::int64_t max_num_seqs = 256;
  /// Serving through transformers' generate() (prefill_chunk_tokens and max_num_seqs 0): a
  /// model with sliding-window layers shorter than the prompt gets its sliding mask built, a
  /// bool [sequences, 1, s, s] (1 byte a query-key pair), and torch SDPA turns it into an
  /// additive bias of the query's dtype for its memory-efficient kernel (2 more) at each of
  /// those layers; a causal-only model's mask is skipped (is_causal). Measured on an H200:
  /// Gemma-3-1B, 16,384 and 32,768 tokens (docs/memory.md, "Serve jobs").
  std::int64_t generate_window_mask_bytes = 3;
  /// Serving: tokens vLLM's fused MoE kernel sizes its intermediate caches for at most
  /// (VLLM_FUSED_MOE_CHUNK_SIZE, 32,768).
  std::int64_t moe_chunk_tokens = 32768;
  /// Serving an AWQ checkpoint on vLLM before 0.3.0: every AWQ Linear runs AutoAWQ's awq_gemm,
  /// which writes [awq_split_k, tokens, out] half-precision partial sums before summing them
  /// (vLLM passed the pack factor, 8). From 0.3.0 (PR #2566) vLLM dequantizes and calls
  /// torch.matmul from 256 tokens, and Marlin kernels hold no such buffer. 0: none.
  /// --awq-split-k.
  std::int64_t awq_split_k = 0;
  /// Serving: each tensor-parallel rank holds num_experts / tp whole experts and runs every one
  /// of them on every token of the pass, one after another (vLLM's Mixtral before 0.3.0, PR
  /// #2208, and its quantized Mixtral in mixtral_quant.py after): no routed caches, but an
  /// expert's whole inner width per token. --moe-dense-experts.
  bool moe_dense_experts = false;
  // Per-process overhead and safety margin.
  std::int64_t cuda_context_bytes = 512 * k_mib;  ///< CUDA context + cuBLAS/cuDNN workspaces
  /// Serving over more than one tensor-parallel GPU: NCCL and custom all-reduce buffers on each,
  /// outside torch's allocator (vLLM logged 1.79 GiB more non-torch memory per GPU at TP 2 than
  /// at TP 1 for Llama-3-8B, PR #10511). --tp-comm-mib.
  std::int64_t tp_comm_bytes = 1843 * k_mib;
  /// Serving: the private memory pool of the engine's captured CUDA graphs (vLLM captures the
  /// decode step for batch sizes up to 512 after sizing its KV cache; logged 0.13-0.21 GiB for
  /// 1B models, up to "1~3 GiB per GPU" in its own warning). 0: eager mode (--enforce-eager,
  /// transformers' generate). --cuda-graph-mib.
  std::int64_t cuda_graph_bytes = 512 * k_mib;
  double headroom_fraction = 0.05;  ///< share of usable card memory kept free (fragmentation)
};

/// The split a serving plan's assumptions give one sequence's cache over `tp` x `pp` GPUs (the
/// MLA layout and whether the MTP layers are served come from the assumptions).
KvSplit serving_split(const MemoryAssumptions& assumptions, std::int64_t tp = 1,
                      std::int64_t pp = 1);

struct MemoryBreakdown {
  std::int64_t weights = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer = 0;
  std::int64_t activations = 0;
  std::int64_t logits = 0;  ///< jobs: the loss's vocabulary x tokens (inside activations for modes)
  std::int64_t kv_cache = 0;
  std::int64_t ssm_state = 0;
  std::int64_t overhead = 0;
  /// Online RL: what generating completions holds above the training step (a colocated
  /// engine's share of the card, or the generation phase's excess over the step).
  std::int64_t generation = 0;
  std::int64_t total() const;
};

/// One mode's estimate at the requested batch, plus the split that fit searches need:
/// bytes(batch) = fixed_bytes + batch * per_sequence_bytes.
struct ModeMemory {
  std::string mode;  ///< "full_finetune", "lora", "serve"
  std::int64_t batch = 1;
  MemoryBreakdown breakdown;
  std::int64_t fixed_bytes = 0;         ///< weights, gradients, optimizer, overhead
  std::int64_t per_sequence_bytes = 0;  ///< activations or KV cache of one sequence
  std::int64_t shardable_bytes = 0;     ///< the part ZeRO-3 / tensor parallelism divides
  std::int64_t expert_bytes = 0;        ///< the routed experts' share of weights (expert parallel)
  std::string formula;                  ///< one line: which terms, which constants
};

struct MemoryEstimate {
  ModeMemory full_finetune;
  ModeMemory lora;
  ModeMemory serve;
  std::int64_t lora_trainable_params = 0;
  std::int64_t kv_cache_bytes_per_token = 0;  ///< at full context, all attention layers
  std::int64_t ssm_state_bytes_per_sequence = 0;  ///< Mamba conv + SSM state, any context
  std::int64_t training_activation_bytes_per_sequence = 0;
};

/// Which Linear layers LoRA adapts.
enum class LoraTargets { attention_qv, attention, all_linear };

/// Whether LoRA with `targets` adapts the Linear named `linear_name` (checkpoint names).
bool lora_adapts(LoraTargets targets, std::string_view linear_name);

/// Trainable parameters LoRA adds at `rank`: r x (in + out) on each targeted Linear of the text
/// stacks (all_linear: every one, experts included, as PEFT's "all-linear"; routers, the head,
/// MTP layers and vision towers excluded).
std::int64_t lora_parameters(const ModelDescription& model, std::int64_t rank,
                             LoraTargets targets = LoraTargets::all_linear);

/// Whether the served weights are AWQ's: --quantize awq's, else the checkpoint's own.
bool serves_awq(const ModelDescription& model, const MemoryAssumptions& assumptions);

/// Bytes one inference forward pass over `tokens` tokens holds at once on one tensor-parallel
/// rank of `tp` (serving prefill, vLLM's profile run): nothing is kept for backward, so it is
/// the busiest layer's input and residual plus the tensors its widest sub-layer holds together
/// (docs/memory.md, "Serve jobs"); the text stacks only.
std::int64_t forward_working_bytes(const ModelDescription& model, std::int64_t tokens,
                                   std::int64_t tp, const MemoryAssumptions& assumptions);

/// Bytes the sampling step holds at once: `sequences` rows of full-vocabulary logits at
/// sampler_bytes_per_logit, plus the forward pass's output over `tokens` tokens it still holds.
std::int64_t sampling_bytes(const ModelDescription& model, std::int64_t sequences,
                            std::int64_t tokens, const MemoryAssumptions& assumptions);

/// Bytes an encoder-only model's forward pass holds for one sequence of `tokens` tokens on one
/// of `tp` ranks: the forward pass's working set, an eager-only attention's score-sized tensors
/// (eager_score_tensors x heads x tokens^2) and the head's output per token (an MLM's
/// vocabulary, a token classifier's labels; nothing for a pooled head) (docs/memory.md,
/// "Encoder serving").
std::int64_t encoder_sequence_bytes(const ModelDescription& model, std::int64_t tokens,
                                    std::int64_t tp, const MemoryAssumptions& assumptions);

/// A serving engine's transient peak on one of `tp` ranks: the larger of the prefill's forward
/// pass over min(context x concurrency, prefill_chunk_tokens) tokens and the sampling step over
/// max(concurrency, max_num_seqs) sequences (rank 0 samples the whole vocabulary). An
/// encoder-only model encodes its `concurrency` sequences whole in one pass and samples
/// nothing: concurrency x encoder_sequence_bytes.
std::int64_t serving_transient_bytes(const ModelDescription& model, std::int64_t context,
                                     std::int64_t concurrency, std::int64_t tp,
                                     const MemoryAssumptions& assumptions);

/// The communication buffers (NCCL, custom all-reduce) each GPU of a serving job holds outside
/// torch's allocator: tp_comm_bytes once the model spans more than one GPU, 0 on one. The job
/// estimator, the card table's tensor- and expert-parallel searches and the validator all take
/// them from here.
std::int64_t serving_comm_bytes(std::int64_t gpus, const MemoryAssumptions& assumptions);

/// KV-cache bytes one sequence of `context` tokens holds on one tensor-parallel rank: 2 (K and V)
/// x ceil(kv heads / tp) x head_dim x min(context, window) per self-attention layer (past kv
/// heads ranks the heads are replicated, as vLLM does; an MLA latent is whole on every rank)
/// (+ cross-attention over `context` encoder tokens for encoder-decoders); encoder-only models
/// cache nothing. DeepSeek-V4's compressed layers add context / ratio pooled rows (and index
/// keys) and their compressors' F32 decode state (Attention::compressed_kv).
std::int64_t kv_cache_bytes(const ModelDescription& model, std::int64_t context, Dtype kv_dtype,
                            KvSplit split = {});

/// Mamba state one sequence holds while served, independent of its length: per SSM layer,
/// conv state (conv_kernel - 1) x conv channels x conv_state_bytes + SSM state (mamba2: heads x
/// head_dim x d_state; mamba1: d_inner x d_state) x ssm_dtype. One tensor-parallel rank's share
/// (heads and conv channels split over split.tp, as vLLM's MambaStateShapeCalculator shards
/// them), at the busiest of split.pp pipeline stages.
std::int64_t ssm_state_bytes(const ModelDescription& model, Dtype ssm_dtype,
                             std::int64_t conv_state_bytes, KvSplit split = {});
/// One sequence's cache at `context` tokens on one GPU of `split`: its KV cache and its SSM
/// state (kv_cache_bytes + ssm_state_bytes).
std::int64_t sequence_cache_bytes(const ModelDescription& model, std::int64_t context,
                                  Dtype kv_dtype, Dtype ssm_dtype,
                                  std::int64_t conv_state_bytes, KvSplit split);

/// One layer's KV cache bytes per token on one tensor-parallel rank (0 for layers without a
/// cache: linear attention, none).
std::int64_t kv_bytes_per_token(const Attention& attention, Dtype kv_dtype, const KvSplit& split);

/// Bytes a lightning indexer caches per token, whatever the KV cache's dtype: its key in FP8 with
/// an F32 scale per 128 values (DeepSeek-V3.2's reference Indexer; vLLM: 132 for 128).
std::int64_t index_key_bytes(const SparseIndexer& indexer);
/// One SSM layer's state (conv + recurrent) for one sequence on one of `tp` ranks.
std::int64_t ssm_layer_state_bytes(const Ssm& ssm, Dtype ssm_dtype, std::int64_t conv_state_bytes,
                                   std::int64_t tp);
/// The SSM dtype the assumptions and the config imply.
Dtype effective_ssm_dtype(const ModelDescription& model, const MemoryAssumptions& assumptions);

/// A layer's Linear inputs per token, each counted once in LayerActivation::values_per_token
/// (the full fine-tune's count, where every weight trains). Autograd keeps a matmul's input only
/// for its weight's gradient, so over a frozen base each is kept only where an adapter (or
/// another op) reads it (docs/memory.md, "Frozen Linears keep no input"). Zero where the layer
/// is not modelled this way (MLA, linear attention, cross-attention, SSM mixers, LatentMoE).
struct LinearInputs {
  std::int64_t attention = 0;         ///< q/k/v's input: a standard self-attention's
  std::int64_t attention_output = 0;  ///< o's input: heads x head_dim
  std::int64_t mlp = 0;               ///< the dense MLP's gate/up (fc1) input
  std::int64_t mlp_down = 0;          ///< its down (fc2) input, where no other op keeps it
  std::int64_t moe = 0;               ///< a MoE's input: the router's and shared experts'
  std::int64_t experts_down = 0;      ///< top_k x a routed expert's down input (+ shared)
  /// top_k x a routed expert's input: each routed copy of the token is gathered apart and
  /// kept by the expert's matmul when its weights (or adapters) train. Not in values_per_token.
  std::int64_t experts_gathered = 0;
  bool moe_shared = false;  ///< shared experts read `moe` (adapted under all-linear targets)
};

/// What one layer of the text stacks saves for backward, per token, and the terms that are not
/// per token (docs/memory.md).
struct LayerActivation {
  /// A multi-token-prediction layer: it runs only where MTP is trained (Job::train_mtp).
  bool mtp = false;
  std::int64_t values_per_token = 0;  ///< saved values (not bytes) per token, flash/SDPA attention
  std::int64_t input_width = 0;       ///< the layer input (what full checkpointing keeps)
  std::int64_t attention_heads = 0;   ///< heads of a softmax attention (0: none in this layer)
  std::int64_t attended_tokens = 0;   ///< keys each query sees (window-capped)
  std::int64_t chunk_state_bytes = 0; ///< Mamba-2 / DeltaNet chunk states for the whole sequence
  /// Values per token more when K and V are repeated to every query head before the kernel
  /// (grouped-query attention under SDPA / eager in transformers, torchtune, LitGPT).
  std::int64_t repeated_kv_values = 0;
  /// The distinct inputs of the layer's Linears per token (q/k/v share one, gate/up share one):
  /// what bitsandbytes' 4-bit matmul keeps for backward on top of the rest (QLoRA).
  std::int64_t linear_input_values = 0;
  /// Saved values per token that are pointwise functions of other saved values: the MLP's
  /// activation output and, when gated, the gate x up product (of every expert a token uses).
  /// torch.compile's min-cut partitioner recomputes them in backward instead of saving them.
  std::int64_t pointwise_values = 0;
  /// Saved values per token that take the residual stream's dtype rather than the compute
  /// dtype: the norms' inputs, and the MLP's up/gate (fc1) outputs and their activation (a
  /// bitsandbytes Linear casts its output back to its input's dtype). fp32 when PEFT's
  /// prepare_model_for_kbit_training upcasts the embeddings (docs/memory.md).
  std::int64_t residual_dtype_values = 0;
  /// The inputs of the layer's residual-width RMSNorms per token: an eager RMSNorm (transformers,
  /// torchtune, LitGPT) upcasts its input to fp32 and keeps that copy for backward.
  std::int64_t rms_norm_input_values = 0;
  /// The values of Q and K a QK-norm RMSNorm reads, per token (their input in the compute dtype
  /// is in values_per_token): an eager one keeps an fp32 copy, as rms_norm_input_values.
  std::int64_t qk_rms_norm_values = 0;
  /// Under torch.autocast over fp32 weights, the values per token saved beyond a bf16 model's:
  /// each Linear reading a norm's fp32 output saves its own bf16 cast of it (q, k and v three;
  /// gate and up two), a residual-width RMSNorm keeps its normalised input (eager, for its
  /// weight's gradient) or its input (fused) in fp32, and a LayerNorm its fp32 input. Two bytes
  /// each.
  std::int64_t autocast_extra_values = 0;
  /// The autocast part that comes from a trained RMSNorm's weight (dropped when it is frozen).
  std::int64_t autocast_rms_weight_values = 0;
  /// Values per token a Python-composed activation (transformers' gelu_new, gelu_fast,
  /// quick_gelu) saves beyond a fused kernel's input: the intermediate tensors its backward
  /// reads. Pointwise: torch.compile recomputes them.
  std::int64_t composed_activation_values = 0;
  /// Of those (and the input they start from), the values autocast makes fp32: gelu_new's
  /// torch.pow is on autocast's fp32 list. Two bytes more each under autocast.
  std::int64_t composed_autocast_fp32_values = 0;
  LinearInputs linear_inputs;
};
std::vector<LayerActivation> layer_activations(const ModelDescription& model, std::int64_t seq_len);

/// Activation bytes one training sequence of `seq_len` tokens saves for backward, with SDPA /
/// flash attention (no score matrix). Formula: docs/memory.md.
std::int64_t training_activation_bytes(const ModelDescription& model, std::int64_t seq_len,
                                       const MemoryAssumptions& assumptions);

/// Throws ConfigError naming the flag when a workload value is out of range (zero, negative,
/// or beyond the ranges in docs/memory.md).
void validate_assumptions(const MemoryAssumptions& assumptions);

/// All three modes. Throws ConfigError on sizes that overflow.
MemoryEstimate estimate_memory(const ModelDescription& model, const ParameterCount& params,
                               const MemoryAssumptions& assumptions);

}  // namespace trace
