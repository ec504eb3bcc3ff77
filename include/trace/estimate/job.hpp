#pragma once
/// One concrete job — a training step (full, LoRA, QLoRA) or a serving process — and the peak
/// memory it needs on each GPU. Every knob is a field here and a flag on the CLI; every constant
/// is a named field of MemoryAssumptions with its default and source in docs/memory.md.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/dtype.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

enum class JobMode { full, lora, qlora, serve };

/// Training precision.
enum class Precision {
  fp32,       ///< fp32 weights, gradients, optimizer states, activations
  mixed,      ///< fp32 master weights + bf16/fp16 autocast (activations half precision)
  bf16_pure,  ///< weights, gradients and optimizer states in bf16 (LitGPT "bf16-true")
  fp16_pure,
};

/// Paged optimizers (bitsandbytes) keep their states in CUDA unified memory, which pages out to
/// the host under pressure: they never make a job run out of memory and torch's counters do not
/// see them, so they take no GPU bytes here.
enum class Optimizer {
  adamw, adamw_8bit, paged_adamw, paged_adamw_8bit, adafactor, sgd, sgd_momentum, lion
};

enum class Checkpointing {
  none,
  full,       ///< each layer's input is kept; the layer is recomputed in backward
  selective,  ///< Korthikanti's selective recomputation: the attention core is recomputed
  offload,    ///< checkpointed layer inputs are offloaded to CPU memory
};

/// How attention runs in training, which decides what backward keeps of it.
enum class AttentionImpl {
  sdpa,   ///< torch SDPA after transformers' / torchtune's / LitGPT's repeat of K and V to every
          ///< query head: no score matrix, but K and V kept at the query heads' width
  flash,  ///< flash-attn (FA2/FA3, Unsloth, Megatron/TE): no score matrix, grouped K and V
  eager,  ///< the score matrix is kept (and K, V repeated as for sdpa)
};

/// How the loss over the vocabulary is computed, which decides the logits' bytes per value at
/// the top of the backward pass (MemoryAssumptions::logits_bytes_*; docs/memory.md).
enum class LossImpl {
  full,     ///< transformers: logits upcast to fp32, a shifted fp32 copy, fp32 log-softmax
  chunked,  ///< LitGPT / torchtune: bf16 logits kept, fp32 log-softmax chunk by chunk
  fused,    ///< Unsloth's fused kernel: the bf16 logits, the gradient written in place
  cut,      ///< Cut Cross-Entropy, Liger's fused linear cross-entropy: logits never materialised
  /// Megatron's vocab-parallel cross-entropy: the fp32 upcast exponentiated, normalised and
  /// turned into the gradient in place (the bf16 logits only while they are upcast)
  vocab_parallel,
};

/// Preference training (TRL's trainers): what one step runs beside an SFT step's forward and
/// backward. One micro-batch item is a pair, its chosen and rejected sequences concatenated into
/// one batch of 2 x batch sequences (TRL's concatenated_forward), both kept for backward.
enum class Preference {
  none,
  /// DPO (and IPO, its loss variants): the pairs, and a frozen reference model's forward over
  /// them under no_grad after the policy's, before backward (TRL's compute_ref_log_probs), its
  /// logits alive beside the policy's. A full fine-tune holds the reference as a second model;
  /// LoRA and QLoRA compute it with the adapters disabled, holding nothing more.
  dpo,
  /// ORPO, SimPO, CPO: the pairs, no reference model.
  paired,
  /// KTO: unpaired completions (batch sequences kept), a KL batch of mismatched completions
  /// through the policy under no_grad before its forward, and a reference model as DPO's,
  /// whose forward over both batches runs after the policy's.
  kto,
};

/// Where online RL generates its completions (TRL's GRPOTrainer: use_vllm, vllm_mode).
enum class Generator {
  transformers,   ///< the policy's own generate() on the training GPUs (TRL's default)
  vllm_colocate,  ///< a vLLM engine inside each training process, holding its share of the card
  vllm_server,    ///< a vLLM server on GPUs of its own: nothing on the training GPUs
};

