#pragma once
// The checkpoint as a table of tensors, for formats whose storage depends on each module's name
// (ModelOpt's per-module maps): every Linear with the name the safetensors gives it (wrapper
// prefix dropped: "layers.3.mixer.in_proj"), and the number of tensors the description implies.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/model/model_description.hpp"

namespace trace::layout {

/// What a Linear belongs to (quantization formats choose by it).
enum class LinearKind { attention, ssm, mlp, latent, head };

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
  LinearKind kind = LinearKind::mlp;
  bool bias = false;  ///< a ".bias" tensor of [rows] beside the weight
};

/// The module names of one block's parts under `prefix` ("layers.3"): a single-mixer block
/// (Nemotron-H, Mamba) calls its one module "mixer"; other blocks use the attention's own name,
/// the SSM's name ("mamba" when unnamed) and "mlp" for the FFN or MoE.
struct ModuleNames {
  std::string attention;
  std::string ssm;
  std::string ffn;
};
ModuleNames module_names(const std::string& prefix, const Block& block);

/// Every Linear weight of the text model (vision towers left out), in checkpoint order.
std::vector<NamedLinear> named_linears(const ModelDescription& model);

/// Tensors the checkpoint holds at full precision: one per weight, bias, norm weight/bias,
/// per-head vector, router buffer (routed experts stored one tensor per projection).
std::int64_t tensor_count(const ModelDescription& model);

/// ModelOpt: how the module `name` (wrapper prefix dropped) is stored: its exact entry in the
/// quantized_layers map, else the first matching pattern, else unquantized when excluded or in
/// an MTP layer, else the scheme's default. Routers are never quantized.
ModuleFormat modelopt_format(const ModeloptScheme& scheme, const std::string& name, bool mtp,
                             bool router);
/// ModelOpt: the first exact map entry not sorted before `name` (module_formats is sorted).
std::vector<std::pair<std::string, ModuleFormat>>::const_iterator first_at_or_after(
    const ModeloptScheme& scheme, std::string_view name);

}  // namespace trace::layout
