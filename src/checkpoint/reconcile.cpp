// Reconciliation of the inventory with the headers: one pass over each side by name, totals and
// components from the same name patterns on both sides, and the packing rules that turn stored
// elements back into parameters (docs/checkpoint.md, "Packing").
#include "trace/checkpoint/reconcile.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "trace/checked_math.hpp"

namespace trace::checkpoint {

namespace {

bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

// Tensors a quantized checkpoint stores beside the weights that are not parameters.
bool is_scale(std::string_view name) {
  for (const std::string_view tail :
       {".weight_scale", ".weight_scale_2", ".weight_scale_inv", ".input_scale", ".k_scale",
        ".v_scale", ".qzeros", ".scales", ".g_idx", "_scales", ".absmax", ".quant_map",
        ".nested_absmax", ".nested_quant_map", ".SCB", ".weight_global_scale",
        ".input_global_scale", ".weight_zero_point", ".weight_g_idx", ".weight_shape",
        "rotary_emb.inv_freq"}) {
    if (ends_with(name, tail)) return true;
  }
  return name.find(".quant_state.") != std::string_view::npos;
}

enum class Packing { none, two_per_byte, per_int32, scale };

Packing packing_of(const TensorHeader& tensor,
                   const std::unordered_set<std::string_view>& names) {
  const std::string_view name = tensor.name;
  if (is_scale(name)) return Packing::scale;
  // GPTQ / AWQ qweight; compressed-tensors pack-quantized weight_packed.
  if (tensor.dtype == "I32" && (ends_with(name, ".qweight") || ends_with(name, ".weight_packed"))) {
    return Packing::per_int32;
  }
  if (tensor.dtype == "U8") {
    if (ends_with(name, "_blocks") || ends_with(name, ".weight_packed")) return Packing::two_per_byte;
    if (ends_with(name, ".weight")) {
      const std::string stem(name);
      if (names.contains(stem + "_scale") || names.contains(stem + ".absmax")) {
        return Packing::two_per_byte;
      }
    }
  }
  return Packing::none;
}

std::unordered_set<std::string_view> all_names(const std::vector<SafetensorsHeader>& shards) {
  std::unordered_set<std::string_view> names;
  for (const SafetensorsHeader& shard : shards) {
    for (const TensorHeader& tensor : shard.tensors) names.insert(tensor.name);
  }
  return names;
}

std::string describe(std::string_view dtype, const std::vector<std::int64_t>& shape) {
  return fmt::format("{} [{}]", dtype, fmt::join(shape, ", "));
}

void add_to(Totals& totals, std::int64_t elements, std::int64_t bytes) {
  ++totals.tensors;
  totals.stored_elements = checked_add(totals.stored_elements, elements, "the checkpoint totals");
  totals.bytes = checked_add(totals.bytes, bytes, "the checkpoint totals");
}

template <typename T>
void keep_first(std::vector<T>& list, std::size_t limit) {
  if (list.size() > limit) list.resize(limit);
}

}  // namespace

bool Reconciliation::agrees() const {
  return expected == found && delta_params == 0 && only_in_checkpoint_count == 0 &&
         only_in_trace_count == 0 && mismatch_count == 0;
}

std::int64_t header_logical_params(const std::vector<SafetensorsHeader>& shards,
                                   std::int64_t packed_bits) {
  const std::unordered_set<std::string_view> names = all_names(shards);
  const std::int64_t per_int32 = packed_bits > 0 && packed_bits <= 32 ? 32 / packed_bits : 8;
  std::int64_t params = 0;
  for (const SafetensorsHeader& shard : shards) {
    for (const TensorHeader& tensor : shard.tensors) {
      std::int64_t values = tensor.elements;
      switch (packing_of(tensor, names)) {
        case Packing::none: break;
        case Packing::scale: values = 0; break;
        case Packing::two_per_byte: values = checked_mul(values, 2, "the checkpoint parameters"); break;
        case Packing::per_int32: values = checked_mul(values, per_int32, "the checkpoint parameters"); break;
      }
      params = checked_add(params, values, "the checkpoint parameters");
    }
  }
  return params;
}

Reconciliation reconcile(const Inventory& inventory, const std::vector<SafetensorsHeader>& shards,
                         std::int64_t trace_params, const ReconcileOptions& options) {
  Reconciliation result;
  result.summary = summarize(shards);  // also refuses a name stored in two shards
  result.found = {result.summary.tensors, result.summary.stored_elements, result.summary.bytes};
  result.trace_params = trace_params;
  result.logical_params = header_logical_params(shards, options.packed_bits);
  result.inventory_complete = inventory.complete;
  result.naming = inventory.naming;
  result.gaps = inventory.gaps;

  std::map<std::string, ComponentAgreement> components;
  const auto component = [&](std::string_view name) -> ComponentAgreement& {
    const std::string key = component_of(name, inventory);
    ComponentAgreement& row = components[key];
    row.component = key;
    return row;
  };

  std::unordered_map<std::string_view, std::size_t> expected_by_name;
  expected_by_name.reserve(inventory.tensors.size());
  for (std::size_t i = 0; i < inventory.tensors.size(); ++i) {
    const ExpectedTensor& tensor = inventory.tensors[i];
    expected_by_name.emplace(tensor.name, i);
    if (tensor.buffer) continue;  // counted below only where the upload stores it
    const std::int64_t elements = tensor.elements();
    const std::int64_t bytes = tensor.bytes();
    add_to(result.expected, elements, bytes);
    add_to(component(tensor.name).expected, elements, bytes);
  }
  if (!inventory.complete && options.storage != nullptr) {
    const StorageEstimate& storage = *options.storage;
    result.expected = {storage.tensors > 0 ? storage.tensors : result.expected.tensors,
                       storage.stored_elements, storage.bytes};
  }

  std::vector<bool> seen(inventory.tensors.size(), false);
  std::int64_t scale_elements = 0;
  std::int64_t packed_bytes = 0;
  std::int64_t packed_int32 = 0;
  std::int64_t buffer_elements = 0;
  std::int64_t alternative_count = 0;
  std::int64_t alternative_bytes = 0;
  std::string alternative_dtype;
  const std::unordered_set<std::string_view> names = all_names(shards);
  // An upload saved from the bare base class (Inventory::bare_prefix) holds no name under the
  // wrapper: each of its names is looked up with the wrapper too.
  const std::string& bare = inventory.bare_prefix;
  const bool bare_upload = !bare.empty() && !names.empty() &&
                           std::none_of(names.begin(), names.end(), [&](std::string_view name) {
                             return name.starts_with(bare);
                           });
  for (const SafetensorsHeader& shard : shards) {
    for (const TensorHeader& tensor : shard.tensors) {
      add_to(component(tensor.name).found, tensor.elements, tensor.bytes());
      switch (packing_of(tensor, names)) {
        case Packing::scale: scale_elements += tensor.elements; break;
        case Packing::two_per_byte: packed_bytes += tensor.elements; break;
        case Packing::per_int32: packed_int32 += tensor.elements; break;
        case Packing::none: break;
      }
      auto match = expected_by_name.find(tensor.name);
      if (match == expected_by_name.end() && bare_upload) {
        match = expected_by_name.find(bare + tensor.name);
      }
      if (match == expected_by_name.end()) {
        ++result.only_in_checkpoint_count;
        result.only_in_checkpoint.push_back(tensor.name);
        continue;
      }
      seen[match->second] = true;
      const ExpectedTensor& expected = inventory.tensors[match->second];
      if (expected.buffer) {
        // Stored by this upload: expected as found, in its own dtype; not a parameter.
        add_to(result.expected, tensor.elements, tensor.bytes());
        add_to(component(tensor.name).expected, tensor.elements, tensor.bytes());
        if (packing_of(tensor, names) == Packing::none) buffer_elements += tensor.elements;
      }
      const bool alternative = !expected.also_stored_as.empty() &&
                               tensor.dtype == expected.also_stored_as &&
                               expected.dtype != tensor.dtype && expected.shape == tensor.shape;
      if (alternative) {
        // Stored in the family's other dtype: expected as found.
        const std::int64_t more = tensor.bytes() - expected.bytes();
        result.expected.bytes += more;
        component(tensor.name).expected.bytes += more;
        ++alternative_count;
        alternative_bytes += more;
        alternative_dtype = tensor.dtype;
      }
      const bool dtype_differs = !expected.buffer && !alternative && expected.dtype != tensor.dtype;
      if (dtype_differs || expected.shape != tensor.shape) {
        ++result.mismatch_count;
        result.mismatches.push_back({tensor.name, describe(expected.dtype, expected.shape),
                                     describe(tensor.dtype, tensor.shape)});
      }
    }
  }
  std::vector<std::string> unstored;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const ExpectedTensor& tensor = inventory.tensors[i];
    if (seen[i] || tensor.buffer) continue;
    if (tensor.droppable) {
      // The upload left out a table the model rebuilds at load: expect what it holds.
      const Totals dropped{1, tensor.elements(), tensor.bytes()};
      for (Totals* totals : {&result.expected, &component(tensor.name).expected}) {
        totals->tensors -= dropped.tensors;
        totals->stored_elements -= dropped.stored_elements;
        totals->bytes -= dropped.bytes;
      }
      result.unstored_params += tensor.logical_params;
      unstored.push_back(tensor.name);
      continue;
    }
    ++result.only_in_trace_count;
    result.only_in_trace.push_back(tensor.name);
  }
  std::sort(result.only_in_checkpoint.begin(), result.only_in_checkpoint.end());
  std::sort(result.only_in_trace.begin(), result.only_in_trace.end());
  keep_first(result.only_in_trace, options.max_names);
  std::sort(result.mismatches.begin(), result.mismatches.end(),
            [](const TensorMismatch& a, const TensorMismatch& b) { return a.name < b.name; });
  keep_first(result.only_in_checkpoint, options.max_names);
  keep_first(result.mismatches, options.max_names);
  if (!inventory.complete) {
    // A partial inventory misses names by design: counts stay, names would only be noise.
    result.only_in_checkpoint_count = result.only_in_trace_count = result.mismatch_count = 0;
    result.only_in_checkpoint.clear();
    result.only_in_trace.clear();
    result.mismatches.clear();
  }
  for (auto& [key, row] : components) result.components.push_back(std::move(row));

