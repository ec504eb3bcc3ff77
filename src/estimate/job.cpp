// Per-GPU peak memory of one job. Terms and sources: docs/memory.md, "Jobs". The peak of a
// training step is reached at the end of the forward pass of the step that follows the first
// optimizer step: weights + gradients (kept between steps by most trainers; freed with
// zero_grad(set_to_none) they reappear during backward while activations shrink, so the sum is
// an upper bound that both orders stay under) + optimizer states + saved activations + logits.
#include "trace/estimate/job.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <utility>

#include "checkpoint_layout.hpp"
#include "trace/checked_math.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/estimate/parallel_layout.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

// The frozen base's Linears are bitsandbytes nf4 (QLoRA, or a LoRA job on a 4-bit checkpoint),
// unless the base is a checkpoint held in its own quantized format.
bool holds_nf4_base(const Job& job) {
  return !job.checkpoint_base && (job.mode == JobMode::qlora || job.base_nf4);
}

// Bytes of one element of weights, gradients and optimizer states under a precision.
struct PrecisionBytes {
  std::int64_t weight;      // the trained copy (master weights for mixed)
  std::int64_t half_copy;   // mixed: the bf16 copies autocast keeps for the step
  std::int64_t gradient;
  std::int64_t state;       // one fp32 / bf16 optimizer state element
  std::int64_t activation;  // saved activations
};

PrecisionBytes precision_bytes(Precision precision) {
  switch (precision) {
    case Precision::fp32: return {4, 0, 4, 4, 4};
    case Precision::mixed: return {4, 2, 4, 4, 2};
    case Precision::bf16_pure:
    case Precision::fp16_pure: return {2, 0, 2, 2, 2};
  }
  return {4, 2, 4, 4, 2};
}

// Optimizer state bytes for `params` trainable parameters (Adafactor: factored second moments
// over the given matrices' rows + columns, the rest full).
std::int64_t optimizer_bytes(Optimizer optimizer, std::int64_t params, std::int64_t state_bytes,
                             std::int64_t factored_elements) {
  switch (optimizer) {
    case Optimizer::adamw: return checked_product({params, 2, state_bytes}, "the optimizer");
    case Optimizer::paged_adamw:
    case Optimizer::paged_adamw_8bit: return 0;  // unified memory: pages out instead of failing
    case Optimizer::adamw_8bit:
      // two int8 states + one fp32 absmax per 2,048-value block each (bitsandbytes)
      return checked_add(checked_mul(params, 2), ceil_div(params, 2048) * 2 * 4);
    case Optimizer::adafactor: return checked_mul(factored_elements, 4, "the optimizer");
    case Optimizer::sgd: return 0;
    case Optimizer::sgd_momentum:
    case Optimizer::lion: return checked_mul(params, state_bytes, "the optimizer");
  }
  return 0;
}

// A base bitsandbytes quantizes on load, as it holds it: the tensors a bitsandbytes checkpoint
// of the model without its MTP layers stores (estimate_storage: nf4 packed two per byte with its
// absmax, or int8 with an F32 scale per row, every Linear of the layers; the rest in bf16). (In
// memory the 256-entry nested code book is shared, not per Linear: 1 KiB each, not subtracted.)
struct QuantizedBase {
  std::int64_t bytes = 0;              ///< with the unquantized rest in bf16
  std::int64_t unquantized_params = 0;  ///< the rest (embeddings, head, norms, routers)
  std::int64_t quantized_values = 0;    ///< the quantized Linears' values
  /// Bytes per quantized value, packed values and scales (the bf16 rest left out).
  double bytes_per_quantized_value() const {
    return static_cast<double>(std::max<std::int64_t>(0, bytes - 2 * unquantized_params)) /
           static_cast<double>(std::max<std::int64_t>(1, quantized_values));
  }
};

// The text model (MTP layers left out) stored as `q`, its unquantized rest in bf16.
QuantizedBase quantized_base(const ModelDescription& model, const Quantization& q) {
  ModelDescription quantized = model;
  std::erase_if(quantized.stacks, [](const Stack& stack) { return stack.mtp; });
  quantized.torch_dtype = "bfloat16";
  quantized.quantization = q;
  const ParameterCount params = count_parameters(quantized);
  const StorageEstimate storage = estimate_storage(quantized, params);
  QuantizedBase base;
  base.bytes = storage.bytes;
  base.unquantized_params = params.total - storage.quantized_values;
  base.quantized_values = storage.quantized_values;
  return base;
}

QuantizedBase bitsandbytes_base(const ModelDescription& model, QuantFormat format,
                                bool double_quant) {
  Quantization q;
  q.format = format;
  q.method = "bitsandbytes";
  q.double_quant = double_quant;
  return quantized_base(model, q);
}

// What a LoRA job's head costs beyond the base's count of it (docs/memory.md, "LitGPT's head"):
// a separate copy of a tied head (LitGPT), and a head quantized with a 4-bit base (sized as the
// base's Linears are), which also holds its dequantized bf16 copy for the logits. `rest_bytes`:
// the base's unquantized bytes per value.
std::int64_t head_bytes(const ModelDescription& model, const Job& job, std::int64_t rest_bytes) {
  const bool tied = model.tie_word_embeddings;
  if (tied && !job.separate_head) return 0;  // the head is the embedding the base counted
  const std::int64_t values = checked_mul(model.vocab_size, model.hidden_size, "the weights");
  const bool nf4_base = holds_nf4_base(job);
  if (!(job.quantized_head && nf4_base)) {
    if (!tied) return 0;  // counted in the base
    return nf4_base ? checked_mul(values, rest_bytes, "the weights")
                    : bytes_for(values, job.base_dtype.value_or(Dtype::bf16));
  }
  const std::int64_t nf4 =
      bnb_4bit_elements(model.vocab_size, model.hidden_size, 1, job.nf4_double_quant).bytes();
  const std::int64_t dequantized = checked_mul(values, 2, "the weights");
  // An untied head trades its unquantized bytes in the base for the quantized ones.
  const std::int64_t stored = tied ? nf4 : nf4 - checked_mul(values, rest_bytes, "the weights");
  return checked_add(dequantized, stored);
}

// What LoRA dropout keeps per token (values, not bytes): each adapted Linear has its own
// nn.Dropout (PEFT, LitGPT), whose output lora_A keeps for its weight gradient, so every adapted
// Linear holds a dropped-out copy of its input (a routed expert's, per copy of the token it
// receives: top_k). Summed over the layers, and the largest layer's (what a recomputed layer
// holds under checkpointing).
struct DropoutInputs {
  std::int64_t all_layers = 0;
  std::int64_t widest_layer = 0;
};

// "model.layers.12.self_attn.q_proj" -> "model.layers.12"; names outside a layer stand alone.
std::string_view layer_of(std::string_view name) {
  const std::size_t at = name.find("layers.");
  if (at == std::string_view::npos) return name;
  std::size_t end = at + 7;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  return name.substr(0, end);
}

DropoutInputs lora_dropout_inputs(const ModelDescription& model,
                                  const std::vector<layout::NamedLinear>& linears,
                                  LoraTargets targets) {
  std::int64_t top_k = 0;
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (block.moe) top_k = std::max(top_k, block.moe->top_k);
    }
  }
  std::map<std::string_view, std::int64_t> per_layer;
  for (const layout::NamedLinear& linear : linears) {
    if (linear.mtp || linear.router || !lora_adapts(targets, linear.name)) continue;
    const std::int64_t copies = linear.expert ? top_k : linear.count;
    std::int64_t& layer = per_layer[layer_of(linear.name)];
    layer = checked_add(layer, checked_mul(linear.cols, copies, "the LoRA dropout"));
  }
  DropoutInputs inputs;
  for (const auto& [layer, values] : per_layer) {
    inputs.all_layers = checked_add(inputs.all_layers, values);
    inputs.widest_layer = std::max(inputs.widest_layer, values);
  }
  return inputs;
}

}  // namespace