/// TRL's vllm_gpu_memory_utilization default: a colocated engine's share of each card.
inline constexpr double k_trl_vllm_memory_utilization = 0.3;

/// Online RL (TRL's GRPOTrainer): every step trains on completions the policy generated, its
/// loss over the completion tokens only (docs/memory.md, "Online RL").
struct OnlineRl {
  /// max_completion_length (TRL's default 256); Job::seq_len is prompt + completion.
  std::int64_t completion_len = 256;
  Generator generator = Generator::transformers;
  /// Sequences generated at once on each GPU; 0: batch x grad_accum (TRL's default generation
  /// batch: one per optimizer step, steps_per_generation = gradient_accumulation_steps).
  std::int64_t generation_batch = 0;
  /// beta > 0: a frozen reference model (TRL's default beta is 0: none is loaded).
  bool reference = false;
  /// vllm_colocate: the bytes its engine takes of each training GPU, gpu_memory_utilization x
  /// the card's memory (set by the caller, who knows the card).
  std::int64_t engine_bytes = 0;
  /// vllm_enable_sleep_mode: the engine frees its weights and KV cache while the policy trains.
  bool engine_sleeps = false;
  /// DeepSpeed ZeRO-3 with TRL's ds3_gather_for_generation (on by default): generate() runs
  /// with every parameter gathered. false under FSDP, which gathers layer by layer.
  bool zero3_gathers = true;
};

enum class Sharding {
  single,    ///< one GPU (or tensor / pipeline parallel only)
  ddp,       ///< data parallel, every GPU holds everything
  zero1,     ///< optimizer states sharded (DeepSpeed ZeRO-1: half-precision gradients whole)
  megatron,  ///< Megatron-LM's distributed optimizer: as zero1, its fp32 main gradients whole
  zero2,     ///< optimizer states and gradients sharded (DeepSpeed ZeRO-2)
  zero3,     ///< + parameters (DeepSpeed ZeRO-3, FSDP full shard)
};

