#pragma once
// The job estimator's internals (JobEstimator::estimate, src/estimate/job_estimate.cpp and
// job_activations.cpp): the model walks it caches across jobs, and JobPass, one estimate of one
// job, whose terms are built in the order a step builds them.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "checkpoint_layout.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parallel_layout.hpp"

namespace trace {

// The frozen base's Linears are bitsandbytes nf4 (QLoRA, or a LoRA job on a 4-bit checkpoint),
// unless the base is a checkpoint held in its own quantized format.
bool holds_nf4_base(const Job& job);

// Bytes of one element of weights, gradients and optimizer states under a precision.
struct PrecisionBytes {
  std::int64_t weight;     // the trained copy (master weights for mixed)
  std::int64_t half_copy;  // mixed: the bf16 copies autocast keeps for the step
  std::int64_t gradient;
  std::int64_t state;       // one fp32 / bf16 optimizer state element
  std::int64_t activation;  // saved activations
};

PrecisionBytes precision_bytes(Precision precision);

// A base bitsandbytes quantizes on load, as it holds it: the tensors a bitsandbytes checkpoint
// of the model without its MTP layers stores (estimate_storage: nf4 packed two per byte with its
// absmax, or int8 with an F32 scale per row, every Linear of the layers; the rest in bf16). (In
// memory the 256-entry nested code book is shared, not per Linear: 1 KiB each, not subtracted.)
struct QuantizedBase {
  std::int64_t bytes = 0;               ///< with the unquantized rest in bf16
  std::int64_t unquantized_params = 0;  ///< the rest (embeddings, head, norms, routers)
  std::int64_t quantized_values = 0;    ///< the quantized Linears' values
  /// Bytes per quantized value, packed values and scales (the bf16 rest left out).
  double bytes_per_quantized_value() const {
    return static_cast<double>(std::max<std::int64_t>(0, bytes - 2 * unquantized_params)) /
           static_cast<double>(std::max<std::int64_t>(1, quantized_values));
  }
};

// What LoRA dropout keeps per token (values, not bytes): each adapted Linear has its own
// nn.Dropout (PEFT, LitGPT), whose output lora_A keeps for its weight gradient, so every adapted
// Linear holds a dropped-out copy of its input (a routed expert's, per copy of the token it
// receives: top_k). Summed over the layers, and the largest layer's (what a recomputed layer
// holds under checkpointing).
struct DropoutInputs {
  std::int64_t all_layers = 0;
  std::int64_t widest_layer = 0;
};

// What ZeRO-3 and FSDP gather, in parameters: the largest wrapped block (a text or vision
// layer), everything outside the blocks (FSDP's root unit: embeddings, final norm, head,
// projectors) and one vocabulary matrix (the head DeepSpeed gathers for the loss).
struct ShardedUnits {
  std::int64_t largest_block = 0;
  std::int64_t outside_blocks = 0;
  std::int64_t vocab_matrix = 0;
  std::vector<std::int64_t> text_blocks;  // the text layers' parameters, in forward order
};

// What depends on the model alone, computed once per JobEstimator (shared by its copies).
struct JobEstimator::Cache {
  std::optional<std::vector<layout::NamedLinear>> linears;
  std::optional<std::int64_t> largest_layer_linear;  // values of the widest Linear of the layers
  std::map<std::pair<std::int64_t, LoraTargets>, std::int64_t> adapters;
  std::map<std::int64_t, std::vector<LayerActivation>> layers;
  std::map<LoraTargets, DropoutInputs> dropout_inputs;
  std::map<std::pair<QuantFormat, bool>, QuantizedBase> bitsandbytes_bases;
  std::optional<QuantizedBase> checkpoint_base;      // the checkpoint's own quantized format
  std::optional<std::int64_t> checkpoint_mtp_bytes;  // its MTP layers as stored
  // The layout checks depend on the model alone: walk its layers once, and each --tp once.
  std::optional<StageAndExpertLimits> stage_limits;
  std::set<std::int64_t> splitting_tp;
  std::optional<ShardedUnits> sharded_units;
  // per --pp and --train-mtp: the busiest stage's share (by count)
  std::map<std::pair<std::int64_t, bool>, double> stage_share;
};

// One estimate of one job: the values every term reads, set by the constructor (which checks the
// job against the model), and the terms, each adding to `b` (estimate.breakdown).
struct JobPass {
  JobPass(const ModelDescription& model_in, const ParameterCount& params_in,
          const MemoryAssumptions& assumptions, JobEstimator::Cache& cache_in, const Job& job_in);
  JobPass(const JobPass&) = delete;
  JobPass& operator=(const JobPass&) = delete;