void validate_job(const Job& job) {
  const auto check = [](std::int64_t value, std::int64_t max, const char* flag) {
    if (value < 1 || value > max) {
      throw ConfigError(fmt::format("{} = {} is out of range (1..{})", flag, value, max));
    }
  };
  check(job.seq_len, k_max_training_seq_len, "--seq-len");
  check(job.batch, k_max_training_batch, "--batch");
  check(job.gpus, 1LL << 16, "--gpus");
  check(job.tp, 1LL << 10, "--tp");
  check(job.pp, 1LL << 10, "--pp");
  check(job.ep, 1LL << 16, "--ep");
  check(job.context, k_max_context_tokens, "--context");
  check(job.concurrency, k_max_concurrency, "--concurrency");
  if (job.mode == JobMode::lora || job.mode == JobMode::qlora) {
    check(job.lora_rank, 1LL << 16, "--lora-rank");
  }
  if (!(job.lora_dropout >= 0.0 && job.lora_dropout < 1.0)) {
    throw ConfigError(fmt::format("--lora-dropout = {} is out of range (0 to below 1)", job.lora_dropout));
  }
  if (job.gpus % (job.tp * job.pp) != 0) {
    throw ConfigError(fmt::format("--gpus {} is not a multiple of --tp {} x --pp {}", job.gpus,
                                  job.tp, job.pp));
  }
  check(job.grad_accum, 1LL << 20, "--grad-accum");
  if (job.preference != Preference::none && job.mode == JobMode::serve) {
    throw ConfigError("--preference is for training jobs (--mode full, lora or qlora)");
  }
  if ((job.reference_precomputed || job.reference_dtype) && job.preference != Preference::dpo) {
    throw ConfigError(fmt::format("{} needs --preference dpo (only DPO runs a reference model)",
                                  job.reference_precomputed ? "--precompute-ref-log-probs"
                                                            : "--ref-dtype"));
  }
  if (job.reference_dtype && job.mode != JobMode::full) {
    throw ConfigError(
        "--ref-dtype sizes a full fine-tune's reference copy; LoRA's reference is the base "
        "without its adapters");
  }
}

// The token embedding's matrix, vocab x embedding_dim: as count_parameters counts the embedding
// and an untied head.
std::int64_t vocab_matrix(const ModelDescription& model) {
  return checked_mul(model.vocab_size, model.embedding_dim, "the weights");
}

// What ZeRO-3 and FSDP gather, in parameters: the largest wrapped block (a text or vision
// layer), everything outside the blocks (FSDP's root unit: embeddings, final norm, head,
// projectors) and one vocabulary matrix (the head DeepSpeed gathers for the loss).
struct ShardedUnits {
  std::int64_t largest_block = 0;
  std::int64_t outside_blocks = 0;
  std::int64_t vocab_matrix = 0;
};

ShardedUnits sharded_units(const ModelDescription& model, std::int64_t text_and_vision_params) {
  ShardedUnits units;
  std::int64_t in_blocks = 0;
  for (const Stack& stack : model.stacks) {
    if (stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      if (block.shared_weights) continue;
      units.largest_block = std::max(units.largest_block, block_params(block));
      in_blocks = checked_add(in_blocks, block_params(block));
    }
  }
  units.outside_blocks = std::max<std::int64_t>(0, text_and_vision_params - in_blocks);
  units.vocab_matrix = vocab_matrix(model);
  return units;
}

// The parameters of the busiest pipeline stage when the stages split the text layers by count,
// as vLLM's get_pp_indices and Megatron do (pipeline_stage_of): the first stage also holds the
// embeddings, a vision tower and the norms, the last the head, a tied head included (with
// pp > 1 the last stage keeps its own copy of the matrix). `total`: the text model's
// parameters, MTP layers left out; `trained_mtp`: the MTP layers' when they train, on the last.
std::int64_t busiest_stage_params(const ModelDescription& model, std::int64_t total,
                                  std::int64_t trained_mtp, std::int64_t pp) {
  if (pp <= 1) return checked_add(total, trained_mtp, "the weights");
  std::vector<std::int64_t> stages = stage_totals(
      model, pp, [](const Stack& stack) { return !stack.vision && !stack.mtp; },
      // a shared block is held where it is first defined
      [](const Block& block) { return block.shared_weights ? 0 : block_params(block); },
      "the weights");
  std::int64_t in_layers = 0;
  for (const std::int64_t stage : stages) in_layers = checked_add(in_layers, stage, "the weights");
  const std::int64_t head =
      model.has_lm_head ? vocab_matrix(model) + (model.lm_head_bias ? model.vocab_size : 0) : 0;
  const std::int64_t tied_head = model.tie_word_embeddings ? head : 0;
  const std::int64_t outside_layers =
      std::max<std::int64_t>(0, total + tied_head - in_layers - head);
  stages.front() = checked_add(stages.front(), outside_layers, "the weights");
  // trained MTP layers sit after the last layer, beside the head they share (Megatron)
  stages.back() = checked_add(checked_add(stages.back(), head, "the weights"), trained_mtp,
                              "the weights");
  return *std::max_element(stages.begin(), stages.end());
}

// The embedding and head copies some checkpoints store with each MTP layer (DeepSeek-V3,
// GLM-4.5): training shares the model's own (Megatron's MTP block takes the embedding and the
// output layer of the model), so trained MTP layers leave them out.
std::int64_t mtp_vocab_copies(const ModelDescription& model) {
  std::int64_t copies = 0;
  for (const ExtraParameter& extra : model.extra_parameters) {
    if (extra.component == "mtp" &&
        (extra.op == "Embedding" || extra.name.ends_with(".shared_head.head"))) {
      copies = checked_add(copies, extra.params, "the weights");
    }
  }
  return copies;
}

struct JobEstimator::Cache {
  std::optional<std::vector<layout::NamedLinear>> linears;
  std::optional<std::int64_t> largest_layer_linear;  // values of the widest Linear of the layers
  std::map<std::pair<std::int64_t, LoraTargets>, std::int64_t> adapters;
  std::map<std::int64_t, std::vector<LayerActivation>> layers;
  std::map<LoraTargets, DropoutInputs> dropout_inputs;
  std::map<std::pair<QuantFormat, bool>, QuantizedBase> bitsandbytes_bases;
  std::optional<QuantizedBase> checkpoint_base;  // the checkpoint's own quantized format
  std::optional<std::int64_t> checkpoint_mtp_bytes;  // its MTP layers as stored
  // The layout checks depend on the model alone: walk its layers once, and each --tp once.
  std::optional<StageAndExpertLimits> stage_limits;
  std::set<std::int64_t> splitting_tp;
  std::optional<ShardedUnits> sharded_units;
  // per --pp and --train-mtp: the busiest stage's share (by count)
  std::map<std::pair<std::int64_t, bool>, double> stage_share;
};

JobEstimator::JobEstimator(const ModelDescription& model, const ParameterCount& params,
                           const MemoryAssumptions& assumptions)
    : model_(model), params_(params), assumptions_(assumptions),
      cache_(std::make_shared<Cache>()) {}