struct Job {
  JobMode mode = JobMode::full;
  Precision precision = Precision::mixed;
  Optimizer optimizer = Optimizer::adamw;
  Checkpointing checkpointing = Checkpointing::none;
  AttentionImpl attention = AttentionImpl::sdpa;
  /// SDPA with grouped-query K and V passed as they are (enable_gqa: transformers >= 4.54 over
  /// torch >= 2.5 when no attention mask reaches the kernel), not repeated to every query head.
  bool sdpa_grouped_kv = false;
  LossImpl loss = LossImpl::full;
  /// QLoRA through bitsandbytes' autograd (PEFT, LitGPT, transformers): its 4-bit matmul keeps
  /// each input for backward. false: fused LoRA kernels (Unsloth) that keep what LoRA keeps.
  bool bnb_matmul_keeps_inputs = true;
  /// torch.compile: its partitioner recomputes the MLP's pointwise outputs in backward
  /// (LayerActivation::pointwise_values) instead of saving them.
  bool compiled = false;
  /// The peak as allocated memory holds it (torch.cuda.max_memory_allocated): under
  /// checkpointing the loss's backward frees the logits before the layers' backward recomputes
  /// one layer, so the two are not counted together. false (the default, and every verdict):
  /// both are, as the caching allocator keeps the logits' freed blocks reserved while the
  /// recompute allocates beside them (docs/memory.md, "Allocated and reserved").
  bool allocated_peak = false;
  std::int64_t seq_len = 2048;
  std::int64_t batch = 1;  ///< micro-batch per GPU
  std::int64_t lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::all_linear;
  /// LoRA dropout probability (PEFT's lora_dropout; 0: nn.Identity, nothing kept). Above 0 each
  /// adapted Linear keeps its own dropped-out input and the 1-byte mask for backward.
  double lora_dropout = 0.0;
  /// LoRA / serving: the frozen or served base weights' dtype (nullopt: bf16; QLoRA: nf4).
  std::optional<Dtype> base_dtype;
  bool base_nf4 = false;  ///< QLoRA: base Linears in bitsandbytes nf4
  /// nf4 absmax double-quantized (U8 per 64 values + F32 per 256 blocks: the QLoRA recipe,
  /// LitGPT bnb.nf4-dq); false: an F32 absmax per 64 values (bitsandbytes' default, bnb.nf4).
  bool nf4_double_quant = true;
  /// The nf4 base is quantized on the GPU in one pass per weight (torchao before 0.2, pinned by
  /// torchtune before v0.2): at model setup the largest weight's quantization holds 66 bytes per
  /// value beside the stored weights (docs/memory.md, "Quantizing the base in one pass").
  bool nf4_quantized_in_one_pass = false;
  /// The checkpoint's multi-token-prediction layers train beside the model (Megatron / NeMo
  /// --mtp-num-layers): their weights, gradients, optimizer states and activations, and one more
  /// loss over the vocabulary per MTP depth. false: left out, as transformers does.
  bool train_mtp = false;
  /// PEFT's prepare_model_for_kbit_training (TRL, axolotl, FastChat, PEFT's QLoRA examples): a
  /// 4-bit or 8-bit base's unquantized parameters (embeddings, norms, head) cast to fp32.
  bool kbit_upcast = false;
  /// Mixed precision runs as torch.autocast over the fp32 weights (transformers' Trainer,
  /// Accelerate, Lightning's "bf16-mixed"): the fp32 embedding output makes the residual stream
  /// fp32 (each branch's bf16 output is added to it). false: the model itself is cast to bf16
  /// and the fp32 master copy lives in the optimizer (DeepSpeed, FSDP's MixedPrecision,
  /// Megatron), so the stream is bf16.
  bool autocast_fp32_weights = false;
  /// The model's activation runs as transformers writes it (ACT2FN): gelu_new, gelu_fast and
  /// quick_gelu are Python expressions whose intermediates are saved for backward. false: a
  /// fused kernel (LitGPT, torchtune, Megatron's own models; Unsloth and Liger).
  bool composed_activations = false;
  /// Preference training: pairs of sequences per micro-batch item, and DPO's or KTO's reference.
  Preference preference = Preference::none;
  /// DPO or KTO with the reference's log-probabilities computed before training (TRL's
  /// precompute_ref_log_probs): no reference model is held during the steps.
  bool reference_precomputed = false;
  /// The dtype a full fine-tune's DPO / KTO reference is held in; nullopt: as the policy's parameters
  /// are held (fp32 under fp32 and mixed precision, else the half dtype): TRL's deep copy, or
  /// its fp32 reload without a dtype in model_init_kwargs. DeepSpeed casts it to bf16 (docs/
  /// memory.md, "Preference training").
  std::optional<Dtype> reference_dtype;
  /// Online RL (GRPO): completions generated during training; nullopt: supervised steps.
  std::optional<OnlineRl> rl;
  // Parallelism.
  std::int64_t gpus = 1;
  Sharding sharding = Sharding::single;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t ep = 1;               ///< expert parallel: routed experts split over this many GPUs
  /// Pipeline stages balanced by memory (Accelerate's device_map="auto" fills each GPU in turn):
  /// each holds 1 / pp of the parameters. false: split by layer count (vLLM's get_pp_indices,
  /// Megatron), the first stage holding the embeddings, the last the head: the busiest counts.
  bool pipeline_by_memory = false;
  bool cpu_offload = false;          ///< optimizer states (and, with zero3, parameters) on CPU
  bool optimizer_in_backward = false;  ///< the step is fused into backward: one layer's grads live
  /// AdamW's step takes PyTorch's default foreach path, whose exp_avg_sq_sqrt is one state-sized
  /// temporary while the step runs; false for a fused kernel (torch fused=True, DeepSpeed's or
  /// apex's FusedAdam, Megatron) or a per-parameter loop (transformers' own AdamW).
  bool foreach_step = true;
  /// The trainer frees the gradients after each optimizer step (zero_grad(set_to_none=True),
  /// PyTorch >= 2.0's default: transformers' Trainer, Accelerate, LitGPT, torchtune), so the
  /// next forward pass runs without them (with grad_accum 1). false: they stay allocated
  /// (zero_grad(set_to_none=False), DDP's gradient buckets, DeepSpeed's and Megatron's buffers).
  bool gradients_freed = false;
  /// RMSNorm runs eagerly (transformers, torchtune, LitGPT): it upcasts its input to fp32 and
  /// keeps that copy for backward; false for a fused kernel (Unsloth, Liger, Transformer
  /// Engine / Megatron) or under torch.compile.
  bool eager_rms_norm = true;
  /// The head is a tensor of its own even where the config ties it to the embedding (LitGPT's
  /// convert_hf_checkpoint copies the embedding into lm_head.weight).
  bool separate_head = false;
  /// A 4-bit base quantizes the head too (Lightning Fabric's BitsandbytesPrecision replaces
  /// every Linear), and its 4-bit matmul dequantizes the whole head for the logits: one bf16
  /// copy while the loss runs.
  bool quantized_head = false;
  /// Micro-batches per optimizer step. Peak memory depends on it only with
  /// accumulate_unsharded.
  std::int64_t grad_accum = 1;
  /// FSDP's no_sync() on the accumulating micro-batches (Lightning Fabric's no_backward_sync,
  /// Accelerate's default with FSDP): no reduce-scatter until the last one, so with
  /// grad_accum > 1 every GPU holds the whole model's unsharded gradients.
  bool accumulate_unsharded = false;
  /// DeepSpeed's reduce bucket (its `reduce_bucket_size`, in elements; 0: Hugging Face's
  /// "auto", hidden_size squared): the gradients are copied into a bucket of this size and
  /// reduced when it is full, keeping only this rank's partition (docs/memory.md, "DeepSpeed's
  /// gradients"). Unset: the stage's usual value, reduce_bucket_values().
  std::optional<std::int64_t> zero_reduce_bucket;
  /// DeepSpeed ZeRO-3's `sub_group_size` (elements; its default 1e9): the step flattens, casts
  /// to fp32 and updates the partition this many values at a time.
  std::int64_t zero_sub_group_size = 1'000'000'000;
  /// DeepSpeed ZeRO-3's `stage3_max_reuse_distance` (elements; its default 1e9): a gathered
  /// parameter is not repartitioned after its module runs when the step's trace reuses it
  /// within this many parameters, so a small model's last layers (a whole model under 1e9 /
  /// 3 values) stay gathered into backward (docs/memory.md, "ZeRO-3").
  std::int64_t zero_max_reuse_distance = 1'000'000'000;
  /// DeepSpeed's `overlap_comm` (off by default below ZeRO-3): a second bucket, filled while the
  /// first is reduced.
  bool zero_overlap_comm = false;
  /// Data parallel (`ddp`): PyTorch DDP's reducer keeps its all-reduce buckets, a second copy of
  /// every trained gradient (gradient_as_bucket_view=False: DDP's, Accelerate's and Lightning's
  /// default). false: gradient_as_bucket_view=True (the gradients are views into the buckets),
  /// or FSDP's NO_SHARD and DeepSpeed's data parallel, which reduce without such a copy
  /// (docs/memory.md, "DDP's buckets").
  bool ddp_bucket_copy = true;
  /// LoRA under FSDP1 with frozen and trainable weights in one flat parameter
  /// (use_orig_params=True, per-block wrapping: Lightning Fabric / LitGPT): the flat parameter's
  /// gradient covers the frozen weights too, as if they were not frozen (PyTorch's FSDP docs).
  bool frozen_in_flat_params = false;
  /// PyTorch's FSDP (FSDP1's FullyShardedDataParallel, FSDP2's fully_shard) as against
  /// DeepSpeed's ZeRO-3, with sharding zero3: the root unit, everything outside the wrapped
  /// blocks (embeddings, final norm, head), is not resharded after forward, so it stays gathered
  /// in the compute dtype through backward. false: DeepSpeed, or FSDP with the embedding and
  /// head wrapped as units of their own (torchtune's custom_sharded_layers).
  bool root_unit_gathered = false;
  /// With sharding zero3: PyTorch's FSDP (either wrapping), whose backward makes a unit's
  /// gradients whole before reduce-scattering them, as against DeepSpeed's ZeRO-3, which moves
  /// each gradient into its reduce bucket as autograd makes it.
  bool fsdp = false;
  /// A VLM's full fine-tune leaves its vision tower (everything counted under `vision`: the
  /// encoder and its projector or merger) frozen: the tower is held at the compute dtype with
  /// no gradients, optimizer state or master copy (LLaMA-Factory's freeze_vision_tower,
  /// ms-swift's freeze_vit, Qwen-VL's fix_vit and Qwen2/3-VL's tune_mm_vision, all frozen by
  /// default). LoRA never adapts the tower either way. A model without a tower is an error.
  bool freeze_vision = false;
  // Serving.
  std::int64_t context = 4096;
  std::int64_t concurrency = 1;
  Dtype kv_dtype = Dtype::bf16;
  /// Serving under torch.autocast over fp32 weights (Lightning's "bf16-mixed" generate, an
  /// autocast pipeline): autocast caches the bf16 copy of every weight it casts while the
  /// context is open, so fp32 weights cost 4 + autocast_copy_bytes per parameter. base_dtype
  /// must say fp32 (with or without weight_bytes); anything else is a ConfigError.
  bool serve_autocast = false;
  /// LoRA / QLoRA over a checkpoint stored quantized in a format PEFT adapts in place (GPTQ,
  /// AWQ, LLM.int8): the frozen base is held as the checkpoint stores it (MTP layers left out),
  /// each Linear computing through a dequantized copy, instead of at bf16 or re-quantized to
  /// nf4. make_report sets it from the config (docs/memory.md, "LoRA over a quantized
  /// checkpoint").
  bool checkpoint_base = false;
  /// Serving: the weights' bytes when already known (a quantized checkpoint's stored size, MTP
  /// left out); otherwise the text model's parameters at base_dtype.
  std::optional<std::int64_t> weight_bytes;
  /// Serving: the routed experts' bytes inside weight_bytes, split over --ep GPUs where expert
  /// parallelism spans more GPUs than tensor parallelism; unset: the experts at base_dtype.
  std::optional<std::int64_t> expert_weight_bytes;
};