  if (packed_bytes > 0) {
    result.explanations.push_back(fmt::format(
        "{} U8 bytes hold two 4-bit values each (NVFP4, MXFP4, bitsandbytes 4-bit): {} parameters "
        "stored as {} elements",
        packed_bytes, 2 * packed_bytes, packed_bytes));
  }
  if (packed_int32 > 0) {
    const std::int64_t per_int32 = options.packed_bits > 0 ? 32 / options.packed_bits : 8;
    result.explanations.push_back(fmt::format(
        "{} I32 qweight / weight_packed elements hold {} values each (GPTQ, AWQ, "
        "compressed-tensors; {}-bit): {} parameters",
        packed_int32, per_int32, options.packed_bits, packed_int32 * per_int32));
  }
  if (result.unstored_params > 0) {
    result.explanations.push_back(fmt::format(
        "{} parameters are fixed tables this upload does not store ({}): the model rebuilds them "
        "at load; trace counts them, as num_parameters() does, and expects {} in the headers",
        result.unstored_params, fmt::join(unstored, ", "), trace_params - result.unstored_params));
  }
  if (bare_upload) {
    result.explanations.push_back(fmt::format(
        "the names lack the '{}' wrapper: the upload was saved from the bare base class, whose "
        "names are the model's own under it",
        bare));
  }
  if (buffer_elements > 0) {
    result.logical_params -= buffer_elements;
    result.explanations.push_back(fmt::format(
        "{} elements are buffers this upload stores (causal masks, a tied embedding's copy): "
        "stored, but not parameters",
        buffer_elements));
  }
  if (alternative_count > 0) {
    result.explanations.push_back(
        fmt::format("{} tensors are stored as {}, a dtype the family's uploads use for them ({:+} "
                    "bytes against "
                    "the checkpoint dtype): expected as found",
                    alternative_count, alternative_dtype, alternative_bytes));
  }
  if (scale_elements > 0) {
    result.explanations.push_back(fmt::format(
        "{} elements are scales, zero points or indices: stored, but not parameters",
        scale_elements));
  }
  // Found less what the upload should hold: trace's count without the tables it leaves out.
  result.delta_params = result.logical_params - (trace_params - result.unstored_params);
  if (result.summary.stored_elements != result.logical_params) {
    result.explanations.push_back(fmt::format(
        "so the headers' {} stored elements stand for {} logical parameters", 
        result.summary.stored_elements, result.logical_params));
  }
  return result;
}

Reconciliation reconcile_model(const ModelDescription& model, const ParameterCount& params,
                               const StorageEstimate& storage,
                               const std::vector<SafetensorsHeader>& shards, std::string source) {
  ReconcileOptions options;
  options.storage = &storage;
  if (model.quantization) options.packed_bits = model.quantization->bits;
  if (model.quantization && model.quantization->compressed_tensors) {
    // The bits of the (first) pack-quantized group: what its I32 weight_packed holds.
    for (const CtGroup& group : model.quantization->compressed_tensors->groups) {
      if (group.storage == CtStorage::pack_quantized) {
        options.packed_bits = group.num_bits;
        break;
      }
    }
  }
  Reconciliation result = reconcile(build_inventory(model), shards, params.total, options);
  result.source = std::move(source);
  return result;
}

}  // namespace trace::checkpoint