JobEstimate estimate_job(const ModelDescription& model, const ParameterCount& params,
                         const Job& job, const MemoryAssumptions& a) {
  return JobEstimator(model, params, a).estimate(job);
}

JobEstimate JobEstimator::estimate(const Job& job) const {
  const ModelDescription& model = model_;
  const ParameterCount& params = params_;
  const MemoryAssumptions& a = assumptions_;
  Cache& cache = *cache_;
  validate_job(job);
  if (!cache.splitting_tp.contains(job.tp)) {
    require_tensor_parallel(model, job.tp, "--tp");
    cache.splitting_tp.insert(job.tp);
  }
  if (!cache.stage_limits) cache.stage_limits = stage_and_expert_limits(model);
  require_stage_and_expert_layout(*cache.stage_limits, job);
  if (job.freeze_vision && params.vision == 0) {
    throw ConfigError("--freeze-vision: this model has no vision tower to freeze");
  }
  JobEstimate estimate;
  MemoryBreakdown& b = estimate.breakdown;
  const std::int64_t dp = job.gpus / (job.tp * job.pp);
  if (job.train_mtp && (params.mtp == 0 || model.mtp_depths == 0)) {
    throw ConfigError("--train-mtp: this model has no multi-token-prediction layers to train");
  }
  if (job.train_mtp && (holds_nf4_base(job) || job.base_dtype == Dtype::int8)) {
    throw ConfigError("--train-mtp over a 4-bit or 8-bit base is not modelled (trace quantizes "
                      "the base without its MTP layers)");
  }
  if (job.train_mtp && job.mode == JobMode::serve) {
    throw ConfigError("--train-mtp is for training jobs (serving loads MTP layers with "
                      "--serve-mtp)");
  }
  // Training and serving load the text model; HF implementations skip MTP layers, which train
  // only where asked (Megatron's --mtp-num-layers: Job::train_mtp).
  const std::int64_t mtp_params = job.train_mtp ? params.mtp - mtp_vocab_copies(model) : 0;
  const std::int64_t total = params.total - params.mtp + mtp_params;
  // The busiest pipeline stage's share of the parameters: 1 / pp for stages balanced by
  // memory (Accelerate's device_map), the heaviest stage's for stages split by layer count.
  const bool stages_alike = job.pp == 1 || job.pipeline_by_memory;
  double stage_share = 1.0 / static_cast<double>(job.pp);
  if (!stages_alike) {
    const std::pair<std::int64_t, bool> key{job.pp, job.train_mtp};
    auto found = cache.stage_share.find(key);
    if (found == cache.stage_share.end()) {
      const std::int64_t busiest =
          busiest_stage_params(model, total - mtp_params, mtp_params, job.pp);
      found = cache.stage_share
                  .emplace(key, static_cast<double>(busiest) /
                                    static_cast<double>(std::max<std::int64_t>(total, 1)))
                  .first;
    }
    stage_share = found->second;
  }
  // Built once, by the first term that reads it (nf4 bases, fp32 LoRA bases, Adafactor): the
  // names make it the costliest part of an estimate.
  const auto linears = [&]() -> const std::vector<layout::NamedLinear>& {
    if (!cache.linears) cache.linears = layout::named_linears(model);
    return *cache.linears;
  };
  // A bitsandbytes base with the unquantized rest at `rest_bytes` (bf16, or fp32 after PEFT's
  // prepare_model_for_kbit_training).
  const auto bitsandbytes_base_of = [&](QuantFormat format,
                                        bool double_quant) -> const QuantizedBase& {
    const std::pair key{format, format == QuantFormat::bnb_4bit && double_quant};
    auto found = cache.bitsandbytes_bases.find(key);
    if (found == cache.bitsandbytes_bases.end()) {
      found = cache.bitsandbytes_bases
                  .emplace(key, bitsandbytes_base(model, key.first, key.second))
                  .first;
    }
    return found->second;
  };
  const auto bitsandbytes_bytes = [&](QuantFormat format, bool double_quant,
                                      std::int64_t rest_bytes) {
    const QuantizedBase& base = bitsandbytes_base_of(format, double_quant);
    return checked_add(base.bytes, checked_mul(base.unquantized_params, rest_bytes - 2));
  };
  // A LoRA base held as the checkpoint stores it (GPTQ, AWQ, LLM.int8: lora_keeps_stored_base).
  const auto checkpoint_base_of = [&]() -> const QuantizedBase& {
    if (!model.quantization) {
      throw ConfigError("a LoRA base held in the checkpoint's quantized format needs a "
                        "quantization_config; this checkpoint has none");
    }
    if (!cache.checkpoint_base) cache.checkpoint_base = quantized_base(model, *model.quantization);
    return *cache.checkpoint_base;
  };

  if (job.mode == JobMode::serve) {
    const Dtype dtype = job.base_dtype.value_or(Dtype::bf16);
    std::int64_t weights =
        job.weight_bytes ? *job.weight_bytes
                         : (job.base_nf4 ? bitsandbytes_bytes(QuantFormat::bnb_4bit, job.nf4_double_quant, 2)
                                         : bytes_for(total, dtype));
    if (job.serve_autocast) {
      if (job.base_nf4 || dtype != Dtype::fp32) {
        throw ConfigError("serving under autocast (--autocast) needs fp32 weights (--dtype fp32)");
      }
      weights = checked_add(weights, checked_mul(total, a.autocast_copy_bytes, "the weights"));
    }
    // Each GPU holds its tensor-parallel share of its pipeline stage (the busiest stage).
    b.weights = stages_alike ? ceil_div(weights, job.tp * job.pp)
                             : static_cast<std::int64_t>(std::ceil(
                                   static_cast<double>(weights) * stage_share /
                                   static_cast<double>(job.tp)));
    if (job.ep > job.tp) {
      // Expert parallelism over more GPUs than tensor parallelism spans (vLLM's
      // --enable-expert-parallel with data-parallel replicas): each GPU holds 1/ep of the routed
      // experts and its tensor-parallel share of the rest (attention replicated across replicas).
      const std::int64_t experts =
          job.expert_weight_bytes ? *job.expert_weight_bytes
                                  : bytes_for(component_count(params, "experts"), dtype);
      const double share = stages_alike ? 1.0 / static_cast<double>(job.pp) : stage_share;
      b.weights = static_cast<std::int64_t>(std::ceil(
          share * (static_cast<double>(weights - experts) / static_cast<double>(job.tp) +
                   static_cast<double>(experts) / static_cast<double>(job.ep))));
    }
    const KvSplit split = serving_split(a, job.tp, job.pp);
    b.kv_cache =
        checked_mul(kv_cache_bytes(model, job.context, job.kv_dtype, split), job.concurrency);
    b.ssm_state = checked_mul(
        ssm_state_bytes(model, effective_ssm_dtype(model, a), a.conv_state_bytes, split),
        job.concurrency);
    // The prefill's forward pass over the prompts (a chunk at a time), then the sampling step
    // over each sequence's last-token logits; they never overlap, so the larger is the peak.
    b.activations = serving_transient_bytes(model, job.context, job.concurrency, job.tp, a);
    // The engine's CUDA graphs and tensor-parallel communication buffers; callers add the CUDA
    // context to the overhead.
    b.overhead = checked_add(a.cuda_graph_bytes, serving_comm_bytes(job.tp, a));
    return estimate;
  }

  const PrecisionBytes bytes = precision_bytes(job.precision);
  const bool lora = job.mode == JobMode::lora || job.mode == JobMode::qlora;

  // ---- weights and trainable parameters ----
  std::int64_t trainable = total;
  std::int64_t master = 0;  // mixed-precision fp32 master weights (full fine-tune)
  std::int64_t factored = 0;  // Adafactor's state elements
  if (lora) {
    const auto key = std::make_pair(job.lora_rank, job.lora_targets);
    auto found = cache.adapters.find(key);
    if (found == cache.adapters.end()) {
      found = cache.adapters.emplace(key, lora_parameters(model, job.lora_rank, job.lora_targets)).first;
    }
    trainable = found->second;
    // The frozen base: nf4 or int8 Linears (bitsandbytes) and the rest in bf16 (fp32 after
    // PEFT's prepare_model_for_kbit_training); or every parameter at the base dtype.
    const std::int64_t rest_bytes = job.kbit_upcast ? 4 : 2;
    std::int64_t frozen_gradients = 0;
    const bool nf4_base = holds_nf4_base(job);
    const bool quantized_base = nf4_base || job.base_dtype == Dtype::int8 || job.checkpoint_base;
    if (quantized_base) {
      if (job.checkpoint_base) {
        const QuantizedBase& stored = checkpoint_base_of();
        b.weights =
            checked_add(stored.bytes, checked_mul(stored.unquantized_params, rest_bytes - 2));
        if (job.train_mtp) {
          // the MTP layers as stored, sized only for a job that trains them
          if (!cache.checkpoint_mtp_bytes) {
            cache.checkpoint_mtp_bytes = estimate_storage(model, params).mtp_bytes;
          }
          b.weights = checked_add(b.weights, *cache.checkpoint_mtp_bytes);
        }
      } else {
        b.weights = nf4_base ? bitsandbytes_bytes(QuantFormat::bnb_4bit, job.nf4_double_quant,
                                                  rest_bytes)
                             : bitsandbytes_bytes(QuantFormat::bnb_8bit, false, rest_bytes);
      }
      if (job.kbit_upcast && bytes.activation < 4) {
        // The upcast head is an fp32 Linear under autocast: its compute-dtype cast is not cached
        // (it needs no gradient) but backward keeps it for the input gradient.
        b.weights = checked_add(b.weights, checked_product({model.vocab_size, model.hidden_size,
                                                            a.autocast_copy_bytes},
                                                           "the weights"));
      }
    } else {
      const Dtype base = job.base_dtype.value_or(
          job.precision == Precision::fp32 ? Dtype::fp32 : Dtype::bf16);
      b.weights = bytes_for(total, base);
      // FSDP1 allocates a flat parameter's gradient whole, in the parameters' dtype: with frozen
      // and trainable weights in one, the frozen base gets gradients too.
      if (job.frozen_in_flat_params && job.sharding == Sharding::zero3) frozen_gradients = b.weights;
      if (job.precision == Precision::mixed && base == Dtype::fp32) {
        // Autocast casts each frozen fp32 weight to bf16 for its matmul and does not cache the
        // cast of a tensor that needs no gradient; backward keeps each copy for the input
        // gradient, so a bf16 copy of every Linear weight lives until backward reaches it.
        std::int64_t linear_values = 0;
        for (const layout::NamedLinear& linear : linears()) {
          if (linear.mtp || linear.router) continue;
          linear_values = checked_add(linear_values, checked_product({linear.rows, linear.cols, linear.count}));
        }
        b.weights = checked_add(b.weights, checked_mul(linear_values, 2, "the weights"));
      }
    }
    b.weights = checked_add(b.weights, head_bytes(model, job, rest_bytes));
    if (quantized_base) {
      // A quantized Linear computes through a half-precision copy of its weight (bitsandbytes'
      // dequantize_4bit, torchao's NF4 to(dtype), LLM.int8's backward CB copy), made and freed
      // per matmul: the largest one's is counted.
      if (!cache.largest_layer_linear) {
        std::int64_t largest = 0;
        for (const layout::NamedLinear& linear : linears()) {
          if (linear.mtp || linear.router || linear.kind == layout::LinearKind::head) continue;
          largest = std::max(largest, checked_mul(linear.rows, linear.cols, "the weights"));
        }
        cache.largest_layer_linear = largest;
      }
      b.weights = checked_add(b.weights, checked_mul(*cache.largest_layer_linear, 2, "the weights"));
    }
    // Adapters live in fp32 unless the whole run is half precision.
    const std::int64_t adapter_bytes = bytes.weight;
    b.weights = checked_add(b.weights, checked_mul(trainable, adapter_bytes));
    b.gradients = checked_mul(trainable, bytes.gradient);
    b.gradients = checked_add(b.gradients, frozen_gradients);
    factored = trainable;
  } else {
    // A frozen vision tower is held like the rest of the weights but trains nothing.
    trainable = total - (job.freeze_vision ? std::min(params.vision, total) : 0);
    if (bytes.half_copy > 0) {
      // Mixed precision: the fp32 master copy belongs to the optimizer's state (ZeRO shards it
      // with the moments) and the half-precision copy is what the layers compute with.
      master = checked_mul(trainable, bytes.weight, "the weights");
      b.weights = checked_mul(total, bytes.half_copy, "the weights");
    } else {
      b.weights = checked_mul(total, bytes.weight, "the weights");
    }
    b.gradients = checked_mul(trainable, bytes.gradient, "the gradients");
    if (job.optimizer == Optimizer::adafactor) {
      // Adafactor: rows + columns per matrix, full states for vectors and embeddings.
      std::int64_t matrix_values = 0;
      for (const layout::NamedLinear& linear : linears()) {
        if (linear.mtp) continue;
        factored = checked_add(factored, checked_mul(linear.rows + linear.cols, linear.count));
        matrix_values =
            checked_add(matrix_values, checked_product({linear.rows, linear.cols, linear.count}));
      }
      factored = checked_add(factored, std::max<std::int64_t>(trainable - matrix_values, 0));
    }
    if (job.preference == Preference::dpo && !job.reference_precomputed) {
      // DPO's reference model, frozen: TRL deep-copies the policy (to v0.28) or reloads it in
      // fp32 unless told a dtype (v0.29 on), so it is held as the policy's parameters are (fp32
      // under mixed precision) unless --ref-dtype says otherwise; sharded as the policy's
      // weights are (ZeRO-3 and FSDP prepare it like the policy, ZeRO-1/2 hold it whole).
      const std::int64_t reference_bytes =
          job.reference_dtype ? bytes_for(total, *job.reference_dtype)
                              : checked_mul(total, bytes.weight, "the reference model");
      b.weights = checked_add(b.weights, reference_bytes, "the reference model");
    }
  }
  estimate.trainable_params = trainable;
  b.optimizer = optimizer_bytes(job.optimizer, trainable, bytes.state, factored);
  if (job.optimizer_in_backward) {
    // The step runs per parameter as its gradient is ready: about one layer's gradients live.
    std::int64_t layers = 0;
    for (const Stack& stack : model.stacks) layers += static_cast<std::int64_t>(stack.blocks.size());
    b.gradients = ceil_div(b.gradients, std::max<std::int64_t>(layers, 1));
  }

  // ---- sharding ----
  // Each GPU holds its pipeline stage's share of the parameters (stage_share). Dense
  // parameters are split over tensor ranks and their sharded terms over the data-parallel
  // ranks. Routed experts are split over expert x expert-tensor ranks (Megatron: expert-tensor
  // size = TP when EP divides DP, else what TP x DP leaves over) and their sharded terms over
  // the expert-data-parallel ranks, TP x DP / (EP x ETP). With ep = 1 the expert split equals
  // the dense one (tp ranks, dp shards).
  std::int64_t experts = component_count(params, "experts");
  if (job.train_mtp) {
    // trained MTP layers' routed experts split as the others do
    for (const layout::NamedLinear& linear : linears()) {
      if (linear.mtp && linear.expert) {
        experts = checked_add(experts, checked_product({linear.rows, linear.cols, linear.count}));
      }
    }
  }
  const double expert_share =
      total > 0 ? static_cast<double>(std::min(experts, total)) / static_cast<double>(total) : 0.0;
  const std::int64_t expert_tp =
      std::max<std::int64_t>(1, std::min(job.tp, job.tp * dp / job.ep));
  const std::int64_t expert_split = job.ep * expert_tp;
  const std::int64_t expert_dp = std::max<std::int64_t>(1, job.tp * dp / (job.ep * expert_tp));
  const bool zero = job.sharding == Sharding::zero1 || job.sharding == Sharding::zero2 ||
                    job.sharding == Sharding::zero3;
  const auto split = [&](std::int64_t value, bool sharded) {
    const double v = static_cast<double>(value);
    const double dense = v * stage_share * (1.0 - expert_share) / static_cast<double>(job.tp) /
                         static_cast<double>(sharded ? dp : 1);
    const double expert = v * stage_share * expert_share / static_cast<double>(expert_split) /
                          static_cast<double>(sharded ? expert_dp : 1);
    return static_cast<std::int64_t>(std::ceil(dense + expert));
  };
  b.weights = split(b.weights, job.sharding == Sharding::zero3);
  master = split(master, zero);
  // FSDP's no_sync keeps the accumulating micro-batches' gradients unsharded.
  const bool unsharded_gradients = job.grad_accum > 1 && job.accumulate_unsharded;
  b.gradients = split(b.gradients, (job.sharding == Sharding::zero2 || job.sharding == Sharding::zero3) &&
                                       !unsharded_gradients);
  b.optimizer = split(b.optimizer, zero);
  if (job.sharding == Sharding::zero2 && !lora && !unsharded_gradients) {
    // DeepSpeed's own estimate (estimate_zero2_model_states_mem_needs: 4 psi + 16 psi / N):
    // backward produces the half-precision gradients whole before their buckets are reduced,
    // and the fp32 gradient partition lives beside the master copy; offloaded, neither.
    const std::int64_t half_bytes = bytes.half_copy > 0 ? bytes.half_copy : bytes.gradient;
    const std::int64_t whole = split(checked_mul(trainable, half_bytes, "the gradients"), false);
    const std::int64_t partition =
        bytes.half_copy > 0 ? split(checked_mul(trainable, bytes.gradient, "the gradients"), true)
                            : 0;
    b.gradients = job.cpu_offload ? 0 : checked_add(whole, partition);
  }
  if (job.sharding == Sharding::zero3) {
    // Parameters sharded; the block being computed and the next, prefetched, are gathered
    // whole, in the compute dtype (bf16 under LoRA and mixed precision) or, for a quantized
    // base, as the packed values and scales it is stored in (FSDP-QLoRA's quant_storage,
    // torchao's NF4 all-gather).
    if (!cache.sharded_units) cache.sharded_units = sharded_units(model, total);
    const ShardedUnits& units = *cache.sharded_units;
    const std::int64_t gathered_bytes = lora || bytes.half_copy > 0 ? 2 : bytes.weight;
    std::int64_t block_bytes = checked_mul(units.largest_block, gathered_bytes, "the weights");
    if (lora && (holds_nf4_base(job) || job.base_dtype == Dtype::int8 || job.checkpoint_base)) {
      const QuantizedBase& base =
          job.checkpoint_base ? checkpoint_base_of()
          : holds_nf4_base(job)
              ? bitsandbytes_base_of(QuantFormat::bnb_4bit, job.nf4_double_quant)
              : bitsandbytes_base_of(QuantFormat::bnb_8bit, false);
      block_bytes = static_cast<std::int64_t>(std::ceil(
          static_cast<double>(units.largest_block) * base.bytes_per_quantized_value()));
    }
    // PyTorch's FSDP (FSDP1 and FSDP2) does not reshard the root unit after forward: what lies
    // outside the wrapped blocks stays gathered through backward. DeepSpeed (and FSDP with the
    // embedding and head wrapped as units of their own) gathers the head for the loss beside
    // the last block instead.
    const std::int64_t gathered =
        job.root_unit_gathered
            ? checked_add(checked_mul(units.outside_blocks, gathered_bytes, "the weights"),
                          checked_mul(block_bytes, 2, "the weights"))
            : checked_add(block_bytes,
                          std::max(block_bytes, checked_mul(units.vocab_matrix, gathered_bytes,
                                                            "the weights")));
    // With parameter offload (FSDP CPUOffload(offload_params=True), DeepSpeed offload_param)
    // the shards live on the host: only the gathered layers are on the GPU.
    b.weights = job.cpu_offload ? gathered : checked_add(b.weights, gathered);
  }
  if (job.cpu_offload) {
    b.optimizer = 0;
    master = 0;  // the optimizer's fp32 copy lives beside its states on the CPU
    // (inside no_sync the gradients stay on the GPU until the last micro-batch: FSDP's docs)
    if (job.sharding == Sharding::zero3 && !unsharded_gradients) b.gradients = ceil_div(b.gradients, 8);
  }
  b.weights = checked_add(b.weights, master);

  // ---- activations ----
  // Sequences kept for backward: preference pairs hold chosen and rejected together.
  const std::int64_t sequences = checked_mul(job.batch, sequences_per_item(job), "the activations");
  const std::int64_t tokens = checked_mul(job.seq_len, sequences, "the activations");
  // Bytes per saved value beyond the activation dtype's. PEFT's kbit preparation upcasts the
  // embeddings, so the residual stream (and what is computed from it outside autocast's
  // matmuls) is fp32. An eager RMSNorm keeps an fp32 copy of its input instead of the input
  // (nothing more where the stream is fp32 already), and where its weight trains the
  // normalised input as well.
  const std::int64_t to_fp32 = std::max<std::int64_t>(0, 4 - bytes.activation);
  const std::int64_t residual_extra = job.kbit_upcast ? to_fp32 : 0;
  const bool eager_norm = job.eager_rms_norm && !job.compiled;
  const std::int64_t norm_upcast_extra = (eager_norm && residual_extra == 0 ? to_fp32 : 0) +
                                         (eager_norm && !lora ? bytes.activation : 0);
  std::int64_t saved_bytes = 0;        // per token, all layers
  std::int64_t widest_layer_bytes = 0;  // per token, the layer recomputed under checkpointing
  std::int64_t inputs = 0;
  std::int64_t chunk_states = 0;
  std::int64_t scores = 0;       // eager attention, all layers
  std::int64_t widest_score_values = 0;  // the widest attention layer's scores
  std::int64_t masks = 0;        // hidden-dropout masks per token, all layers (bytes)
  std::int64_t widest_masks = 0;
  const std::int64_t act = bytes.activation;
  // Eager attention saves the fp32 softmax output; the P.V matmul saves its input: the
  // dropped-out probabilities (+ their mask) under attention dropout, else the softmax cast to
  // the activation dtype (the softmax output itself in fp32).
  std::int64_t score_bytes = a.softmax_bytes;
  if (model.attention_dropout > 0) {
    score_bytes += a.dropout_mask_bytes + act;
  } else if (act != a.softmax_bytes) {
    score_bytes += act;
  }
  auto layers = cache.layers.find(job.seq_len);
  if (layers == cache.layers.end()) {
    layers = cache.layers.emplace(job.seq_len, layer_activations(model, job.seq_len)).first;
  }
  for (const LayerActivation& layer : layers->second) {
    // MTP layers run only where they are trained (their weights count only then too).
    if (layer.mtp && !job.train_mtp) continue;
    // QLoRA: bitsandbytes' MatMul4Bit keeps its input A for backward (ctx.tensors = (A, B)),
    // a copy besides the LoRA branch's dropped-out input that the other terms count.
    const std::int64_t layer_values =
        layer.values_per_token + (job.attention == AttentionImpl::flash ? 0 : layer.repeated_kv_values) +
        (holds_nf4_base(job) && job.bnb_matmul_keeps_inputs
             ? layer.linear_input_values
             : 0) -
        (job.compiled ? layer.pointwise_values : 0);
    const std::int64_t layer_bytes =
        checked_add(checked_add(checked_mul(layer_values, act),
                                checked_mul(layer.residual_dtype_values, residual_extra)),
                    checked_mul(layer.rms_norm_input_values, norm_upcast_extra));
    saved_bytes = checked_add(saved_bytes, layer_bytes);
    widest_layer_bytes = std::max(widest_layer_bytes, layer_bytes);
    inputs = checked_add(inputs, layer.input_width);
    chunk_states = checked_add(chunk_states, layer.chunk_state_bytes);
    if (model.hidden_dropout > 0) {
      // one mask on each residual branch (the mixer's and the FFN's output)
      const std::int64_t layer_masks = 2 * layer.input_width * a.dropout_mask_bytes;
      masks = checked_add(masks, layer_masks);
      widest_masks = std::max(widest_masks, layer_masks);
    }
    if (job.attention == AttentionImpl::eager && layer.attention_heads > 0) {
      const std::int64_t score_values = checked_product(
          {layer.attention_heads, job.seq_len, layer.attended_tokens, sequences},
          "the attention scores");
      scores = checked_add(scores, checked_mul(score_values, score_bytes, "the attention scores"));
      widest_score_values = std::max(widest_score_values, score_values);
    }
  }
  const std::int64_t widest_scores =
      checked_mul(widest_score_values, score_bytes, "the attention scores");
  // The final norm's input (residual dtype) and the head's input, per token; each trained MTP
  // depth has its own, and its input projection's (the two normed halves, 2h).
  const std::int64_t heads = 1 + (job.train_mtp ? model.mtp_depths : 0);
  saved_bytes = checked_add(
      saved_bytes, checked_mul(checked_mul(model.hidden_size, 2 * act + residual_extra), heads));
  if (job.train_mtp) {
    saved_bytes = checked_add(
        saved_bytes, checked_product({model.mtp_depths, 2 * model.hidden_size, act}));
  }
  inputs = checked_add(inputs, 2 * model.hidden_size);
  // The final RMSNorm's fp32 copy (and normalised input) is saved outside any checkpoint.
  std::int64_t final_rms_norm_values = 0;
  for (const Stack& stack : model.stacks) {
    if (!stack.vision && !stack.mtp && stack.final_norm &&
        stack.final_norm->kind == NormKind::rms_norm) {
      final_rms_norm_values += stack.final_norm->dim;
    }
  }
  const std::int64_t final_norm_extra = checked_mul(final_rms_norm_values, norm_upcast_extra);
  saved_bytes = checked_add(saved_bytes, final_norm_extra);
  // Checkpointed layer inputs are the residual stream; the head's input is not.
  const std::int64_t input_bytes =
      checked_add(checked_add(checked_mul(inputs, act),
                              checked_mul(inputs - model.hidden_size, residual_extra)),
                  final_norm_extra);
  // The embedding output's dropout mask, when the residual stream has dropout.
  const std::int64_t embedding_mask = model.hidden_dropout > 0 ? model.hidden_size * a.dropout_mask_bytes : 0;
  switch (job.checkpointing) {
    case Checkpointing::none:
    case Checkpointing::selective:
      b.activations = checked_add(
          checked_add(checked_mul(saved_bytes, tokens, "the activations"),
                      checked_mul(masks + embedding_mask, tokens)),
          checked_add(checked_mul(chunk_states, sequences),
                      job.checkpointing == Checkpointing::none ? scores : 0));
      break;
    case Checkpointing::full:
      // every layer's input, plus one layer recomputed in full during backward
      b.activations = checked_add(
          checked_add(checked_mul(checked_add(input_bytes, widest_layer_bytes), tokens,
                                  "the activations"),
                      checked_mul(widest_masks + embedding_mask, tokens)),
          widest_scores);
      break;
    case Checkpointing::offload:
      b.activations = checked_add(
          checked_add(checked_mul(checked_add(widest_layer_bytes,
                                              checked_mul(model.hidden_size, act + residual_extra)),
                                  tokens, "the activations"),
                      checked_mul(widest_masks + embedding_mask, tokens)),
          widest_scores);
      break;
  }
  if (lora && job.lora_dropout > 0) {
    // LoRA dropout: each adapted Linear's dropped-out input copy + its 1-byte mask; one layer's
    // under checkpointing (the recomputed one).
    auto found = cache.dropout_inputs.find(job.lora_targets);
    if (found == cache.dropout_inputs.end()) {
      found = cache.dropout_inputs
                  .emplace(job.lora_targets, lora_dropout_inputs(model, linears(), job.lora_targets))
                  .first;
    }
    const std::int64_t values = job.checkpointing == Checkpointing::none ||
                                        job.checkpointing == Checkpointing::selective
                                    ? found->second.all_layers
                                    : found->second.widest_layer;
    b.activations = checked_add(
        b.activations, checked_product({values, tokens, act + a.dropout_mask_bytes},
                                       "the LoRA dropout"));
  }
  b.activations = ceil_div(b.activations, job.tp);
  // Eager attention's backward through the widest layer's softmax holds the fp32 output it
  // saved, the incoming gradient and the gradient it makes: 3 x softmax_bytes per score, above
  // what that layer kept (selective checkpointing kept none and recomputes them then).
  const std::int64_t kept_score_bytes =
      job.checkpointing == Checkpointing::selective ? 0 : score_bytes;
  const std::int64_t eager_backward = ceil_div(
      checked_mul(widest_score_values,
                  std::max<std::int64_t>(0, 3 * a.softmax_bytes - kept_score_bytes),
                  "the attention scores"),
      job.tp);
  // Logits and the loss over the vocabulary, for every token of the micro-batch.
  // A compiled chunked loss (torchtune: torch.compile of CEWithChunkedOutputLoss) upcasts and
  // log-softmaxes each chunk inside one fused kernel that keeps only the bf16 chunks and a
  // per-token logsumexp, as Unsloth's kernel does.
  const std::int64_t logits_bytes = job.loss == LossImpl::chunked
                                        ? (job.compiled ? a.logits_bytes_fused : a.logits_bytes_chunked)
                                     : job.loss == LossImpl::fused  ? a.logits_bytes_fused
                                     : job.loss == LossImpl::cut    ? a.logits_bytes_cut
                                     : job.loss == LossImpl::vocab_parallel
                                         ? a.logits_bytes_vocab_parallel
                                         : a.logits_bytes_per_value;
  // A trained MTP depth computes its own logits and loss through the shared head; they are
  // alive together until backward (Megatron's MTP loss).
  b.logits = ceil_div(
      checked_product({model.vocab_size, tokens, logits_bytes, heads}, "the logits"), job.tp);
  if (job.preference == Preference::dpo && !job.reference_precomputed) {
    // DPO's reference forward runs after the policy's, under no_grad, while everything the
    // policy saved for backward is alive: its logits over both sequences, in the activation
    // dtype, join the policy's until its log-probabilities are taken.
    b.logits = checked_add(
        b.logits,
        ceil_div(checked_product({model.vocab_size, tokens, act}, "the logits"), job.tp));
  }
  // A layer's backward holds hidden-sized gradients of the residual stream (its output's, the
  // one accumulated between its branches, the branch's being added), in the residual dtype.
  const std::int64_t residual_gradients =
      ceil_div(checked_product({a.backward_gradient_vectors, model.hidden_size, tokens,
                                act + residual_extra},
                               "the gradients in backward"),
               job.tp);
  // The loss's backward ran before the layers' and freed the logits: the peak is the larger of
  // the two, counted with the activations.
  b.activations = checked_add(
      b.activations, std::max<std::int64_t>(0, eager_backward + residual_gradients - b.logits));
  // PyTorch's foreach AdamW (the default on CUDA) builds exp_avg_sq_sqrt, one state-sized
  // temporary, during the step, when activations and logits are already freed: the step peaks
  // above the forward pass when that temporary outweighs them. The excess counts with the
  // optimizer.
  if (job.optimizer == Optimizer::adamw && job.foreach_step && !job.optimizer_in_backward &&
      !job.cpu_offload) {
    const std::int64_t step_temporary = b.optimizer / 2;
    b.optimizer = checked_add(
        b.optimizer, std::max<std::int64_t>(0, step_temporary - b.activations - b.logits));
  }
  // torchao before 0.2 quantizes a weight to nf4 in one pass (torchao PR #196 chunked it, "a
  // large memory spike due to intermediates"): beside the stored weights, the weight's bf16
  // copy (counted in the weights as the largest Linear's dequantized copy), its scaled blocks
  // (2 bytes a value), and each value's differences from the 16 nf4 levels and their absolute
  // values (2 x 16 x 2 bytes): 66 bytes a value over the weights, at model setup, before any
  // gradient, optimizer state or activation exists. The excess over those counts as overhead
  // (a training job's overhead is empty here: the caller adds the CUDA context, there at both).
  if (job.nf4_quantized_in_one_pass && holds_nf4_base(job) && job.mode != JobMode::serve &&
      cache.largest_layer_linear) {
    constexpr std::int64_t k_one_pass_bytes_per_value = 2 + 2 * 16 * 2;
    const std::int64_t setup = ceil_div(
        checked_mul(*cache.largest_layer_linear, k_one_pass_bytes_per_value, "the quantization"),
        job.tp);
    const std::int64_t step = checked_add(
        checked_add(b.gradients, b.optimizer), checked_add(b.activations, b.logits));
    b.overhead = checked_add(b.overhead, std::max<std::int64_t>(0, setup - step));
  }
  return estimate;
}