struct JobEstimate {
  MemoryBreakdown breakdown;  ///< per GPU (no overhead): what the framework allocates at its peak
  std::int64_t trainable_params = 0;
  /// Every gradient's bytes per GPU, as the end of backward holds them; where they are freed
  /// between steps, breakdown.gradients is only what they add to the peak.
  std::int64_t gradients_at_step = 0;
};

/// The largest --seq-len and --batch a job may ask for.
inline constexpr std::int64_t k_max_training_seq_len = 1LL << 27;
inline constexpr std::int64_t k_max_training_batch = 1LL << 20;
/// The largest --concurrency and --context a serve job may ask for.
inline constexpr std::int64_t k_max_concurrency = 1LL << 20;
inline constexpr std::int64_t k_max_context_tokens = 1LL << 27;

/// How the fit searches shard a job over more than one card, in words: "FSDP" when the job
/// keeps FSDP's root unit gathered (root_unit_gathered), else "ZeRO-3".
const char* data_parallel_label(const Job& job);

/// Whether the job shards as DeepSpeed's ZeRO-3: `zero3` that is not PyTorch's FSDP (`fsdp`,
/// or its root unit kept gathered).
bool deepspeed_zero3(const Job& job);

/// The reduce bucket a DeepSpeed job's gradients go through, in values (0: "auto", hidden_size
/// squared): zero_reduce_bucket, else 5e8 under ZeRO-1/2 (DeepSpeed's default, LLaMA-Factory's
/// ds_z2_config.json) and "auto" under ZeRO-3 (Hugging Face's stage-3 example, LLaMA-Factory's
/// ds_z3_config.json, ms-swift's zero3.json).
std::int64_t reduce_bucket_values(const Job& job);

