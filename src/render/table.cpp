// The terminal report: plain ASCII tables (they survive pipes, logs and CI consoles) and one
// UTF-8 block-character bar chart of the memory breakdown.
#include <algorithm>
#include <fmt/format.h>

#include "sections.hpp"
#include "trace/render/chart.hpp"
#include "trace/render/checkpoint.hpp"
#include "trace/render/render.hpp"

namespace trace {

namespace {

void append_facts(std::string& out, const sections::Facts& facts) {
  std::size_t width = 0;
  for (const auto& [key, value] : facts) width = std::max(width, key.size());
  for (const auto& [key, value] : facts) {
    out += fmt::format("  {:<{}}  {}\n", key, width, value);
  }
}

void append_table(std::string& out, const sections::Table& table, std::size_t last_column_max = 0) {
  std::vector<std::size_t> widths(table.header.size(), 0);
  for (std::size_t c = 0; c < table.header.size(); ++c) widths[c] = table.header[c].size();
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  if (last_column_max > 0) widths.back() = std::min(widths.back(), last_column_max);
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text = " ";
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      text += last ? " " + cells[c] : fmt::format(" {:<{}}", cells[c], widths[c]);
    }
    out += text + "\n";
  };
  line(table.header);
  std::vector<std::string> rule;
  for (const std::size_t width : widths) rule.emplace_back(width, '-');
  line(rule);
  for (const auto& row : table.rows) line(row);
}

}  // namespace

std::string render_table(const Report& report) {
  std::string out;
  out += "MODEL\n";
  append_facts(out, sections::model_facts(report));
  out += "\nPARAMETERS\n";
  append_facts(out, sections::parameter_facts(report));
  const std::vector<std::string> extras = sections::stored_extra_lines(report);
  if (!extras.empty()) {
    out += "  stored extras (not parameters, not counted):\n";
    for (const std::string& line : extras) out += "    " + line + "\n";
  }
  out += "\nCHECKPOINT STORAGE\n";
  append_facts(out, sections::storage_facts(report));
  out += "\nMEMORY (" + sections::workload_line(report) + ")\n";
  if (const auto memory = sections::memory_table(report); !memory.rows.empty()) {
    append_table(out, memory);
  }
  if (report.job) out += "  " + sections::job_line(report) + "\n";
  if (const std::string limits = sections::job_limits_line(report); !limits.empty()) {
    out += "  " + limits + "\n";
  }
  out += "  " + sections::kv_line(report) + "\n";
  {
    const auto [title, parts] = sections::memory_bars(report);
    out += "  " + title + ":\n";
    std::string bars = render_bar_chart(parts);
    for (std::size_t start = 0; start < bars.size();) {
      const std::size_t end = bars.find('\n', start);
      out += "    " + bars.substr(start, end - start) + "\n";
      start = end == std::string::npos ? bars.size() : end + 1;
    }
  }
  if (report.only_mode != "qlora") {  // the card table has no QLoRA column; the job line says it
    // The training columns shard as the job asks (FSDP with --strategy fsdp), else ZeRO-3.
    const char* training = report.job ? data_parallel_label(report.job->job) : "ZeRO-3";
    out += fmt::format(
        "\nWHAT FITS (peak vs usable memory less headroom; sharded: {} for training, {} for "
        "serving)\n",
        training,
        report.assumptions.expert_parallel ? "expert parallel (EP) for MoE, else tensor parallel"
                                           : "tensor parallel");
    append_table(out, sections::cards_table(report));
  }
  if (!report.cards.empty() && (report.only_mode.empty() || report.only_mode == "serve")) {
    out += "  " + sections::concurrency_line(report) + "\n";
    out += "  " + sections::context_line(report) + "\n";
    if (const std::string blocks = sections::hybrid_blocks_line(report); !blocks.empty()) {
      out += "  " + blocks + "\n";
    }
  }
  if (report.training_run && (report.only_mode.empty() || report.only_mode != "serve")) {
    out += "\nTRAINING RUN (" + sections::training_run_title(report) + "\n";
    append_facts(out, sections::training_flops_facts(report));
    append_table(out, sections::training_runs_table(report));
    for (const std::string& line : sections::training_run_lines(report)) out += "  " + line + "\n";
  }
  if (!report.serving.empty() && (report.only_mode.empty() || report.only_mode == "serve")) {
    out += "\nSERVING (" + sections::serving_title(report) + ")\n";
    append_table(out, sections::serving_cards_table(report));
    if (report.cards_given || report.only_mode == "serve") {
      out += "  on " + report.serving.front().gpu + ":\n";
      append_table(out, sections::serving_points_table(report));
    }
  }
  out += "\nSTRUCTURE\n";
  append_table(out, sections::structure_table(report));
  if (report.include_graph) {
    out += fmt::format("\nGRAPH (batch {}, sequence {})\n", report.graph.batch,
                       report.graph.seq_len);
    append_table(out, sections::graph_table(report));
  }
  if (report.checkpoint) out += "\n" + render_checkpoint_text(*report.checkpoint);
  if (!report.notes.empty()) {
    out += "\nNOTES\n";
    for (const ReportNote& note : report.notes) out += "  - " + note.text + "\n";
  }
  return out;
}

}  // namespace trace