const char* data_parallel_label(const Job& job) {
  return job.root_unit_gathered ? "FSDP" : "ZeRO-3";
}

std::string describe_training(const Job& job) {
  std::string label;
  switch (job.optimizer) {
    case Optimizer::adamw: label = "AdamW"; break;
    case Optimizer::adamw_8bit: label = "AdamW 8-bit"; break;
    case Optimizer::paged_adamw: label = "paged AdamW"; break;
    case Optimizer::paged_adamw_8bit: label = "paged AdamW 8-bit"; break;
    case Optimizer::adafactor: label = "Adafactor"; break;
    case Optimizer::sgd: label = "SGD"; break;
    case Optimizer::sgd_momentum: label = "SGD momentum"; break;
    case Optimizer::lion: label = "Lion"; break;
  }
  switch (job.precision) {
    case Precision::fp32: label += ", fp32"; break;
    case Precision::mixed: label += ", bf16 mixed"; break;
    case Precision::bf16_pure: label += ", bf16"; break;
    case Precision::fp16_pure: label += ", fp16"; break;
  }
  switch (job.checkpointing) {
    case Checkpointing::none: break;
    case Checkpointing::full: label += ", checkpointing full"; break;
    case Checkpointing::selective: label += ", checkpointing selective"; break;
    case Checkpointing::offload: label += ", checkpoints offloaded"; break;
  }
  if (job.attention == AttentionImpl::eager) label += ", eager attention";
  switch (job.loss) {
    case LossImpl::full: break;
    case LossImpl::chunked: label += ", chunked loss"; break;
    case LossImpl::fused: label += ", fused loss"; break;
    case LossImpl::cut: label += ", cut loss"; break;
    case LossImpl::vocab_parallel: label += ", vocab-parallel loss"; break;
  }
  if (job.compiled) label += ", compiled";
  return label;
}

