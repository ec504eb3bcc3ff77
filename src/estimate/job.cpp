// A job's checks, descriptions and CLI / CSV spellings; its estimate is JobEstimator's
// (job_estimate.cpp, job_activations.cpp).
#include "trace/estimate/job.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "job_pass.hpp"
#include "trace/checked_math.hpp"
#include "trace/error.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

// How a job with a reference holds it: "reference precomputed", "reference without adapters"
// (LoRA's base, adapters disabled), "reference copy fp32" (a full fine-tune's second model).
std::string describe_reference(const Job& job) {
  if (job.reference_precomputed) return "reference precomputed";
  if (job.mode != JobMode::full) return "reference without adapters";
  return fmt::format("reference copy {}", dtype_info(reference_dtype_of(job)).name);
}

void validate_online_rl(const Job& job) {
  const OnlineRl& rl = *job.rl;
  if (job.mode == JobMode::serve) {
    throw ConfigError("--rl is for training jobs (--mode full, lora or qlora)");
  }
  if (job.preference != Preference::none) {
    throw ConfigError("--rl grpo and --preference are different trainers: give one of them");
  }
  if (rl.completion_len < 1 || rl.completion_len > job.seq_len) {
    throw ConfigError(fmt::format(
        "--completion-len = {} is out of range (1..--seq-len {}: --seq-len is the prompt and "
        "the completion together)",
        rl.completion_len, job.seq_len));
  }
  if (rl.generation_batch < 0 || rl.generation_batch > k_max_training_batch) {
    throw ConfigError(fmt::format("--generation-batch = {} is out of range (1..{})",
                                  rl.generation_batch, k_max_training_batch));
  }
  if (rl.generator == Generator::vllm_colocate && rl.engine_bytes <= 0) {
    throw ConfigError(
        "--generator vllm-colocate takes a share of the card's memory "
        "(--vllm-memory-utilization x the card): give --gpu");
  }
  if (rl.generator != Generator::vllm_colocate && (rl.engine_bytes != 0 || rl.engine_sleeps)) {
    throw ConfigError("--vllm-sleep is for --generator vllm-colocate");
  }
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
  if (job.zero_reduce_bucket && *job.zero_reduce_bucket != 0) {
    check(*job.zero_reduce_bucket, 1LL << 40, "--reduce-bucket-size");
  }
  check(job.zero_sub_group_size, 1LL << 40, "--sub-group-size");
  if (job.zero_max_reuse_distance < 0 || job.zero_max_reuse_distance > (1LL << 50)) {
    throw ConfigError(fmt::format("--max-reuse-distance = {} is out of range (0..{})",
                                  job.zero_max_reuse_distance, 1LL << 50));
  }
  if (job.preference != Preference::none && job.mode == JobMode::serve) {
    throw ConfigError("--preference is for training jobs (--mode full, lora or qlora)");
  }
  if (job.reference_precomputed && !has_reference(job.preference)) {
    throw ConfigError("--precompute-ref-log-probs needs --preference dpo or kto (they run a "
                      "reference model in every step)");
  }
  if (job.reference_dtype && !has_reference(job.preference) && !(job.rl && job.rl->reference)) {
    throw ConfigError(
        "--ref-dtype needs --preference dpo or kto, or --rl grpo with --beta above 0 (they "
        "hold a reference model)");
  }
  if (job.reference_dtype && job.mode != JobMode::full) {
    throw ConfigError(
        "--ref-dtype sizes a full fine-tune's reference copy; LoRA's reference is the base "
        "without its adapters");
  }
  if (job.rl) validate_online_rl(job);
}

const char* data_parallel_label(const Job& job) {
  return job.root_unit_gathered ? "FSDP" : "ZeRO-3";
}

bool deepspeed_zero3(const Job& job) {
  return job.sharding == Sharding::zero3 && !job.fsdp && !job.root_unit_gathered;
}

