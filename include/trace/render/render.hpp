#pragma once
/// Renderers: Report -> text. Pure; the CLI writes the result to stdout.
#include <cstdint>
#include <string>

#include "trace/cost/throughput.hpp"
#include "trace/report/report.hpp"
#include "trace/validate/validation.hpp"

namespace trace {

enum class OutputFormat { table, json, markdown };

struct RenderOptions {
  OutputFormat format = OutputFormat::table;
};

/// One JSON object, schema "trace.plan/1" (docs/json.md). Integers for every count and byte size.
std::string render_json(const Report& report);
/// The terminal report: model, parameters, memory, what fits, structure (+ full graph).
std::string render_table(const Report& report);
/// The same sections as GitHub-flavoured Markdown.
std::string render_markdown(const Report& report);
std::string render(const Report& report, const RenderOptions& options);
/// `trace check --json`: the job's verdict (schema "trace.check/1", docs/json.md).
std::string render_check_json(const Report& report);

/// `trace validate`: one JSON object (schema "trace.validate/1", docs/validation.md).
std::string render_scoreboard_json(const Scoreboard& board);
/// The scoreboard and every row as Markdown tables (the body of docs/validation.md).
std::string render_scoreboard_markdown(const Scoreboard& board);

/// `trace throughput`: one JSON object (schema "trace.throughput/1", docs/cost.md).
std::string render_throughput_json(const ThroughputComparison& comparison);
/// The per-kind summary and every row as Markdown (the generated part of docs/cost.md).
std::string render_throughput_markdown(const ThroughputComparison& comparison);
/// Every planned row, the unplanned ones with their reasons, the per-kind summary.
std::string render_throughput_table(const ThroughputComparison& comparison);

// ---- formatting helpers shared by the renderers ----
/// 8030261248 -> "8,030,261,248".
std::string group_digits(std::int64_t value);
/// 8030261248 -> "8.03B"; 124439808 -> "124.4M".
std::string short_count(std::int64_t value);
/// Bytes -> "15.00 GiB" / "512.0 MiB".
std::string format_bytes(std::int64_t bytes);

}  // namespace trace
