// Measured throughput against trace's roofline bound, row by row: docs/cost.md, "Measured
// throughput". The bound uses peak bandwidth and peak FLOP/s (every efficiency 1).
#include "trace/cost/throughput.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trace/cost/flops.hpp"
#include "trace/cost/serving.hpp"
#include "trace/cost/training.hpp"
#include "trace/csv.hpp"
#include "trace/error.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

struct LoadedModel {
  ModelDescription model;
  ParameterCount params;
};

// The row's config: its own repo id, else the repo an alias names (with a note saying so).
LoadedModel load_model(const ThroughputRow& row, const ThroughputConfigLoader& load,
                       ThroughputResult& result) {
  const std::string repo = normalize_model_id(row.model_id);
  if (repo.find('/') == std::string::npos) {
    throw ConfigError(fmt::format(
        "'{}' names no Hugging Face repo, so trace has no config for it", row.model_id));
  }
  std::optional<std::string> text = load(repo);
  result.config = repo;
  if (!text) {
    for (const ModelAlias& alias : model_aliases()) {
      if (to_lower(alias.repo_id) != to_lower(repo)) continue;
      text = load(std::string(alias.same_architecture_as));
      if (text) {
        result.config = std::string(alias.same_architecture_as);
        result.notes.push_back(fmt::format("config of {} ({})", alias.same_architecture_as,
                                           alias.reason));
      }
      break;
    }
  }
  if (!text) throw ConfigError(fmt::format("no config for {}", repo));
  LoadedModel loaded{parse_model_config(*text), {}};
  loaded.params = count_parameters(loaded.model);
  return loaded;
}

// The card, scaled to the share of the package the row used (one GCD of an MI250X).
GpuSpec load_card(const ThroughputRow& row, const GpuCatalog& catalog, ThroughputResult& result) {
  const std::optional<CardReading> reading = read_card(row.gpu);
  if (!reading) throw ConfigError(fmt::format("unknown card '{}'", row.gpu));
  const GpuSpec* found = find_gpu(catalog, reading->gpu_id);
  if (!found) {
    throw ConfigError(fmt::format("card '{}' reads as {}, which the GPU table does not list",
                                  row.gpu, reading->gpu_id));
  }
  GpuSpec card = *found;
  result.card = card.id;
  if (reading->package_share != 1.0) {
    const double share = reading->package_share;
    const auto scale = [share](std::int64_t value) {
      return static_cast<std::int64_t>(static_cast<double>(value) * share);
    };
    card.memory_bytes_marketed = scale(card.memory_bytes_marketed);
    card.memory_bytes_usable = scale(card.memory_bytes_usable);
    card.memory_bandwidth_bytes_per_s = scale(card.memory_bandwidth_bytes_per_s);
    for (std::optional<double>* peak : {&card.fp32_tflops, &card.tf32_tflops, &card.bf16_tflops,
                                        &card.fp16_tflops, &card.fp8_tflops, &card.int8_tops,
                                        &card.fp4_tflops}) {
      if (*peak) **peak *= share;
    }
    result.card = card.id + " (one GCD)";
    result.notes.push_back(fmt::format(
        "{} of a {} package (one GCD): its memory, bandwidth and peaks x {}", share, card.id, share));
  }
  return card;
}