/// Whether zero_grad(set_to_none=True) frees the gradients between steps by default: one GPU
/// or PyTorch FSDP (`fsdp`), no tensor or pipeline parallelism (DDP's buckets, DeepSpeed's and
/// Megatron's buffers keep them). The CLI and trace validate start from this.
bool frees_gradients_by_default(const Job& job, bool fsdp);

/// Whether mixed precision runs as torch.autocast over the fp32 weights by default: one GPU or
/// DDP, no tensor or pipeline parallelism (ZeRO, FSDP's MixedPrecision and Megatron cast the
/// model to bf16). The CLI and trace validate start from this.
bool autocasts_fp32_weights_by_default(const Job& job);

/// Whether the job's residual stream is fp32 under autocast (Job::autocast_fp32_weights with
/// fp32 embeddings: a full fine-tune, or LoRA over an fp32 base), PEFT's kbit upcast aside.
bool autocast_fp32_stream(const Job& job);

/// `job` on one card, at the assumptions' sequence length, batch and LoRA rank: what the
/// per-card tables evaluate.
Job one_card_job(Job job, const MemoryAssumptions& assumptions);

/// Throws ConfigError naming the flag when a job value is out of range or contradictory.
void validate_job(const Job& job);

/// Estimates many jobs of one model: what depends only on the model (its Linears, adapter
/// counts per rank, per-layer saved values per sequence length) is computed on first use and
/// reused, so searches over card counts and concurrency stay cheap. Holds references to `model`
/// and `params`: they must outlive it. Copies share the cache (not for concurrent use).
class JobEstimator {
 public:
  JobEstimator(const ModelDescription& model, const ParameterCount& params,
               const MemoryAssumptions& assumptions = {});
  /// The job's per-GPU peak by term (no CUDA context). Throws ConfigError on a bad job.
  JobEstimate estimate(const Job& job) const;
  const ModelDescription& model() const { return model_; }
  const ParameterCount& params() const { return params_; }
  const MemoryAssumptions& assumptions() const { return assumptions_; }

