// Checkpoint storage. Which tensors each format quantizes, and how it packs them:
//  fp8_block   every Linear weight inside the layers (attention, MLP, experts, shared experts;
//              MTP layers too), F8_E4M3 + F32 weight_scale_inv of ceil(out/b0) x ceil(in/b1);
//              routers, embeddings, heads, norms and MTP projections stay BF16. Checked against
//              DeepSeek-V3 (41,540,496 scales) and MiniMax-M2.5 (13,880,064). Qwen's own uploads
//              of Qwen3.5 / 3.6 store BF16 scales and convert the DeltaNet projections but
//              in_proj_a / in_proj_b (Quantization::ssm_unconverted; Qwen3.6-27B-FP8's shards).
//  fp8_tensor  the same weights, one F32 scale each.
//              Either fp8 with activation_scheme "static" adds an F32 activation_scale per weight.
//  mxfp4       the MoE experts only (gpt-oss): U8 blocks of 2 values per byte + U8 scale per 32.
//  gptq / awq  every Linear in the layers: I32-packed qweight, I32 qzeros and F16 scales per
//              group (GPTQ also an I32 g_idx per input column).
//  bnb_4bit    every Linear in the layers: U8 (2 values per byte) + absmax per 64 values
//              (double quant: U8 absmax + F32 nested absmax per 256 blocks) + 16-entry F32 map.
//  bnb_8bit    every Linear in the layers: I8 + F32 SCB per output row.
//  modelopt    per named module (quantized_layers map, exclude list, quant_algo default):
//              NVFP4 = U8 [out, in/2] + F8_E4M3 [out, in/group] + F32 weight_scale_2 and
//              input_scale; FP8 = F8_E4M3 [out, in] + F32 weight_scale and input_scale; routers
//              and MTP layers (unless listed) stay at the checkpoint dtype; F32 k/v scales per
//              attention layer when the export stores them. Checked against Nemotron 3 Nano
//              NVFP4 (24,147 tensors, 19,339,781,632 bytes) and Super NVFP4 (165,860 /
//              80,297,329,824).
//  (Mamba and delta-net projections stay at the checkpoint dtype in the formats above unless
//  ssm_quantized: an engine's own quantization, --quantize, takes them too.)
//  compressed-tensors  per named Linear: the config group whose targets match it, unless ignore
//              matches it; each stores what its compressor writes (layout::ct_tensors); routers,
//              embeddings, norms and ignored Linears stay at the checkpoint dtype.
#include "trace/estimate/storage.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>

#include "checkpoint_layout.hpp"
#include "trace/checked_math.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

enum class Role { attention, mlp, expert, router, ssm };

struct Matrix {
  std::int64_t rows = 0;  // output features
  std::int64_t cols = 0;  // input features
  std::int64_t count = 1;
  Role role = Role::mlp;
  bool mtp = false;  // inside a multi-token-prediction layer
};

void attention_matrices(const Attention& a, std::vector<Matrix>& out) {
  const std::int64_t h = a.input_dim;
  switch (a.kind) {
    case AttentionKind::none: return;
    case AttentionKind::linear: out.push_back({a.output_dim, h, 1, Role::attention}); return;
    case AttentionKind::mla: {
      const MlaShape& m = a.mla;
      const std::int64_t q_out = a.num_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim);
      if (m.q_lora_rank > 0) {
        out.push_back({m.q_lora_rank, h, 1, Role::attention});
        out.push_back({q_out, m.q_lora_rank, 1, Role::attention});
      } else {
        out.push_back({q_out, h, 1, Role::attention});
      }
      out.push_back({m.kv_lora_rank + m.qk_rope_head_dim, h, 1, Role::attention});
      out.push_back({a.num_heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank, 1,
                     Role::attention});
      out.push_back({a.output_dim, a.num_heads * m.v_head_dim, 1, Role::attention});
      if (a.indexer) {
        out.push_back({a.indexer->num_heads * a.indexer->head_dim, a.indexer->query_input_dim, 1,
                       Role::attention});
        out.push_back({a.indexer->head_dim, h, 1, Role::attention});
        out.push_back({a.indexer->num_heads, h, 1, Role::router});  // weights_proj stays BF16
      }
      return;
    }
    case AttentionKind::standard: break;
  }
  const std::int64_t q = a.num_heads * a.head_dim;
  const std::int64_t kv = a.num_kv_heads * a.head_dim;
  // a sigmoid output gate (Qwen3-Next, Qwen3.5) widens q_proj to twice the heads' width
  const std::int64_t q_rows = a.output_gate ? 2 * q : q;
  if (a.fused_qkv) {
    out.push_back({q_rows + 2 * kv, h, 1, Role::attention});
  } else {
    out.push_back({q_rows, h, 1, Role::attention});
    out.push_back({kv, a.kv_input_dim, 2, Role::attention});
  }
  out.push_back({a.output_dim, q, 1, Role::attention});
}