std::int64_t reduce_bucket_values(const Job& job) {
  if (job.zero_reduce_bucket) return *job.zero_reduce_bucket;
  return deepspeed_zero3(job) ? 0 : 500'000'000;
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
  if (job.attention == AttentionImpl::sdpa && job.sdpa_grouped_kv) label += ", SDPA grouped K/V";
  switch (job.loss) {
    case LossImpl::full: break;
    case LossImpl::chunked: label += ", chunked loss"; break;
    case LossImpl::fused: label += ", fused loss"; break;
    case LossImpl::cut: label += ", cut loss"; break;
    case LossImpl::vocab_parallel: label += ", vocab-parallel loss"; break;
  }
  if (job.compiled) label += ", compiled";
  if (job.allocated_peak &&
      (job.checkpointing == Checkpointing::full || job.checkpointing == Checkpointing::offload)) {
    label += ", allocated peak";
  }
  return label;
}

std::string describe_preference(const Job& job) {
  switch (job.preference) {
    case Preference::none: return "";
    case Preference::paired: return "preference pairs, no reference";
    case Preference::dpo:
    case Preference::kto:
      return fmt::format("{}, {}", job.preference == Preference::dpo ? "DPO pairs" : "KTO",
                         describe_reference(job));
  }
  return "";
}

std::string describe_rl(const Job& job) {
  if (!job.rl) return "";
  const OnlineRl& rl = *job.rl;
  std::string text = fmt::format("GRPO {}-token completions, ", rl.completion_len);
  switch (rl.generator) {
    case Generator::transformers:
      text += fmt::format("transformers generate x {}", generation_batch_of(job));
      break;
    case Generator::vllm_colocate:
      text += rl.engine_sleeps ? "vLLM colocated, sleeping in training" : "vLLM colocated";
      break;
    case Generator::vllm_server: text += "vLLM server (its GPUs planned apart)"; break;
  }
  if (rl.reference) text += ", " + describe_reference(job);
  return text;
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
    if (job.rl) add(describe_rl(job));
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
  if (job.mode != JobMode::serve && autocast_fp32_stream(job)) {
    add("autocast (fp32 residual stream)");
  }
  if (job.mode == JobMode::serve && job.serve_autocast) add("fp32 weights under autocast");
  if (!job.bnb_matmul_keeps_inputs && holds_nf4_base(job)) {
    add("fused 4-bit kernels");
  }
  if (job.mode != JobMode::serve) add(describe_training(job));
  if (!job.eager_rms_norm && job.mode != JobMode::serve) add("fused norms");
  if (job.foreach_step && job.optimizer == Optimizer::adamw && !job.optimizer_in_backward &&
      !job.cpu_offload && job.mode != JobMode::serve) {
    add("foreach step");
  }
  if (job.gradients_freed && job.grad_accum == 1 && !job.optimizer_in_backward &&
      job.mode != JobMode::serve) {
    add("grads freed between steps");
  }
  // The split: on one GPU where a strategy is asked for (ZeRO-3 offload on one card) or the
  // caller names it.
  if (job.gpus > 1 || job.sharding != Sharding::single || one_gpu == OneGpu::named) {
    const char* strategy = "";  // tensor / pipeline parallel only: the sizes below say it
    switch (job.sharding) {
      case Sharding::single: break;
      case Sharding::ddp: strategy = "ddp"; break;
      case Sharding::zero1: strategy = "zero1"; break;
      case Sharding::megatron:
        strategy = "megatron";
        break;
      case Sharding::zero2: strategy = "zero2"; break;
      case Sharding::zero3:
        strategy = deepspeed_zero3(job) ? "zero3" : "fsdp";
        break;
    }
    std::string split = fmt::format("{} GPU{}", job.gpus, job.gpus == 1 ? "" : "s");
    // A serve job shards nothing across replicas: it names them instead of a training strategy.
    const std::int64_t replicas = job.gpus / std::max<std::int64_t>(1, job.tp * job.pp);
    if (job.mode == JobMode::serve) {
      strategy = "";
      if (replicas > 1) split += fmt::format(" {} replicas", replicas);
    }
    if (*strategy != '\0') split += fmt::format(" {}", strategy);
    // DeepSpeed's reduce buckets, a term of its gradients (docs/memory.md)
    if ((job.sharding == Sharding::zero1 || job.sharding == Sharding::zero2 ||
         deepspeed_zero3(job)) &&
        job.mode != JobMode::serve) {
      const std::int64_t b = reduce_bucket_values(job);
      split += b == 0               ? std::string(" bucket auto")
               : b % 1'000'000 == 0 ? fmt::format(" bucket {}M", b / 1'000'000)
                                    : fmt::format(" bucket {}", b);
      if (job.zero_overlap_comm && job.sharding == Sharding::zero2) split += " x2";
    }
    if (deepspeed_zero3(job) && job.mode != JobMode::serve &&
        job.zero_sub_group_size != 1'000'000'000) {
      split += fmt::format(" sub-group {}", job.zero_sub_group_size);
    }
    if (deepspeed_zero3(job) && job.mode != JobMode::serve &&
        job.zero_max_reuse_distance != 1'000'000'000) {
      split += fmt::format(" reuse {}", job.zero_max_reuse_distance);
    }
    if (job.sharding == Sharding::ddp && !job.ddp_bucket_copy && job.mode != JobMode::serve)
      split += " no bucket copy";
    if (job.tp > 1) split += fmt::format(" tp{}", job.tp);
    if (job.pp > 1) {
      split += fmt::format(" pp{}{}", job.pp, job.pipeline_by_memory ? " by memory" : "");
    }
    if (job.ep > 1) split += fmt::format(" ep{}", job.ep);
    add(split);
  }
  // Training-only knobs shape the plan's training sections, not a serve job: not named there.
  const bool training = job.mode != JobMode::serve;
  if (training && job.cpu_offload) add("cpu offload");
  if (training && job.optimizer_in_backward) add("step in backward");
  if (training && job.grad_accum > 1) {
    add(fmt::format("accum {}{}", job.grad_accum, job.accumulate_unsharded ? " no_sync" : ""));
  }
  if (training && job.frozen_in_flat_params) add("frozen grads");
  if (job.freeze_vision && job.mode == JobMode::full) add("vision frozen");
  if (job.train_mtp) add("MTP trained");
  return fmt::format("{}", fmt::join(parts, ", "));
}