std::string describe_preference(const Job& job) {
  switch (job.preference) {
    case Preference::none: return "";
    case Preference::paired: return "preference pairs, no reference";
    case Preference::dpo:
      if (job.reference_precomputed) return "DPO pairs, reference precomputed";
      if (job.mode != JobMode::full) return "DPO pairs, reference without adapters";
      return fmt::format(
          "DPO pairs, reference copy {}",
          job.reference_dtype ? dtype_info(*job.reference_dtype).name
          : job.precision == Precision::fp32 || job.precision == Precision::mixed ? "fp32"
          : job.precision == Precision::fp16_pure                                 ? "fp16"
                                                                                  : "bf16");
  }
  return "";
}

std::string describe_job(const Job& job, OneGpu one_gpu) {
  std::vector<std::string> parts;
  const auto add = [&](std::string part) { parts.push_back(std::move(part)); };
  if (job.mode == JobMode::serve) {
    add(fmt::format("serve {} tokens x {}", job.context, job.concurrency));
  } else {
    std::string mode = job.mode == JobMode::full ? "full" : job.mode == JobMode::lora ? "lora" : "qlora";
    if (job.mode != JobMode::full) {
      mode += fmt::format(" r{} {}", job.lora_rank,
                          job.lora_targets == LoraTargets::attention_qv ? "q,v"
                          : job.lora_targets == LoraTargets::attention  ? "attention"
                                                                        : "all linear");
    }
    add(mode);
    if (job.lora_dropout > 0) add(fmt::format("dropout {:g}", job.lora_dropout));
    add(fmt::format("{} x {} tokens", job.seq_len, job.batch));
    if (job.preference != Preference::none) add(describe_preference(job));
  }
  if (job.checkpoint_base && job.mode != JobMode::serve) {
    add("the checkpoint's quantized base");
  } else if (holds_nf4_base(job)) {
    add(job.nf4_double_quant ? "nf4 base" : "nf4 base without double quant");
  } else if (job.base_dtype == Dtype::int8) {
    add("LLM.int8 base");
  }
  if (job.nf4_quantized_in_one_pass && holds_nf4_base(job)) add("quantized in one pass");
  if (job.kbit_upcast) add("fp32 rest (kbit preparation)");
  if (job.mode == JobMode::serve && job.serve_autocast) add("fp32 weights under autocast");
  if (!job.bnb_matmul_keeps_inputs && holds_nf4_base(job)) {
    add("fused 4-bit kernels");
  }
  if (job.mode != JobMode::serve) add(describe_training(job));
  if (!job.eager_rms_norm && job.mode != JobMode::serve) add("fused norms");
  if (!job.foreach_step && job.optimizer == Optimizer::adamw && !job.optimizer_in_backward &&
      !job.cpu_offload) {
    add("no foreach step");
  }
  // The split: on one GPU where a strategy is asked for (ZeRO-3 offload on one card) or the
  // caller names it.
  if (job.gpus > 1 || job.sharding != Sharding::single || one_gpu == OneGpu::named) {
    const char* strategy = "";  // tensor / pipeline parallel only: the sizes below say it
    switch (job.sharding) {
      case Sharding::single: break;
      case Sharding::ddp: strategy = "ddp"; break;
      case Sharding::zero1: strategy = "zero1"; break;
      case Sharding::zero2: strategy = "zero2"; break;
      case Sharding::zero3: strategy = job.root_unit_gathered ? "fsdp" : "zero3"; break;
    }
    std::string split = fmt::format("{} GPU{}", job.gpus, job.gpus == 1 ? "" : "s");
    // A serve job shards nothing across replicas: it names them instead of a training strategy.
    const std::int64_t replicas = job.gpus / std::max<std::int64_t>(1, job.tp * job.pp);
    if (job.mode == JobMode::serve) {
      strategy = "";
      if (replicas > 1) split += fmt::format(" {} replicas", replicas);
    }
    if (*strategy != '\0') split += fmt::format(" {}", strategy);
    if (job.tp > 1) split += fmt::format(" tp{}", job.tp);
    if (job.pp > 1) {
      split += fmt::format(" pp{}{}", job.pp, job.pipeline_by_memory ? " by memory" : "");
    }
    if (job.ep > 1) split += fmt::format(" ep{}", job.ep);
    add(split);
  }
  if (job.cpu_offload) add("cpu offload");
  if (job.optimizer_in_backward) add("step in backward");
  if (job.grad_accum > 1) {
    add(fmt::format("accum {}{}", job.grad_accum, job.accumulate_unsharded ? " no_sync" : ""));
  }
  if (job.frozen_in_flat_params) add("frozen grads");
  if (job.freeze_vision && job.mode == JobMode::full) add("vision frozen");
  if (job.train_mtp) add("MTP trained");
  return fmt::format("{}", fmt::join(parts, ", "));
}