  /// What depends on the model alone, filled on first use (src/estimate/job_pass.hpp).
  struct Cache;

 private:
  const ModelDescription& model_;
  const ParameterCount& params_;
  MemoryAssumptions assumptions_;
  std::shared_ptr<Cache> cache_;
};

/// The constants (activation, logits, eager-score and nf4 bytes; SSM state dtype) are the
/// MemoryAssumptions' (docs/memory.md); the job's own knobs are in `job`. One use of a
/// JobEstimator.
JobEstimate estimate_job(const ModelDescription& model, const ParameterCount& params,
                         const Job& job, const MemoryAssumptions& assumptions = {});

/// The per-card table view of a training job (mode full or lora, one GPU, no sharding: the
/// fit search shards on its own): its breakdown at `assumptions.batch`, with the logits folded
/// into the activations, and the split bytes(batch) = fixed + batch x per_sequence the fit
/// searches need. The tables and `--mode` then agree by construction.
ModeMemory mode_memory_from_job(const ModelDescription& model, const ParameterCount& params,
                                Job job, const MemoryAssumptions& assumptions);

/// A short label of a training job's knobs for tables: "AdamW, bf16 mixed" plus whatever is not
/// the default ("checkpointing full", "eager attention", "chunked loss").
std::string describe_training(const Job& job);

