// Per-GPU peak memory of one job. Terms and sources: docs/memory.md, "Jobs". The peak of a
// training step is reached at the end of the forward pass of the step that follows the first
// optimizer step: weights + gradients (kept between steps by most trainers; freed with
// zero_grad(set_to_none) they reappear during backward while activations shrink, so the sum is
// an upper bound that both orders stay under) + optimizer states + saved activations + logits.
// This file: the job checked against the model, the weights, gradients and optimizer states
// and their sharding, and serving; job_activations.cpp: what a step saves and computes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "job_pass.hpp"
#include "trace/checked_math.hpp"
#include "trace/error.hpp"
#include "trace/estimate/storage.hpp"

namespace trace {

bool holds_nf4_base(const Job& job) {
  return !job.checkpoint_base && (job.mode == JobMode::qlora || job.base_nf4);
}

PrecisionBytes precision_bytes(Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return {4, 0, 4, 4, 4};
    case Precision::mixed:
      return {4, 2, 4, 4, 2};
    case Precision::bf16_pure:
    case Precision::fp16_pure:
      return {2, 0, 2, 2, 2};
  }
  return {4, 2, 4, 4, 2};
}

namespace {

// Optimizer state bytes for `params` trainable parameters (Adafactor: factored second moments
// over the given matrices' rows + columns, the rest full).
std::int64_t optimizer_bytes(Optimizer optimizer, std::int64_t params, std::int64_t state_bytes,
                             std::int64_t factored_elements) {
  switch (optimizer) {
    case Optimizer::adamw:
      return checked_product({params, 2, state_bytes}, "the optimizer");
    case Optimizer::paged_adamw:
    case Optimizer::paged_adamw_8bit:
      return 0;  // unified memory: pages out instead of failing
    case Optimizer::adamw_8bit:
      // two int8 states + one fp32 absmax per 2,048-value block each (bitsandbytes)
      return checked_add(checked_mul(params, 2), ceil_div(params, 2048) * 2 * 4);
    case Optimizer::adafactor:
      return checked_mul(factored_elements, 4, "the optimizer");
    case Optimizer::sgd:
      return 0;
    case Optimizer::sgd_momentum:
    case Optimizer::lion:
      return checked_mul(params, state_bytes, "the optimizer");
  }
  return 0;
}

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

// The token embedding's matrix, vocab x embedding_dim: as count_parameters counts the embedding
// and an untied head.
std::int64_t vocab_matrix(const ModelDescription& model) {
  return checked_mul(model.vocab_size, model.embedding_dim, "the weights");
}

ShardedUnits sharded_units(const ModelDescription& model, std::int64_t text_and_vision_params) {
  ShardedUnits units;
  std::int64_t in_blocks = 0;
  for (const Stack& stack : model.stacks) {
    if (stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      if (block.shared_weights) continue;
      units.largest_block = std::max(units.largest_block, block_params(block));
      in_blocks = checked_add(in_blocks, block_params(block));
      if (!stack.vision) units.text_blocks.push_back(block_params(block));
    }
  }
  units.outside_blocks = std::max<std::int64_t>(0, text_and_vision_params - in_blocks);
  units.vocab_matrix = vocab_matrix(model);
  return units;
}

// What DeepSpeed's ZeRO-3 still holds gathered when forward turns into backward. Its
// coordinator (partitioned_param_coordinator.py, __params_to_release) repartitions a module's
// parameters after it runs unless the step's trace, walked from there, reaches them again
// before stage3_max_reuse_distance values. After layer i the walk crosses the later layers and
// the head (H) in forward, the head again and the later layers in backward, twice with
// checkpointing (recomputed, then differentiated): 2H + (1 + c) x later layers. The layers
// within reach from the last one back stay gathered; the embedding too when the whole walk is.
struct ReusedAtTurn {
  std::int64_t layers = 0;
  bool embedding = false;
};

ReusedAtTurn reused_at_turn(const ShardedUnits& units, const Job& job) {
  const std::int64_t passes = job.checkpointing == Checkpointing::none ? 2 : 3;
  const std::int64_t reach = job.zero_max_reuse_distance;
  ReusedAtTurn reused;
  std::int64_t later = 0;  // the layers after this one, times the passes that cross them
  for (auto it = units.text_blocks.rbegin(); it != units.text_blocks.rend(); ++it) {
    const std::int64_t walk =
        checked_add(checked_mul(units.vocab_matrix, 2, "the weights"), later, "the weights");
    if (walk >= reach) return reused;
    reused.layers = checked_add(reused.layers, *it, "the weights");
    later = checked_add(later, checked_mul(*it, passes, "the weights"), "the weights");
  }
  reused.embedding =
      checked_add(checked_mul(units.vocab_matrix, 2, "the weights"), later, "the weights") < reach;
  return reused;
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
  stages.back() =
      checked_add(checked_add(stages.back(), head, "the weights"), trained_mtp, "the weights");
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

}  // namespace

JobEstimator::JobEstimator(const ModelDescription& model, const ParameterCount& params,
                           const MemoryAssumptions& assumptions)
    : model_(model),
      params_(params),
      assumptions_(assumptions),
      cache_(std::make_shared<Cache>()) {}

JobEstimate estimate_job(const ModelDescription& model, const ParameterCount& params,
                         const Job& job, const MemoryAssumptions& a) {
  return JobEstimator(model, params, a).estimate(job);
}

JobEstimate JobEstimator::estimate(const Job& job) const {
  JobPass pass(model_, params_, assumptions_, *cache_, job);
  try {
    if (job.mode == JobMode::serve) {
      pass.serving_terms();
    } else {
      pass.training_state();
      pass.shard_training_state();
      pass.activations_and_logits();
      pass.online_rl_generation();
    }
  } catch (const SizeOverflowError& error) {
    // Each flag is in range on its own; their product is what overflowed. Say which to lower.
    throw SizeOverflowError(
        job.mode == JobMode::serve
            ? fmt::format("{} (this job serves {} request(s) of {} tokens; lower --concurrency or "
                          "--context)",
                          error.what(), job.concurrency, job.context)
            : fmt::format("{} (this job trains {} sequence(s) of {} tokens a micro-batch per GPU; "
                          "lower --batch or --seq-len)",
                          error.what(), job.batch, job.seq_len));
  }
  return pass.estimate;
}

JobPass::JobPass(const ModelDescription& model_in, const ParameterCount& params_in,
                 const MemoryAssumptions& assumptions, JobEstimator::Cache& cache_in,
                 const Job& job_in)
    : model(model_in), params(params_in), a(assumptions), cache(cache_in), job(job_in) {
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
  dp = job.gpus / (job.tp * job.pp);
  if (job.train_mtp && (params.mtp == 0 || model.mtp_depths == 0)) {
    throw ConfigError("--train-mtp: this model has no multi-token-prediction layers to train");
  }
  if (job.train_mtp && (holds_nf4_base(job) || job.base_dtype == Dtype::int8)) {
    throw ConfigError(
        "--train-mtp over a 4-bit or 8-bit base is not modelled (trace quantizes "
        "the base without its MTP layers)");
  }
  if (job.train_mtp && job.mode == JobMode::serve) {
    throw ConfigError(
        "--train-mtp is for training jobs (serving loads MTP layers with "
        "--serve-mtp)");
  }
  // Training and serving load the text model; HF implementations skip MTP layers, which train
  // only where asked (Megatron's --mtp-num-layers: Job::train_mtp).
  mtp_params = job.train_mtp ? params.mtp - mtp_vocab_copies(model) : 0;
  total = params.total - params.mtp + mtp_params;
  // The busiest pipeline stage's share of the parameters: 1 / pp for stages balanced by
  // memory (Accelerate's device_map), the heaviest stage's for stages split by layer count.
  stages_alike = job.pp == 1 || job.pipeline_by_memory;
  stage_share = 1.0 / static_cast<double>(job.pp);
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
}

// Built once, by the first term that reads it (nf4 bases, fp32 LoRA bases, Adafactor): the
// names make it the costliest part of an estimate.
const std::vector<layout::NamedLinear>& JobPass::linears() {
  if (!cache.linears) cache.linears = layout::named_linears(model);
  return *cache.linears;
}

const QuantizedBase& JobPass::bitsandbytes_base_of(QuantFormat format, bool double_quant) {
  const std::pair key{format, format == QuantFormat::bnb_4bit && double_quant};
  auto found = cache.bitsandbytes_bases.find(key);
  if (found == cache.bitsandbytes_bases.end()) {
    found = cache.bitsandbytes_bases.emplace(key, bitsandbytes_base(model, key.first, key.second))
                .first;
  }
  return found->second;
}

std::int64_t JobPass::bitsandbytes_bytes(QuantFormat format, bool double_quant,
                                         std::int64_t rest_bytes) {
  const QuantizedBase& base = bitsandbytes_base_of(format, double_quant);
  return checked_add(base.bytes, checked_mul(base.unquantized_params, rest_bytes - 2));
}

const QuantizedBase& JobPass::checkpoint_base_of() {
  if (!model.quantization) {
    throw ConfigError(
        "a LoRA base held in the checkpoint's quantized format needs a "
        "quantization_config; this checkpoint has none");
  }
  if (!cache.checkpoint_base) cache.checkpoint_base = quantized_base(model, *model.quantization);
  return *cache.checkpoint_base;
}

std::int64_t JobPass::largest_layer_linear() {
  if (!cache.largest_layer_linear) {
    std::int64_t largest = 0;
    for (const layout::NamedLinear& linear : linears()) {
      if (linear.mtp || linear.router || linear.kind == layout::LinearKind::head) continue;
      largest = std::max(largest, checked_mul(linear.rows, linear.cols, "the weights"));
    }
    cache.largest_layer_linear = largest;
  }
  return *cache.largest_layer_linear;
}

void JobPass::serving_terms() {
  const Dtype dtype = job.base_dtype.value_or(Dtype::bf16);
  std::int64_t weights =
      job.weight_bytes
          ? *job.weight_bytes
          : (job.base_nf4 ? bitsandbytes_bytes(QuantFormat::bnb_4bit, job.nf4_double_quant, 2)
                          : bytes_for(served_params(params, false), dtype));
  if (job.serve_autocast) {
    if (job.base_nf4 || dtype != Dtype::fp32) {
      throw ConfigError("serving under autocast (--autocast) needs fp32 weights (--dtype fp32)");
    }
    weights = checked_add(weights, checked_mul(total, a.autocast_copy_bytes, "the weights"));
  }
  // Each GPU holds its tensor-parallel share of its pipeline stage (the busiest stage).
  b.weights = stages_alike
                  ? ceil_div(weights, job.tp * job.pp)
                  : static_cast<std::int64_t>(std::ceil(static_cast<double>(weights) * stage_share /
                                                        static_cast<double>(job.tp)));
  if (job.ep > job.tp) {
    // Expert parallelism over more GPUs than tensor parallelism spans (vLLM's
    // --enable-expert-parallel with data-parallel replicas): each GPU holds 1/ep of the routed
    // experts and its tensor-parallel share of the rest (attention replicated across replicas).
    const std::int64_t experts = job.expert_weight_bytes
                                     ? *job.expert_weight_bytes
                                     : bytes_for(component_count(params, "experts"), dtype);
    const double share = stages_alike ? 1.0 / static_cast<double>(job.pp) : stage_share;
    b.weights = static_cast<std::int64_t>(
        std::ceil(share * (static_cast<double>(weights - experts) / static_cast<double>(job.tp) +
                           static_cast<double>(experts) / static_cast<double>(job.ep))));
  }
  const KvSplit split = serving_split(a, job.tp, job.pp);
  b.kv_cache =
      checked_mul(kv_cache_bytes(model, job.context, job.kv_dtype, split), job.concurrency);
  b.ssm_state =
      checked_mul(ssm_state_bytes(model, effective_ssm_dtype(model, a), a.conv_state_bytes, split),
                  job.concurrency);
  // The prefill's forward pass over the prompts (a chunk at a time), then the sampling step
  // over each sequence's last-token logits; they never overlap, so the larger is the peak.
  b.activations = serving_transient_bytes(model, job.context, job.concurrency, job.tp, a);
  // The engine's CUDA graphs and tensor-parallel communication buffers; callers add the CUDA
  // context to the overhead.
  b.overhead = checked_add(a.cuda_graph_bytes, serving_comm_bytes(job.tp, a));
}

void JobPass::training_state() {
  bytes = precision_bytes(job.precision);
  lora = job.mode == JobMode::lora || job.mode == JobMode::qlora;

  // ---- weights and trainable parameters ----
  trainable = total;
  if (lora) {
    const auto key = std::make_pair(job.lora_rank, job.lora_targets);
    auto found = cache.adapters.find(key);
    if (found == cache.adapters.end()) {
      found = cache.adapters.emplace(key, lora_parameters(model, job.lora_rank, job.lora_targets))
                  .first;
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
        b.weights =
            nf4_base ? bitsandbytes_bytes(QuantFormat::bnb_4bit, job.nf4_double_quant, rest_bytes)
                     : bitsandbytes_bytes(QuantFormat::bnb_8bit, false, rest_bytes);
      }
      if (job.kbit_upcast && bytes.activation < 4) {
        // The upcast head is an fp32 Linear under autocast: its compute-dtype cast is not cached
        // (it needs no gradient) but backward keeps it for the input gradient.
        b.weights = checked_add(
            b.weights, checked_product({model.vocab_size, model.hidden_size, a.autocast_copy_bytes},
                                       "the weights"));
      }
    } else {
      const Dtype base =
          job.base_dtype.value_or(job.precision == Precision::fp32 ? Dtype::fp32 : Dtype::bf16);
      b.weights = bytes_for(total, base);
      // FSDP1 allocates a flat parameter's gradient whole, in the parameters' dtype: with frozen
      // and trainable weights in one, the frozen base gets gradients too.
      if (job.frozen_in_flat_params && job.sharding == Sharding::zero3)
        frozen_gradients = b.weights;
      if (job.precision == Precision::mixed && base == Dtype::fp32) {
        // Autocast casts each frozen fp32 weight to bf16 for its matmul and does not cache the
        // cast of a tensor that needs no gradient; backward keeps each copy for the input
        // gradient, so a bf16 copy of every Linear weight lives until backward reaches it.
        std::int64_t linear_values = 0;
        for (const layout::NamedLinear& linear : linears()) {
          if (linear.mtp || linear.router) continue;
          linear_values =
              checked_add(linear_values, checked_product({linear.rows, linear.cols, linear.count}));
        }
        b.weights = checked_add(b.weights, checked_mul(linear_values, 2, "the weights"));
      }
    }
    b.weights = checked_add(b.weights, head_bytes(model, job, rest_bytes));
    if (quantized_base) {
      // A quantized Linear computes through a half-precision copy of its weight (bitsandbytes'
      // dequantize_4bit, torchao's NF4 to(dtype), LLM.int8's backward CB copy), made and freed
      // per matmul: the largest one's is counted.
      b.weights = checked_add(b.weights, checked_mul(largest_layer_linear(), 2, "the weights"));
    }
    // Adapters live in fp32 unless the whole run is half precision.
    const std::int64_t adapter_bytes = bytes.weight;
    b.weights = checked_add(b.weights, checked_mul(trainable, adapter_bytes));
    b.gradients = checked_mul(trainable, bytes.gradient);
    b.gradients = checked_add(b.gradients, frozen_gradients);
    factored = trainable;
  } else {
    // A frozen vision tower is held like the rest of the weights but trains nothing; nor do
    // fixed sinusoidal tables kept as frozen parameters.
    trainable = total - (job.freeze_vision ? std::min(params.vision, total) : 0);
    trainable = std::max<std::int64_t>(0, trainable - model.frozen_parameters);
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
    if (holds_reference_model(job)) {
      // DPO's, KTO's or GRPO's reference model, frozen: TRL deep-copies the policy (to v0.28) or
      // reloads it in fp32 unless told a dtype (v0.29 on), so it is held as the policy's
      // parameters are (fp32 under mixed precision) unless --ref-dtype says otherwise; sharded
      // as the policy's weights are (ZeRO-3 and FSDP prepare it like the policy, ZeRO-1/2 hold
      // it whole).
      b.weights =
          checked_add(b.weights, bytes_for(total, reference_dtype_of(job)), "the reference model");
    }
  }
  estimate.trainable_params = trainable;
  b.optimizer = optimizer_bytes(job.optimizer, trainable, bytes.state, factored);
  if (job.optimizer_in_backward) {
    // The step runs per parameter as its gradient is ready: about one layer's gradients live.
    std::int64_t layers = 0;
    for (const Stack& stack : model.stacks)
      layers += static_cast<std::int64_t>(stack.blocks.size());
    b.gradients = ceil_div(b.gradients, std::max<std::int64_t>(layers, 1));
  }
}