ModeMemory mode_memory_from_job(const ModelDescription& model, const ParameterCount& params,
                                Job job, const MemoryAssumptions& a) {
  job.gpus = job.tp = job.pp = job.ep = 1;
  job.sharding = Sharding::single;
  job.cpu_offload = false;
  job.seq_len = a.seq_len;
  job.lora_rank = a.lora_rank;
  const auto peak_at = [&](std::int64_t batch) {
    job.batch = batch;
    return estimate_job(model, params, job, a).breakdown;
  };
  const MemoryBreakdown one = peak_at(1);
  const MemoryBreakdown two = peak_at(2);
  ModeMemory mode;
  mode.mode = job.mode == JobMode::full ? "full_finetune" : "lora";
  mode.batch = a.batch;
  mode.breakdown = peak_at(a.batch);
  mode.breakdown.activations = checked_add(mode.breakdown.activations, mode.breakdown.logits);
  mode.breakdown.logits = 0;
  mode.breakdown.overhead = a.cuda_context_bytes;
  mode.per_sequence_bytes = two.total() - one.total();
  mode.shardable_bytes =
      checked_add(checked_add(one.weights, one.gradients), one.optimizer, "the weights");
  mode.fixed_bytes = checked_add(one.total() - mode.per_sequence_bytes, a.cuda_context_bytes);
  mode.formula = job.mode == JobMode::full
                     ? "weights + gradients + optimizer states + (activations + logits) x batch + "
                       "CUDA context, for the job flags given (docs/memory.md, Jobs)"
                     : "frozen base + adapters with their gradients and optimizer states + "
                       "(activations + logits) x batch + CUDA context, for the job flags given "
                       "(docs/memory.md, Jobs)";
  return mode;
}