void mlp_matrices(const Mlp& mlp, std::int64_t count, Role role, std::vector<Matrix>& out) {
  switch (mlp.kind) {
    case MlpKind::none: return;
    case MlpKind::linear: out.push_back({mlp.input_dim, mlp.input_dim, count, role}); return;
    case MlpKind::gated:
      if (mlp.fused_gate_up) {
        out.push_back({2 * mlp.intermediate, mlp.input_dim, count, role});
      } else {
        out.push_back({mlp.intermediate, mlp.input_dim, checked_mul(2, count), role});
      }
      break;
    case MlpKind::plain: out.push_back({mlp.intermediate, mlp.input_dim, count, role}); break;
  }
  out.push_back({mlp.input_dim, mlp.intermediate, count, role});
}

// `q.ssm_quantized`: the Mamba / delta-net projections too, but those it leaves unconverted
// (named_linears walks every Linear by name, so it is asked only for a scheme that quantizes
// them).
std::vector<Matrix> layer_matrices(const ModelDescription& model, const Quantization& q) {
  std::vector<Matrix> matrices;
  for (const Stack& stack : model.stacks) {
    if (stack.vision) continue;
    const std::size_t first = matrices.size();
    for (const Block& block : stack.blocks) {
      if (block.shared_weights) continue;
      attention_matrices(block.attention, matrices);
      if (block.cross_attention) attention_matrices(*block.cross_attention, matrices);
      mlp_matrices(block.mlp, 1, Role::mlp, matrices);
      if (block.moe) {
        mlp_matrices(block.moe->expert, block.moe->num_experts, Role::expert, matrices);
        if (block.moe->shared) mlp_matrices(*block.moe->shared, 1, Role::mlp, matrices);
        matrices.push_back({block.moe->num_experts, block.moe->expert.input_dim, 1, Role::router});
      }
    }
    for (std::size_t i = first; i < matrices.size(); ++i) matrices[i].mtp = stack.mtp;
  }
  if (!q.ssm_quantized) return matrices;
  for (const layout::NamedLinear& linear : layout::named_linears(model)) {
    if (linear.kind == layout::LinearKind::ssm && q.converts_ssm_projection(linear.name)) {
      matrices.push_back({linear.rows, linear.cols, linear.count, Role::ssm});
    }
  }
  return matrices;
}

struct BaseDtype {
  const char* name;
  std::int64_t bytes;
};

BaseDtype base_dtype(const ModelDescription& model) {
  if (model.stored_dtype() == "float32") return {"F32", 4};
  if (model.stored_dtype() == "float16") return {"F16", 2};
  return {"BF16", 2};
}

bool quantized(const Quantization& q, Role role) {
  if (role == Role::router) return false;
  if (role == Role::ssm) return q.ssm_quantized;
  if (q.format == QuantFormat::mxfp4) return role == Role::expert;
  if (role == Role::attention) return q.attention_quantized;
  return true;
}

