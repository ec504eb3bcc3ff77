// JSON contract "trace.plan/1": scripts and checks read these keys; add freely, rename nothing.
#include <nlohmann/json.hpp>

#include "breakdown_json.hpp"
#include "trace/checked_math.hpp"
#include "trace/dtype.hpp"
#include "trace/render/checkpoint.hpp"
#include "trace/render/render.hpp"

namespace trace {

namespace {

using Json = nlohmann::ordered_json;

const char* position_name(PositionKind kind) {
  switch (kind) {
    case PositionKind::rope: return "rope";
    case PositionKind::learned: return "learned";
    case PositionKind::alibi: return "alibi";
    case PositionKind::relative_bias: return "relative_bias";
    case PositionKind::relative_embedding:
      return "relative_embedding";
    case PositionKind::none: return "none";
  }
  return "none";
}

Json mode_json(const ModeMemory& mode) {
  const MemoryBreakdown& b = mode.breakdown;
  return {{"bytes", b.total()},
          {"batch", mode.batch},
          {"breakdown", breakdown_json(b)},
          {"fixed_bytes", mode.fixed_bytes},
          {"per_sequence_bytes", mode.per_sequence_bytes},
          {"formula", mode.formula}};
}

Json fit_json(const ModeFit& fit) {
  Json out = {{"fits", fit.fits}, {"max_batch", fit.max_batch}};
  out["min_cards"] = fit.min_cards ? Json(*fit.min_cards) : Json(nullptr);
  out["bytes_per_card"] = fit.bytes_per_card;
  out["strategy"] = fit.min_cards && *fit.min_cards > 1 ? fit.strategy : "single card";
  return out;
}

const char* job_mode_name(JobMode mode) {
  switch (mode) {
    case JobMode::full: return "full";
    case JobMode::lora: return "lora";
    case JobMode::qlora: return "qlora";
    case JobMode::serve: return "serve";
  }
  return "full";
}

Json training_json(const TrainingPlan& plan) {
  const TokenFlops& f = plan.flops.forward;
  Json out = {{"mode", job_mode_name(plan.job.mode)},
              {"tokens", plan.size.tokens},
              {"samples", plan.size.samples},
              {"epochs", plan.size.epochs},
              {"seq_len", plan.size.seq_len},
              {"default_run", plan.size.is_default},
              {"forward_flops_per_token",
               {{"matmul", f.matmul}, {"attention", f.attention}, {"ssm", f.ssm},
                {"total", f.total()}}},
              {"flops_per_token", plan.flops.per_token},
              {"model_flops_per_token", plan.flops.model_per_token},
              {"flops", plan.total_flops},
              {"moe", plan.moe},
              {"mfu", plan.mfu}};
  Json runs = Json::array();
  Json cannot = Json::array();
  for (const TrainingRun& run : plan.runs) {
    if (!run.runs()) {
      cannot.push_back({{"gpu", run.gpu}, {"reason", run.blocker}});
      continue;
    }
    Json row = {{"gpu", run.gpu},
                {"gpus", run.gpus},
                {"hours", run.hours},
                {"usd", run.usd ? Json(*run.usd) : Json(nullptr)},
                {"mfu", run.mfu},
                {"flops", run.flops},
                {"strategy", run.strategy},
                {"peak_bytes_per_gpu", run.peak_bytes_per_gpu},
                {"compute_dtype", run.compute_dtype},
                {"peak_flops_per_s", run.peak_flops_per_s},
                {"price_usd_per_hour", run.usd ? Json(run.price_usd_per_hour) : Json(nullptr)}};
    if (plan.job.rl) {
      // GRPO: the generation's share of `hours` (docs/cost.md, "Online RL")
      row["generation"] = {{"generations", run.generations},
                           {"step_seconds", run.generation_step_seconds},
                           {"hours", run.generation_hours}};
    }
    runs.push_back(std::move(row));
  }
  out["runs"] = std::move(runs);
  out["cannot"] = std::move(cannot);
  return out;
}

Json serving_point_json(const ServingPoint& p) {
  return {{"concurrency", p.concurrency},
          {"user_tokens_per_s", p.user_tokens_per_s},
          {"total_tokens_per_s", p.total_tokens_per_s},
          {"bound_user_tokens_per_s", p.bound_user_tokens_per_s},
          {"bound_total_tokens_per_s", p.bound_total_tokens_per_s},
          {"step_s", p.step_seconds},
          {"bytes_per_step_per_gpu", p.bytes_per_step},
          {"flops_per_step_per_gpu", p.flops_per_step},
          {"limit", p.memory_bound ? "bandwidth" : "compute"}};
}

Json serving_plan_json(const ServingPlan& plan) {
  Json out = {{"gpu", plan.gpu},
              {"gpus", plan.gpus},
              {"tp", plan.tp},
              {"replicas", plan.replicas},
              {"compute_dtype", plan.compute_dtype},
              {"peak_flops_per_s", plan.peak_flops_per_s},
              {"bandwidth_bytes_per_s", plan.bandwidth_bytes_per_s},
              {"max_concurrency", plan.max_concurrency},
              {"ttft_s", plan.ttft_seconds}};
  if (!plan.blocker.empty()) out["blocker"] = plan.blocker;
  // An encoder's points are batches of whole sequences, its tokens the ones encoded.
  if (plan.encoder) out["workload"] = "encode";
  Json points = Json::array();
  for (const ServingPoint& p : plan.points) points.push_back(serving_point_json(p));
  out["points"] = std::move(points);
  out["best"] = plan.best ? serving_point_json(*plan.best) : Json(nullptr);
  out["usd_per_million_tokens"] =
      plan.usd_per_million_tokens ? Json(*plan.usd_per_million_tokens) : Json(nullptr);
  return out;
}

Json layers_json(const ModelDescription& model) {
  Json stacks = Json::array();
  for (const Stack& stack : model.stacks) {
    Json layers = Json::array();
    for (const Block& block : stack.blocks) {
      const Attention& a = block.attention;
      Json layer = {{"kind", block.cross_attention ? "attention+cross_attention+mlp"
                                                   : "attention+mlp"},
                    {"num_heads", a.num_heads},
                    {"num_kv_heads", a.num_kv_heads},
                    {"head_dim", a.head_dim},
                    {"sliding_window", a.sliding_window},
                    {"intermediate_size", block.mlp.intermediate},
                    {"mlp", block.mlp.kind == MlpKind::gated ? "gated" : "plain"},
                    {"params", block_params(block)}};
      layers.push_back(std::move(layer));
    }
    stacks.push_back({{"name", stack.name},
                      {"causal", stack.causal},
                      {"vision", stack.vision},
                      {"num_layers", stack.blocks.size()},
                      {"layers", std::move(layers)}});
  }
  return stacks;
}

// How a job holds its reference model (DPO, KTO, GRPO with beta > 0).
const char* reference_json(const Job& job) {
  if (!has_reference(job.preference) && !(job.rl && job.rl->reference)) return "none";
  if (job.reference_precomputed) return "precomputed";
  return job.mode == JobMode::full ? "copy" : "base without adapters";
}

// A preference job: --batch counts pairs, so a step keeps twice as many sequences.
Json preference_json(const Job& job) {
  return {{"kind", job.preference == Preference::dpo   ? "dpo"
                   : job.preference == Preference::kto ? "kto"
                                                       : "paired"},
          {"sequences_per_step", job.batch * sequences_per_item(job)},
          {"reference", reference_json(job)}};
}

// A GRPO job: its completions, where they are generated and what a colocated engine takes.
Json rl_json(const Job& job) {
  const OnlineRl& rl = *job.rl;
  return {{"kind", "grpo"},
          {"completion_tokens", rl.completion_len},
          {"generator", generator_name(rl.generator)},
          {"generation_batch", generation_batch_of(job)},
          {"reference", reference_json(job)},
          {"engine_bytes", rl.engine_bytes},
          {"engine_sleeps", rl.engine_sleeps}};
}

}  // namespace

std::string render_json(const Report& report) {
  const ModelDescription& model = report.model;
  const ParameterCount& params = report.parameters;
  Json out;
  out["schema"] = "trace.plan/1";
  out["model"] = {{"id", report.model_id},
                  {"source", report.source},
                  {"model_type", model.model_type},
                  {"family", model.family},
                  {"architecture", model.architecture},
                  {"vocab_size", model.vocab_size},
                  {"hidden_size", model.hidden_size},
                  {"num_layers", [&] {
                     std::int64_t layers = 0;
                     for (const Stack& stack : model.stacks) {
                       if (!stack.vision) layers += static_cast<std::int64_t>(stack.blocks.size());
                     }
                     return layers;
                   }()},
                  {"position_embedding", position_name(model.position)},
                  {"tie_word_embeddings", model.tie_word_embeddings},
                  {"max_position_embeddings", model.max_position_embeddings},
                  {"torch_dtype", model.torch_dtype}};
  Json by_component = Json::object();
  for (const auto& [name, count] : params.by_component) by_component[name] = count;
  out["parameters"] = {
      {"total", params.total},
      {"active", params.active},
      {"active_without_embedding", params.active_without_embedding},
      {"mtp", params.mtp},
      {"vision", params.vision},
      {"frozen", model.frozen_parameters},
      {"router_bias_buffers", params.router_bias_buffers},
      {"total_without_router_bias_buffers", params.total - params.router_bias_buffers},
      {"by_component", by_component}};
  Json extras = Json::array();
  for (const StoredExtra& extra : model.stored_extras) {
    extras.push_back({{"name", extra.name},
                      {"count", extra.count},
                      {"elements_each", extra.elements_each},
                      {"elements", checked_mul(extra.count, extra.elements_each,
                                               "a stored extra tensor's size")},
                      {"dtype", extra.dtype},
                      {"certain", extra.certain},
                      {"note", extra.note}});
  }
  const StorageEstimate& storage = report.storage;
  Json by_dtype = Json::object();
  for (const auto& [dtype, bytes] : storage.by_dtype) by_dtype[dtype] = bytes;
  out["checkpoint"] = {{"extra_tensors", extras}};
  if (report.checkpoint) {
    // Key by key: json::update breaks the parent links JSON_DIAGNOSTICS checks (nlohmann 3.11.2).
    Json& checkpoint = out["checkpoint"];
    const Json reconciled = checkpoint_json(*report.checkpoint);
    for (const auto& [key, value] : reconciled.items()) checkpoint[key] = value;
  }
  out["storage"] = {{"format", storage.format},
                    {"stored_elements", storage.stored_elements},
                    {"bytes", storage.bytes},
                    {"quantized_values", storage.quantized_values},
                    {"scale_elements", storage.scale_elements},
                    {"mtp_bytes", storage.mtp_bytes},
                    {"by_dtype", by_dtype}};
  if (storage.tensors > 0) out["storage"]["tensors"] = storage.tensors;
  if (report.model.quantization && report.model.quantization->modelopt) {
    const ModeloptScheme& scheme = *report.model.quantization->modelopt;
    out["storage"]["modelopt"] = {{"quant_algo", scheme.quant_algo},
                                  {"source", scheme.source},
                                  {"group_size", scheme.group_size},
                                  {"nvfp4_modules", storage.nvfp4_modules},
                                  {"fp8_modules", storage.fp8_modules},
                                  {"kv_cache_fp8", scheme.kv_cache_fp8},
                                  {"kv_scales_stored", scheme.kv_scales_stored}};
    out["storage"]["hub_parameters"] = storage.hub_parameters;
    out["storage"]["header_elements_without_scalars"] = storage.header_elements_without_scalars;
  }
  const MemoryAssumptions& a = report.assumptions;
  // what the serving weights are held as (make_report), with where that comes from
  const std::string& format = report.serve_weight_format;
  out["workload"] = {{"seq_len", a.seq_len},
                     {"batch", a.batch},
                     {"context", a.context},
                     {"concurrency", a.concurrency},
                     {"lora_rank", a.lora_rank},
                     {"serve_dtype", a.serve_quantization ? "quantized (" + format + ")"
                                     : a.serve_weight_bytes >= 0 ? "checkpoint (" + format + ")"
                                                                 : format},
                     {"kv_dtype", dtype_info(a.kv_dtype).name},
                     {"ssm_dtype", dtype_info(effective_ssm_dtype(report.model, a)).name},
                     {"headroom_fraction", a.headroom_fraction},
                     {"expert_parallel", a.expert_parallel},
                     {"cuda_context_bytes", a.cuda_context_bytes}};
  out["memory"] = {{"full_finetune", mode_json(report.memory.full_finetune)},
                   {"lora", mode_json(report.memory.lora)},
                   {"serve", mode_json(report.memory.serve)},
                   {"lora_trainable_params", report.memory.lora_trainable_params},
                   {"kv_cache_bytes_per_token", report.memory.kv_cache_bytes_per_token},
                   {"ssm_state_bytes_per_sequence", report.memory.ssm_state_bytes_per_sequence}};
  Json cards = Json::array();
  for (const CardFit& card : report.cards) {
    cards.push_back({{"id", card.id},
                     {"name", card.name},
                     {"memory_bytes", card.memory_bytes},
                     {"budget_bytes", card.budget_bytes},
                     {"modes",
                      {{"full_finetune", fit_json(card.full_finetune)},
                       {"lora", fit_json(card.lora)},
                       {"serve", fit_json(card.serve)}}}});
  }
  out["cards"] = cards;
  if (!report.cards.empty()) {
    // Serving concurrency on the serving card (the first listed that serves a request on its
    // own, else the first): how many requests of --context tokens fit beside the weights.
    const CardFit& card = report.serving_card();
    const ModeMemory& serve = report.memory.serve;
    out["estimate"] = {{"gpu", card.id},
                       {"context", report.assumptions.context},
                       {"budget_bytes", card.budget_bytes},
                       {"fixed_bytes", serve.fixed_bytes},
                       {"per_request_bytes", serve.per_sequence_bytes},
                       {"max_concurrency", card.serve.fits ? card.serve.max_batch : 0},
                       {"concurrency", report.assumptions.concurrency},
                       {"max_context", report.longest_context}};
    if (const std::optional<HybridCapacity>& h = report.hybrid_blocks) {
      out["estimate"]["vllm_hybrid_blocks"] = {
          {"block_tokens", h->layout.block_tokens},
          {"page_bytes", h->layout.page_bytes},
          {"group_layers", h->layout.group_layers},
          {"attention_groups", h->layout.attention_groups},
          {"window_groups", h->layout.window_groups},
          {"state_groups", h->layout.state_groups},
          {"block_bytes", h->layout.block_bytes()},
          {"pool_bytes", h->pool_bytes},
          {"blocks", h->blocks},
          {"blocks_per_request", h->blocks_per_request},
          {"max_requests", h->max_requests},
          {"max_num_seqs", h->max_num_seqs},
          {"max_num_seqs_starts", h->max_num_seqs <= h->blocks}};
    }
  }
  if (report.job) {
    // The job's per-GPU peak (--mode full|lora|qlora|serve and its flags).
    const JobVerdict& v = *report.job;
    Json& estimate = out["estimate"];
    if (!estimate.is_object()) estimate = Json::object();
    estimate["mode"] = report.only_mode;
    estimate["gpus"] = v.job.gpus;
    estimate["read_as"] = describe_job(v.job, OneGpu::named);
    if (v.job.preference != Preference::none) estimate["preference"] = preference_json(v.job);
    if (v.job.rl) estimate["rl"] = rl_json(v.job);
    estimate["peak_bytes"] = v.peak_bytes();
    estimate["breakdown"] = breakdown_json(v.breakdown);
    if (!v.gpu.empty()) {
      estimate["fits"] = v.fits;
      estimate["job_gpu"] = v.gpu;
      estimate["job_budget_bytes"] = v.budget_bytes;
      if (v.max_batch) estimate["max_batch"] = *v.max_batch;
      if (v.max_seq_len) estimate["max_seq_len"] = *v.max_seq_len;
      // (max_concurrency / max_context above are the card table's: one card, the assumptions)
      if (v.max_concurrency) estimate["job_max_concurrency"] = *v.max_concurrency;
      if (v.max_context) estimate["job_max_context"] = *v.max_context;
      // vLLM V1's blocks on the job's own GPUs (vllm_hybrid_blocks above is one card's), and
      // why the job does not fit when its peak does (the text plan's job line says the same)
      if (v.hybrid_blocks) estimate["job_hybrid_blocks"] = *v.hybrid_blocks;
      if (!v.refusal.empty()) estimate["job_refusal"] = v.refusal;
    }
    if (v.trainable_params > 0) estimate["trainable_params"] = v.trainable_params;
    if (v.job.mode != JobMode::serve) estimate["gradients_at_step"] = v.gradients_at_step;
  }
  if (report.training_run) out["training"] = training_json(*report.training_run);
  if (!report.serving.empty()) {
    // The first card in full (serving.points / serving.best), every card under `cards`.
    Json serving = serving_plan_json(report.serving.front());
    serving["context_in"] = report.serving_request.context_in;
    serving["context_out"] = report.serving_request.context_out;
    serving["min_user_tps"] = report.serving_request.min_user_tps;
    serving["bandwidth_efficiency"] = report.cost.serve_bandwidth_efficiency;
    serving["compute_efficiency"] = report.cost.serve_compute_efficiency;
    Json per_card = Json::array();
    for (const ServingPlan& plan : report.serving) {
      Json card = serving_plan_json(plan);
      card.erase("points");
      per_card.push_back(std::move(card));
    }
    serving["cards"] = std::move(per_card);
    out["serving"] = std::move(serving);
  }
  out["structure"] = layers_json(model);
  if (report.include_graph) {
    Json nodes = Json::array();
    for (const GraphNode& node : report.graph.nodes) {
      nodes.push_back({{"name", node.name},
                       {"op", node.op},
                       {"detail", node.detail},
                       {"component", node.component},
                       {"output_shape", node.output_shape},
                       {"params", node.params}});
    }
    out["graph"] = {{"batch", report.graph.batch},
                    {"seq_len", report.graph.seq_len},
                    {"nodes", nodes}};
  }
  Json notes = Json::array();
  for (const ReportNote& note : report.notes) notes.push_back(note.text);
  out["notes"] = notes;
  return out.dump(2) + "\n";
}

std::string render_check_json(const Report& report) {
  const JobVerdict& v = *report.job;
  Json out = {{"schema", "trace.check/1"},
                    {"verdict", v.fits ? "fits" : "does not fit"},
                    {"fits", v.fits},
                    {"model", report.model_id},
                    {"mode", report.only_mode},
                    {"gpu", v.gpu},
                    {"gpus", v.job.gpus},
                    {"read_as", describe_job(v.job, OneGpu::named)},
                    {"peak_bytes", v.peak_bytes()},
                    {"usable_bytes", v.usable_bytes},
                    {"budget_bytes", v.budget_bytes},
                    {"breakdown", breakdown_json(v.breakdown)}};
  if (v.max_batch) out["max_batch"] = *v.max_batch;
  if (v.max_seq_len) out["max_seq_len"] = *v.max_seq_len;
  if (v.max_concurrency) out["max_concurrency"] = *v.max_concurrency;
  if (v.max_context) out["max_context"] = *v.max_context;
  // what a serve job's weights are held as: a quantized checkpoint's format, a --quantize
  // scheme, or a dtype (the text line names a --quantize scheme beside the mode)
  if (v.job.mode == JobMode::serve) out["serve_dtype"] = report.serve_weight_format;
  if (v.job.preference != Preference::none) out["preference"] = preference_json(v.job);
  if (v.job.rl) out["rl"] = rl_json(v.job);
  if (v.hybrid_blocks) out["hybrid_blocks"] = *v.hybrid_blocks;
  if (!v.refusal.empty()) out["refusal"] = v.refusal;
  // what the estimate assumed or leaves out for this job (the plan's notes that bear on it)
  Json notes = Json::array();
  for (const std::string& note : job_notes(report)) notes.push_back(note);
  out["notes"] = notes;
  return out.dump(2) + "\n";
}

}  // namespace trace
