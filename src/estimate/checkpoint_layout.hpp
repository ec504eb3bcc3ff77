#pragma once
// The checkpoint as a table of tensors, for formats whose storage depends on each module's name
// (ModelOpt's per-module maps): every Linear with the name the safetensors gives it (wrapper
// prefix dropped: "layers.3.mixer.in_proj"), and the number of tensors the description implies.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/model_description.hpp"

namespace trace::layout {

struct NamedLinear {
  std::string name;
  std::int64_t rows = 0;  ///< output features
  std::int64_t cols = 0;  ///< input features
  bool mtp = false;       ///< inside a multi-token-prediction layer
  bool router = false;    ///< an MoE router or scoring projection: never quantized
  bool expert = false;    ///< a routed expert's projection
  /// Routed experts come as one entry per projection: name "...experts.*.up_proj", count = the
  /// number of experts (expert e's name has e in place of the '*').
  std::int64_t count = 1;
};

/// Every Linear weight of the text model (vision towers left out), in checkpoint order.
std::vector<NamedLinear> named_linears(const ModelDescription& model);

/// Tensors the checkpoint holds at full precision: one per weight, bias, norm weight/bias,
/// per-head vector, router buffer (routed experts stored one tensor per projection).
std::int64_t tensor_count(const ModelDescription& model);

}  // namespace trace::layout
