// JSON contract "trace.plan/1": scripts and checks read these keys; add freely, rename nothing.
#include <nlohmann/json.hpp>

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
    case PositionKind::none: return "none";
  }
  return "none";
}

Json breakdown_json(const MemoryBreakdown& b) {
  return {{"weights", b.weights},         {"gradients", b.gradients}, {"optimizer", b.optimizer},
          {"activations", b.activations}, {"logits", b.logits},       {"kv_cache", b.kv_cache},
          {"ssm_state", b.ssm_state},     {"overhead", b.overhead}};
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
  out["parameters"] = {{"total", params.total},
                       {"active", params.active},
                       {"active_without_embedding", params.active_without_embedding},
                       {"mtp", params.mtp},
                       {"vision", params.vision},
                       {"router_bias_buffers", params.router_bias_buffers},
                       {"total_without_router_bias_buffers",
                        params.total - params.router_bias_buffers},
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
  out["workload"] = {{"seq_len", a.seq_len},
                     {"batch", a.batch},
                     {"context", a.context},
                     {"concurrency", a.concurrency},
                     {"lora_rank", a.lora_rank},
                     {"serve_dtype", a.serve_weight_bytes >= 0
                                         ? "checkpoint (" + storage.format + ")"
                                         : std::string(dtype_info(a.serve_weight_dtype).name)},
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
    // Serving concurrency on the first card listed (the one --gpu names first): how many
    // requests of --context tokens fit beside the weights.
    const CardFit& card = report.cards.front();
    const ModeMemory& serve = report.memory.serve;
    out["estimate"] = {{"gpu", card.id},
                       {"context", report.assumptions.context},
                       {"budget_bytes", card.budget_bytes},
                       {"fixed_bytes", serve.fixed_bytes},
                       {"per_request_bytes", serve.per_sequence_bytes},
                       {"max_concurrency", card.serve.fits ? card.serve.max_batch : 0},
                       {"concurrency", report.assumptions.concurrency},
                       {"max_context", report.longest_context}};
  }
  if (report.job) {
    // The job's per-GPU peak (--mode full|lora|qlora|serve and its flags).
    const JobVerdict& v = *report.job;
    Json& estimate = out["estimate"];
    if (!estimate.is_object()) estimate = Json::object();
    estimate["mode"] = report.only_mode;
    estimate["gpus"] = v.job.gpus;
    estimate["peak_bytes"] = v.peak_bytes();
    estimate["breakdown"] = breakdown_json(v.breakdown);
    if (!v.gpu.empty()) {
      estimate["fits"] = v.fits;
      estimate["job_gpu"] = v.gpu;
      estimate["job_budget_bytes"] = v.budget_bytes;
    }
    if (v.trainable_params > 0) estimate["trainable_params"] = v.trainable_params;
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
  out["notes"] = report.notes;
  return out.dump(2) + "\n";
}

std::string render_check_json(const Report& report) {
  const JobVerdict& v = *report.job;
  const Json out = {{"schema", "trace.check/1"},
                    {"verdict", v.fits ? "fits" : "does not fit"},
                    {"fits", v.fits},
                    {"model", report.model_id},
                    {"mode", report.only_mode},
                    {"gpu", v.gpu},
                    {"gpus", v.job.gpus},
                    {"peak_bytes", v.peak_bytes()},
                    {"usable_bytes", v.usable_bytes},
                    {"budget_bytes", v.budget_bytes},
                    {"breakdown", breakdown_json(v.breakdown)}};
  return out.dump(2) + "\n";
}

}  // namespace trace
