// Scoreboard output: JSON (schema trace.validate/1), and Markdown (docs/validation.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "trace/render/render.hpp"

namespace trace {

namespace {

std::string percent(std::int64_t part, std::int64_t whole) {
  return whole == 0 ? "-" : fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) /
                                                       static_cast<double>(whole));
}

}  // namespace

std::string render_scoreboard_json(const Scoreboard& board) {
  nlohmann::ordered_json out;
  out["schema"] = "trace.validate/1";
  out["rows"] = board.rows;
  out["planned"] = board.planned;
  out["oom_rows"] = board.oom_rows;
  out["oom_flagged"] = board.oom_flagged;
  out["fit_rows"] = board.fit_rows;
  out["fit_rejected"] = board.fit_rejected;
  out["error_rows"] = board.error_rows;
  out["median_abs_rel_error"] = board.median_abs_rel_error;
  out["p90_abs_rel_error"] = board.p90_abs_rel_error;
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (const Scoreboard::Task& task : board.tasks) {
    tasks.push_back({{"task", task.task},
                     {"rows", task.rows},
                     {"planned", task.planned},
                     {"oom_rows", task.oom_rows},
                     {"oom_flagged", task.oom_flagged},
                     {"fit_rows", task.fit_rows},
                     {"fit_rejected", task.fit_rejected},
                     {"error_rows", task.error_rows},
                     {"median_abs_rel_error", task.median_abs_rel_error},
                     {"p90_abs_rel_error", task.p90_abs_rel_error}});
  }
  out["tasks"] = tasks;
  nlohmann::ordered_json unplanned = nlohmann::ordered_json::array();
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const RowResult& row : board.results) {
    if (!row.planned) unplanned.push_back({{"row_id", row.row_id}, {"reason", row.reason}});
    nlohmann::ordered_json item = {{"row_id", row.row_id},
                                   {"task", row.task},
                                   {"model_id", row.model_id},
                                   {"planned", row.planned},
                                   {"oom", row.oom}};
    if (row.planned) {
      item["estimate_gib"] = row.estimate_gib;
      item["predicted_fit"] = row.predicted_fit;
      if (row.floor_only) item["floor_only"] = true;
      item["read_as"] = row.read_as;
    }
    if (row.measured_gib) item["measured_gib"] = *row.measured_gib;
    if (row.relative_error) item["relative_error"] = *row.relative_error;
    results.push_back(item);
  }
  out["unplanned"] = unplanned;
  out["results"] = results;
  return out.dump(2) + "\n";
}

std::string render_scoreboard_markdown(const Scoreboard& board) {
  std::string out;
  out += "| task | rows | planned | did-not-fit recall | false \"does not fit\" | median error | p90 error |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|\n";
  const auto line = [&](const std::string& name, std::int64_t rows, std::int64_t planned,
                        std::int64_t oom_rows, std::int64_t oom_flagged, std::int64_t fit_rows,
                        std::int64_t fit_rejected, std::int64_t error_rows, double median,
                        double p90) {
    out += fmt::format("| {} | {} | {} | {} ({}/{}) | {} ({}/{}) | {} | {} |\n", name, rows, planned,
                       percent(oom_flagged, oom_rows), oom_flagged, oom_rows,
                       percent(fit_rejected, fit_rows), fit_rejected, fit_rows,
                       error_rows ? fmt::format("{:.1f}% (n={})", 100 * median, error_rows) : "-",
                       error_rows ? fmt::format("{:.1f}%", 100 * p90) : "-");
  };
  for (const Scoreboard::Task& t : board.tasks) {
    line(t.task, t.rows, t.planned, t.oom_rows, t.oom_flagged, t.fit_rows, t.fit_rejected,
         t.error_rows, t.median_abs_rel_error, t.p90_abs_rel_error);
  }
  line("**all**", board.rows, board.planned, board.oom_rows, board.oom_flagged, board.fit_rows,
       board.fit_rejected, board.error_rows, board.median_abs_rel_error, board.p90_abs_rel_error);
  out += "\n### Rows trace could not plan\n\n";
  bool any = false;
  for (const RowResult& row : board.results) {
    if (row.planned) continue;
    any = true;
    out += fmt::format("- row {} ({}, {}): {}\n", row.row_id, row.task, row.model_id, row.reason);
  }
  if (!any) out += "None.\n";
  out += "\n### Every row\n\n| row | task | model | measured GiB | trace GiB | error | ran? | trace says | read as |\n";
  out += "|---|---|---|---:|---:|---:|---|---|---|\n";
  for (const RowResult& row : board.results) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.row_id, row.task,
                       row.model_id,
                       row.measured_gib ? fmt::format("{:.2f}", *row.measured_gib) : "-",
                       row.planned ? fmt::format("{:.2f}", row.estimate_gib) : "-",
                       row.relative_error ? fmt::format("{:+.1f}%", 100 * *row.relative_error) : "-",
                       row.oom ? "OOM" : "ran",
                       !row.planned           ? "not planned"
                       : row.predicted_fit    ? "fits"
                       : row.floor_only       ? "does not fit (even its floor)"
                                              : "does not fit",
                       row.planned ? row.read_as : "-");
  }
  return out;
}

}  // namespace trace
