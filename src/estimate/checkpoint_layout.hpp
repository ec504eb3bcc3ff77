#pragma once
// The checkpoint as a table of tensors, for formats whose storage depends on each module's name
// (ModelOpt's per-module maps): every Linear with the name the safetensors gives it (wrapper
// prefix dropped: "layers.3.mixer.in_proj"), and the number of tensors the description implies.
#include <cstdint>
#include <optional>
#include <regex>
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

/// The Linears of one block under `prefix` ("layers.3", or a vision tower's "visual.blocks.3"),
/// appended to `out` in checkpoint order; none for a block that reuses another's weights.
void block_linears(const std::string& prefix, const Block& block, bool mtp,
                   std::vector<NamedLinear>& out);

/// Tensors the checkpoint holds at full precision: one per weight, bias, norm weight/bias,
/// per-head vector, router buffer (routed experts stored one tensor per projection).
std::int64_t tensor_count(const ModelDescription& model);

/// A tower's layer scales held as one extra parameter ("vision_model.encoder.layers.*.ls1/ls2",
/// InternViT's): the layers' prefix, the leaves stored in each layer, and the layers of the
/// stack the prefix names. nullopt for any other extra, or where the count does not divide.
struct LayerScales {
  std::string layers_prefix;  ///< "vision_model.encoder.layers"
  std::vector<std::string> leaves;
  std::int64_t layers = 0;
  std::int64_t width = 0;  ///< values in each
};
std::optional<LayerScales> layer_scales(const ModelDescription& model, const ExtraParameter& extra);

/// ModelOpt: how the module `name` (wrapper prefix dropped) is stored: its exact entry in the
/// quantized_layers map, else the first matching pattern, else unquantized when excluded or in
/// an MTP layer, else the scheme's default. Routers are never quantized.
ModuleFormat modelopt_format(const ModeloptScheme& scheme, const std::string& name, bool mtp,
                             bool router);
/// ModelOpt: the first exact map entry not sorted before `name` (module_formats is sorted).
std::vector<std::pair<std::string, ModuleFormat>>::const_iterator first_at_or_after(
    const ModeloptScheme& scheme, std::string_view name);

/// One tensor a compressed-tensors Linear stores: its name after the module's ("weight_packed"),
/// shape, safetensors dtype and bytes per element.
struct StoredTensor {
  const char* suffix;
  std::vector<std::int64_t> shape;
  std::string_view dtype;  ///< static storage (a literal or the checkpoint's base dtype name)
  std::int64_t bytes_each = 1;
  bool holds_values = false;  ///< the (packed) weight itself, not a scale / zero point / shape
  std::int64_t elements() const;
};

/// compressed-tensors: which config group quantizes a Linear. Regexes are compiled once.
class CtMatcher {
public:
  explicit CtMatcher(const CompressedTensorsScheme& scheme);
  /// The group whose targets match `name` (wrapper prefix dropped) unless `ignore` matches it;
  /// nullptr for a Linear kept at the checkpoint dtype. MoE routers (".gate") are never
  /// quantized.
  /// Throws ConfigError when two groups claim the same Linear.
  const CtGroup* group_for(const std::string& name, bool router) const;
  /// True when a target or ignore entry names single experts ("experts.7."), so each routed
  /// expert has to be looked up on its own.
  bool names_single_experts() const { return single_experts_; }

private:
  const CompressedTensorsScheme& scheme_;
  std::vector<std::vector<std::regex>> group_regexes_;
  std::vector<std::regex> ignore_regexes_;
  bool single_experts_ = false;
};

/// The tensors a Linear of `rows` x `cols` stores under `group` (scales at the checkpoint dtype
/// `base_dtype` of `base_bytes` bytes, as initialize.py creates them at the weight's dtype;
/// `base_dtype` must outlive the result).
std::vector<StoredTensor> ct_tensors(const CtGroup& group, std::int64_t rows, std::int64_t cols,
                                     std::string_view base_dtype, std::int64_t base_bytes);

}  // namespace trace::layout
