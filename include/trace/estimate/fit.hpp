#pragma once
/// "What fits on which card": compares each mode's peak with a card's usable memory after the
/// headroom, finds the largest batch, and the fewest cards when one is not enough (ZeRO-3/FSDP
/// for training, tensor parallelism for serving). Formulas: docs/memory.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/estimate/memory.hpp"
#include "trace/hardware/gpu_catalog.hpp"

namespace trace {

/// Largest batch reported; beyond it the answer is "at least this many".
inline constexpr std::int64_t k_max_reported_batch = 1'000'000;
/// Largest card count searched for sharded plans.
inline constexpr std::int64_t k_max_cards = 4096;

/// What a card offers a job: its usable memory less the headroom share (floored).
std::int64_t budget_bytes(std::int64_t usable_bytes, double headroom_fraction);

struct ModeFit {
  bool fits = false;           ///< batch 1 fits on one card
  std::int64_t max_batch = 0;  ///< largest batch on one card (0 when batch 1 does not fit)
  std::optional<std::int64_t> min_cards;  ///< fewest cards holding batch 1 (1 when it fits)
  std::int64_t bytes_per_card = 0;        ///< peak per card at batch 1 on min_cards cards
  std::string strategy;                   ///< the split min_cards assumes
};

struct CardFit {
  std::string id;
  std::string name;
  std::int64_t memory_bytes = 0;  ///< usable
  std::int64_t budget_bytes = 0;  ///< usable x (1 - headroom)
  ModeFit full_finetune;
  ModeFit lora;
  ModeFit serve;
};

/// Fit of one mode on a card with `budget_bytes` to spend. `tp_divisor`: serving shards only
/// over card counts that divide it (the attention head count); 0 means any count (ZeRO-3).
ModeFit fit_mode(const ModeMemory& mode, std::int64_t budget_bytes, std::int64_t tp_divisor,
                 std::int64_t kv_heads);
/// Serving fit with expert parallelism: routed experts split over n cards (n divides
/// num_experts), everything else replicated, each card holding its own sequences' KV cache.
ModeFit fit_expert_parallel(const ModeMemory& mode, std::int64_t budget_bytes,
                            std::int64_t num_experts);

/// The longest context (tokens per request) with which `concurrency` requests fit in
/// `budget_bytes` beside `fixed_bytes` (weights + CUDA context): the largest c with
/// fixed + concurrency x (KV(c) + SSM state) <= budget, KV(c) window-aware (kv_cache_bytes).
/// 0 when not even one token fits; capped at 2^27 tokens.
std::int64_t longest_context(const ModelDescription& model, const MemoryAssumptions& assumptions,
                             std::int64_t budget_bytes, std::int64_t fixed_bytes,
                             std::int64_t concurrency);

std::vector<CardFit> fit_cards(const MemoryEstimate& memory, const ModelDescription& model,
                               const std::vector<const GpuSpec*>& gpus,
                               const MemoryAssumptions& assumptions);

}  // namespace trace