const char* format_name(QuantFormat format) {
  switch (format) {
    case QuantFormat::fp8_block: return "fp8_block";
    case QuantFormat::fp8_tensor: return "fp8_tensor";
    case QuantFormat::mxfp4: return "mxfp4";
    case QuantFormat::gptq: return "gptq";
    case QuantFormat::awq: return "awq";
    case QuantFormat::bnb_4bit: return "bnb_4bit";
    case QuantFormat::bnb_8bit: return "bnb_8bit";
    case QuantFormat::modelopt: return "modelopt";
    case QuantFormat::compressed_tensors: return "compressed-tensors";
  }
  return "unknown";
}

// Router correction-bias elements (F32 buffers) inside the MTP layers.
std::int64_t mtp_router_buffers(const ModelDescription& model) {
  if (model.router_bias_at_checkpoint_dtype) return 0;
  std::int64_t elements = 0;
  for (const Stack& stack : model.stacks) {
    if (!stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      if (block.moe && block.moe->router_correction_bias) elements += block.moe->num_experts;
    }
  }
  return elements;
}

// Elements kept in F32 whatever the checkpoint's dtype, outside the MTP layers: the routers'
// correction biases (DeepSeek-V3's habit, unless the family stores them at the checkpoint's
// dtype), KDA's A_log and dt_bias where the checkpoint keeps them so, and the family's other
// F32 parameters.
std::int64_t f32_kept_elements(const ModelDescription& model, const ParameterCount& params) {
  std::int64_t elements = model.router_bias_at_checkpoint_dtype ? 0 : params.router_bias_buffers;
  for (const Stack& stack : model.stacks) {
    if (stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      if (block.ssm && block.ssm->decay_fp32) {
        elements = checked_add(elements, block.ssm->num_heads + block.ssm->inner);
      }
    }
  }
  return checked_add(elements, model.fp32_stored_params, "the storage size");
}

// True when some pattern or exclude entry names a particular expert ("experts.7."), so each
// expert has to be looked up on its own.
bool names_single_experts(const ModeloptScheme& scheme) {
  const auto names_one = [](const std::string& entry) {
    for (std::size_t at = entry.find("experts."); at != std::string::npos;
         at = entry.find("experts.", at + 1)) {
      const std::size_t next = at + 8;
      if (next < entry.size() && entry[next] >= '0' && entry[next] <= '9') return true;
    }
    return false;
  };
  for (const auto& [pattern, format] : scheme.module_patterns) {
    if (names_one(pattern)) return true;
  }
  for (const std::string& entry : scheme.exclude) {
    if (names_one(entry)) return true;
  }
  return false;
}

