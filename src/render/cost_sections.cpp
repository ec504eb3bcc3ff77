// Time and cost sections (docs/cost.md), shared by the terminal and Markdown renderers.
#include <fmt/format.h>

#include <cmath>

#include "sections.hpp"
#include "trace/render/render.hpp"

namespace trace::sections {

namespace {

std::string mode_name(const Job& job) {
  switch (job.mode) {
    case JobMode::full: return "Full fine-tune";
    case JobMode::lora: return fmt::format("LoRA r{}", job.lora_rank);
    case JobMode::qlora: return fmt::format("QLoRA r{}", job.lora_rank);
    case JobMode::serve: return "Serving";
  }
  return "?";
}

std::string hours_text(double hours) {
  if (!std::isfinite(hours)) return "-";
  if (hours >= 48) return fmt::format("{} h ({:.1f} d)", group_digits(std::llround(hours)), hours / 24);
  return fmt::format("{:.1f} h", hours);
}

std::string usd_text(double usd) {
  if (!std::isfinite(usd)) return "-";
  if (usd >= 1e15) return fmt::format("${:.2e}", usd);
  if (usd >= 100) return "$" + group_digits(std::llround(usd));
  // Small models' cents and below (an encoder's million tokens): two significant digits.
  if (usd > 0 && usd < 0.01) return fmt::format("${:.2g}", usd);
  return fmt::format("${:.2f}", usd);
}

std::string rate_text(double tokens_per_s) {
  if (!std::isfinite(tokens_per_s)) return "-";
  if (tokens_per_s >= 100) return group_digits(std::llround(tokens_per_s));
  return fmt::format("{:.1f}", tokens_per_s);
}

}  // namespace

std::string si(double value) {
  if (!std::isfinite(value)) return "-";
  static constexpr const char* k_prefixes[] = {"", " k", " M", " G", " T", " P", " E", " Z", " Y"};
  int index = 0;
  double scaled = std::fabs(value);
  while (scaled >= 1000 && index < 8) {
    scaled /= 1000;
    ++index;
  }
  if (value < 0) scaled = -scaled;
  const int decimals = std::fabs(scaled) >= 100 ? 0 : std::fabs(scaled) >= 10 ? 1 : 2;
  return fmt::format("{:.{}f}{}", scaled, decimals, k_prefixes[index]);
}

std::string training_run_title(const Report& report) {
  if (!report.training_run) return "";
  const TrainingPlan& plan = *report.training_run;
  const RunSize& size = plan.size;
  std::string title = mode_name(plan.job) + (plan.job.rl ? ", GRPO" : "") + "): ";
  if (size.samples > 0) {
    title += fmt::format("{} {} x {} tokens x {} epochs = {} tokens", group_digits(size.samples),
                         plan.job.rl ? "completions" : "samples",
                         group_digits(size.seq_len), group_digits(size.epochs),
                         short_count(size.tokens));
  } else {
    title += fmt::format("{} tokens in sequences of {}", short_count(size.tokens),
                         group_digits(size.seq_len));
  }
  if (size.is_default) title += "; the default run, set --samples/--epochs or --tokens";
  return title;
}

Facts training_flops_facts(const Report& report) {
  if (!report.training_run) return {};
  const TrainingPlan& plan = *report.training_run;
  const TokenFlops& f = plan.flops.forward;
  Facts facts;
  facts.emplace_back("forward per token", fmt::format("{}FLOP = matmul {} + attention {} + scan {}",
                                                       si(f.total()), si(f.matmul),
                                                       si(f.attention), si(f.ssm)));
  std::string step = fmt::format("{}FLOP per token", si(plan.flops.per_token));
  if (plan.job.mode == JobMode::full) {
    step += " (3 x forward";
  } else {
    step += fmt::format(" (2 x matmul + 3 x attention and scan + 6 x {} adapter params",
                        short_count(plan.flops.adapter_params));
  }
  if (plan.flops.per_token > plan.flops.model_per_token) step += " + recomputed forward";
  step += ")";
  if (plan.flops.sequences > 1) step += fmt::format(" x {} sequences", plan.flops.sequences);
  if (plan.job.preference == Preference::kto) step += " + KL batch forward";
  if (plan.flops.reference_per_token > 0) {
    step += plan.job.reference_precomputed
                ? "; the reference's forwards over one epoch, precomputed"
                : fmt::format(" + reference forward x {}",
                              plan.job.preference == Preference::kto ? 2 : plan.flops.sequences);
  }
  facts.emplace_back("training", step);
  facts.emplace_back("run", fmt::format("{}FLOP; MFU {:.2f} ({}; --{})", si(plan.total_flops),
                                        plan.mfu, plan.moe ? "MoE" : "dense",
                                        plan.moe ? "moe-mfu" : "mfu"));
  return facts;
}

Table training_runs_table(const Report& report) {
  Table table;
  table.header = {"card", "GPUs", "split", "peak/GPU", "compute", "time", "$/GPU-h", "cost"};
  if (!report.training_run) return table;
  for (const TrainingRun& run : report.training_run->runs) {
    if (!run.runs()) continue;  // training_run_lines
    table.rows.push_back(
        {run.gpu, group_digits(run.gpus), run.strategy, format_bytes(run.peak_bytes_per_gpu),
         fmt::format("{} {}FLOP/s", run.compute_dtype, si(run.peak_flops_per_s)),
         hours_text(run.hours),
         run.usd ? fmt::format("{:.2f}", run.price_usd_per_hour) : "-",
         run.usd ? usd_text(*run.usd) : "no price in the table"});
  }
  return table;
}

std::vector<std::string> training_run_lines(const Report& report) {
  std::vector<std::string> lines;
  if (!report.training_run) return lines;
  const TrainingPlan& plan = *report.training_run;
  for (const TrainingRun& run : plan.runs) {
    if (!run.runs()) {
      lines.push_back(fmt::format("{} cannot run it: {}", run.gpu, run.blocker));
    } else if (plan.job.rl) {
      // GRPO: the generation's share of the time, card by card (docs/cost.md, "Online RL").
      lines.push_back(fmt::format(
          "{} generation: {} generations x {} decode steps of {} sequences at {:.2f} ms = {} "
          "of the {}",
          run.gpu, group_digits(static_cast<std::int64_t>(std::ceil(run.generations))),
          group_digits(plan.job.rl->completion_len), group_digits(generation_batch_of(plan.job)),
          run.generation_step_seconds * 1000, hours_text(run.generation_hours),
          hours_text(run.hours)));
    }
  }
  return lines;
}

std::string serving_title(const Report& report) {
  const ServingRequest& r = report.serving_request;
  const std::string lengths =
      report.model.encoder_only()
          ? fmt::format(
                "{} tokens per request, encoded in one forward pass per batch "
                "(encoder-only: no KV cache, nothing generated)",
                group_digits(r.context_in))
          : fmt::format("{} in + {} out tokens per request", group_digits(r.context_in),
                        group_digits(r.context_out));
  std::string title = fmt::format(
      "{}; roofline x efficiency (bandwidth {:.2f} --mbu, compute {:.2f} --serve-mfu)", lengths,
      report.cost.serve_bandwidth_efficiency, report.cost.serve_compute_efficiency);
  if (r.min_user_tps > 0) title += fmt::format("; best = every user >= {} tok/s", rate_text(r.min_user_tps));
  return title;
}

Table serving_cards_table(const Report& report) {
  Table table;
  // An encoder's users are the sequences of a batch; its TTFT is one sequence's latency.
  const bool encoder = report.model.encoder_only();
  table.header = {"card",
                  "GPUs",
                  "compute",
                  encoder ? "max batch" : "max users",
                  "1 user tok/s",
                  encoder ? "best batch" : "best users",
                  "tok/s total",
                  "tok/s/user",
                  encoder ? "$/M in tok" : "$/M out tok",
                  encoder ? "latency" : "TTFT"};
  for (const ServingPlan& plan : report.serving) {
    if (!plan.blocker.empty()) {
      table.rows.push_back({plan.gpu, group_digits(plan.gpus), "cannot: " + plan.blocker, "", "",
                            "", "", "", "", ""});
      continue;
    }
    const std::string single =
        plan.points.empty() ? "-" : rate_text(plan.points.front().user_tokens_per_s);
    const std::string cards = plan.replicas > 1 ? fmt::format("{} (TP{} x {})", plan.gpus, plan.tp,
                                                              plan.replicas)
                                                : group_digits(plan.gpus);
    std::vector<std::string> row = {plan.gpu, cards, plan.compute_dtype,
                                    group_digits(plan.max_concurrency), single};
    if (plan.best) {
      row.push_back(group_digits(plan.best->concurrency));
      row.push_back(rate_text(plan.best->total_tokens_per_s));
      row.push_back(rate_text(plan.best->user_tokens_per_s));
      row.push_back(plan.usd_per_million_tokens ? usd_text(*plan.usd_per_million_tokens) : "-");
    } else {
      row.insert(row.end(), {"none", "-", "-", "-"});
    }
    const double ttft_ms = plan.ttft_seconds * 1000;
    row.push_back(fmt::format("{:.{}f} ms", ttft_ms, ttft_ms < 10 ? 2 : 0));
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table serving_points_table(const Report& report) {
  Table table;
  const bool encoder = report.model.encoder_only();
  table.header = {encoder ? "batch" : "users",
                  "tok/s/user",
                  "tok/s total",
                  "bound tok/s total",
                  encoder ? "pass" : "step",
                  "limit",
                  encoder ? "read/pass/GPU" : "read/step/GPU"};
  if (report.serving.empty()) return table;
  for (const ServingPoint& p : report.serving.front().points) {
    table.rows.push_back({group_digits(p.concurrency), rate_text(p.user_tokens_per_s),
                          rate_text(p.total_tokens_per_s), rate_text(p.bound_total_tokens_per_s),
                          fmt::format("{:.2f} ms", p.step_seconds * 1000),
                          p.memory_bound ? "bandwidth" : "compute",
                          format_bytes(static_cast<std::int64_t>(p.bytes_per_step))});
  }
  return table;
}

std::pair<std::string, std::vector<std::pair<std::string, std::int64_t>>> memory_bars(
    const Report& report) {
  const bool job = report.job.has_value();
  const MemoryBreakdown& b = job ? report.job->breakdown : report.memory.serve.breakdown;
  std::string title = job ? fmt::format("{} job, per GPU", report.only_mode)
                          : fmt::format("serving {} request(s) of {} tokens", 
                                        group_digits(report.assumptions.concurrency),
                                        group_digits(report.assumptions.context));
  return {title,
          {{"weights", b.weights},
           {"gradients", b.gradients},
           {"optimizer", b.optimizer},
           {"activations", b.activations},
           {"logits", b.logits},
           {"KV cache", b.kv_cache},
           {"SSM state", b.ssm_state},
           {overhead_label(report), b.overhead},
           {"generation (GRPO)", b.generation}}};
}

}  // namespace trace::sections
