#pragma once
/// Which parallel layouts can split a model: serving engines and Megatron give every rank whole
/// attention and SSM heads, every pipeline stage at least one layer and every expert-parallel
/// rank whole experts, and refuse other layouts at start-up (vLLM: "Total number of attention
/// heads (32) must be divisible by tensor parallel size (7)"). docs/memory.md, "Parallelism".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/estimate/job.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

/// Why `tp` ranks cannot split the text model (the first layer it fails, in words), or nullopt
/// when every layer splits. Per attention layer: the query heads divide by tp; the KV heads
/// divide by tp, or, when fewer than tp, divide it (each is then replicated on tp / kv ranks).
/// Per SSM mixer: its heads (Mamba-1: its channels) divide by tp; Mamba-2's B/C groups divide
/// by tp or are one group. Vision towers and MTP layers are not checked.
std::optional<std::string> tensor_parallel_problem(const ModelDescription& model, std::int64_t tp);

/// The sizes up to `limit` that split every layer (1 always does), ascending.
std::vector<std::int64_t> tensor_parallel_sizes(const ModelDescription& model, std::int64_t limit);

/// Throws ConfigError naming `flag` when `tp` ranks cannot split the model, with the sizes
/// that can.
void require_tensor_parallel(const ModelDescription& model, std::int64_t tp, const char* flag);

/// What the pipeline and expert checks need of a model: its text layers and the greatest
/// common divisor of its MoE layers' routed experts (0: no MoE layer). One walk of the layers.
struct StageAndExpertLimits {
  std::int64_t layers = 0;
  std::int64_t experts_gcd = 0;
};
StageAndExpertLimits stage_and_expert_limits(const ModelDescription& model);

/// Throws ConfigError naming the flag for more pipeline stages (--pp) than text layers, or an
/// --ep > 1 on a model without routed experts, or one that does not divide every MoE layer's
/// experts or the tp x data-parallel ranks of a pipeline stage it spreads over.
void require_stage_and_expert_layout(const StageAndExpertLimits& limits, const Job& job);

/// Both checks: a --tp that does not split the heads (require_tensor_parallel), then
/// require_stage_and_expert_layout.
void require_parallel_layout(const ModelDescription& model, const Job& job);

}  // namespace trace