// Storage of a ModelOpt checkpoint, module by module; `unbuffered`: the parameters not kept in
// F32 (f32_kept_elements), at the checkpoint's dtype unless quantized.
// Returns the number of 0-d (scalar) tensors it added.
std::int64_t modelopt_storage(
    const ModelDescription& model, const ParameterCount& params, std::int64_t unbuffered,
    const BaseDtype& base, StorageEstimate& storage,
    const std::function<void(const std::string&, std::int64_t, std::int64_t)>& add) {
  const ModeloptScheme& scheme = *model.quantization->modelopt;
  std::int64_t nvfp4_values = 0;
  std::int64_t expert_values = 0;
  std::int64_t mtp_quantized_values = 0;
  std::int64_t mtp_quantized_bytes = 0;
  // Summed here and added once per dtype: a Super-size map has ~80,000 Linears.
  std::int64_t u8_elements = 0;
  std::int64_t f8_elements = 0;
  std::int64_t f32_scalars = 0;
  const auto account = [&](const layout::NamedLinear& linear, ModuleFormat format,
                           std::int64_t copies) {
    const std::int64_t values =
        checked_product({linear.rows, linear.cols, copies}, "the storage size");
    std::int64_t bytes = 0;
    switch (format) {
      case ModuleFormat::unquantized:
        if (!linear.expert) return;  // counted with the rest at the checkpoint dtype below
        bytes = checked_mul(values, base.bytes, "the storage size");
        break;
      case ModuleFormat::nvfp4: {
        const std::int64_t packed =
            checked_product({linear.rows, ceil_div(linear.cols, 2), copies}, "the storage size");
        const std::int64_t scales = checked_product(
            {linear.rows, ceil_div(linear.cols, scheme.group_size), copies}, "the storage size");
        u8_elements = checked_add(u8_elements, packed, "the storage size");
        f8_elements = checked_add(f8_elements, scales, "the storage size");
        f32_scalars += 2 * copies;  // weight_scale_2, input_scale
        bytes = packed + scales + 8 * copies;
        storage.scale_elements = checked_add(storage.scale_elements, scales + 2 * copies);
        nvfp4_values = checked_add(nvfp4_values, values);
        storage.nvfp4_modules += copies;
        break;
      }
      case ModuleFormat::fp8:
        f8_elements = checked_add(f8_elements, values, "the storage size");
        f32_scalars += 2 * copies;  // weight_scale, input_scale
        bytes = values + 8 * copies;
        storage.scale_elements += 2 * copies;
        storage.fp8_modules += copies;
        break;
    }
    if (format != ModuleFormat::unquantized) {
      storage.quantized_values = checked_add(storage.quantized_values, values);
      if (linear.mtp) {
        mtp_quantized_values += values;
        mtp_quantized_bytes += bytes;
      }
    }
    if (linear.expert && !linear.mtp) {
      expert_values = checked_add(expert_values, values);
      storage.routed_expert_bytes = checked_add(storage.routed_expert_bytes, bytes);
    }
  };
  const bool single_experts_named = names_single_experts(scheme);
  for (const layout::NamedLinear& linear : layout::named_linears(model)) {
    if (linear.count == 1) {
      account(linear, layout::modelopt_format(scheme, linear.name, linear.mtp, linear.router), 1);
      continue;
    }
    // A group of routed experts: one lookup serves all unless the map names single experts.
    const std::size_t star = linear.name.find('*');
    const std::string prefix = linear.name.substr(0, star);
    const std::string suffix = linear.name.substr(star + 1);
    const auto listed = layout::first_at_or_after(scheme, prefix);
    const bool per_expert = single_experts_named || (listed != scheme.module_formats.end() &&
                                                     listed->first.starts_with(prefix));
    if (!per_expert) {
      account(linear, layout::modelopt_format(scheme, prefix + "0" + suffix, linear.mtp, false),
              linear.count);
      continue;
    }
    for (std::int64_t e = 0; e < linear.count; ++e) {
      account(linear,
              layout::modelopt_format(scheme, fmt::format("{}{}{}", prefix, e, suffix), linear.mtp, false),
              1);
    }
  }
  add("U8", u8_elements, 1);
  add("F8_E4M3", f8_elements, 1);
  add("F32", f32_scalars, 4);
  // Routers some checkpoints keep in F32; the rest at the checkpoint dtype.
  std::int64_t fp32_router = 0;
  std::int64_t mtp_fp32_router = 0;
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (!block.moe || !block.moe->router_fp32 || block.shared_weights) continue;
      const std::int64_t hidden =
          block.moe->hidden_dim > 0 ? block.moe->hidden_dim : block.moe->expert.input_dim;
      const std::int64_t router = checked_mul(block.moe->num_experts, hidden);
      fp32_router = checked_add(fp32_router, router);
      if (stack.mtp) mtp_fp32_router += router;
    }
  }
  const std::int64_t mtp_buffers = mtp_router_buffers(model);
  storage.mtp_bytes =
      checked_mul(params.mtp - mtp_buffers - mtp_quantized_values - mtp_fp32_router, base.bytes) +
      4 * (mtp_buffers + mtp_fp32_router) + mtp_quantized_bytes;
  add("F32", fp32_router, 4);
  add(base.name, unbuffered - storage.quantized_values - fp32_router, base.bytes);
  storage.routed_expert_bytes = checked_add(
      storage.routed_expert_bytes,
      checked_mul(std::max<std::int64_t>(component_count(params, "experts") - expert_values, 0),
                  base.bytes));
  std::int64_t kv_scales = 0;
  if (scheme.kv_scales_stored) {
    for (const Stack& stack : model.stacks) {
      if (stack.vision || stack.mtp || !stack.causal) continue;
      for (const Block& block : stack.blocks) {
        if (block.attention.kind == AttentionKind::standard ||
            block.attention.kind == AttentionKind::mla) {
          kv_scales += 2;  // k_proj.k_scale, v_proj.v_scale
        }
      }
    }
    add("F32", kv_scales, 4);
  }
  storage.scale_elements += kv_scales;
  // Each NVFP4 Linear adds three tensors to its weight (block scales, two scalars), each FP8
  // Linear two scalars; the KV scales are tensors of their own.
  storage.tensors = layout::tensor_count(model) + 3 * storage.nvfp4_modules +
                    2 * storage.fp8_modules + kv_scales;
  storage.hub_parameters = params.total - params.router_bias_buffers - nvfp4_values / 2;
  return f32_scalars + kv_scales;  // every one of them a 0-d tensor
}

