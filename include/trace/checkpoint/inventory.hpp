#pragma once
/// The structure-derived tensor inventory: every tensor trace expects in the model's safetensors
/// files, with the checkpoint's own name, shape and dtype, built from the ModelDescription (and
/// its quantization) alone. Reconciliation sets it against the real headers (reconcile.hpp).
/// Naming rules and formats covered: docs/checkpoint.md.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/model/model_description.hpp"

namespace trace::checkpoint {

struct ExpectedTensor {
  std::string name;                 ///< as stored: "model.layers.0.self_attn.q_proj.weight"
  std::vector<std::int64_t> shape;  ///< as stored (a packed NVFP4 weight: [rows, cols / 2])
  std::string_view dtype;           ///< safetensors dtype name (static storage)
  /// Model parameters this tensor holds, unpacked (an NVFP4 U8 [r, c/2] holds r x c); 0 for
  /// scales and other tensors that are not parameters.
  std::int64_t logical_params = 0;
  /// A stored buffer, not a parameter, that only some uploads hold (GPT-2's causal masks,
  /// GPT-NeoX's masks and rotary inv_freq, Falcon's copy of the tied embedding): never reported
  /// missing, matched by name and shape (its dtype is the upload's), outside the storage estimate.
  bool buffer = false;
  /// A parameter that uploads may leave out because the model rebuilds it at load (Marian's and
  /// Pegasus's fixed sinusoidal position tables: MarianMTModel's _keys_to_ignore_on_save,
  /// convert_pegasus_tf_to_pytorch.py). Counted by trace as num_parameters() counts it; never
  /// reported missing; an upload without it should hold trace's count less its elements.
  bool droppable = false;
  /// A second dtype uploads of the family store this tensor in (Qwen3.5's own uploads keep
  /// A_log and the DeltaNet norm in F32, later ones BF16): matched without a mismatch, its bytes
  /// expected as found. Empty: `dtype` only.
  std::string_view also_stored_as{};
  std::int64_t elements() const;
  std::int64_t bytes() const;
};

struct Inventory {
  std::vector<ExpectedTensor> tensors;
  /// True when every tensor of the checkpoint is expected by name (the family's naming and the
  /// quantization's tensor layout are both known). When false, reconciliation compares totals
  /// and components only and lists no names as missing or unexpected.
  bool complete = false;
  std::string naming;              ///< the naming rules used, e.g. "transformers (model.*)"
  std::vector<std::string> gaps;   ///< why the inventory is partial
  std::string layer_prefix;        ///< "model.layers." or "backbone.layers."
  /// The wrapper an upload saved from the bare base class leaves out of every name (OPTModel's
  /// and BartModel's "decoder.*" for "model.decoder.*"); empty: none such is known.
  std::string bare_prefix;
  std::int64_t main_layers = 0;    ///< DeepSeek stores MTP layers as layers.{main_layers + i}
};

/// The tensors the model's checkpoint holds. Throws ConfigError only on overflow.
Inventory build_inventory(const ModelDescription& model);

/// The component a checkpoint tensor name belongs to, by name pattern: embedding, attention, ssm,
/// mlp, experts, router, norm, head, vision, mtp or other. Scales go with their module.
std::string component_of(std::string_view name, const Inventory& inventory);

}  // namespace trace::checkpoint