  // Model walks, built by the first term that reads them and kept in the cache.
  const std::vector<layout::NamedLinear>& linears();
  // A bitsandbytes base (nf4 or LLM.int8) of the model, its unquantized rest in bf16.
  const QuantizedBase& bitsandbytes_base_of(QuantFormat format, bool double_quant);
  // The same with the rest at `rest_bytes` (bf16, or fp32 after PEFT's kbit preparation).
  std::int64_t bitsandbytes_bytes(QuantFormat format, bool double_quant, std::int64_t rest_bytes);
  // A LoRA base held as the checkpoint stores it (GPTQ, AWQ, LLM.int8: lora_keeps_stored_base).
  const QuantizedBase& checkpoint_base_of();
  // The largest Linear of the layers, in values (a quantized base's compute copy).
  std::int64_t largest_layer_linear();

  // A serve job: weights, KV cache, SSM state, the prefill's and sampler's transients, the
  // engine's overheads (job_estimate.cpp).
  void serving_terms();
  // A training job's weights, gradients and optimizer states, whole (job_estimate.cpp).
  void training_state();
  // Each GPU's share of them under the job's parallelism and sharding (job_estimate.cpp).
  void shard_training_state();
  // What the step saves for backward, its logits, and the peaks above the forward pass: the
  // optimizer step's temporary, one-pass nf4 quantization at setup (job_activations.cpp).
  void activations_and_logits();
  // Online RL: what generating completions holds beside the step, a colocated engine's share
  // or the generation phase's excess over the step (job_generation.cpp).
  void online_rl_generation();

  const ModelDescription& model;
  const ParameterCount& params;
  const MemoryAssumptions& a;
  JobEstimator::Cache& cache;
  const Job& job;
  JobEstimate estimate;
  MemoryBreakdown& b = estimate.breakdown;
  std::int64_t dp = 1;          // data-parallel ranks
  std::int64_t mtp_params = 0;  // trained MTP layers' parameters, vocabulary copies left out
  std::int64_t total = 0;       // the parameters the job loads
  bool stages_alike = true;     // every pipeline stage holds 1 / pp
  double stage_share = 1.0;     // the busiest pipeline stage's share of `total`
  // Training, set by training_state.
  PrecisionBytes bytes{};
  bool lora = false;
  std::int64_t trainable = 0;
  std::int64_t master = 0;    // mixed-precision fp32 master weights (full fine-tune)
  std::int64_t factored = 0;  // Adafactor's state elements
  // DeepSpeed's ZeRO on the GPU (set by shard_training_state): the gradient bytes its
  // optimizer step holds, and of them what is held while the optimizer runs on the fp32
  // partition beside its temporary; both after backward, when no activation or logit is left.
  // 0: no such phase. ZeRO-3 steps one sub-group at a time: its values (0: the whole
  // partition), which bound the optimizer's temporary.
  std::int64_t zero_step_gradients = 0;
  std::int64_t zero_step_fp32 = 0;
  std::int64_t zero_step_sub_group = 0;
  // What backward holds that the step has released: ZeRO-3's gathered parameters (step()
  // repartitions every parameter first).
  std::int64_t zero_step_released = 0;
};

}  // namespace trace