// Storage of a compressed-tensors checkpoint, Linear by Linear; `unbuffered` as for ModelOpt.
void compressed_tensors_storage(
    const ModelDescription& model, const ParameterCount& params, std::int64_t unbuffered,
    const BaseDtype& base, StorageEstimate& storage,
    const std::function<void(const std::string&, std::int64_t, std::int64_t)>& add) {
  const layout::CtMatcher matcher(*model.quantization->compressed_tensors);
  // dtype -> elements, bytes each
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> stored;
  std::int64_t extra_tensors = 0;
  std::int64_t expert_values = 0;
  std::int64_t mtp_values = 0;
  std::int64_t mtp_bytes = 0;
  const auto account = [&](const layout::NamedLinear& linear, const CtGroup* group,
                           std::int64_t copies) {
    if (group == nullptr) return;  // counted with the rest at the checkpoint dtype below
    const std::int64_t values =
        checked_product({linear.rows, linear.cols, copies}, "the storage size");
    std::int64_t bytes = 0;
    const std::vector<layout::StoredTensor> tensors =
        layout::ct_tensors(*group, linear.rows, linear.cols, base.name, base.bytes);
    for (const layout::StoredTensor& tensor : tensors) {
      const std::int64_t elements = checked_mul(tensor.elements(), copies, "the storage size");
      auto& [count, bytes_each] = stored[std::string(tensor.dtype)];
      count = checked_add(count, elements, "the storage size");
      bytes_each = tensor.bytes_each;
      bytes = checked_add(bytes, checked_mul(elements, tensor.bytes_each), "the storage size");
      if (!tensor.holds_values) {
        storage.scale_elements = checked_add(storage.scale_elements, elements);
      }
    }
    // Each quantized Linear's weight becomes tensors.size() tensors.
    extra_tensors = checked_add(extra_tensors,
                                checked_mul(static_cast<std::int64_t>(tensors.size()) - 1, copies));
    storage.quantized_values = checked_add(storage.quantized_values, values);
    if (linear.expert && !linear.mtp) {
      expert_values = checked_add(expert_values, values);
      storage.routed_expert_bytes = checked_add(storage.routed_expert_bytes, bytes);
    }
    if (linear.mtp) {
      mtp_values += values;
      mtp_bytes += bytes;
    }
  };
  for (const layout::NamedLinear& linear : layout::named_linears(model)) {
    if (linear.count == 1) {
      account(linear, matcher.group_for(linear.name, linear.router), 1);
      continue;
    }
    // A group of routed experts: one lookup serves all unless an entry names single experts.
    const std::size_t star = linear.name.find('*');
    const std::string prefix = linear.name.substr(0, star);
    const std::string suffix = linear.name.substr(star + 1);
    if (!matcher.names_single_experts()) {
      account(linear, matcher.group_for(prefix + "0" + suffix, false), linear.count);
      continue;
    }
    for (std::int64_t e = 0; e < linear.count; ++e) {
      account(linear, matcher.group_for(fmt::format("{}{}{}", prefix, e, suffix), false), 1);
    }
  }
  for (const auto& [dtype, entry] : stored) add(dtype, entry.first, entry.second);
  add(base.name, unbuffered - storage.quantized_values, base.bytes);
  storage.routed_expert_bytes = checked_add(
      storage.routed_expert_bytes,
      checked_mul(std::max<std::int64_t>(component_count(params, "experts") - expert_values, 0),
                  base.bytes));
  const std::int64_t mtp_buffers = mtp_router_buffers(model);
  storage.mtp_bytes =
      checked_mul(params.mtp - mtp_buffers - mtp_values, base.bytes) + 4 * mtp_buffers + mtp_bytes;
  storage.tensors = checked_add(layout::tensor_count(model), extra_tensors);
}

