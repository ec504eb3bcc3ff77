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
/// A hybrid model's vLLM V1 blocks on the first card ("" for other models).
std::string hybrid_blocks_line(const Report& report);
/// The --mode job's per-GPU peak and verdict ("" without a job).
std::string job_line(const Report& report);
/// A training job checked against a card: "On 1 x l4: largest batch at 2,048 tokens: none;
/// longest sequence at batch 1: 1,408 tokens" ("" otherwise).
std::string job_limits_line(const Report& report);
/// "CUDA context", or "CUDA context + TP buffers" for a tensor-parallel serve job, "+ nf4 setup"
/// for a QLoRA base quantized in one pass.
std::string overhead_label(const Report& report);

// ---- time and cost (cost_sections.cpp) ----
/// "LoRA r16, all linear: 50,000 samples x 2,048 tokens x 10 epochs = 1.02B tokens (default run)".
std::string training_run_title(const Report& report);
/// FLOPs per token by term, the run's total, the MFU applied.
Facts training_flops_facts(const Report& report);
/// One row per card that can run it: GPUs, split, peak, compute dtype, hours, $/GPU-hour, cost.
Table training_runs_table(const Report& report);
/// The lines under the run table: "t4 cannot run it: no native bf16 peak ...", one per card
/// that cannot; under --rl grpo, each card's generation share of the time.
std::vector<std::string> training_run_lines(const Report& report);
/// "1,024 in + 1,024 out tokens per request; ...".
std::string serving_title(const Report& report);
/// One row per card: GPUs, users memory allows, 1-user speed, the best point and its cost.
Table serving_cards_table(const Report& report);
/// The first card's curve: concurrency -> per-user and total tokens/s, bound and expected.
Table serving_points_table(const Report& report);
/// The memory breakdown the bar chart shows (the --mode job's, else serving on the first card)
/// with its title.
std::pair<std::string, std::vector<std::pair<std::string, std::int64_t>>> memory_bars(
    const Report& report);
/// 5.55e19 -> "55.5 E"; 1234 -> "1.23 k" (SI, 3 significant digits).
std::string si(double value);

}  // namespace trace::sections