void plan_serving_row(const ThroughputRow& row, const GpuCatalog& catalog,
                      const ThroughputConfigLoader& load, ThroughputResult& r) {
  if (to_lower(row.spec_decode).starts_with("y")) {
    throw ConfigError(
        "speculative decoding: each weight read verifies several drafted tokens, outside the "
        "one-token-per-step roofline");
  }
  if (!row.tokens_per_s_total) {
    throw ConfigError("no tokens_per_s_total: a latency-only row (its TTFT is not a throughput)");
  }
  const bool prefill = to_lower(row.notes).starts_with("metric=prefill");
  const std::optional<std::optional<std::int64_t>> concurrency = read_concurrency(row.concurrency);
  if (!concurrency) throw ConfigError(fmt::format("concurrency '{}' unreadable", row.concurrency));
  r.kind = prefill ? ThroughputKind::prefill
           : *concurrency == std::optional<std::int64_t>(1) ? ThroughputKind::batch1_decode
                                                           : ThroughputKind::saturated_serving;
  const std::optional<ParallelReading> parallel = read_parallelism(row.parallelism);
  if (!parallel) throw ConfigError(fmt::format("parallelism '{}' unreadable", row.parallelism));
  if (parallel->pp > 1) {
    r.notes.push_back(fmt::format(
        "PP {} read as {} cards' bandwidth and compute together (the stages decode different "
        "micro-batches at once)",
        parallel->pp, r.gpus));
  }
  if (parallel->tp * parallel->pp != r.gpus) {
    r.notes.push_back(fmt::format("TP x PP = {} is not n_gpus = {}; n_gpus used",
                                  parallel->tp * parallel->pp, r.gpus));
  }
  const std::optional<WeightReading> weights = read_weight_dtype(row.weight_dtype);
  if (!weights) throw ConfigError(fmt::format("weight_dtype '{}' unreadable", row.weight_dtype));
  const GpuSpec card = load_card(row, catalog, r);
  const std::optional<Dtype> kv =
      read_kv_dtype(row.kv_dtype, *weights, peak_flops_per_s(card, ComputeDtype::fp8).has_value());
  if (!kv) throw ConfigError(fmt::format("kv_dtype '{}' unreadable", row.kv_dtype));
  if (row.kv_dtype.empty()) {
    r.notes.push_back(fmt::format("KV dtype not given: {}", dtype_info(*kv).name));
  }
  LoadedModel loaded = load_model(row, load, r);

  const std::int64_t weight_bytes = static_cast<std::int64_t>(std::ceil(
      static_cast<double>(served_params(loaded.params, false)) * weights->bits_per_param / 8));
  MemoryAssumptions memory;
  memory.serve_weight_dtype = weights->serve_dtype;
  memory.kv_dtype = *kv;
  if (weights->nvfp4) {
    // The served checkpoint is a ModelOpt NVFP4 export: FP4 matmuls where the card has them.
    Quantization quantization;
    quantization.format = QuantFormat::modelopt;
    quantization.method = "modelopt";
    ModeloptScheme scheme;
    scheme.quant_algo = "NVFP4";
    scheme.default_format = ModuleFormat::nvfp4;
    quantization.modelopt = scheme;
    loaded.model.quantization = quantization;
    memory.serve_weight_bytes = weight_bytes;
  }
  Job job;
  job.mode = JobMode::serve;
  job.weight_bytes = weight_bytes;
  job.kv_dtype = *kv;
  ServingRequest request;
  request.context_in = row.input_len.value_or(0);
  request.context_out = std::max<std::int64_t>(1, row.output_len.value_or(1));
  if (!prefill && (!row.output_len || *row.output_len == 0)) {
    r.notes.push_back("no output length: 1 generated token per request");
  }
  request.gpus = r.gpus;
  if (*concurrency) request.extra_concurrency.push_back(**concurrency);
  const ServingPlan plan = plan_serving(loaded.model, loaded.params, job, memory, CostAssumptions{},
                                        request, card);
  if (!plan.blocker.empty()) throw ConfigError(fmt::format("trace: {}", plan.blocker));
  r.compute_dtype = plan.compute_dtype;
  r.measured = *row.tokens_per_s_total;

  if (prefill) {
    if (request.context_in < 1) throw ConfigError("a prefill row without input_len");
    const double batch = static_cast<double>(concurrency->value_or(1));
    const double gpus = static_cast<double>(r.gpus);
    const double compute = batch * prefill_flops(loaded.model, loaded.params, request.context_in) /
                           (gpus * plan.peak_flops_per_s);
    const double read = static_cast<double>(weight_bytes) / (gpus * plan.bandwidth_bytes_per_s);
    r.concurrency = concurrency->value_or(1);
    r.bound = batch * static_cast<double>(request.context_in) / std::max(compute, read);
    r.unit = "prompt tokens/s";
    return;
  }
  ServingPoint point;
  if (*concurrency) {
    point = plan.requested_points.front();
    if (**concurrency > plan.max_concurrency) {
      r.notes.push_back(fmt::format(
          "trace's memory model holds at most {} requests of {} tokens; the bound is taken at the "
          "row's {} anyway",
          plan.max_concurrency, request.context_in + request.context_out, **concurrency));
    }
  } else {
    point = plan.points.back();
    r.notes.push_back(fmt::format("max load read as trace's memory-bound maximum, {} requests",
                                  plan.max_concurrency));
  }
  r.concurrency = point.concurrency;
  r.bound = point.bound_total_tokens_per_s;
  r.unit = "output tokens/s";
  if (row.tokens_per_s_per_user) {
    r.measured_per_user = *row.tokens_per_s_per_user;
    r.bound_per_user = point.bound_user_tokens_per_s;
    r.per_user_ratio = *r.measured_per_user / *r.bound_per_user;
  }
}