// Storage of a checkpoint whose family derived it tensor by tensor (Quantization::family_layout).
// False (and a note) when the runs do not hold the parameter count, which a layout must.
bool family_layout_storage(
    const Quantization& q, const ParameterCount& params, StorageEstimate& storage,
    const std::function<void(const std::string&, std::int64_t, std::int64_t)>& add) {
  std::int64_t values = 0;
  for (const StoredTensorRun& run : q.family_layout) values = checked_add(values, run.values);
  if (values != params.total) {
    storage.notes.push_back(fmt::format(
        "the family's checkpoint layout ({}) holds {} parameters, not the {} counted; the "
        "generic {} table is used instead",
        q.family_layout_name, values, params.total, format_name(q.format)));
    return false;
  }
  storage.format = q.family_layout_name;
  for (const StoredTensorRun& run : q.family_layout) {
    add(run.dtype, run.elements, run.bytes_each);
    const std::int64_t bytes = checked_mul(run.elements, run.bytes_each, "the storage size");
    if (run.quantized) storage.quantized_values = checked_add(storage.quantized_values, run.values);
    if (run.values == 0) storage.scale_elements = checked_add(storage.scale_elements, run.elements);
    // Routed experts of the backbone: what expert parallelism splits when the MTP layers are not
    // served.
    if (run.expert && !run.mtp) {
      storage.routed_expert_bytes = checked_add(storage.routed_expert_bytes, bytes);
    }
    if (run.mtp) storage.mtp_bytes = checked_add(storage.mtp_bytes, bytes);
    storage.tensors = checked_add(storage.tensors, run.tensors, "the storage size");
  }
  return true;
}

}  // namespace