std::optional<JobMode> parse_job_mode(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "full" || t == "full_ft" || t == "full_finetune") return JobMode::full;
  if (t == "lora") return JobMode::lora;
  if (t == "qlora") return JobMode::qlora;
  if (t == "serve") return JobMode::serve;
  return std::nullopt;
}

std::optional<Precision> parse_precision(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "fp32") return Precision::fp32;
  if (t == "mixed" || t == "mixed_fp32master" || t == "bf16_mixed" || t == "fp16_mixed" ||
      t == "amp") {
    return Precision::mixed;
  }
  if (t == "bf16" || t == "bf16_pure" || t == "bf16-true") return Precision::bf16_pure;
  if (t == "fp16" || t == "fp16_pure" || t == "fp16-true") return Precision::fp16_pure;
  return std::nullopt;
}

std::optional<Optimizer> parse_optimizer(std::string_view text) {
  std::string t = to_lower(text);
  if (t.ends_with("(assumed)")) t = t.substr(0, t.size() - 9);
  if (t == "adamw" || t == "adam") return Optimizer::adamw;
  if (t == "adamw_8bit" || t == "adam8bit" || t == "adamw8bit" || t == "adam_8bit") {
    return Optimizer::adamw_8bit;
  }
  if (t == "paged_adamw_8bit" || t == "paged_adam8bit") return Optimizer::paged_adamw_8bit;
  if (t == "paged_adamw" || t == "paged_adamw_32bit") return Optimizer::paged_adamw;
  if (t == "adafactor") return Optimizer::adafactor;
  if (t == "sgd") return Optimizer::sgd;
  if (t == "sgd_momentum" || t == "momentum") return Optimizer::sgd_momentum;
  if (t == "lion") return Optimizer::lion;
  return std::nullopt;
}