void JobPass::shard_training_state() {
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
  const std::int64_t expert_tp = std::max<std::int64_t>(1, std::min(job.tp, job.tp * dp / job.ep));
  const std::int64_t expert_split = job.ep * expert_tp;
  const std::int64_t expert_dp = std::max<std::int64_t>(1, job.tp * dp / (job.ep * expert_tp));
  const bool zero = job.sharding == Sharding::zero1 || job.sharding == Sharding::megatron ||
                    job.sharding == Sharding::zero2 || job.sharding == Sharding::zero3;
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
  b.gradients =
      split(b.gradients, (job.sharding == Sharding::zero2 || job.sharding == Sharding::zero3) &&
                             !unsharded_gradients);
  b.optimizer = split(b.optimizer, zero);
  // DeepSpeed's ZeRO (docs/memory.md, "DeepSpeed's gradients"): ZeRO-1/2 (stage_1_and_2.py)
  // and ZeRO-3 (stage3.py; `zero3` without `fsdp`) reduce the gradients through a bucket and
  // keep this rank's partition in the half-precision dtype, which the step casts to fp32.
  const bool stage3 = deepspeed_zero3(job);
  if (job.sharding == Sharding::zero1 || job.sharding == Sharding::zero2 || stage3) {
    // The bucket (two under ZeRO-2 with overlap_comm; ZeRO-3 keeps one per dtype) is allocated
    // whole whatever the model's size (setup_buckets; stage 3 at init): LoRA's few gradients
    // count it too. Hugging Face's "auto" fills in hidden_size squared.
    const std::int64_t half_bytes = bytes.half_copy > 0 ? bytes.half_copy : bytes.gradient;
    const std::int64_t bucket_values =
        reduce_bucket_values(job) > 0
            ? reduce_bucket_values(job)
            : checked_mul(model.hidden_size, model.hidden_size, "the gradients");
    const std::int64_t buckets = checked_product(
        {bucket_values, half_bytes, job.zero_overlap_comm && !stage3 ? 2 : 1}, "the gradients");
    if (lora) {
      b.gradients = checked_add(b.gradients, buckets);
    } else if (job.sharding == Sharding::zero1 || !unsharded_gradients) {
      // This rank's partition, in the half-precision dtype and (mixed precision) in fp32 at the
      // step. The step (step()) runs after backward, when no activation or logit is left: the
      // gradient norm (get_grad_norm_direct) reads each gradient of the partition as an fp64
      // copy, one at a time, the largest parameter's at most; then the partition is flattened
      // (torch.cat, a second half-precision copy) and cast to fp32 beside it. ZeRO-1/2 then
      // free the half-precision gradients and run the optimizer on the fp32 partition; ZeRO-3
      // keeps its half-precision partition (grad_partitions_flat_buffer, allocated once) and
      // flattens, casts and steps one sub-group (sub_group_size values) at a time, freeing each
      // fp32 copy before the next. Offloaded, the partitions live on the host and the fp64
      // copies are made in backward (set_norm_for_param_grad_in_gpu).
      const std::int64_t partition_values = split(trainable, true);
      const std::int64_t partition_half =
          checked_mul(partition_values, half_bytes, "the gradients");
      const std::int64_t largest =
          ceil_div(std::max(largest_layer_linear(), vocab_matrix(model)), job.tp);
      // ZeRO-3 partitions each parameter over the ranks; ZeRO-1/2 the flat gradients, where a
      // parameter may fall whole in one rank's partition.
      const std::int64_t largest_in_partition =
          std::min(stage3 ? ceil_div(largest, dp) : largest, partition_values);
      // A sub-group closes when it reaches sub_group_size: it may pass it by one parameter.
      const std::int64_t step_values =
          stage3 ? std::min(partition_values,
                            checked_add(job.zero_sub_group_size, largest_in_partition))
                 : partition_values;
      const std::int64_t step_half = checked_mul(step_values, half_bytes, "the gradients");
      const std::int64_t step_fp32 =
          bytes.half_copy > 0 ? checked_mul(step_values, bytes.gradient, "the gradients") : 0;
      const std::int64_t norm_copy = checked_mul(largest_in_partition, 8, "the gradients");
      // What backward has in flight beside the partition: the bucket and (ZeRO-2, ZeRO-3) the
      // gradient autograd has just made, whole, the largest parameter's at most.
      const std::int64_t in_flight =
          checked_add(buckets, checked_mul(largest, half_bytes, "the gradients"));
      if (job.sharding == Sharding::zero1) {
        // ZeRO-1: backward leaves every gradient whole until the epilogue reduces them through
        // the bucket. (Megatron's distributed optimizer, `megatron`, keeps its fp32 main
        // gradients whole instead: the terms above.)
        const std::int64_t whole =
            split(checked_mul(trainable, half_bytes, "the gradients"), false);
        const std::int64_t held = checked_add(whole, buckets);
        b.gradients = job.cpu_offload ? checked_add(held, norm_copy) : held;
      } else if (job.cpu_offload) {
        // (ZeRO-3 takes each partition's norm before moving it: no copy of it.)
        b.gradients = stage3 ? in_flight : checked_add(in_flight, norm_copy);
      } else {
        // ZeRO-2 and 3: a hook copies each gradient into the bucket as autograd makes it, the
        // full bucket is reduced, and only this rank's partition is kept.
        b.gradients = checked_add(partition_half, in_flight);
      }
      if (!job.cpu_offload) {
        // The step's phase (job_activations.cpp weighs it against backward's). ZeRO-3's
        // partition and bucket stay allocated through it.
        const std::int64_t kept = stage3 ? checked_add(buckets, partition_half) : 0;
        zero_step_gradients = checked_add(stage3 ? kept : partition_half,
                                          std::max(norm_copy, checked_add(step_half, step_fp32)));
        zero_step_fp32 = checked_add(kept, step_fp32);
        if (stage3) zero_step_sub_group = step_values;
      }
    }
  }
  if (job.sharding == Sharding::ddp && job.ddp_bucket_copy) {
    // PyTorch DDP's reducer copies the gradients into flat buckets for the all-reduce, allocated
    // at construction for every trained parameter and kept; unless gradient_as_bucket_view,
    // param.grad is a copy of its own ("the saved memory size will be equal to the total
    // gradients size", DistributedDataParallel's docs).
    b.gradients = checked_add(
        b.gradients, split(checked_mul(trainable, bytes.gradient, "the gradients"), false));
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
          job.checkpoint_base   ? checkpoint_base_of()
          : holds_nf4_base(job) ? bitsandbytes_base_of(QuantFormat::bnb_4bit, job.nf4_double_quant)
                                : bitsandbytes_base_of(QuantFormat::bnb_8bit, false);
      block_bytes = static_cast<std::int64_t>(
          std::ceil(static_cast<double>(units.largest_block) * base.bytes_per_quantized_value()));
    }
    // PyTorch's FSDP (FSDP1 and FSDP2) does not reshard the root unit after forward: what lies
    // outside the wrapped blocks stays gathered through backward. DeepSpeed (and FSDP with the
    // embedding and head wrapped as units of their own) gathers the head for the loss beside
    // the last block instead.
    const std::int64_t vocab_bytes = checked_mul(units.vocab_matrix, gathered_bytes, "the weights");
    std::int64_t gathered =
        job.root_unit_gathered
            ? checked_add(checked_mul(units.outside_blocks, gathered_bytes, "the weights"),
                          checked_mul(block_bytes, 2, "the weights"))
            : checked_add(block_bytes, std::max(block_bytes, vocab_bytes));
    if (deepspeed_zero3(job)) {
      // DeepSpeed keeps what the trace reuses within stage3_max_reuse_distance at the turn from
      // forward to backward: the head, the layers whose next use lies closer than that, and
      // the whole model when even the embedding's does.
      const ReusedAtTurn reused = reused_at_turn(units, job);
      const double per_value =
          units.largest_block > 0
              ? static_cast<double>(block_bytes) / static_cast<double>(units.largest_block)
              : static_cast<double>(gathered_bytes);
      const auto layer_bytes =
          static_cast<std::int64_t>(std::ceil(static_cast<double>(reused.layers) * per_value));
      std::int64_t turn = checked_add(vocab_bytes, std::max(block_bytes, layer_bytes));
      if (reused.embedding && !model.tie_word_embeddings) turn = checked_add(turn, vocab_bytes);
      gathered = std::max(gathered, turn);
    }
    // With parameter offload (FSDP CPUOffload(offload_params=True), DeepSpeed offload_param)
    // the shards live on the host: only the gathered layers are on the GPU.
    b.weights = job.cpu_offload ? gathered : checked_add(b.weights, gathered);
    if (zero_step_gradients > 0) zero_step_released = gathered;
  }
  if (job.cpu_offload) {
    b.optimizer = 0;
    master = 0;  // the optimizer's fp32 copy lives beside its states on the CPU
    // (inside no_sync the gradients stay on the GPU until the last micro-batch: FSDP's docs)
    if (job.sharding == Sharding::zero3 && !stage3 && !unsharded_gradients)
      b.gradients = ceil_div(b.gradients, 8);
  }
  b.weights = checked_add(b.weights, master);
}

}  // namespace trace