StorageEstimate estimate_storage(const ModelDescription& model, const ParameterCount& params) {
  StorageEstimate storage;
  const BaseDtype base = base_dtype(model);
  std::map<std::string, std::int64_t> bytes_by_dtype;     // dtype -> bytes
  std::map<std::string, std::int64_t> elements_by_dtype;  // dtype -> elements
  const auto add = [&](const std::string& dtype, std::int64_t elements, std::int64_t bytes_each) {
    if (elements == 0) return;
    const std::int64_t bytes = checked_mul(elements, bytes_each, "the storage size");
    elements_by_dtype[dtype] = checked_add(elements_by_dtype[dtype], elements, "the storage size");
    bytes_by_dtype[dtype] = checked_add(bytes_by_dtype[dtype], bytes, "the storage size");
    storage.bytes = checked_add(storage.bytes, bytes, "the storage size");
  };
  if (model.torch_dtype.empty()) {
    storage.notes.push_back(
        model.unspecified_dtype.empty()
            ? std::string("config gives no torch_dtype: BF16 assumed")
            : fmt::format("config gives no torch_dtype: {} assumed, what this family's uploads "
                          "saved before transformers wrote the key store",
                          base_dtype(model).name));
  }

  const std::int64_t routed_expert_params = component_count(params, "experts");
  const std::int64_t f32_kept = f32_kept_elements(model, params);
  const std::int64_t unbuffered = params.total - f32_kept;
  const bool family_runs = model.quantization && !model.quantization->family_layout.empty() &&
                           family_layout_storage(*model.quantization, params, storage, add);
  if (!family_runs) add("F32", f32_kept, 4);
  if (family_runs) {
    // done: the runs hold every tensor, the F32-kept ones too
  } else if (!model.quantization) {
    storage.format = base.name == std::string("F32") ? "fp32" : base.name == std::string("F16") ? "fp16" : "bf16";
    add(base.name, unbuffered, base.bytes);
    storage.routed_expert_bytes = checked_mul(routed_expert_params, base.bytes);
    const std::int64_t mtp_buffers = mtp_router_buffers(model);
    storage.mtp_bytes = checked_mul(params.mtp - mtp_buffers, base.bytes) + 4 * mtp_buffers;
  } else if (model.quantization->format == QuantFormat::modelopt) {
    const ModeloptScheme& scheme = *model.quantization->modelopt;
    storage.format = scheme.quant_algo == "MIXED_PRECISION" ? "modelopt (NVFP4 + FP8 per module)"
                     : scheme.quant_algo == "NVFP4"         ? "modelopt NVFP4"
                                                            : "modelopt FP8";
    const std::int64_t scalars = modelopt_storage(model, params, unbuffered, base, storage, add);
    std::int64_t elements = 0;
    for (const auto& [dtype, count] : elements_by_dtype) elements += count;
    storage.header_elements_without_scalars = elements - scalars;
  } else if (model.quantization->format == QuantFormat::compressed_tensors) {
    const CompressedTensorsScheme& scheme = *model.quantization->compressed_tensors;
    storage.format = "compressed-tensors " + scheme.format;
    compressed_tensors_storage(model, params, unbuffered, base, storage, add);
  } else {
    const Quantization& q = *model.quantization;
    storage.format = format_name(q.format);
    std::int64_t expert_bytes_before = 0;
    std::int64_t quantized_expert_values = 0;
    for (const Matrix& m : layer_matrices(model, q)) {
      if (!quantized(q, m.role)) continue;
      const bool routed_expert = m.role == Role::expert && !m.mtp;
      if (routed_expert) expert_bytes_before = storage.bytes;
      const std::int64_t values = checked_product({m.rows, m.cols, m.count}, "the storage size");
      storage.quantized_values = checked_add(storage.quantized_values, values);
      const std::int64_t groups =
          q.group_size < 0 ? 1 : ceil_div(m.cols, q.group_size);
      const std::int64_t per_int32 = 32 / q.bits;
      switch (q.format) {
        case QuantFormat::fp8_block:
          add("F8_E4M3", values, 1);
          add(q.block_scales_bf16 ? "BF16" : "F32",
              checked_product(
                  {ceil_div(m.rows, q.block_rows), ceil_div(m.cols, q.block_cols), m.count}),
              q.block_scales_bf16 ? 2 : 4);
          break;
        case QuantFormat::fp8_tensor:
          add("F8_E4M3", values, 1);
          add("F32", m.count, 4);
          break;
        case QuantFormat::mxfp4:
          add("U8", ceil_div(values, 2), 1);   // *_blocks: two 4-bit values per byte
          add("U8", ceil_div(values, 32), 1);  // *_scales: one E8M0 scale per 32 values
          break;
        case QuantFormat::gptq:
          add("I32", checked_product({ceil_div(m.cols, per_int32), m.rows, m.count}), 4);
          add("I32", checked_product({groups, ceil_div(m.rows, per_int32), m.count}), 4);
          add("F16", checked_product({groups, m.rows, m.count}), 2);
          add("I32", checked_mul(m.cols, m.count), 4);  // g_idx
          break;
        case QuantFormat::awq:
          add("I32", checked_product({m.cols, ceil_div(m.rows, per_int32), m.count}), 4);
          add("I32", checked_product({groups, ceil_div(m.rows, per_int32), m.count}), 4);
          add("F16", checked_product({groups, m.rows, m.count}), 2);
          break;
        case QuantFormat::bnb_4bit: {
          const Bnb4bitElements tensors = bnb_4bit_elements(m.rows, m.cols, m.count, q.double_quant);
          add("U8", tensors.u8, 1);
          add("F32", tensors.f32, 4);
          break;
        }
        case QuantFormat::bnb_8bit:
          add("I8", values, 1);
          add("F32", checked_mul(m.rows, m.count), 4);  // SCB
          break;
        case QuantFormat::modelopt:
        case QuantFormat::compressed_tensors: break;  // handled per module above
      }
      if (q.static_activation_scale &&
          (q.format == QuantFormat::fp8_block || q.format == QuantFormat::fp8_tensor)) {
        add("F32", m.count, 4);  // activation_scale
      }
      if (routed_expert) {
        storage.routed_expert_bytes += storage.bytes - expert_bytes_before;
        quantized_expert_values += values;
      }
    }
    // Expert tensors left unquantized (their biases, or experts a format skips) stay at base.
    storage.routed_expert_bytes += checked_mul(
        std::max<std::int64_t>(routed_expert_params - quantized_expert_values, 0), base.bytes);
    add(base.name, unbuffered - storage.quantized_values, base.bytes);
    const std::int64_t packed_values = storage.quantized_values;
    std::int64_t stored = 0;
    for (const auto& [dtype, elements] : elements_by_dtype) stored += elements;
    // Scales, zeros and indices: everything stored beyond the parameters' own elements.
    std::int64_t value_elements = params.total - packed_values;
    switch (q.format) {
      case QuantFormat::fp8_block:
      case QuantFormat::fp8_tensor:
      case QuantFormat::bnb_8bit: value_elements += packed_values; break;
      case QuantFormat::mxfp4:
      case QuantFormat::bnb_4bit: value_elements += ceil_div(packed_values, 2); break;
      case QuantFormat::gptq:
      case QuantFormat::awq: value_elements += packed_values * q.bits / 32; break;
      case QuantFormat::modelopt:
      case QuantFormat::compressed_tensors: break;
    }
    storage.scale_elements = stored - value_elements;
    if (params.mtp > 0) {
      // These formats quantize MTP layers like the rest: their share of the bytes follows their
      // share of the parameters.
      storage.mtp_bytes = static_cast<std::int64_t>(static_cast<double>(storage.bytes) *
                                                    static_cast<double>(params.mtp) /
                                                    static_cast<double>(params.total));
      storage.notes.push_back("MTP layers' bytes estimated by their share of the parameters");
    }
  }
  for (const auto& [dtype, elements] : elements_by_dtype) {
    storage.stored_elements = checked_add(storage.stored_elements, elements);
  }
  for (const auto& [dtype, bytes] : bytes_by_dtype) storage.by_dtype.emplace_back(dtype, bytes);
  std::sort(storage.by_dtype.begin(), storage.by_dtype.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  return storage;
}

std::int64_t Bnb4bitElements::bytes() const {
  return checked_add(u8, checked_mul(f32, 4, "the storage size"), "the storage size");
}

Bnb4bitElements bnb_4bit_elements(std::int64_t rows, std::int64_t cols, std::int64_t count,
                                  bool double_quant) {
  const std::int64_t blocks = ceil_div(checked_mul(rows, cols, "the storage size"), 64);
  Bnb4bitElements tensors;
  tensors.u8 = ceil_div(checked_product({rows, cols, count}, "the storage size"), 2);
  if (double_quant) {
    tensors.u8 = checked_add(tensors.u8, checked_mul(blocks, count, "the storage size"));
    tensors.f32 = checked_mul(ceil_div(blocks, 256) + 256, count, "the storage size");
  } else {
    tensors.f32 = checked_mul(blocks, count, "the storage size");
  }
  tensors.f32 = checked_add(tensors.f32, checked_mul(16, count, "the storage size"));  // code book
  return tensors;
}

}  // namespace trace