/// Every setting of a job that moves its estimate, in one line ("lora r8 q,v, dropout 0.05,
/// 1304 x 1 tokens, AdamW, bf16, checkpointing full, 2 GPUs zero3, accum 32 no_sync, frozen
/// grads"), for reports that show how a job was read (trace validate's "read as"). The GPUs are
/// named where there are several or a strategy; `one_gpu` named: also a plain single GPU
/// ("1 GPU", the plan's job line), omitted: not (the validator's rows, mostly one GPU).
enum class OneGpu { omitted, named };
/// A preference job's pairs and reference ("DPO pairs, reference copy"); empty for none.
std::string describe_preference(const Job& job);
std::string describe_job(const Job& job, OneGpu one_gpu = OneGpu::omitted);

/// Parsers for the CLI and CSV spellings ("adamw_8bit", "adam8bit", "zero3", "fsdp", ...);
/// nullopt when unknown.
std::optional<JobMode> parse_job_mode(std::string_view text);
std::optional<Precision> parse_precision(std::string_view text);
std::optional<Optimizer> parse_optimizer(std::string_view text);
std::optional<Checkpointing> parse_checkpointing(std::string_view text);
std::optional<AttentionImpl> parse_attention(std::string_view text);
/// Whether an --attention value (or a row's job_attention) names SDPA with grouped K/V:
/// sdpa-gqa, sdpa_gqa or enable_gqa (parse_attention reads them as sdpa).
bool names_grouped_sdpa(std::string_view text);
std::optional<LossImpl> parse_loss(std::string_view text);
/// "qv", "attention", "all" (and "all-linear"), or PEFT's target_modules for one of them, in any
/// order: q_proj,v_proj; q_proj,k_proj,v_proj,o_proj; those and gate_proj,up_proj,down_proj.
/// nullopt for any other set (no narrower or mixed set is modelled).
std::optional<LoraTargets> parse_lora_targets(std::string_view text);
/// "none", "dpo" (and "ipo"), "orpo", "simpo", "cpo" (the three: Preference::paired), "kto".
std::optional<Preference> parse_preference(std::string_view text);
/// Sequences a training step keeps for backward per micro-batch item: 2 for preference pairs.
std::int64_t sequences_per_item(const Job& job);
/// DPO and KTO compare the policy with a reference model.
bool has_reference(Preference preference);
/// The reference runs in every step: DPO or KTO without precomputed log-probabilities.
bool reference_in_step(const Job& job);
/// A full fine-tune holds a frozen reference model: DPO's or KTO's run in every step, or GRPO's
/// (beta > 0), which scores each generation batch.
bool holds_reference_model(const Job& job);
/// Sequences GRPO generates at once on each GPU: OnlineRl::generation_batch, else batch x
/// grad_accum; 0 for a supervised job.
std::int64_t generation_batch_of(const Job& job);
/// "transformers", "vllm-colocate" (or "colocate"), "vllm-server" (or "server"); nullopt when
/// unknown.
std::optional<Generator> parse_generator(std::string_view text);
/// "transformers", "vllm-colocate", "vllm-server".
const char* generator_name(Generator generator);
/// GRPO's completions, generator and reference ("GRPO 256-token completions, transformers
/// generate x 8"); empty for a supervised job.
std::string describe_rl(const Job& job);
/// The dtype a full fine-tune holds its reference model in: --ref-dtype, else as the policy's
/// parameters are held (fp32 under fp32 and mixed precision, else the half dtype).
Dtype reference_dtype_of(const Job& job);
std::optional<Sharding> parse_sharding(std::string_view text);

}  // namespace trace
