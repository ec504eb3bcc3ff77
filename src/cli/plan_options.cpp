#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>

#include "commands.hpp"
#include "trace/checkpoint/reconcile.hpp"
#include "trace/checkpoint/safetensors.hpp"
#include "trace/cli/progress_line.hpp"
#include "trace/cli/run.hpp"
#include "trace/csv.hpp"
#include "trace/error.hpp"
#include "trace/hardware/gpu_catalog.hpp"
#include "trace/render/render.hpp"
#include "trace/report/report.hpp"
#include "trace/text_match.hpp"

namespace trace::cli {

namespace {

Dtype require_dtype(const std::string& name, const char* flag) {
  if (const std::optional<Dtype> dtype = parse_dtype(name)) return *dtype;
  throw ConfigError(
      fmt::format("{} '{}' is not a known dtype; use one of {}", flag, name, dtype_names()));
}

// Token counts: 4096, 128k (= 131,072) or 1M (= 1,048,576): the binary multiples context
// lengths are quoted in.
CLI::Validator token_count() {
  return CLI::Validator(
      [](std::string& input) {
        if (input.empty()) return std::string("is empty");
        const char suffix = input.back();
        std::int64_t multiplier = 1;
        if (suffix == 'k' || suffix == 'K') multiplier = 1024;
        if (suffix == 'm' || suffix == 'M') multiplier = 1024 * 1024;
        if (multiplier == 1) return std::string();  // plain number: CLI11 checks it
        const std::string digits = input.substr(0, input.size() - 1);
        if (digits.empty() || digits.size() > 9 ||
            digits.find_first_not_of("0123456789") != std::string::npos) {
          return fmt::format("'{}' is not a token count (e.g. 4096, 128k, 1M)", input);
        }
        input = std::to_string(std::stoll(digits) * multiplier);
        return std::string();
      },
      "N[k|M]");
}

// Run sizes: 1000000, 50k, 1.5M, 2B, 1T: the decimal multiples token budgets are quoted in
// ("a 2T-token run"); also 5e8, as DeepSpeed's JSON configs write their bucket sizes.
CLI::Validator decimal_count() {
  return CLI::Validator(
      [](std::string& input) {
        if (input.empty()) return std::string("is empty");
        const std::string not_a_count =
            fmt::format("'{}' is not a count (e.g. 1000000, 5e8, 50k, 1.5M, 2B, 1T)", input);
        // The digits and their multiplier: a power of ten (5e8, which must come out whole) or
        // a suffix (1.5M, rounded); neither is a plain number, which CLI11 checks itself.
        std::string digits;
        double multiplier = 1;
        bool whole_only = false;
        if (const std::size_t e = input.find_first_of("eE"); e != std::string::npos) {
          const std::string exponent = input.substr(e + 1);
          if (exponent.empty() || exponent.size() > 2 ||
              exponent.find_first_not_of("0123456789") != std::string::npos) {
            return not_a_count;
          }
          digits = input.substr(0, e);
          multiplier = std::pow(10.0, std::stoi(exponent));
          whole_only = true;
        } else {
          const char suffix = input.back();
          if (suffix == 'k' || suffix == 'K') multiplier = 1e3;
          if (suffix == 'm' || suffix == 'M') multiplier = 1e6;
          if (suffix == 'b' || suffix == 'B' || suffix == 'g' || suffix == 'G') multiplier = 1e9;
          if (suffix == 't' || suffix == 'T') multiplier = 1e12;
          if (multiplier == 1) return std::string();  // plain number: CLI11 checks it
          digits = input.substr(0, input.size() - 1);
        }
        if (digits.empty() || digits.size() > 12 ||
            digits.find_first_not_of("0123456789.") != std::string::npos ||
            std::count(digits.begin(), digits.end(), '.') > 1 || digits == ".") {
          return not_a_count;
        }
        const double value = std::stod(digits) * multiplier;
        if (!(value >= 1) || value > 9e18) return fmt::format("'{}' is out of range", input);
        if (whole_only && value != std::floor(value)) {
          return fmt::format("'{}' is not a whole count", input);
        }
        input = std::to_string(static_cast<std::int64_t>(std::llround(value)));
        return std::string();
      },
      "N[k|M|B|T|eX]");
}

}  // namespace

bool parse_command_line(CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err) {
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    return false;
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(error, out, err);  // --help, --version
      return true;
    }
    throw ConfigError(fmt::format("{}; run `{} --help` for usage", error.what(), app.get_name()));
  }
}

