// Scoreboard output: JSON (schema trace.validate/1), and Markdown (docs/validation.md).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "breakdown_json.hpp"
#include "trace/csv.hpp"
#include "trace/render/render.hpp"

namespace trace {

namespace {

std::string percent(std::int64_t part, std::int64_t whole) {
  return whole == 0 ? "-" : fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) /
                                                       static_cast<double>(whole));
}

// The p90 target: rows further off than this make the error tail.
constexpr double k_error_tail = 0.25;

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
  out["boundary_rows"] = board.boundary_rows;
  out["boundary_median_abs_seq_len_error"] = board.boundary_median_abs_error;
  nlohmann::ordered_json unplanned = nlohmann::ordered_json::array();
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const RowResult& row : board.results) {
    if (!row.planned) unplanned.push_back({{"row_id", row.row_id}, {"reason", row.reason}});
    nlohmann::ordered_json item = {{"row_id", row.row_id},
                                   {"task", row.task},
                                   {"model_id", row.model_id},
                                   {"planned", row.planned},
                                   {"oom", row.oom}};
    if (!row.label_known) item["oom"] = nullptr;  // job_oom says neither 0 nor 1
    if (row.planned) {
      item["estimate_gib"] = row.estimate_gib;
      item["predicted_fit"] = row.predicted_fit;
      if (row.budget_bytes > 0) {
        item["verdict_bytes"] = row.verdict_bytes;
        item["budget_bytes"] = row.budget_bytes;
      }
      if (row.floor_only) item["floor_only"] = true;
      item["read_as"] = row.read_as;
      if (row.breakdown) item["breakdown"] = breakdown_json(*row.breakdown);
    }
    if (row.measured_gib) item["measured_gib"] = *row.measured_gib;
    if (row.relative_error) item["relative_error"] = *row.relative_error;
    if (row.longest_seq_len) {
      item["measured_seq_len"] = row.measured_seq_len;
      item["longest_seq_len"] = *row.longest_seq_len;
      item["seq_len_error"] = row.seq_len_error().value_or(0);
    }
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

  // What stands between the scoreboard and the targets: the did-not-fit rows let through (an
  // unplanned one can never be flagged, which bounds the recall) and the error tail.
  std::int64_t oom_unplanned = 0;
  std::string let_through;
  for (const RowResult& row : board.results) {
    if (!row.oom) continue;
    if (!row.planned) {
      ++oom_unplanned;
    } else if (row.predicted_fit) {
      // how far the verdict was from flagging it: the held peak with the CUDA context against
      // the budget (a training or generate() row; an engine row's verdict is its pool)
      const std::string short_of =
          row.budget_bytes > 0
              ? fmt::format(" ({} of a {} budget: {} short of \"does not fit\")",
                            format_bytes(row.verdict_bytes), format_bytes(row.budget_bytes),
                            format_bytes(row.budget_bytes - row.verdict_bytes))
              : "";
      let_through += fmt::format("- row {} ({}, {}): {:.2f} GiB{}; read as {}\n", row.row_id,
                                 row.task, row.model_id, row.estimate_gib, short_of, row.read_as);
    }
  }
  out += "\n### Did-not-fit rows trace let through\n\n";
  out += fmt::format(
      "{} of the {} did-not-fit rows are not planned (listed above), so the recall cannot pass "
      "{} whatever the estimator does. Planned, and said to fit:\n\n",
      oom_unplanned, board.oom_rows, percent(board.oom_rows - oom_unplanned, board.oom_rows));
  out += let_through.empty() ? "None.\n" : let_through;
  std::vector<const RowResult*> tail;
  for (const RowResult& row : board.results) {
    if (row.relative_error && std::abs(*row.relative_error) > k_error_tail) tail.push_back(&row);
  }
  std::sort(tail.begin(), tail.end(), [](const RowResult* a, const RowResult* b) {
    return std::abs(*a->relative_error) > std::abs(*b->relative_error);
  });
  out += fmt::format("\n### The error tail: rows more than {:.0f}% off\n\n", 100 * k_error_tail);
  const std::int64_t p90_rank = nearest_rank(board.error_rows, 0.9);
  out += fmt::format(
      "The 90th percentile (nearest rank) is error {} of the {} in ascending order, so it is "
      "within {:.0f}% when no more than {} rows are further off. Rows further off now: {}.\n\n",
      p90_rank, board.error_rows, 100 * k_error_tail, board.error_rows - p90_rank, tail.size());
  for (const RowResult* row : tail) {
    out += fmt::format("- row {} ({}, {}): {:+.1f}%\n", row->row_id, row->task, row->model_id,
                       100 * *row->relative_error);
  }
  if (tail.empty()) out += "None.\n";
  // Only CSVs with boundary rows (unit_basis nominal_card_GB) get the section.
  if (board.boundary_rows > 0) {
    out += "\n### Boundary rows: the longest sequence on a VRAM tier\n\n";
    out += fmt::format(
        "Rows whose job is the longest sequence that fit a card tier (`unit_basis` "
        "nominal_card_GB) are scored above for their verdict; here trace's own longest sequence "
        "on the tier (at the row's batch, under the same verdict) is set beside the row's. "
        "Median |error| over {} rows: {:.1f}%. Not one of the four targets.\n\n",
        board.boundary_rows, 100 * board.boundary_median_abs_error);
    out += "| row | model | measured tokens | trace tokens | error | read as |\n";
    out += "|---|---|---:|---:|---:|---|\n";
    for (const RowResult& row : board.results) {
      if (!row.longest_seq_len) continue;
      out += fmt::format("| {} | {} | {} | {} | {:+.1f}% | {} |\n", row.row_id, row.model_id,
                         group_digits(row.measured_seq_len), group_digits(*row.longest_seq_len),
                         100 * row.seq_len_error().value_or(0), row.read_as);
    }
  }
  out += "\n### Every row\n\n| row | task | model | measured GiB | trace GiB | error | ran? | trace says | read as |\n";
  out += "|---|---|---|---:|---:|---:|---|---|---|\n";
  for (const RowResult& row : board.results) {
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.row_id, row.task,
                    row.model_id, row.measured_gib ? fmt::format("{:.2f}", *row.measured_gib) : "-",
                    row.planned ? fmt::format("{:.2f}", row.estimate_gib) : "-",
                    row.relative_error ? fmt::format("{:+.1f}%", 100 * *row.relative_error) : "-",
                    !row.label_known ? "?"
                    : row.oom        ? "OOM"
                                     : "ran",
                    !row.planned        ? "not planned"
                    : row.predicted_fit ? "fits"
                    : row.floor_only    ? "does not fit (even its floor)"
                                        : "does not fit",
                    row.planned ? row.read_as : "-");
  }
  return out;
}

}  // namespace trace