bool frees_gradients_by_default(const Job& job, bool fsdp) {
  return job.tp == 1 && job.pp == 1 && (job.sharding == Sharding::single || fsdp);
}

bool autocasts_fp32_weights_by_default(const Job& job) {
  return job.tp == 1 && job.pp == 1 &&
         (job.sharding == Sharding::single || job.sharding == Sharding::ddp);
}

bool autocast_fp32_stream(const Job& job) {
  return !job.kbit_upcast && job.autocast_fp32_weights && job.precision == Precision::mixed &&
         (job.mode == JobMode::full || job.base_dtype.value_or(Dtype::bf16) == Dtype::fp32);
}

Job one_card_job(Job job, const MemoryAssumptions& assumptions) {
  job.gpus = job.tp = job.pp = job.ep = 1;
  job.sharding = Sharding::single;
  job.cpu_offload = false;
  job.seq_len = assumptions.seq_len;
  job.batch = assumptions.batch;
  job.lora_rank = assumptions.lora_rank;
  return job;
}

ModeMemory mode_memory_from_job(const ModelDescription& model, const ParameterCount& params,
                                Job job, const MemoryAssumptions& a) {
  job = one_card_job(std::move(job), a);
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
  // The forward pass grows with the batch; a peak set by the step's phase (gradients freed
  // between steps, a step temporary) does not, until the forward outgrows it, so the batch-1 to
  // batch-2 difference can understate the slope. The forward's own per-sequence bytes are the
  // slope from there on: total(1) + (b - 1) x that bounds every batch's peak from above.
  mode.per_sequence_bytes =
      std::max(two.total() - one.total(), checked_add(one.activations, one.logits));
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

bool names_grouped_sdpa(std::string_view text) {
  const std::string t = to_lower(text);
  return t == "sdpa-gqa" || t == "sdpa_gqa" || t == "enable_gqa";
}

std::optional<AttentionImpl> parse_attention(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "sdpa" || names_grouped_sdpa(t)) return AttentionImpl::sdpa;
  if (t == "flash" || t == "flash_attention_2" || t == "fa2" || t == "fa3") return AttentionImpl::flash;
  if (t == "eager") return AttentionImpl::eager;
  return std::nullopt;
}

