// `trace throughput` output: JSON (schema trace.throughput/1), Markdown (the generated part of
// docs/cost.md) and a terminal table.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "trace/render/render.hpp"

namespace trace {

namespace {

constexpr std::string_view k_above_flag = "ABOVE BOUND";

bool above_bound(const ThroughputResult& r) {
  return r.ratio > 1 || (r.per_user_ratio && *r.per_user_ratio > 1);
}

// 28312 -> "28,312"; 104.9 -> "104.9"; 0.123 -> "0.123".
std::string figure(double value) {
  if (value >= 1000) return group_digits(static_cast<std::int64_t>(std::llround(value)));
  if (value >= 100) return fmt::format("{:.1f}", value);
  if (value >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3g}", value);
}

std::string short_model(const ThroughputResult& r) { return normalize_model_id(r.model); }

std::string per_user(const ThroughputResult& r) {
  if (!r.per_user_ratio) return "-";
  return fmt::format("{} / {} = {:.2f}", figure(*r.measured_per_user), figure(*r.bound_per_user),
                     *r.per_user_ratio);
}

std::string mfu_pair(const ThroughputResult& r) {
  if (r.row_kind != "train" || r.unit != "tokens/s/GPU") return "-";
  return fmt::format("{:.1f}% / {}", 100 * r.ratio,
                     r.source_mfu ? fmt::format("{:.1f}%", 100 * *r.source_mfu) : "-");
}

std::string summary_cell(const RatioSummary& s, double value) {
  return s.count ? fmt::format("{:.3f}", value) : "-";
}

}  // namespace

std::string render_throughput_json(const ThroughputComparison& comparison) {
  nlohmann::ordered_json out;
  out["schema"] = "trace.throughput/1";
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  nlohmann::ordered_json unplanned = nlohmann::ordered_json::array();
  for (const ThroughputResult& r : comparison.rows) {
    if (!r.planned) {
      unplanned.push_back({{"row_id", r.row_id}, {"reason", r.reason}});
      continue;
    }
    nlohmann::ordered_json item = {{"row_id", r.row_id},
                                   {"kind", throughput_kind_name(r.kind)},
                                   {"model", r.model},
                                   {"config", r.config},
                                   {"gpu", r.gpu},
                                   {"card", r.card},
                                   {"gpus", r.gpus},
                                   {"compute_dtype", r.compute_dtype},
                                   {"measured", r.measured},
                                   {"bound", r.bound},
                                   {"ratio", r.ratio},
                                   {"unit", r.unit},
                                   {"above_bound", above_bound(r)}};
    if (r.concurrency) item["concurrency"] = *r.concurrency;
    if (r.per_user_ratio) {
      item["measured_per_user"] = *r.measured_per_user;
      item["bound_per_user"] = *r.bound_per_user;
      item["per_user_ratio"] = *r.per_user_ratio;
    }
    if (r.row_kind == "train" && r.unit == "tokens/s/GPU") item["implied_mfu"] = r.ratio;
    if (r.source_mfu) item["source_mfu"] = *r.source_mfu;
    item["notes"] = r.notes;
    rows.push_back(item);
  }
  out["rows"] = rows;
  out["unplanned"] = unplanned;
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  for (const auto& [kind, s] : comparison.summary) {
    nlohmann::ordered_json entry = {{"count", s.count}};
    for (const auto& [name, value] : {std::pair<const char*, double>{"median", s.median},
                                      {"p10", s.p10},
                                      {"p90", s.p90},
                                      {"min", s.min},
                                      {"max", s.max}}) {
      entry[name] = s.count ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
    }
    summary[std::string(throughput_kind_name(kind))] = entry;
  }
  out["summary"] = summary;
  out["above_bound"] = comparison.above_bound;
  return out.dump(2) + "\n";
}

std::string render_throughput_markdown(const ThroughputComparison& comparison) {
  std::string out;
  out += "| kind | rows | median | p10 | p90 | min | max |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [kind, s] : comparison.summary) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", throughput_kind_name(kind),
                       s.count, summary_cell(s, s.median), summary_cell(s, s.p10),
                       summary_cell(s, s.p90), summary_cell(s, s.min), summary_cell(s, s.max));
  }
  out += "\n### Rows above the bound\n\n";
  bool any = false;
  for (const ThroughputResult& r : comparison.rows) {
    if (!r.planned || !above_bound(r)) continue;
    any = true;
    out += fmt::format("- **row {}** ({}, {}, {} x {}): measured {:.2f} x the bound\n", r.row_id,
                       throughput_kind_name(r.kind), short_model(r), r.gpus, r.card,
                       r.per_user_ratio && *r.per_user_ratio > r.ratio ? *r.per_user_ratio : r.ratio);
  }
  if (!any) out += "None.\n";
  out += "\n### Rows trace could not plan\n\n";
  any = false;
  for (const ThroughputResult& r : comparison.rows) {
    if (r.planned) continue;
    any = true;
    out += fmt::format("- row {} ({}, {}, {}): {}\n", r.row_id, r.row_kind, r.model, r.gpu, r.reason);
  }
  if (!any) out += "None.\n";
  out += "\n### Model aliases\n\nA row whose own repo has no config is read with the config of a "
         "repo of the same architecture, only when listed here:\n\n| repo | read as | why |\n"
         "|---|---|---|\n";
  for (const ModelAlias& alias : model_aliases()) {
    out += fmt::format("| {} | {} | {} |\n", alias.repo_id, alias.same_architecture_as, alias.reason);
  }
  out += "\n### Every planned row\n\n";
  out += "| row | kind | model | cards | compute | concurrency | measured | bound | measured / bound "
         "| per user (measured / bound) | MFU trace / source | how it was read |\n";
  out += "|---|---|---|---|---|---:|---:|---:|---:|---|---|---|\n";
  for (const ThroughputResult& r : comparison.rows) {
    if (!r.planned) continue;
    std::string notes;
    for (const std::string& note : r.notes) notes += (notes.empty() ? "" : "; ") + note;
    out += fmt::format("| {} | {} | {} | {} x {} | {} | {} | {} | {} {} | {:.3f}{} | {} | {} | {} |\n",
                       r.row_id, throughput_kind_name(r.kind), short_model(r), r.gpus, r.card,
                       r.compute_dtype, r.concurrency ? fmt::format("{}", *r.concurrency) : "-",
                       figure(r.measured), figure(r.bound), r.unit, r.ratio,
                       above_bound(r) ? fmt::format(" **{}**", k_above_flag) : "", per_user(r),
                       mfu_pair(r), notes.empty() ? "-" : notes);
  }
  return out;
}

