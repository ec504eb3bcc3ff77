#pragma once
// The per-GPU terms of an estimate as a JSON object, the same keys wherever trace prints one
// (the plan's estimate, trace check, trace validate's rows).
#include <nlohmann/json.hpp>

#include "trace/estimate/memory.hpp"

namespace trace {

inline nlohmann::ordered_json breakdown_json(const MemoryBreakdown& b) {
  return {{"weights", b.weights},         {"gradients", b.gradients}, {"optimizer", b.optimizer},
          {"activations", b.activations}, {"logits", b.logits},       {"kv_cache", b.kv_cache},
          {"ssm_state", b.ssm_state},     {"overhead", b.overhead},   {"generation", b.generation}};
}

}  // namespace trace
