#pragma once
/// Reconciliation: trace's structure-derived tensor inventory against the checkpoint's real
/// safetensors headers. Totals side by side with deltas, agreement per component, the first few
/// tensor names on one side only, shape/dtype mismatches by name, and why stored elements differ
/// from logical parameters in packed formats. Rules: docs/checkpoint.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/checkpoint/inventory.hpp"
#include "trace/checkpoint/safetensors.hpp"
#include "trace/estimate/storage.hpp"

namespace trace::checkpoint {

struct Totals {
  std::int64_t tensors = 0;
  std::int64_t stored_elements = 0;
  std::int64_t bytes = 0;
  friend bool operator==(const Totals&, const Totals&) = default;
};

struct ComponentAgreement {
  std::string component;  ///< embedding, attention, ssm, mlp, experts, router, norm, head, mtp, ...
  Totals expected;        ///< trace's inventory
  Totals found;           ///< the headers
  bool agrees() const { return expected == found; }
};

struct TensorMismatch {
  std::string name;
  std::string expected;  ///< "BF16 [4096, 4096]"
  std::string found;
};

struct Reconciliation {
  std::string source;  ///< where the headers came from (set by the caller: a path, a repo@sha)
  CheckpointSummary summary;  ///< what the headers hold
  Totals expected;  ///< trace: the inventory, or the storage estimate when the inventory is partial
  Totals found;     ///< the headers
  /// Parameters the headers hold, unpacked by the packing rules (an NVFP4 byte is two, an I32
  /// qweight 32 / bits) and without scales; trace's count; their difference (found - trace, less
  /// the unstored parameters below).
  std::int64_t logical_params = 0;
  std::int64_t trace_params = 0;
  std::int64_t delta_params = 0;
  /// Parameters of droppable tensors (inventory.hpp) this upload does not store: delta_params
  /// compares the headers with trace_params less these.
  std::int64_t unstored_params = 0;
  bool inventory_complete = false;
  std::string naming;
  std::vector<std::string> gaps;  ///< why the inventory is partial
  std::vector<ComponentAgreement> components;
  /// Names on one side only and shape/dtype mismatches: counts, and the first max_names of each
  /// (sorted). Left empty when the inventory is partial (no false "unmatched" noise).
  std::int64_t only_in_checkpoint_count = 0;
  std::int64_t only_in_trace_count = 0;
  std::int64_t mismatch_count = 0;
  std::vector<std::string> only_in_checkpoint;
  std::vector<std::string> only_in_trace;
  std::vector<TensorMismatch> mismatches;
  std::vector<std::string> explanations;  ///< packed formats, scales: why elements != parameters
  /// Everything agrees: totals, parameters, and (complete inventory) every name, shape and dtype.
  bool agrees() const;
};

struct ReconcileOptions {
  std::size_t max_names = 10;
  /// Used for the expected totals when the inventory is partial (trace's storage estimate).
  const StorageEstimate* storage = nullptr;
  /// Bits per value packed in an I32 qweight or weight_packed (GPTQ/AWQ: the config's bits;
  /// compressed-tensors: the pack-quantized group's num_bits).
  std::int64_t packed_bits = 4;
};

/// Parameters the checkpoint's headers hold, by the packing rules alone (no inventory): an
/// NVFP4 or bitsandbytes 4-bit U8 weight (with its scale sibling) and MXFP4 *_blocks hold two
/// values per byte, an I32 qweight or weight_packed 32 / packed_bits; scales, zeros, indices,
/// compressed-tensors' weight_shape and RoPE inv_freq buffers hold none; every other tensor its
/// elements.
std::int64_t header_logical_params(const std::vector<SafetensorsHeader>& shards,
                                   std::int64_t packed_bits = 4);

/// Sets the inventory against the headers. `trace_params` is trace's parameter count
/// (ParameterCount::total). Throws CheckpointError on duplicate names across shards.
Reconciliation reconcile(const Inventory& inventory, const std::vector<SafetensorsHeader>& shards,
                         std::int64_t trace_params, const ReconcileOptions& options = {});

/// The whole pipeline for a model trace has already counted: builds the inventory, passes the
/// storage estimate (for partial inventories) and the GPTQ/AWQ/compressed-tensors bit width, and
/// sets `source`.
Reconciliation reconcile_model(const ModelDescription& model, const ParameterCount& params,
                               const StorageEstimate& storage,
                               const std::vector<SafetensorsHeader>& shards, std::string source);

}  // namespace trace::checkpoint
