#pragma once
/// Renderers of a reconciliation (the report's `checkpoint` object and its terminal section).
/// Keys: docs/json.md, "checkpoint (reconciliation)"; rules: docs/checkpoint.md.
#include <string>

#include <nlohmann/json.hpp>

#include "trace/checkpoint/reconcile.hpp"

namespace trace {

/// The reconciliation's keys of the `checkpoint` object: source, shards, tensors,
/// stored_elements, bytes, by_dtype, logical_params, trace_params, delta_params,
/// unstored_params, expected,
/// delta, inventory, components, unmatched, explanations, agrees. Every count an integer.
nlohmann::json checkpoint_json(const checkpoint::Reconciliation& reconciliation);

/// A short terminal section: totals side by side, components that disagree, unmatched names.
std::string render_checkpoint_text(const checkpoint::Reconciliation& reconciliation);

}  // namespace trace
