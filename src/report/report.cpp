#include "trace/report/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "trace/checked_math.hpp"
#include "trace/error.hpp"
#include "trace/model/model_config.hpp"
#include "trace/render/render.hpp"

namespace trace {

namespace {

// A hybrid serve job on its card: vLLM V1's blocks in what the GPU leaves for caches (its
// budget less the job's peak without KV and state); with --max-num-seqs above them vLLM
// refuses to start, and the job does not fit.
void check_hybrid_blocks(const Report& report, JobVerdict& verdict) {
  const MemoryAssumptions& a = report.assumptions;
  const Job& job = verdict.job;
  if (job.pp != 1) return;
  const std::optional<HybridBlocks> layout =
      vllm_hybrid_blocks(report.model, job.kv_dtype, a, serving_split(a, job.tp, job.pp));
  if (!layout) return;
  const MemoryBreakdown& b = verdict.breakdown;
  const std::int64_t blocks =
      layout->blocks_in(verdict.budget_bytes - (verdict.peak_bytes() - b.kv_cache - b.ssm_state));
  verdict.hybrid_blocks = blocks;
  if (a.max_num_seqs > blocks) {
    verdict.fits = false;
    verdict.refusal = fmt::format(
        "vLLM V1 refuses max_num_seqs {} above the {} hybrid blocks of {} tokens left per GPU "
        "(--max-num-seqs {} starts; 0 for an engine without the check)",
        a.max_num_seqs, blocks, layout->block_tokens, blocks);
  }
}

// GRPO with a colocated vLLM engine: its share of the card must hold the engine's weights (the
// serving format), its profile run, its CUDA graphs and one sequence's cache, or vLLM refuses to
// start ("No available memory for the cache blocks").
void check_colocated_engine(const Report& report, JobVerdict& verdict) {
  const Job& job = verdict.job;
  if (!job.rl || job.rl->generator != Generator::vllm_colocate) return;
  const MemoryAssumptions& a = report.assumptions;
  const MemoryBreakdown& serve = report.memory.serve.breakdown;
  const KvSplit split = serving_split(a);
  const std::int64_t one_sequence =
      sequence_cache_bytes(report.model, job.seq_len, a.kv_dtype,
                           effective_ssm_dtype(report.model, a), a.conv_state_bytes, split);
  const std::int64_t needs = checked_add(
      checked_add(serve.weights, serve.activations, "the engine"),
      checked_add(a.cuda_graph_bytes, one_sequence, "the engine"), "the engine");
  if (job.rl->engine_bytes >= needs) return;
  verdict.fits = false;
  verdict.refusal = fmt::format(
      "vLLM's colocated share, {}, cannot hold its weights {}, profile run {}, CUDA graphs {} and "
      "one {}-token sequence's cache {} ({} in all): raise --vllm-memory-utilization",
      format_bytes(job.rl->engine_bytes), format_bytes(serve.weights),
      format_bytes(serve.activations), format_bytes(a.cuda_graph_bytes), job.seq_len,
      format_bytes(one_sequence), format_bytes(needs));
}

// vLLM V1's blocks for a hybrid model on the serving card, at the serving assumptions: the pool is
// the budget less the serve mode's fixed terms (weights, overheads, the prefill or sampling
// transient).
std::optional<HybridCapacity> hybrid_capacity(const Report& report) {
  const MemoryAssumptions& a = report.assumptions;
  const std::optional<HybridBlocks> layout =
      vllm_hybrid_blocks(report.model, a.kv_dtype, a, serving_split(a));
  if (!layout || report.cards.empty()) return std::nullopt;
  HybridCapacity capacity;
  capacity.layout = *layout;
  capacity.gpu = report.serving_card().id;
  capacity.pool_bytes = std::max<std::int64_t>(
      0, report.serving_card().budget_bytes - report.memory.serve.fixed_bytes);
  capacity.blocks = layout->blocks_in(capacity.pool_bytes);
  capacity.blocks_per_request = layout->blocks_per_request(a.context);
  capacity.max_requests = capacity.blocks / std::max<std::int64_t>(capacity.blocks_per_request, 1);
  capacity.max_num_seqs = a.max_num_seqs;
  return capacity;
}

// The serving job the memory section already decided: weights (checkpoint format, MTP, --dtype)
// and KV dtype.
Job serving_job(const Report& report) {
  Job job;
  job.mode = JobMode::serve;
  job.weight_bytes = report.memory.serve.breakdown.weights;
  job.kv_dtype = report.assumptions.kv_dtype;
  return job;
}

// The smallest tensor-parallel count, from the card's fit and doubling, at which one request of
// the serving workload fits; the plan at that count (or the last refusal).
ServingPlan serve_on_fewest_cards(const JobEstimator& estimator, const Report& report,
                                  const ServingRequest& base, const CardFit& card,
                                  const GpuSpec& gpu) {
  ServingRequest request = base;
  request.gpus = card.serve.min_cards.value_or(1);
  request.tp = 0;  // the search picks the card count; tensor parallelism spans all of them
  ServingPlan plan;
  for (int attempt = 0; attempt < 8 && request.gpus <= 1024; ++attempt, request.gpus *= 2) {
    plan = plan_serving(estimator, serving_job(report), report.cost, request, gpu);
    if (plan.max_concurrency > 0) break;
  }
  return plan;
}

// One estimator serves the table's searches, the training run and every serving card: the
// model's Linears and per-layer values are derived once.
void add_cost(Report& report, const ReportRequest& request, const JobEstimator& estimator,
              const std::vector<const GpuSpec*>& cards) {
  validate_cost_assumptions(request.cost);
  validate_serving_request(request.serving);
  report.cost = request.cost;
  report.serving_request = request.serving;
  // Training: the --mode job when it trains, else LoRA with the table's knobs.
  Job job = request.training.value_or(Job{});
  job.mode = JobMode::lora;
  if (request.job && request.job->mode != JobMode::serve) job = *request.job;
  const RunSize size = request.run_size.value_or(default_run_size(report.assumptions.seq_len));
  job.seq_len = size.seq_len;
  if (job.rl && job.rl->generator == Generator::vllm_server) {
    // The steps wait on a server whose GPUs trace is not told of: no time rather than a guess.
    report.notes.push_back(
        {"GRPO with a vLLM server: no training-run time or cost: the server's own GPUs set how "
         "long generating the completions takes (plan them with --mode serve); the memory "
         "estimates cover the training GPUs (docs/cost.md, \"Online RL\")",
         NoteScope::training});
  } else {
    report.training_run = plan_training(estimator, job, size, request.cost, cards);
  }
  for (std::size_t i = 0; i < cards.size() && i < report.cards.size(); ++i) {
    if (i == 0 && request.serving_gpus_given) {
      report.serving.push_back(
          plan_serving(estimator, serving_job(report), request.cost, request.serving, *cards[i]));
    } else {
      report.serving.push_back(
          serve_on_fewest_cards(estimator, report, request.serving, report.cards[i], *cards[i]));
    }
  }
}

// A LoRA job over a checkpoint lora_keeps_stored_base names holds its base as stored:
// bitsandbytes 4-bit through the nf4 path (its kernels modelled there), the others as their own
// bytes.
void base_from_checkpoint(const ModelDescription& model, Job& job) {
  if (!model.quantization || !lora_keeps_stored_base(*model.quantization) ||
      (job.mode != JobMode::lora && job.mode != JobMode::qlora)) {
    return;
  }
  if (model.quantization->format == QuantFormat::bnb_4bit) {
    job.base_nf4 = true;
    job.nf4_double_quant = model.quantization->double_quant;
  } else {
    job.checkpoint_base = true;
  }
}

// A learned position table is a hard limit: a token past it has no position embedding, so a
// longer sequence asked for in so many words is an error, and trace's own default is cut to the
// table. Other schemes run past max_position_embeddings but were trained shorter: a note.
void fit_lengths_to_positions(const ModelDescription& model, ReportRequest& request,
                              std::vector<ReportNote>& notes) {
  const bool learned = model.position == PositionKind::learned && model.learned_positions > 0;
  const std::int64_t limit = model.max_position_embeddings > 0
                                 ? model.max_position_embeddings
                                 : (learned ? model.learned_positions : 0);
  if (limit <= 0) return;
  const auto fit = [&](std::int64_t& length, bool given, const char* flag, const char* what,
                       NoteScope scope) {
    if (length <= limit) return false;
    if (learned && given) {
      throw ConfigError(fmt::format(
          "{} {} passes the model's {} learned positions (max_position_embeddings): a token past "
          "them has no position embedding; use {} {} or less",
          flag, group_digits(length), group_digits(limit), flag, limit));
    }
    if (learned) {
      notes.push_back(
          {fmt::format("{} cut to {} tokens, the model's learned positions ({} defaults to {})",
                       what, group_digits(limit), flag, group_digits(length)),
           scope});
      length = limit;
      return true;
    }
    notes.push_back({fmt::format("{} {} tokens passes the model's max_position_embeddings ({}): it "
                                 "was trained on shorter "
                                 "sequences; memory is estimated as asked",
                                 what, group_digits(length), group_digits(limit)),
                     scope});
    return false;
  };
  MemoryAssumptions& a = request.assumptions;
  if (fit(a.seq_len, request.seq_len_given, "--seq-len", "training sequences",
          NoteScope::training)) {
    if (request.training) request.training->seq_len = a.seq_len;
    if (request.job && request.job->mode != JobMode::serve) request.job->seq_len = a.seq_len;
  }
  if (fit(a.context, request.context_given, "--context", "serving context", NoteScope::serving)) {
    if (request.job && request.job->mode == JobMode::serve) request.job->context = a.context;
  }
  // The serving cost's requests: prompt and completion share the table; an encoder's request
  // is its input alone.
  ServingRequest& serving = request.serving;
  if (model.encoder_only()) {
    if (learned && serving.context_in > limit) {
      if (request.context_in_given) {
        throw ConfigError(fmt::format(
            "--context-in {} passes the model's {} learned positions (max_position_embeddings); "
            "use --context-in {} or less",
            serving.context_in, group_digits(limit), limit));
      }
      notes.push_back({fmt::format("serving requests cut to {} tokens, the model's learned "
                                   "positions (the default is {})",
                                   group_digits(limit), group_digits(serving.context_in)),
                       NoteScope::serving});
      serving.context_in = limit;
    } else if (serving.context_in > limit) {
      notes.push_back({fmt::format("serving requests of {} tokens pass the model's "
                                   "max_position_embeddings ({}): it was "
                                   "trained on shorter sequences; the cost is estimated as asked",
                                   group_digits(serving.context_in), group_digits(limit)),
                       NoteScope::serving});
    }
    return;
  }
  const std::int64_t both = checked_add(serving.context_in, serving.context_out);
  if (learned && both > limit) {
    if (request.serving_lengths_given) {
      throw ConfigError(
          fmt::format("--context-in {} + --context-out {} pass the model's {} learned positions "
                      "(max_position_embeddings); their sum must be {} or less",
                      serving.context_in, serving.context_out, group_digits(limit), limit));
    }
    notes.push_back(
        {fmt::format("serving requests cut to {} in + {} out tokens, the model's "
                     "learned positions (the defaults are {} in + {} out)",
                     group_digits(limit - limit / 2), group_digits(limit / 2),
                     group_digits(serving.context_in), group_digits(serving.context_out)),
         NoteScope::serving});
    serving.context_in = limit - limit / 2;
    serving.context_out = limit / 2;
  }
}

// True when a note of this scope bears on a job of this mode's verdict.
bool note_bears_on(NoteScope scope, JobMode mode) {
  switch (scope) {
    case NoteScope::model:
      return false;
    case NoteScope::serving:
      return mode == JobMode::serve;
    case NoteScope::training:
      return mode != JobMode::serve;
    case NoteScope::full_finetune:
      return mode == JobMode::full;
    case NoteScope::every_job:
      return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> job_notes(const Report& report) {
  std::vector<std::string> bearing;
  if (!report.job) return bearing;
  for (const ReportNote& note : report.notes) {
    if (note_bears_on(note.scope, report.job->job.mode)) bearing.push_back(note.text);
  }
  return bearing;
}

bool lora_keeps_stored_base(const Quantization& q) {
  return q.format == QuantFormat::bnb_4bit || q.format == QuantFormat::bnb_8bit ||
         q.format == QuantFormat::gptq || q.format == QuantFormat::awq;
}

Report make_report(std::string_view config_text, const ReportRequest& asked,
                   const GpuCatalog& gpus) {
  validate_assumptions(asked.assumptions);
  Report report;
  report.model_id = asked.model_id;
  report.source = asked.source;
  report.model = parse_model_config(config_text, asked.hf_quant_config_text);
  ReportRequest request = asked;
  fit_lengths_to_positions(report.model, request, report.notes);
  const MemoryAssumptions& requested = request.assumptions;
  report.parameters = count_parameters(report.model);
  report.storage = estimate_storage(report.model, report.parameters);
  report.assumptions = requested;
  const std::optional<ModeloptScheme>& modelopt =
      report.model.quantization ? report.model.quantization->modelopt : std::nullopt;
  if (request.kv_dtype_from_config && modelopt && modelopt->kv_cache_fp8) {
    report.assumptions.kv_dtype = Dtype::fp8;
    report.notes.push_back(
        {"KV cache fp8: the checkpoint is calibrated for it (kv_cache_quant_algo FP8); set "
         "--kv-dtype to change",
         NoteScope::serving});
  }
  if (requested.serve_quantization) {
    // An unquantized checkpoint quantized for serving: priced as that format's checkpoint.
    const ServeQuantization& wanted = *requested.serve_quantization;
    if (report.model.quantization) {
      throw ConfigError(fmt::format(
          "--quantize {}: the checkpoint is already quantized ({}); it is served in its own "
          "format, or dequantized with --dtype bf16",
          wanted.name, report.storage.format));
    }
    // The rest stays at the 16-bit dtype the engine loads (bf16 for an fp32 checkpoint).
    report.assumptions.serve_weight_dtype = default_serving_dtype(report.model);
    const StorageEstimate serving =
        quantized_serving_storage(report.model, report.parameters, wanted);
    report.assumptions.serve_weight_bytes =
        serving.bytes - (requested.serve_mtp ? 0 : serving.mtp_bytes);
    report.assumptions.serve_expert_bytes = serving.routed_expert_bytes;
    report.serve_weight_format = wanted.name;
    report.notes.push_back(
        {fmt::format(
             "serving weights quantized to {} ({}): the layers' Linear weights; embeddings, head, "
             "norms and routers stay {}",
             wanted.name, wanted.label, dtype_info(report.assumptions.serve_weight_dtype).name),
         NoteScope::serving});
  } else if (request.serve_dtype_from_config && report.model.quantization) {
    // A quantized checkpoint is served in its own format unless --dtype says otherwise; the
    // MTP layers only when speculative decoding loads them.
    report.assumptions.serve_weight_bytes =
        report.storage.bytes - (requested.serve_mtp ? 0 : report.storage.mtp_bytes);
    report.assumptions.serve_expert_bytes = report.storage.routed_expert_bytes;
    report.notes.push_back({fmt::format("serving weights taken at the checkpoint's stored size ({} "
                                        "format); set --dtype to change",
                                        report.storage.format),
                            NoteScope::serving});
    report.serve_weight_format = report.storage.format;
  } else if (request.serve_dtype_from_config) {
    report.assumptions.serve_weight_dtype = default_serving_dtype(report.model);
    if (report.model.torch_dtype == "float32" || report.model.torch_dtype.empty()) {
      report.notes.push_back(
          {fmt::format(
               "serving weights assumed bf16 (config torch_dtype is {}); set --dtype to change",
               report.model.torch_dtype.empty() ? "absent" : report.model.torch_dtype),
           NoteScope::serving});
    }
  }
  if (report.serve_weight_format.empty()) {
    report.serve_weight_format = dtype_info(report.assumptions.serve_weight_dtype).name;
  }
  if (report.parameters.not_served > 0) {
    // vLLM registers the model as its thinker; a stored size (a quantized checkpoint's) still
    // holds the other parts.
    const std::string parts = fmt::format("{}", fmt::join(report.model.not_served, " and "));
    const std::string count = group_digits(report.parameters.not_served);
    report.notes.push_back(
        {report.assumptions.serve_weight_bytes >= 0
             ? fmt::format("serving takes the checkpoint's stored size, which includes the {} "
                           "({} parameters) a serving engine does not load (vLLM loads the "
                           "thinker alone)",
                           parts, count)
             : fmt::format("serving loads the thinker alone, as vLLM registers the model: the "
                           "{} ({} parameters) left out of the serving weights",
                           parts, count),
         NoteScope::serving});
  }
  report.graph = build_layer_graph(report.model, requested.seq_len, 1);
  report.memory = estimate_memory(report.model, report.parameters, report.assumptions);
  if (request.training) {
    // The tables follow the job estimator and its flags, so a table and --mode agree.
    Job training = *request.training;
    training.mode = JobMode::full;
    report.memory.full_finetune =
        mode_memory_from_job(report.model, report.parameters, training, report.assumptions);
    report.memory.training_activation_bytes_per_sequence =
        report.memory.full_finetune.per_sequence_bytes;
    training.mode = JobMode::lora;
    training.reference_dtype.reset();  // LoRA's DPO reference is the base, adapters disabled
    base_from_checkpoint(report.model, training);
    report.memory.lora =
        mode_memory_from_job(report.model, report.parameters, training, report.assumptions);
    report.memory.lora_trainable_params =
        lora_parameters(report.model, report.assumptions.lora_rank, training.lora_targets);
    report.training = *request.training;
  }
  std::vector<const GpuSpec*> cards;
  const std::vector<std::string> ids =
      request.gpu_ids.empty() ? default_report_gpus() : request.gpu_ids;
  for (const std::string& id : ids) {
    if (request.gpu_ids.empty()) {
      if (const GpuSpec* gpu = find_gpu(gpus, id)) cards.push_back(gpu);  // custom tables may lack some
    } else {
      cards.push_back(&require_gpu(gpus, id));
    }
  }
  if (cards.empty()) {
    // A custom --gpu-table without the default cards: report every card it lists.
    for (const GpuSpec& gpu : gpus.gpus) cards.push_back(&gpu);
  }
  const JobEstimator estimator(report.model, report.parameters, report.assumptions);
  // With job flags, sharded training counts come from the job estimator itself (ZeRO-3 with its
  // gathered layers), so the table and the training run's card count agree.
  std::optional<TrainingCardSearch> training_search;
  if (request.training) training_search.emplace(TrainingCardSearch{estimator, *request.training});
  report.cards = fit_cards(report.memory, report.model, cards, report.assumptions,
                           training_search ? &*training_search : nullptr);
  report.cards_given = !request.gpu_ids.empty();
  if (!report.cards.empty()) {
    const auto serves = std::find_if(report.cards.begin(), report.cards.end(),
                                     [](const CardFit& card) { return card.serve.fits; });
    report.serving_card_index =
        serves == report.cards.end() ? 0 : static_cast<std::size_t>(serves - report.cards.begin());
    report.longest_context =
        longest_context(report.model, report.assumptions, report.serving_card().budget_bytes,
                        report.memory.serve.fixed_bytes, report.assumptions.concurrency);
    report.hybrid_blocks = hybrid_capacity(report);
    const std::optional<HybridCapacity>& hybrid = report.hybrid_blocks;
    // A request fits, yet vLLM would not start with its max_num_seqs.
    if (hybrid && hybrid->max_requests > 0 && hybrid->max_num_seqs > hybrid->blocks) {
      report.notes.push_back(
          {fmt::format(
               "serving: vLLM V1 would refuse to start this hybrid on one {} with max_num_seqs {}: "
               "its "
               "pool holds {} blocks of {} tokens, and each running sequence holds a state block "
               "(--max-num-seqs {} or less starts)",
               hybrid->gpu, hybrid->max_num_seqs, hybrid->blocks, hybrid->layout.block_tokens,
               hybrid->blocks),
           NoteScope::serving});
    }
  }
  if (request.job) {
    JobVerdict verdict;
    verdict.job = *request.job;
    Job& job = verdict.job;
    base_from_checkpoint(report.model, job);
    if (job.mode == JobMode::serve) {
      // The serving weights and KV dtype decided above (checkpoint format, MTP, --dtype).
      job.weight_bytes = report.memory.serve.breakdown.weights;
      job.expert_weight_bytes = report.memory.serve.expert_bytes;
      // their dtype, unless they are a quantized checkpoint's stored bytes
      if (report.assumptions.serve_weight_bytes < 0) {
        job.base_dtype = report.assumptions.serve_weight_dtype;
      }
      job.kv_dtype = report.assumptions.kv_dtype;
    }
    const JobEstimate estimate =
        estimate_job(report.model, report.parameters, job, report.assumptions);
    verdict.breakdown = estimate.breakdown;
    verdict.trainable_params = estimate.trainable_params;
    verdict.gradients_at_step = estimate.gradients_at_step;
    // the CUDA context, beside any tensor-parallel buffers the estimate holds
    verdict.breakdown.overhead =
        checked_add(verdict.breakdown.overhead, report.assumptions.cuda_context_bytes);
    if (!request.gpu_ids.empty() && !report.cards.empty()) {
      const CardFit& card = report.cards.front();
      verdict.gpu = card.id;
      verdict.usable_bytes = card.memory_bytes;
      verdict.budget_bytes = card.budget_bytes;
      verdict.fits = verdict.peak_bytes() <= verdict.budget_bytes;
      if (job.mode != JobMode::serve) {
        verdict.max_batch = largest_fitting(estimator, job, JobKnob::batch, k_max_training_batch,
                                            card.budget_bytes);
        verdict.max_seq_len = largest_fitting(estimator, job, JobKnob::seq_len,
                                              k_max_training_seq_len, card.budget_bytes);
        check_colocated_engine(report, verdict);
      } else {
        verdict.max_concurrency = largest_fitting(estimator, job, JobKnob::concurrency,
                                                  k_max_concurrency, card.budget_bytes);
        verdict.max_context = largest_fitting(estimator, job, JobKnob::context,
                                              k_max_context_tokens, card.budget_bytes);
        check_hybrid_blocks(report, verdict);
      }
    }
    report.job = verdict;
  }
  if (request.include_cost) add_cost(report, request, estimator, cards);
  report.include_graph = request.include_graph;
  if (report.parameters.mtp > 0 && !requested.serve_mtp) {
    report.notes.push_back(
        {"serving leaves the MTP layers unloaded (as vLLM does without speculative decoding); "
         "--serve-mtp loads them",
         NoteScope::serving});
  }
  // vLLM before 0.3.0's code paths (--awq-split-k, --moe-dense-experts): say what they change,
  // or that they change nothing here, rather than ignore them silently.
  if (requested.awq_split_k > 0) {
    report.notes.push_back(
        {serves_awq(report.model, requested)
             ? fmt::format("serving's forward pass holds each AWQ Linear's {} split-K partial sums "
                           "of its output (--awq-split-k, vLLM before 0.3.0)",
                           requested.awq_split_k)
             : "--awq-split-k changes nothing here: the served weights are not AWQ's",
         NoteScope::serving});
  }
  if (requested.moe_dense_experts) {
    report.notes.push_back(
        {component_count(report.parameters, "experts") > 0
             ? "serving runs every expert a rank holds whole on every token (--moe-dense-experts, "
               "vLLM's Mixtral before 0.3.0): no routed caches, each expert's full width per token"
             : "--moe-dense-experts changes nothing here: the model has no routed experts",
         NoteScope::serving});
  }
  if (report.parameters.vision > 0) {
    // The estimators run the text path only; say so rather than let a VLM's plan look complete.
    report.notes.push_back(
        {"the vision tower's activations are not estimated: training and serving count text "
         "tokens only (image tokens that enter the text sequence belong in --seq-len / --context); "
         "an engine such as vLLM also profiles the tower on max_num_seqs dummy images at startup "
         "and keeps that peak back from the KV cache",
         NoteScope::every_job});
    report.notes.push_back(
        {request.training && request.training->freeze_vision
             ? "a full fine-tune keeps the vision tower frozen here (--freeze-vision): no "
               "gradients, optimizer state or master copy for it"
             : "a full fine-tune trains the vision tower's parameters too; --freeze-vision keeps "
               "it frozen, as LLaMA-Factory, ms-swift and Qwen's scripts default to",
         NoteScope::full_finetune});
  }
  if (report.model.quantization && request.training) {
    report.notes.push_back(
        {lora_keeps_stored_base(*report.model.quantization)
             ? fmt::format("training: LoRA holds the base as the checkpoint stores it ({}); a full "
                           "fine-tune trains the weights dequantized, at --precision",
                           report.storage.format)
             : fmt::format("training: the {} checkpoint is trained dequantized (LoRA's base at "
                           "bf16, a full fine-tune at --precision), as frameworks load it for "
                           "training",
                           report.storage.format),
         NoteScope::training});
  }
  for (const std::string& note : report.model.notes)
    report.notes.push_back({note, NoteScope::model});
  return report;
}

}  // namespace trace