std::optional<Checkpointing> parse_checkpointing(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "none" || t == "no" || t == "off") return Checkpointing::none;
  if (t == "full" || t == "yes" || t == "on") return Checkpointing::full;
  if (t == "selective") return Checkpointing::selective;
  if (t == "offload") return Checkpointing::offload;
  return std::nullopt;
}

std::optional<AttentionImpl> parse_attention(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "sdpa") return AttentionImpl::sdpa;
  if (t == "flash" || t == "flash_attention_2" || t == "fa2" || t == "fa3") return AttentionImpl::flash;
  if (t == "eager") return AttentionImpl::eager;
  return std::nullopt;
}

std::optional<LossImpl> parse_loss(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "full" || t == "hf" || t == "default") return LossImpl::full;
  if (t == "chunked") return LossImpl::chunked;
  if (t == "fused" || t == "unsloth") return LossImpl::fused;
  if (t == "cut" || t == "cce" || t == "liger") return LossImpl::cut;
  if (t == "vocab-parallel" || t == "vocab_parallel" || t == "megatron") return LossImpl::vocab_parallel;
  return std::nullopt;
}

std::optional<Preference> parse_preference(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "none" || t == "sft") return Preference::none;
  if (t == "dpo" || t == "ipo") return Preference::dpo;
  if (t == "orpo" || t == "simpo" || t == "cpo") return Preference::paired;
  return std::nullopt;
}

std::int64_t sequences_per_item(const Job& job) {
  return job.preference == Preference::none ? 1 : 2;
}

std::optional<Sharding> parse_sharding(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "single" || t == "none" || t == "tp" || t == "pp") return Sharding::single;
  if (t == "ddp") return Sharding::ddp;
  if (t == "zero1" || t == "megatron") return Sharding::zero1;
  if (t == "zero2") return Sharding::zero2;
  if (t == "zero3" || t == "fsdp") return Sharding::zero3;
  return std::nullopt;
}

}  // namespace trace