std::string render_throughput_table(const ThroughputComparison& comparison) {
  std::string out;
  out += fmt::format("{:>4}  {:<17}  {:<36}  {:<14}  {:>10}  {:>10}  {:>6}  {}\n", "row", "kind",
                     "model", "cards", "measured", "bound", "ratio", "unit");
  std::int64_t unplanned = 0;
  for (const ThroughputResult& r : comparison.rows) {
    if (!r.planned) {
      ++unplanned;
      continue;
    }
    out += fmt::format("{:>4}  {:<17}  {:<36}  {:<14}  {:>10}  {:>10}  {:>6.3f}  {}{}\n", r.row_id,
                       throughput_kind_name(r.kind), short_model(r).substr(0, 36),
                       fmt::format("{} x {}", r.gpus, r.card), figure(r.measured), figure(r.bound),
                       r.ratio, r.unit,
                       above_bound(r) ? fmt::format("   <<< {}: CHECK THE BOUND OR THE READING", k_above_flag)
                                      : "");
  }
  if (comparison.above_bound > 0) {
    out += fmt::format("\n!!! {} row(s) measured above trace's bound: a bound cannot be beaten, so "
                       "the bound or the row's reading is wrong\n",
                       comparison.above_bound);
  }
  out += fmt::format("\nnot planned ({}):\n", unplanned);
  for (const ThroughputResult& r : comparison.rows) {
    if (!r.planned) out += fmt::format("{:>4}  {}: {}\n", r.row_id, short_model(r), r.reason);
  }
  out += "\nmeasured / bound per kind:\n";
  for (const auto& [kind, s] : comparison.summary) {
    if (s.count == 0) {
      out += fmt::format("  {:<17}  no rows\n", throughput_kind_name(kind));
      continue;
    }
    out += fmt::format("  {:<17}  n {:>3}  median {:.3f}  p10 {:.3f}  p90 {:.3f}  min {:.3f}  max {:.3f}\n",
                       throughput_kind_name(kind), s.count, s.median, s.p10, s.p90, s.min, s.max);
  }
  return out;
}

}  // namespace trace
