// The report as GitHub-flavoured Markdown, for PR comments and docs.
#include <fmt/format.h>

#include "sections.hpp"
#include "trace/render/render.hpp"

namespace trace {

namespace {

std::string escape(const std::string& cell) {
  std::string out;
  for (const char c : cell) {
    if (c == '|') out += "\\";
    out += c;
  }
  return out;
}

void append_facts(std::string& out, const sections::Facts& facts) {
  out += "| | |\n|---|---|\n";
  for (const auto& [key, value] : facts) out += fmt::format("| {} | {} |\n", escape(key), escape(value));
}

void append_table(std::string& out, const sections::Table& table) {
  const auto line = [&](const std::vector<std::string>& cells) {
    out += "|";
    for (const std::string& cell : cells) out += " " + escape(cell) + " |";
    out += "\n";
  };
  line(table.header);
  out += "|";
  for (std::size_t c = 0; c < table.header.size(); ++c) out += "---|";
  out += "\n";
  for (const auto& row : table.rows) line(row);
}

}  // namespace

std::string render_markdown(const Report& report) {
  std::string out = fmt::format("# trace plan: {}\n\n## Model\n\n", report.model_id);
  append_facts(out, sections::model_facts(report));
  out += "\n## Parameters\n\n";
  append_facts(out, sections::parameter_facts(report));
  const std::vector<std::string> extras = sections::stored_extra_lines(report);
  if (!extras.empty()) {
    out += "\nStored extras (not parameters, not counted):\n\n";
    for (const std::string& line : extras) out += "- " + line + "\n";
  }
  out += "\n## Checkpoint storage\n\n";
  append_facts(out, sections::storage_facts(report));
  out += "\n## Memory\n\n" + sections::workload_line(report) + "\n\n";
  if (const auto memory = sections::memory_table(report); !memory.rows.empty()) {
    append_table(out, memory);
  }
  if (report.job) out += "\n" + sections::job_line(report) + "\n";
  if (const std::string limits = sections::job_limits_line(report); !limits.empty()) {
    out += "\n" + limits + "\n";
  }
  out += "\n" + sections::kv_line(report) + "\n";
  out += "\n## What fits\n\n";
  if (report.only_mode != "qlora") append_table(out, sections::cards_table(report));
  if (!report.cards.empty() && (report.only_mode.empty() || report.only_mode == "serve")) {
    out += "\n" + sections::concurrency_line(report) + "\n\n" + sections::context_line(report) +
           "\n";
    if (const std::string blocks = sections::hybrid_blocks_line(report); !blocks.empty()) {
      out += "\n" + blocks + "\n";
    }
  }
  if (report.training_run && report.only_mode != "serve") {
    out += "\n## Training run\n\n(" + sections::training_run_title(report) + "\n\n";
    append_facts(out, sections::training_flops_facts(report));
    out += "\n";
    append_table(out, sections::training_runs_table(report));
    for (const std::string& line : sections::training_run_lines(report)) out += "\n- " + line;
    out += "\n";
  }
  if (!report.serving.empty() && (report.only_mode.empty() || report.only_mode == "serve")) {
    out += "\n## Serving\n\n" + sections::serving_title(report) + "\n\n";
    append_table(out, sections::serving_cards_table(report));
    if (report.cards_given || report.only_mode == "serve") {
      out += "\nOn " + report.serving.front().gpu + ":\n\n";
      append_table(out, sections::serving_points_table(report));
    }
  }
  out += "\n## Structure\n\n";
  append_table(out, sections::structure_table(report));
  if (report.include_graph) {
    out += "\n## Graph\n\n";
    append_table(out, sections::graph_table(report));
  }
  if (!report.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const ReportNote& note : report.notes) out += "- " + note.text + "\n";
  }
  return out;
}

}  // namespace trace