void add_plan_options(CLI::App& app, PlanOptions& options, bool model_required) {
  MemoryAssumptions& a = options.assumptions;
  CLI::Option* model = app.add_option(
      "model", options.model,
      "config.json path (- reads it from standard input), folder holding one, or Hugging Face "
      "repo id (org/name[@rev])" +
          std::string(model_required ? "" : "; default: " + std::string(k_default_model)));
  if (model_required) model->required();
  options.seq_len_option =
      app.add_option("--seq-len", a.seq_len, "training tokens per sequence (and graph shapes)")
          ->transform(token_count())
          ->capture_default_str();
  app.add_option("--batch", a.batch, "training micro-batch, sequences")->capture_default_str();
  options.context_option =
      app.add_option("--context", a.context, "serving tokens per sequence held in the KV cache")
          ->transform(token_count())
          ->capture_default_str();
  app.add_option("--concurrency", a.concurrency, "serving sequences held at once")
      ->capture_default_str();
  app.add_option("--lora-rank", a.lora_rank, "LoRA rank on every linear layer but the head")
      ->capture_default_str();
  app.add_option(
      "--dtype", options.dtype,
      "serving weight dtype (" + dtype_names() +
          "); default: the checkpoint's, bf16 "
          "for fp32 checkpoints; fp8, int8 and int4 quantize as --quantize fp8, int8, awq");
  app.add_option("--quantize", options.quantize,
                 "serving an unquantized checkpoint quantized (" + serve_quantization_names() +
                     "): its layers' Linear weights stored as that format's checkpoint stores "
                     "them, embeddings, head and norms at 16 bits");
  app.add_option("--kv-dtype", options.kv_dtype,
                 "KV cache dtype; default: fp8 when the checkpoint ships FP8 KV scales, else bf16");
  app.add_option("--mla-cache", options.mla_cache,
                 "how serving caches MLA layers: latent (vLLM >= 0.7.1, SGLang), per-head "
                 "(transformers), per-head-padded (vLLM < 0.7.1: V padded to K's width)")
      ->check(CLI::IsMember({"latent", "per-head", "per-head-padded"}))
      ->capture_default_str();
  app.add_flag("--serve-mtp", a.serve_mtp,
               "serving also loads the MTP layers (speculative decoding); default: not loaded");
  app.add_option("--ssm-dtype", options.ssm_dtype,
                 "Mamba SSM state dtype (fp32, fp16, bf16); default: the config's "
                 "mamba_ssm_cache_dtype, else fp32");
  app.add_option("--ep", options.ep,
                 "alone: serve MoE models expert-parallel when one card is not enough (experts "
                 "split, attention replicated) instead of tensor parallel; --ep N: a training "
                 "job's expert-parallel size (routed experts split over N GPUs)")
      ->expected(0, 1);
  app.add_option("--headroom", a.headroom_fraction,
                 "share of usable card memory kept free for fragmentation")
      ->capture_default_str();
  app.add_option_function<double>(
         "--gpu-memory-utilization", [&a](double share) { a.headroom_fraction = 1.0 - share; },
         "the engine's memory cap as a share of usable memory (vLLM's 0.9): the same as "
         "--headroom 1-U")
      ->check(CLI::Range(0.1, 1.0));
  app.add_option("--prefill-chunk", a.prefill_chunk_tokens,
                 "serving: prompt tokens per forward pass (chunked prefill; 0 = whole prompt)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 27));
  app.add_option("--backward-grads", a.backward_gradient_vectors,
                 "training: hidden-sized gradients a layer's backward holds per token (its "
                 "output's, the residual one between its branches, the branch's being added)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{64}));
  app.add_option("--sampler-bytes", a.sampler_bytes_per_logit,
                 "serving: bytes per logit the sampling step holds (vLLM >= 0.17 masks top-k/top-p "
                 "in place; 38 for vLLM < 0.17, which sorted the logits)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 10));
  app.add_option("--max-num-seqs", a.max_num_seqs,
                 "serving: sequences the engine samples per step and reserves memory for "
                 "(vLLM's max_num_seqs; 0 = the concurrency only, as transformers' generate)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  app.add_option("--moe-chunk", a.moe_chunk_tokens,
                 "serving: tokens a fused MoE kernel sizes its caches for at most "
                 "(VLLM_FUSED_MOE_CHUNK_SIZE; 0 = all)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 27));
  app.add_option("--awq-split-k", a.awq_split_k,
                 "serving an AWQ checkpoint as vLLM before 0.3.0 did: each AWQ Linear's split-K "
                 "GEMM holds N partial sums of its output (vLLM passed 8); 0 = none, as vLLM "
                 ">= 0.3.0 (dequantize + matmul) and Marlin kernels")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{64}));
  app.add_flag("--moe-dense-experts", a.moe_dense_experts,
               "serving: each rank holds whole experts and runs every one on every token (vLLM's "
               "Mixtral before 0.3.0, and its quantized Mixtral in mixtral_quant.py after)");
  app.add_option_function<std::int64_t>(
         "--tp-comm-mib", [&a](std::int64_t mib) { a.tp_comm_bytes = mib * k_mib; },
         "serving with tensor parallelism: NCCL / all-reduce buffers per GPU, MiB (default 1843)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  app.add_option_function<std::int64_t>(
         "--cuda-graph-mib", [&a](std::int64_t mib) { a.cuda_graph_bytes = mib * k_mib; },
         "serving: the engine's captured CUDA graphs per GPU, MiB (default 512; 0 = eager mode, "
         "--enforce-eager, or transformers' generate)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  app.add_option("--cuda-context-mib", options.cuda_context_mib,
                 "per-process CUDA context and library workspace, MiB")
      ->capture_default_str();
  app.add_option("--gpu", options.gpus, "cards to report (repeatable; default: a common set)");
  app.add_option("--gpu-table", options.gpu_table, "GPU table JSON replacing data/gpus.json");
  // The job (training knobs; docs/memory.md, "Jobs").
  app.add_option(
         "--optimizer", options.optimizer,
         "adamw, adamw_8bit, paged_adamw, paged_adamw_8bit, adafactor, sgd, sgd_momentum, lion")
      ->capture_default_str();
  app.add_option("--precision", options.precision, "fp32, mixed (fp32 master + bf16), bf16, fp16")
      ->capture_default_str();
  app.add_option("--grad-checkpointing", options.grad_checkpointing,
                 "none, full, selective, offload")
      ->capture_default_str();
  app.add_option("--attention", options.attention,
                 "sdpa (torch SDPA, K/V repeated to every head: transformers before 4.54 or "
                 "with a padded batch's mask, torchtune), sdpa-gqa (SDPA's enable_gqa, K/V kept "
                 "grouped: transformers >= 4.54 over torch >= 2.5, no mask), flash (flash-attn: "
                 "grouped K/V kept) or eager (score matrix kept)")
      ->capture_default_str();
  app.add_option("--loss", options.loss,
                 "full (transformers: fp32 logits), chunked (LitGPT, torchtune), fused (Unsloth), "
                 "cut (Cut Cross-Entropy, Liger), vocab-parallel (Megatron)")
      ->capture_default_str();
  app.add_option("--qlora-kernel", options.qlora_kernel,
                 "bnb (bitsandbytes' 4-bit matmul keeps each input for backward: PEFT, LitGPT) or "
                 "fused (Unsloth's kernels, torchtune's torchao NF4)")
      ->capture_default_str();
  app.add_option("--lora-targets", options.lora_targets,
                 "qv, attention or all (every Linear), or PEFT's module list of one of them "
                 "(q_proj,v_proj; q_proj,k_proj,v_proj,o_proj; all-linear)")
      ->capture_default_str();
  app.add_option("--preference", options.preference,
                 "preference training (TRL): dpo (pairs, and a reference model: a copy of the "
                 "model in a full fine-tune, the base without adapters in LoRA), orpo, simpo or "
                 "cpo (pairs, no reference), kto (unpaired, a reference as dpo's); --batch "
                 "counts pairs")
      ->capture_default_str();
  app.add_flag("--precompute-ref-log-probs", options.reference_precomputed,
               "DPO / KTO with the reference's log-probabilities computed before training (TRL's "
               "precompute_ref_log_probs): no reference model held during the steps");
  app.add_option("--ref-dtype", options.reference_dtype,
                 "DPO / KTO full fine-tune: the reference model's dtype; default: as the policy's "
                 "parameters are held (fp32 under --precision fp32 and mixed, else bf16 or "
                 "fp16); DeepSpeed casts it to bf16");
  app.add_option("--rl", options.rl,
                 "online RL (TRL's GRPOTrainer): grpo trains on completions it generates; "
                 "--seq-len is prompt + completion, the loss runs over the completion only")
      ->capture_default_str();
  app.add_option("--completion-len", options.completion_len,
                 "GRPO: completion tokens per sequence (max_completion_length)")
      ->capture_default_str();
  app.add_option("--generator", options.generator,
                 "GRPO: where completions are generated: transformers (the policy's generate() "
                 "on the training GPUs), vllm-colocate (a vLLM engine on each training GPU, "
                 "taking --vllm-memory-utilization of it; needs --gpu), vllm-server (GPUs of "
                 "its own: plan them with --mode serve)")
      ->capture_default_str();
  app.add_option("--generation-batch", options.generation_batch,
                 "GRPO: sequences generated at once per GPU; default --batch x --grad-accum "
                 "(TRL's steps_per_generation)");
  app.add_option("--beta", options.beta,
                 "GRPO: the KL coefficient; above 0 a reference model is held (a copy in a full "
                 "fine-tune, the base without adapters in LoRA)")
      ->capture_default_str();
  app.add_option("--vllm-memory-utilization", options.vllm_memory_utilization,
                 "GRPO with --generator vllm-colocate: the share of each card its engine takes "
                 "(TRL's vllm_gpu_memory_utilization)")
      ->capture_default_str();
  app.add_flag("--vllm-sleep", options.vllm_sleep,
               "GRPO with --generator vllm-colocate: the engine sleeps while the policy trains "
               "(vllm_enable_sleep_mode)");
  app.add_flag("--no-ds3-gather", options.no_ds3_gather,
               "GRPO under DeepSpeed ZeRO-3 with transformers' generate(): do not gather the "
               "whole model for generation (ds3_gather_for_generation False)");
  // The frameworks' switches that change what a job keeps (docs/memory.md, "Jobs").
  struct Switch {
    const char* name;
    bool* value;
    const char* help;
  };
  const Switch job_switches[] = {
      {"--autocast", &options.autocast,
       "serving: fp32 weights (--dtype fp32) under torch.autocast, which caches a bf16 copy of "
       "each weight (Lightning's bf16-mixed generate)"},
      {"--compile", &options.compiled,
       "torch.compile: the MLP's pointwise outputs are recomputed in backward, not saved"},
      {"--allocated-peak", &options.allocated_peak,
       "training: the peak as torch.cuda.max_memory_allocated reports it, where a checkpointed "
       "backward's recomputed layer and the loss's logits are never allocated together; "
       "default: both counted, as the caching allocator keeps the logits' blocks reserved "
       "(what a job needs to fit)"},
      {"--no-double-quant", &options.nf4_single_quant,
       "QLoRA's nf4 base without double quantization: an F32 absmax per 64 values "
       "(bitsandbytes' default, LitGPT bnb.nf4) instead of a U8 one"},
      {"--nf4-one-pass", &options.nf4_one_pass,
       "QLoRA's nf4 base quantized on the GPU in one pass per weight (torchao before 0.2, "
       "torchtune before v0.2): model setup holds 66 bytes per value of the largest weight "
       "beside the stored weights"},
      {"--train-mtp", &options.train_mtp,
       "training: the checkpoint's multi-token-prediction layers train too (Megatron / NeMo "
       "--mtp-num-layers): their weights, gradients, optimizer states and activations, and one "
       "more loss over the vocabulary per MTP depth; default: left out, as transformers does"},
      {"--fused-optimizer", &options.fused_optimizer,
       "AdamW's step as one fused kernel (torch fused=True, DeepSpeed or apex FusedAdam, "
       "Megatron): no temporary of one optimizer state's size during the step (the default)"},
      {"--foreach-step", &options.foreach_step,
       "AdamW's step on PyTorch's foreach path as PyTorch < 2.8 ran it (transformers' "
       "adamw_torch before it defaulted to adamw_torch_fused): one state-sized temporary "
       "(exp_avg_sq_sqrt) during the step; PyTorch 2.11's default step was measured without it"},
      {"--keep-grads", &options.keep_grads,
       "training: gradients stay allocated between steps (zero_grad(set_to_none=False), "
       "PyTorch < 2.0's default); default: freed by zero_grad(set_to_none=True) on one GPU and "
       "under FSDP, so the next forward pass runs without them; kept under ddp and DeepSpeed "
       "ZeRO, and with --tp or --pp (their buffers persist)"},
      {"--fused-norms", &options.fused_norms,
       "RMSNorm as a fused kernel (Unsloth, Liger, Transformer Engine / Megatron): no fp32 copy "
       "of each norm's input kept for backward, as an eager RMSNorm (transformers, torchtune, "
       "LitGPT) keeps"},
      {"--separate-head", &options.separate_head,
       "LoRA: the head is a tensor of its own even where the config ties it to the embedding "
       "(LitGPT's converted checkpoints)"},
      {"--quantized-head", &options.quantized_head,
       "QLoRA: the 4-bit base quantizes the head too (LitGPT / Lightning Fabric), and its 4-bit "
       "matmul holds a dequantized bf16 copy of it while the loss runs"},
      {"--freeze-vision", &options.freeze_vision,
       "VLM full fine-tune: the vision tower (with its projector) stays frozen, as "
       "LLaMA-Factory, ms-swift and Qwen's scripts default to: no gradients, optimizer state or "
       "master copy for it"},
      {"--kbit-upcast", &options.kbit_upcast,
       "PEFT's prepare_model_for_kbit_training (TRL, axolotl, PEFT's QLoRA examples): a 4-bit or "
       "8-bit base keeps its unquantized parameters (embeddings, norms, head) in fp32, so the "
       "hidden states are fp32 too"},
  };
  for (const Switch& option : job_switches) app.add_flag(option.name, *option.value, option.help);
  app.add_option(
         "--lora-dropout", options.lora_dropout,
         "LoRA dropout probability (PEFT's lora_dropout; LitGPT's default is 0.05): above 0 "
         "each adapted Linear keeps a dropped-out copy of its input")
      ->capture_default_str();
  app.add_option("--gpus", options.job_gpus, "GPUs the job runs on")->capture_default_str();
  app.add_option("--strategy", options.strategy,
                 "ddp, zero1, zero2, zero3 (DeepSpeed), fsdp (PyTorch FSDP: its root unit, "
                 "embeddings and head, stays gathered through backward) or megatron (Megatron-LM's "
                 "distributed optimizer: fp32 main gradients whole); default: zero3 when "
                 "--gpus > 1; training only (a serve job splits with --tp / --pp)");
  options.tp_option =
      app.add_option("--tp", options.tp,
                     "tensor-parallel size; a serve job without it spans all of --gpus, "
                     "--tp 1 with --gpus N serves N replicas")
          ->capture_default_str();
  app.add_option("--pp", options.pp, "pipeline-parallel size")->capture_default_str();
  app.add_option("--pp-split", options.pp_split,
                 "how --pp splits the layers: count (vLLM, Megatron: the busiest stage, the "
                 "first with the embeddings or the last with the head, sets the peak) or memory "
                 "(Accelerate's device_map=\"auto\": 1 / pp of the weights each)")
      ->check(CLI::IsMember({"count", "memory"}))
      ->capture_default_str();
  app.add_option("--grad-accum", options.grad_accum,
                 "gradient accumulation steps (peak memory changes only with --no-sync)")
      ->capture_default_str();
  app.add_flag("--no-sync", options.no_sync,
               "with --grad-accum > 1 under zero2/zero3/fsdp: accumulation skips the reduce "
               "(FSDP's no_sync: Lightning Fabric, Accelerate), so every GPU holds the whole "
               "model's unsharded gradients");
  app.add_option("--reduce-bucket-size", options.reduce_bucket_size,
                 "with --strategy zero1, zero2 or zero3: DeepSpeed's reduce_bucket_size, the "
                 "gradient elements reduced at a time (default 5e8, DeepSpeed's), or auto "
                 "(Hugging Face's \"auto\": hidden_size squared)")
      ->transform(CLI::Validator(
          [count = decimal_count()](std::string& input) {
            return input == "auto" ? std::string() : count(input);
          },
          "N[k|M|B|T|eX]|auto"));
  app.add_option("--sub-group-size", options.sub_group_size,
                 "with --strategy zero3: DeepSpeed's sub_group_size, the partition's values the "
                 "optimizer step casts to fp32 and updates at a time (default 1e9, DeepSpeed's)")
      ->transform(decimal_count());
  app.add_option("--max-reuse-distance", options.max_reuse_distance,
                 "with --strategy zero3: DeepSpeed's stage3_max_reuse_distance, how near (in "
                 "parameters) a layer's next use must lie for it to stay gathered (default 1e9, "
                 "DeepSpeed's; 0 repartitions every layer after it runs)")
      ->transform(decimal_count());
  app.add_flag("--overlap-comm", options.overlap_comm,
               "with --strategy zero2: DeepSpeed's overlap_comm, a second reduce bucket filled "
               "while the first is reduced");
  app.add_flag("--grad-as-bucket-view", options.grad_as_bucket_view,
               "with --strategy ddp: DDP's gradient_as_bucket_view=True, the gradients are views "
               "into its all-reduce buckets (by default the buckets are a second copy)");
  app.add_flag("--frozen-in-flat-params", options.frozen_in_flat_params,
               "LoRA under FSDP1 with frozen and trainable weights in one flat parameter "
               "(use_orig_params=True, block wrapping: Lightning Fabric / LitGPT): gradients for "
               "the frozen base too");
  app.add_flag("--shard-embeddings", options.shard_embeddings,
               "with --strategy fsdp: the embedding and head are FSDP units of their own "
               "(torchtune's custom_sharded_layers), not held gathered in the root unit through "
               "backward");
  app.add_flag("--cpu-offload", options.cpu_offload,
               "optimizer states (and with zero3 the parameters) on the CPU");
  // Time and cost (docs/cost.md).
  app.add_option("--tokens", options.tokens, "training run: tokens in all (instead of --samples)")
      ->transform(decimal_count());
  app.add_option("--samples", options.samples,
                 "training run: sequences per epoch of --seq-len tokens (default run: 50,000)")
      ->transform(decimal_count());
  app.add_option("--epochs", options.epochs, "training run: epochs over --samples (default 10)");
  app.add_option("--mfu", options.cost.training_mfu, "training: model FLOPs utilization, dense")
      ->capture_default_str();
  app.add_option("--moe-mfu", options.cost.training_moe_mfu, "training: MFU for MoE models")
      ->capture_default_str();
  app.add_option("--serve-mfu", options.cost.serve_compute_efficiency,
                 "serving: achieved share of peak FLOP/s (prefill, compute-bound decode)")
      ->capture_default_str();
  app.add_option("--mbu", options.cost.serve_bandwidth_efficiency,
                 "serving: achieved share of peak memory bandwidth (decode)")
      ->capture_default_str();
  app.add_option("--compute-dtype", options.compute_dtype,
                 "training: the matmul format whose peak applies (fp32, tf32, bf16, fp16, fp8, "
                 "nvfp4, mxfp4); default: from --precision");
  options.context_in_option = app.add_option("--context-in", options.serving.context_in,
                                             "serving: prompt tokens per request")
                                  ->transform(token_count())
                                  ->capture_default_str();
  options.context_out_option = app.add_option("--context-out", options.serving.context_out,
                                              "serving: generated tokens per request")
                                   ->transform(token_count())
                                   ->capture_default_str();
  app.add_option("--min-user-tps", options.serving.min_user_tps,
                 "serving: the best point keeps every user at least this many tokens/s")
      ->capture_default_str();
  app.add_option("--price", options.prices,
                 "USD per GPU-hour: ID=USD for a card, or USD for the first --gpu (repeatable)");
  app.add_option("--plot", options.plot,
                 "write an SVG: serving throughput vs concurrency with --mode serve, else the "
                 "roofline of the first card");
  app.add_flag(
      "--offline", options.offline,
      "never ask the Hub: the HF cache and the bundled catalog only (as HF_HUB_OFFLINE=1)");
  app.add_flag(
      "--hub", options.hub,
      "ask the Hub (through the HF cache) before the bundled catalog (as when HF_ENDPOINT is set)");
  app.add_flag("--quiet", options.quiet, "no progress line on stderr while fetching from the Hub");
}

namespace {

// The job the flags describe, for `mode` (full, lora, qlora, serve).
// GRPO's settings (--rl grpo); nullopt without --rl. `card_usable_bytes`: the one --gpu card's
// memory, which a colocated vLLM engine takes its share of (0 when not exactly one card).
std::optional<OnlineRl> make_online_rl(const PlanOptions& options, std::int64_t card_usable_bytes) {
  const std::string kind = to_lower(options.rl);
  if (kind == "none") {
    if (options.generator != "transformers" || options.generation_batch != 0 ||
        options.beta != 0.0 || options.vllm_sleep || options.no_ds3_gather ||
        options.completion_len != OnlineRl{}.completion_len ||
        options.vllm_memory_utilization != k_trl_vllm_memory_utilization) {
      throw ConfigError(
          "--completion-len, --generator, --generation-batch, --beta, "
          "--vllm-memory-utilization, --vllm-sleep and --no-ds3-gather are GRPO's: give --rl grpo");
    }
    return std::nullopt;
  }
  if (kind != "grpo") {
    throw ConfigError(fmt::format(
        "--rl '{}' is not known; use grpo (PPO and RLOO, with value or reward models beside the "
        "policy, are not modelled)",
        options.rl));
  }
  OnlineRl rl;
  rl.completion_len = options.completion_len;
  const std::optional<Generator> generator = parse_generator(options.generator);
  if (!generator) {
    throw ConfigError(
        fmt::format("--generator '{}' is not known; use transformers, vllm-colocate or vllm-server",
                    options.generator));
  }
  rl.generator = *generator;
  rl.generation_batch = options.generation_batch;
  if (!(options.beta >= 0.0 && options.beta < 1e6)) {
    throw ConfigError(fmt::format("--beta = {} is out of range (0 or more)", options.beta));
  }
  rl.reference = options.beta > 0.0;
  rl.engine_sleeps = options.vllm_sleep;
  rl.zero3_gathers = !options.no_ds3_gather;
  if (rl.generator == Generator::vllm_colocate) {
    const double share = options.vllm_memory_utilization;
    if (!(share > 0.0 && share < 1.0)) {
      throw ConfigError(
          fmt::format("--vllm-memory-utilization = {} is out of range (above 0, below 1)", share));
    }
    if (card_usable_bytes <= 0) {
      throw ConfigError(
          "--generator vllm-colocate takes a share of the card's memory "
          "(--vllm-memory-utilization x the card): give one --gpu");
    }
    rl.engine_bytes =
        static_cast<std::int64_t>(std::floor(share * static_cast<double>(card_usable_bytes)));
  } else if (options.vllm_memory_utilization != k_trl_vllm_memory_utilization ||
             options.vllm_sleep) {
    throw ConfigError(
        "--vllm-memory-utilization and --vllm-sleep are for --generator vllm-colocate");
  }
  return rl;
}

Job make_job(const PlanOptions& options, const std::string& mode, std::int64_t card_usable_bytes) {
  Job job;
  const auto need = [](auto parsed, const std::string& flag, const std::string& value,
                       const char* allowed) {
    if (!parsed) {
      throw ConfigError(fmt::format("{} '{}' is not known; use one of {}", flag, value, allowed));
    }
    return *parsed;
  };
  job.mode = need(parse_job_mode(mode), "--mode", mode, "full, lora, qlora, serve");
  job.precision = need(parse_precision(options.precision), "--precision", options.precision,
                       "fp32, mixed, bf16, fp16");
  job.optimizer = need(parse_optimizer(options.optimizer), "--optimizer", options.optimizer,
                       "adamw, adamw_8bit, paged_adamw, paged_adamw_8bit, adafactor, sgd, "
                       "sgd_momentum, lion");
  job.checkpointing = need(parse_checkpointing(options.grad_checkpointing), "--grad-checkpointing",
                           options.grad_checkpointing, "none, full, selective, offload");
  job.attention = need(parse_attention(options.attention), "--attention", options.attention,
                       "sdpa, sdpa-gqa, flash, eager");
  job.sdpa_grouped_kv = names_grouped_sdpa(options.attention);
  job.loss = need(parse_loss(options.loss), "--loss", options.loss,
                  "full, chunked, fused, cut, vocab-parallel");
  if (options.qlora_kernel != "bnb" && options.qlora_kernel != "fused") {
    throw ConfigError(
        fmt::format("--qlora-kernel '{}' is not known; use bnb or fused", options.qlora_kernel));
  }
  job.bnb_matmul_keeps_inputs = options.qlora_kernel == "bnb";
  if (to_lower(options.preference) == "grpo") {
    throw ConfigError("--preference grpo: GRPO is online RL, not preference pairs; use --rl grpo");
  }
  job.preference = need(parse_preference(options.preference), "--preference", options.preference,
                        "none, dpo, orpo, simpo, cpo, kto");
  job.reference_precomputed = options.reference_precomputed;
  job.rl = make_online_rl(options, card_usable_bytes);
  if (!options.reference_dtype.empty()) {
    job.reference_dtype = require_dtype(options.reference_dtype, "--ref-dtype");
  }
  job.compiled = options.compiled;
  job.allocated_peak = options.allocated_peak;
  job.serve_autocast = options.autocast;
  job.lora_dropout = options.lora_dropout;
  job.nf4_double_quant = !options.nf4_single_quant;
  job.nf4_quantized_in_one_pass = options.nf4_one_pass && job.mode == JobMode::qlora;
  job.train_mtp = options.train_mtp && job.mode != JobMode::serve;
  job.kbit_upcast = options.kbit_upcast;
  if (options.foreach_step && options.fused_optimizer) {
    throw ConfigError("--foreach-step and --fused-optimizer name two AdamW steps; give one");
  }
  job.foreach_step = options.foreach_step;
  job.eager_rms_norm = !options.fused_norms;
  // transformers' Python activations, unless the kernels are fused (Unsloth, Liger, Megatron)
  job.composed_activations = !options.fused_norms;
  job.separate_head = options.separate_head;
  job.quantized_head = options.quantized_head;
  if (const std::optional<LoraTargets> targets = parse_lora_targets(options.lora_targets)) {
    job.lora_targets = *targets;
  } else {
    throw ConfigError(fmt::format(
        "--lora-targets '{}' is not known; use qv, attention or all, or PEFT's module list of "
        "one of them (q_proj,v_proj; q_proj,k_proj,v_proj,o_proj; all-linear)",
        options.lora_targets));
  }
  const MemoryAssumptions& a = options.assumptions;
  job.seq_len = a.seq_len;
  job.batch = a.batch;
  job.lora_rank = a.lora_rank;
  job.context = a.context;
  job.concurrency = a.concurrency;
  job.gpus = options.check_cards >= 0 ? options.check_cards : options.job_gpus;
  job.tp = options.tp;
  job.pp = options.pp;
  if (!options.ep.empty() && options.ep != "off") {
    const std::optional<std::int64_t> ep = count_cell(options.ep);
    if (!ep || *ep < 1 || *ep > k_max_cards) {
      throw ConfigError(fmt::format("--ep '{}' is not an expert-parallel size in 1..{}", options.ep,
                                    k_max_cards));
    }
    job.ep = *ep;
  }
  job.cpu_offload = options.cpu_offload;
  job.grad_accum = options.grad_accum;
  job.accumulate_unsharded = options.no_sync;
  job.frozen_in_flat_params = options.frozen_in_flat_params;
  job.freeze_vision = options.freeze_vision;
  // A serve job spans its GPUs with tensor parallelism unless --tp or --pp says otherwise.
  if (job.mode == JobMode::serve && !options.tp_given() && job.pp == 1) job.tp = job.gpus;
  if (job.gpus < 1 || job.gpus > k_max_cards) {
    throw ConfigError(fmt::format("--gpus must lie in 1..{}", k_max_cards));
  }
  const std::string strategy =
      options.strategy.empty()
          ? (job.gpus / std::max<std::int64_t>(job.tp * job.pp, 1) > 1 ? "zero3" : "single")
          : options.strategy;
  job.sharding = need(parse_sharding(strategy), "--strategy", strategy,
                      "ddp, zero1, zero2, zero3, fsdp, megatron");
  // A serve job is split by --tp / --pp, the rest of its GPUs being replicas: a training
  // layout would be read as something it does not describe.
  if (job.mode == JobMode::serve && !options.strategy.empty() && job.sharding != Sharding::single) {
    throw ConfigError(fmt::format(
        "--strategy {} is a training layout; a serve job splits the model with --tp and --pp "
        "(--gpus beyond tp x pp are replicas)",
        strategy));
  }
  // PyTorch's FSDP keeps its root unit gathered; DeepSpeed's ZeRO-3 gathers module by module.
  const bool fsdp = to_lower(strategy) == "fsdp";
  if (options.shard_embeddings && !fsdp) {
    throw ConfigError(
        "--shard-embeddings needs --strategy fsdp (it says how FSDP wraps the model)");
  }
  job.root_unit_gathered = fsdp && !options.shard_embeddings;
  job.fsdp = fsdp;
  // DeepSpeed's buckets: ZeRO-1, 2 and 3 reduce through them. overlap_comm under ZeRO-1 also
  // reduces in backward, a layout trace does not model; under ZeRO-3 it adds no bucket.
  const bool deepspeed =
      job.sharding == Sharding::zero1 || job.sharding == Sharding::zero2 || deepspeed_zero3(job);
  if (options.reduce_bucket_size && !deepspeed) {
    throw ConfigError(
        "--reduce-bucket-size needs --strategy zero1, zero2 or zero3 (it sets DeepSpeed's "
        "gradient buckets)");
  }
  if (options.sub_group_size && !deepspeed_zero3(job)) {
    throw ConfigError(
        "--sub-group-size needs --strategy zero3 (it sets DeepSpeed ZeRO-3's optimizer step)");
  }
  if (options.max_reuse_distance && !deepspeed_zero3(job)) {
    throw ConfigError(
        "--max-reuse-distance needs --strategy zero3 (it sets what DeepSpeed ZeRO-3 keeps "
        "gathered)");
  }
  if (options.overlap_comm && job.sharding != Sharding::zero2) {
    throw ConfigError(
        "--overlap-comm needs --strategy zero2 (it sets DeepSpeed ZeRO-2's gradient buckets; "
        "under ZeRO-1 it reduces in backward, which trace does not model)");
  }
  if (options.reduce_bucket_size) {
    // "auto" is 0 to the estimator (hidden_size squared); a count must be at least 1.
    const std::string& size = *options.reduce_bucket_size;
    if (size == "auto") {
      job.zero_reduce_bucket = 0;
    } else if (size.empty() || size.size() > 18 ||
               size.find_first_not_of("0123456789") != std::string::npos) {
      throw ConfigError(fmt::format(
          "--reduce-bucket-size: '{}' is not a count (e.g. 5e8, 500M, 200000000) or auto", size));
    } else {
      job.zero_reduce_bucket = std::stoll(size);
      if (*job.zero_reduce_bucket < 1) {
        throw ConfigError(fmt::format("--reduce-bucket-size = {} is out of range (1..{}, or auto)",
                                      size, 1LL << 40));
      }
    }
  }
  if (options.sub_group_size) job.zero_sub_group_size = *options.sub_group_size;
  if (options.max_reuse_distance) job.zero_max_reuse_distance = *options.max_reuse_distance;
  if (options.grad_as_bucket_view && job.sharding != Sharding::ddp) {
    throw ConfigError(
        "--grad-as-bucket-view needs --strategy ddp (it says how PyTorch DDP holds gradients)");
  }
  job.ddp_bucket_copy = !options.grad_as_bucket_view;
  job.zero_overlap_comm = options.overlap_comm;
  // zero_grad(set_to_none=True) frees the gradients between steps on one GPU and under FSDP;
  // DDP's buckets, DeepSpeed's and Megatron's (tensor / pipeline parallel) buffers keep them.
  job.gradients_freed = !options.keep_grads && frees_gradients_by_default(job, fsdp);
  // Mixed precision on one GPU or under DDP is torch.autocast over fp32 weights; ZeRO, FSDP's
  // MixedPrecision and tensor / pipeline parallel (Megatron) cast the model to bf16.
  job.autocast_fp32_weights = autocasts_fp32_weights_by_default(job);
  if (job.rl && fsdp) job.rl->zero3_gathers = false;  // FSDP gathers layer by layer
  job.pipeline_by_memory = options.pp_split == "memory";
  if (options.grad_accum < 1 || options.grad_accum > (1 << 20)) {
    throw ConfigError("--grad-accum must lie in 1..1048576");
  }
  validate_job(job);
  return job;
}

// --price ID=USD (or USD for the first --gpu) over the table's on-demand price.
void apply_prices(GpuCatalog& catalog, const PlanOptions& options) {
  for (const std::string& entry : options.prices) {
    const std::size_t equals = entry.find('=');
    std::string id = equals == std::string::npos ? "" : entry.substr(0, equals);
    const std::string number = equals == std::string::npos ? entry : entry.substr(equals + 1);
    if (id.empty()) {
      if (options.gpus.empty()) {
        throw ConfigError(
            fmt::format("--price {} names no card: write ID=USD or give --gpu", entry));
      }
      id = options.gpus.front();
    }
    double usd = 0;
    try {
      std::size_t used = 0;
      usd = std::stod(number, &used);
      if (used != number.size()) usd = -1;
    } catch (const std::exception&) {
      usd = -1;
    }
    if (!(usd > 0) || !std::isfinite(usd) || usd > 1e6) {
      throw ConfigError(
          fmt::format("--price {}: '{}' is not a price in USD per GPU-hour", entry, number));
    }
    const GpuSpec& named = require_gpu(catalog, id);
    for (GpuSpec& gpu : catalog.gpus) {
      if (gpu.id == named.id) {
        gpu.price_usd_per_hour = usd;
        gpu.price_date = "--price";
      }
    }
  }
}

}  // namespace

GpuCatalog load_catalog(const PlanOptions& options) {
  GpuCatalog catalog =
      options.gpu_table.empty()
          ? builtin_gpu_catalog()
          : parse_gpu_catalog(read_text_file(options.gpu_table), options.gpu_table);
  apply_prices(catalog, options);
  return catalog;
}

namespace {

// The training run the flags describe: --tokens, or --samples x --seq-len x --epochs; unset:
// the default run.
std::optional<RunSize> run_size(const PlanOptions& options) {
  const std::int64_t seq_len = options.assumptions.seq_len;
  if (options.tokens != 0) {
    if (options.samples != 0 || options.epochs != 0) {
      throw ConfigError("--tokens and --samples/--epochs both size the run: give one");
    }
    return run_size_from_tokens(options.tokens, seq_len);
  }
  if (options.samples != 0) {
    return run_size_from_samples(options.samples, seq_len,
                                 options.epochs == 0 ? 1 : options.epochs);
  }
  if (options.epochs != 0) {
    return run_size_from_samples(50'000, seq_len, options.epochs);
  }
  return std::nullopt;
}

}  // namespace

Report build_report(PlanOptions& options, const HubEnvironment& env, const GpuCatalog& gpus,
                    std::ostream& err) {
  ModelLookupOptions lookup;
  lookup.offline = options.offline;
  lookup.hub_first = options.hub;
  lookup.progress = progress_line(
      err, env.stderr_is_terminal && !options.quiet && !options.json && options.format != "json");
  const LoadedConfig config = load_model_config(options.model, env, lookup);
  ReportRequest request;
  request.model_id = config.model_id;
  request.source = config.source;
  request.hf_quant_config_text = config.hf_quant_config_text;
  request.assumptions = options.assumptions;
  request.assumptions.expert_parallel = options.ep.empty();  // --ep without a size
  request.seq_len_given = options.seq_len_option && options.seq_len_option->count() > 0;
  request.context_given = options.context_option && options.context_option->count() > 0;
  const auto given = [](const CLI::Option* option) { return option && option->count() > 0; };
  request.serving_lengths_given =
      given(options.context_in_option) || given(options.context_out_option);
  request.context_in_given = given(options.context_in_option);
  if (!options.kv_dtype.empty()) {
    request.assumptions.kv_dtype = require_dtype(options.kv_dtype, "--kv-dtype");
    request.kv_dtype_from_config = false;
  }
  request.assumptions.mla_cache = options.mla_cache == "per-head" ? MlaCache::per_head
                                  : options.mla_cache == "per-head-padded"
                                      ? MlaCache::per_head_padded
                                      : MlaCache::latent;
  if (!options.ssm_dtype.empty()) {
    request.assumptions.ssm_dtype = require_dtype(options.ssm_dtype, "--ssm-dtype");
  }
  if (options.cuda_context_mib < 0 || options.cuda_context_mib > (1LL << 20)) {
    throw ConfigError("--cuda-context-mib must lie in 0..1048576");
  }
  request.assumptions.cuda_context_bytes = options.cuda_context_mib * k_mib;
  std::optional<ServeQuantization> scheme;
  if (!options.quantize.empty()) {
    scheme = parse_serve_quantization(options.quantize);
    if (!scheme) {
      throw ConfigError(fmt::format("--quantize '{}' is not known; use one of {}", options.quantize,
                                    serve_quantization_names()));
    }
  }
  if (!options.dtype.empty()) {
    const Dtype dtype = require_dtype(options.dtype, "--dtype");
    if (std::optional<ServeQuantization> named = serve_quantization_for(dtype)) {
      if (scheme) {
        throw ConfigError(fmt::format("--dtype {} and --quantize {}: give one of them",
                                      options.dtype, options.quantize));
      }
      scheme = std::move(named);
    } else {
      request.assumptions.serve_weight_dtype = dtype;
      request.serve_dtype_from_config = false;
    }
  }
  if (scheme) {
    request.assumptions.serve_quantization = std::move(scheme);
    request.serve_dtype_from_config = false;
  }
  request.gpu_ids = options.gpus;
  // With no --gpu, make_report picks the default cards, or every card of a custom table that
  // has none of them.
  request.include_graph = options.graph;
  if (options.nf4_one_pass && options.plan_mode != "qlora") {
    throw ConfigError("--nf4-one-pass needs --mode qlora (it says how the nf4 base is quantized)");
  }
  if (options.train_mtp && options.plan_mode == "serve") {
    throw ConfigError(
        "--train-mtp is for training jobs (serving loads MTP layers with --serve-mtp)");
  }
  // A colocated vLLM engine (GRPO) takes a share of the one card named.
  const GpuSpec* one_card =
      options.gpus.size() == 1 ? find_gpu(gpus, options.gpus.front()) : nullptr;
  const std::int64_t card_usable_bytes = one_card ? one_card->memory_bytes_usable : 0;
  if (options.plan_mode != "all") {
    request.job = make_job(options, options.plan_mode, card_usable_bytes);
  }
  request.training = make_job(options, "full", card_usable_bytes);
  request.cost = options.cost;
  if (!options.compute_dtype.empty()) {
    request.cost.training_compute = parse_compute_dtype(options.compute_dtype);
    if (!request.cost.training_compute) {
      throw ConfigError(
          fmt::format("--compute-dtype '{}' is not known; use fp32, tf32, bf16, fp16, "
                      "fp8, int8, nvfp4 or mxfp4",
                      options.compute_dtype));
    }
  }
  request.include_cost = options.include_cost;
  request.run_size = run_size(options);
  request.serving = options.serving;
  if (options.plan_mode == "serve" && (options.job_gpus > 1 || options.tp > 1)) {
    request.serving.gpus = options.job_gpus;
    request.serving.tp = options.tp_given() ? options.tp : 0;
    request.serving_gpus_given = true;
  }
  Report report = make_report(config.text, request, gpus);
  if (config.checkpoint && !config.checkpoint->shards.empty()) {
    // The checkpoint's own safetensors headers against trace's tensor inventory (issue 6).
    std::vector<checkpoint::SafetensorsHeader> shards;
    for (const ShardHeaderBytes& shard : config.checkpoint->shards) {
      const auto* first = reinterpret_cast<const unsigned char*>(shard.bytes.data());
      shards.push_back(checkpoint::parse_safetensors_file_start(
          std::span<const unsigned char>(first, shard.bytes.size()), shard.file_size, shard.file));
    }
    report.checkpoint = checkpoint::reconcile_model(report.model, report.parameters, report.storage,
                                                    shards, config.source);
  }
  return report;
}

}  // namespace trace::cli