void plan_training_row(const ThroughputRow& row, const GpuCatalog& catalog,
                       const ThroughputConfigLoader& load, ThroughputResult& r) {
  if (!row.tokens_per_s_total && !row.tflops_per_gpu) {
    throw ConfigError("neither tokens_per_s_total nor tflops_per_gpu");
  }
  if (!row.seq_len || *row.seq_len < 1) throw ConfigError("seq_len is empty");
  const std::optional<WeightReading> weights = read_weight_dtype(row.weight_dtype);
  if (!weights) throw ConfigError(fmt::format("weight_dtype '{}' unreadable", row.weight_dtype));
  const GpuSpec card = load_card(row, catalog, r);
  const LoadedModel loaded = load_model(row, load, r);
  const ComputeDtype compute = weights->fp8_compute                   ? ComputeDtype::fp8
                               : weights->serve_dtype == Dtype::fp16 ? ComputeDtype::fp16
                                                                     : ComputeDtype::bf16;
  r.compute_dtype = std::string(compute_dtype_name(compute));
  const std::optional<double> peak = peak_flops_per_s(card, compute);
  if (!peak) {
    throw ConfigError(fmt::format("the GPU table has no {} peak for {}", r.compute_dtype, card.id));
  }
  Job job;
  const std::string notes = to_lower(row.notes);
  const std::string weight_text = to_lower(row.weight_dtype);
  if (notes.find("qlora") != std::string::npos || weight_text.find("nf4") != std::string::npos) {
    job.mode = JobMode::qlora;
  } else if (notes.find("lora") != std::string::npos) {
    job.mode = JobMode::lora;
  } else {
    job.mode = JobMode::full;
  }
  if (job.mode != JobMode::full) {
    r.notes.push_back(fmt::format("{}: rank {}, every linear layer (the row does not say)",
                                  job.mode == JobMode::qlora ? "QLoRA" : "LoRA", job.lora_rank));
  }
  job.seq_len = *row.seq_len;
  const TrainingFlops flops = training_flops(loaded.model, loaded.params, job);
  r.kind = component_count(loaded.params, "experts") > 0 ? ThroughputKind::moe_training
                                                         : ThroughputKind::dense_training;
  if (row.tokens_per_s_total) {
    r.measured = *row.tokens_per_s_total / static_cast<double>(r.gpus);
    r.bound = *peak / flops.model_per_token;
    r.unit = "tokens/s/GPU";
  } else {
    r.measured = *row.tflops_per_gpu;
    r.bound = *peak / 1e12;
    r.unit = "model TFLOP/s/GPU";
    r.notes.push_back(
        "no tokens/s: the source's model TFLOP/s/GPU against the peak (its FLOP count, not trace's)");
  }
  if (row.mfu) {
    r.source_mfu = *row.mfu;
  } else if (row.tflops_per_gpu) {
    r.source_mfu = *row.tflops_per_gpu * 1e12 / *peak;
  }
}


}  // namespace

RatioSummary summarize_ratios(std::vector<double> ratios) {
  RatioSummary summary;
  if (ratios.empty()) return summary;
  std::sort(ratios.begin(), ratios.end());
  summary.count = static_cast<std::int64_t>(ratios.size());
  summary.median = nearest_rank_percentile(ratios, 0.5);
  summary.p10 = nearest_rank_percentile(ratios, 0.1);
  summary.p90 = nearest_rank_percentile(ratios, 0.9);
  summary.min = ratios.front();
  summary.max = ratios.back();
  return summary;
}

ThroughputComparison compare_throughput(const std::vector<ThroughputRow>& rows,
                                        const ThroughputConfigLoader& load_config,
                                        const GpuCatalog& gpus) {
  ThroughputComparison comparison;
  for (const ThroughputRow& row : rows) {
    ThroughputResult r;
    r.row_id = row.row_id;
    r.row_kind = row.kind;
    r.model = row.model_id;
    r.gpu = row.gpu;
    r.kind = row.kind == "train" ? ThroughputKind::dense_training
                                 : ThroughputKind::saturated_serving;
    try {
      if (!row.n_gpus || *row.n_gpus < 1) throw ConfigError("n_gpus is empty");
      r.gpus = *row.n_gpus;
      if (row.kind == "serve") {
        plan_serving_row(row, gpus, load_config, r);
      } else if (row.kind == "train") {
        plan_training_row(row, gpus, load_config, r);
      } else {
        throw ConfigError(fmt::format("kind '{}' is neither serve nor train", row.kind));
      }
      if (!(r.bound > 0) || !std::isfinite(r.bound)) throw ConfigError("the bound is not positive");
      r.ratio = r.measured / r.bound;
      r.planned = true;
      if (r.ratio > 1 || (r.per_user_ratio && *r.per_user_ratio > 1)) ++comparison.above_bound;
    } catch (const Error& error) {
      r.planned = false;
      r.reason = error.what();
    }
    comparison.rows.push_back(std::move(r));
  }
  for (const ThroughputKind kind : k_throughput_kinds) {
    std::vector<double> ratios;
    for (const ThroughputResult& r : comparison.rows) {
      if (r.planned && r.kind == kind) ratios.push_back(r.ratio);
    }
    comparison.summary.emplace_back(kind, summarize_ratios(std::move(ratios)));
  }
  return comparison;
}

}  // namespace trace
