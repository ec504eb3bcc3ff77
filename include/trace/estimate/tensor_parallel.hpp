#pragma once
/// Which tensor-parallel sizes can split a model: serving engines and Megatron give every rank
/// whole attention heads and whole SSM heads, so a size that does not divide them is refused at
/// start-up (vLLM: "Total number of attention heads (32) must be divisible by tensor parallel
/// size (7)"). docs/memory.md, "Parallelism".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

}  // namespace trace