std::optional<LoraTargets> parse_lora_targets(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "qv" || t == "q,v") return LoraTargets::attention_qv;
  if (t == "attention" || t == "attn") return LoraTargets::attention;
  if (t == "all" || t == "all-linear" || t == "all_linear") return LoraTargets::all_linear;
  // PEFT's target_modules, separated by commas or spaces, as a set
  std::set<std::string> modules;
  std::string word;
  for (const char c : t + ",") {
    if (c == ',' || c == ' ') {
      if (!word.empty()) modules.insert(word);
      word.clear();
    } else {
      word += c;
    }
  }
  const std::set<std::string> qv = {"q_proj", "v_proj"};
  std::set<std::string> attention = {"q_proj", "k_proj", "v_proj", "o_proj"};
  std::set<std::string> all = attention;
  all.insert({"gate_proj", "up_proj", "down_proj"});
  if (modules == qv) return LoraTargets::attention_qv;
  if (modules == attention) return LoraTargets::attention;
  if (modules == all) return LoraTargets::all_linear;
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
  if (t == "kto") return Preference::kto;
  return std::nullopt;
}

std::int64_t sequences_per_item(const Job& job) {
  return job.preference == Preference::dpo || job.preference == Preference::paired ? 2 : 1;
}

bool has_reference(Preference preference) {
  return preference == Preference::dpo || preference == Preference::kto;
}

bool reference_in_step(const Job& job) {
  return has_reference(job.preference) && !job.reference_precomputed;
}

bool holds_reference_model(const Job& job) {
  return job.mode == JobMode::full && (reference_in_step(job) || (job.rl && job.rl->reference));
}

std::int64_t generation_batch_of(const Job& job) {
  if (!job.rl) return 0;
  if (job.rl->generation_batch > 0) return job.rl->generation_batch;
  return checked_mul(job.batch, job.grad_accum, "the generation batch");
}

std::optional<Generator> parse_generator(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "transformers" || t == "hf" || t == "generate") return Generator::transformers;
  if (t == "vllm-colocate" || t == "vllm_colocate" || t == "colocate") {
    return Generator::vllm_colocate;
  }
  if (t == "vllm-server" || t == "vllm_server" || t == "server") return Generator::vllm_server;
  return std::nullopt;
}

const char* generator_name(Generator generator) {
  switch (generator) {
    case Generator::transformers: return "transformers";
    case Generator::vllm_colocate: return "vllm-colocate";
    case Generator::vllm_server: return "vllm-server";
  }
  return "transformers";
}

Dtype reference_dtype_of(const Job& job) {
  if (job.reference_dtype) return *job.reference_dtype;
  switch (job.precision) {
    case Precision::fp32:
    case Precision::mixed: return Dtype::fp32;
    case Precision::fp16_pure: return Dtype::fp16;
    case Precision::bf16_pure: return Dtype::bf16;
  }
  return Dtype::fp32;
}

std::optional<Sharding> parse_sharding(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "single" || t == "none" || t == "tp" || t == "pp") return Sharding::single;
  if (t == "ddp") return Sharding::ddp;
  if (t == "zero1") return Sharding::zero1;
  if (t == "megatron") return Sharding::megatron;
  if (t == "zero2") return Sharding::zero2;
  if (t == "zero3" || t == "fsdp") return Sharding::zero3;
  return std::nullopt;
}

}  // namespace trace
