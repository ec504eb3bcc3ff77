#pragma once
// The report's sections as plain rows, shared by the terminal and Markdown renderers so both
// always say the same thing.
#include <string>
#include <utility>
#include <vector>

#include "trace/report/report.hpp"

namespace trace::sections {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

using Facts = std::vector<std::pair<std::string, std::string>>;

Facts model_facts(const Report& report);
Facts parameter_facts(const Report& report);
/// The checkpoint's storage: format, stored elements, bytes by dtype.
Facts storage_facts(const Report& report);
Table memory_table(const Report& report);
Table cards_table(const Report& report);
/// Consecutive identical layers collapsed: "0-31 (x32)" | "RMSNorm > Attention ... > MLP ...".
Table structure_table(const Report& report);
/// Every node with its output shape and parameters.
Table graph_table(const Report& report);
std::string workload_line(const Report& report);
/// "KV cache: 131,072 bytes per token (bf16) ..." under the memory table.
std::string kv_line(const Report& report);
std::vector<std::string> stored_extra_lines(const Report& report);
/// "On h100-80gb at 1,048,576 tokens: 8 concurrent requests (...)" for the first card.
std::string concurrency_line(const Report& report);
/// "Longest context on one h100-80gb at 1 concurrent request(s): ... tokens".
std::string context_line(const Report& report);
/// The --mode job's per-GPU peak and verdict ("" without a job).
std::string job_line(const Report& report);

}  // namespace trace::sections
