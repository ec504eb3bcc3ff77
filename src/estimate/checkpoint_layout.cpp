#include "checkpoint_layout.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "trace/checked_math.hpp"
#include "trace/error.hpp"
#include "trace/text_match.hpp"

namespace trace::layout {

namespace {

bool excluded(const ModeloptScheme& scheme, const std::string& name) {
  for (const std::string& entry : scheme.exclude) {
    if (entry == name || glob_match(entry, name)) return true;
    // An entry naming a parent module covers its children.
    if (name.size() > entry.size() && name.starts_with(entry) && name[entry.size()] == '.') {
      return true;
    }
  }
  return false;
}

void attention_linears(const std::string& at, const Attention& a, bool mtp,
                       std::vector<NamedLinear>& out) {
  const auto add = [&](const char* leaf, std::int64_t rows, std::int64_t cols, bool router = false,
                       bool bias = false) {
    out.push_back({fmt::format("{}.{}", at, leaf), rows, cols, mtp, router, false, 1,
                   LinearKind::attention, bias});
  };
  const std::int64_t h = a.input_dim;
  switch (a.kind) {
    case AttentionKind::none: return;
    case AttentionKind::linear: add("linear_attn", a.output_dim, h); return;
    case AttentionKind::mla: {
      const MlaShape& m = a.mla;
      const std::int64_t q_out = a.num_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim);
      if (m.q_lora_rank > 0) {
        add("q_a_proj", m.q_lora_rank, h, false, a.q_bias);
        add("q_b_proj", q_out, m.q_lora_rank);
      } else {
        add("q_proj", q_out, h, false, a.q_bias);
      }
      add("kv_a_proj_with_mqa", m.kv_lora_rank + m.qk_rope_head_dim, h, false, a.k_bias);
      add("kv_b_proj", a.num_heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank);
      add("o_proj", a.output_dim, a.num_heads * m.v_head_dim, false, a.o_bias);
      if (a.indexer) {
        add("indexer.wq_b", a.indexer->num_heads * a.indexer->head_dim, a.indexer->query_input_dim);
        add("indexer.wk", a.indexer->head_dim, h);
        add("indexer.weights_proj", a.indexer->num_heads, h, true);
      }
      return;
    }
    case AttentionKind::standard: break;
  }
  const std::int64_t q = a.num_heads * a.head_dim;
  const std::int64_t kv = a.num_kv_heads * a.head_dim;
  if (a.fused_qkv) {
    add("qkv_proj", q + 2 * kv, h, false, a.q_bias || a.k_bias || a.v_bias);
  } else {
    add("q_proj", a.output_gate ? 2 * q : q, h, false, a.q_bias);
    add("k_proj", kv, a.kv_input_dim, false, a.k_bias);
    add("v_proj", kv, a.kv_input_dim, false, a.v_bias);
  }
  add("o_proj", a.output_dim, q, false, a.o_bias);
}

void mlp_linears(const std::string& at, const Mlp& mlp, bool mtp, std::int64_t experts,
                 std::vector<NamedLinear>& out) {
  const auto add = [&](const char* leaf, std::int64_t rows, std::int64_t cols, bool bias) {
    out.push_back({fmt::format("{}.{}", at, leaf), rows, cols, mtp, false, experts > 0,
                   experts > 0 ? experts : 1, LinearKind::mlp, bias});
  };
  switch (mlp.kind) {
    case MlpKind::none: return;
    case MlpKind::linear: add("linear", mlp.input_dim, mlp.input_dim, false); return;
    case MlpKind::gated:
      if (mlp.fused_gate_up) {
        add("gate_up_proj", 2 * mlp.intermediate, mlp.input_dim, mlp.up_bias);
      } else {
        add("gate_proj", mlp.intermediate, mlp.input_dim, mlp.up_bias);
        add("up_proj", mlp.intermediate, mlp.input_dim, mlp.up_bias);
      }
      break;
    case MlpKind::plain: add("up_proj", mlp.intermediate, mlp.input_dim, mlp.up_bias); break;
  }
  add("down_proj", mlp.input_dim, mlp.intermediate, mlp.down_bias);
}

void ssm_linears(const std::string& at, const Ssm& ssm, bool mtp, std::vector<NamedLinear>& out) {
  const auto add = [&](const char* leaf, std::int64_t rows, std::int64_t cols) {
    const std::string_view name = leaf;
    const bool bias = name == "dt_proj" || (ssm.proj_bias && (name == "in_proj" || name == "out_proj"));
    out.push_back({fmt::format("{}.{}", at, leaf), rows, cols, mtp, false, false, 1,
                   LinearKind::ssm, bias});
  };
  switch (ssm.kind) {
    case SsmKind::mamba2: add("in_proj", ssm.in_proj_width(), ssm.hidden); break;
    case SsmKind::gated_delta_net:
      if (ssm.split_in_proj) {  // Qwen3.5: q, k, v | z | b | a
        add("in_proj_qkv", ssm.conv_channels(), ssm.hidden);
        add("in_proj_z", ssm.inner, ssm.hidden);
        add("in_proj_b", ssm.num_heads, ssm.hidden);
        add("in_proj_a", ssm.num_heads, ssm.hidden);
      } else {
        add("in_proj_qkvz", ssm.inner + ssm.conv_channels(), ssm.hidden);
        add("in_proj_ba", 2 * ssm.num_heads, ssm.hidden);
      }
      break;
    case SsmKind::mamba1:
      add("in_proj", ssm.in_proj_width(), ssm.hidden);
      add("x_proj", ssm.dt_rank + 2 * ssm.state, ssm.inner);
      add("dt_proj", ssm.inner, ssm.dt_rank);
      break;
    case SsmKind::kimi_delta:
      add("q_proj", ssm.groups * ssm.state, ssm.hidden);
      add("k_proj", ssm.groups * ssm.state, ssm.hidden);
      add("v_proj", ssm.inner, ssm.hidden);
      add("f_a_proj", ssm.head_dim, ssm.hidden);
      add("f_b_proj", ssm.inner, ssm.head_dim);
      add("b_proj", ssm.num_heads, ssm.hidden);
      add("g_a_proj", ssm.head_dim, ssm.hidden);
      add("g_b_proj", ssm.inner, ssm.head_dim);
      add("o_proj", ssm.hidden, ssm.inner);
      return;
    case SsmKind::short_conv: add("in_proj", ssm.in_proj_width(), ssm.hidden); break;
    case SsmKind::lightning:
      add("qkv_proj", 3 * ssm.inner, ssm.hidden);
      add("output_gate", ssm.inner, ssm.hidden);
      break;
  }
  add("out_proj", ssm.hidden, ssm.inner);
}

std::int64_t norm_tensors(const Norm& norm) {
  switch (norm.kind) {
    case NormKind::layer_norm: return 2;
    case NormKind::layer_norm_no_affine: return 0;
    case NormKind::rms_norm:
    case NormKind::layer_norm_no_bias: return 1;
  }
  return 1;
}

std::int64_t attention_tensors(const Attention& a) {
  switch (a.kind) {
    case AttentionKind::none: return 0;
    case AttentionKind::linear: return 1;
    case AttentionKind::mla: {
      std::int64_t n = (a.mla.q_lora_rank > 0 ? 3 : 1) + 4;  // q path; kv_a, kv_a norm, kv_b, o
      if (a.q_bias) ++n;
      if (a.k_bias) ++n;
      if (a.o_bias) ++n;
      if (a.indexer) n += 5;  // wq_b, wk, k_norm weight + bias, weights_proj
      return n;
    }
    case AttentionKind::standard: break;
  }
  std::int64_t n = a.fused_qkv ? 2 : 4;
  if (a.fused_qkv) {
    if (a.q_bias || a.k_bias || a.v_bias) ++n;
  } else {
    n += (a.q_bias ? 1 : 0) + (a.k_bias ? 1 : 0) + (a.v_bias ? 1 : 0);
  }
  if (a.o_bias) ++n;
  if (a.q_norm) n += norm_tensors(*a.q_norm);
  if (a.k_norm) n += norm_tensors(*a.k_norm);
  if (a.sinks) ++n;
  if (a.relative_attention_buckets > 0) ++n;
  return n;
}

std::int64_t mlp_tensors(const Mlp& mlp) {
  switch (mlp.kind) {
    case MlpKind::none: return 0;
    case MlpKind::linear: return 1;
    case MlpKind::gated: {
      const std::int64_t up = mlp.fused_gate_up ? 1 : 2;
      return up + 1 + (mlp.up_bias ? up : 0) + (mlp.down_bias ? 1 : 0);
    }
    case MlpKind::plain: return 2 + (mlp.up_bias ? 1 : 0) + (mlp.down_bias ? 1 : 0);
  }
  return 0;
}

std::int64_t ssm_tensors(const Ssm& ssm) {
  const std::int64_t projections = ssm.proj_bias ? 4 : 2;  // in_proj, out_proj (+ biases)
  const std::int64_t conv = ssm.conv_bias ? 2 : 1;
  switch (ssm.kind) {
    case SsmKind::mamba2:  // + A_log, D, dt_bias, gated norm
      return projections + conv + 3 + (ssm.gated_norm ? 1 : 0);
    case SsmKind::gated_delta_net:  // + in_proj_ba (Qwen3.5: z, b, a), A_log, dt_bias, norm
      return projections + (ssm.split_in_proj ? 3 : 1) + conv + 2 + (ssm.gated_norm ? 1 : 0);
    case SsmKind::mamba1:  // + x_proj, dt_proj weight and bias, A_log, D (+ dt/B/C norms)
      return projections + conv + 5 + (ssm.dt_bc_norms ? 3 : 0);
    case SsmKind::kimi_delta:  // 9 Linears, q/k/v conv1d, A_log, dt_bias, o_norm
      return 9 + 3 * conv + 2 + (ssm.gated_norm ? 1 : 0);
    case SsmKind::short_conv:  // in_proj, conv, out_proj (+ biases)
      return projections + conv;
    case SsmKind::lightning:  // qkv_proj, output_gate, norm, out_proj
      return 4;
  }
  return 0;
}

std::int64_t block_tensors(const Block& block) {
  if (block.shared_weights) return 0;
  std::int64_t n = attention_tensors(block.attention) + mlp_tensors(block.mlp);
  if (block.cross_attention) n += attention_tensors(*block.cross_attention);
  if (block.ssm) n += ssm_tensors(*block.ssm);
  for (const Norm& norm : block.norms) n += norm_tensors(norm);
  if (block.moe) {
    const Moe& moe = *block.moe;
    n += 1 + (moe.router_bias ? 1 : 0) + (moe.router_correction_bias ? 1 : 0);
    n = checked_add(n, checked_mul(moe.num_experts, mlp_tensors(moe.expert)));
    if (moe.shared) n += mlp_tensors(*moe.shared);
    if (moe.shared_expert_gate) ++n;
    if (moe.latent_dim > 0) n += 2;
  }
  return n;
}

}  // namespace

ModuleNames module_names(const std::string& prefix, const Block& block) {
  if (block.single_mixer) {
    const std::string mixer = prefix + ".mixer";
    return {mixer, mixer, mixer};
  }
  return {fmt::format("{}.{}", prefix, block.attention.name),
          fmt::format("{}.{}", prefix, block.ssm ? block.ssm->name : "mamba"), prefix + ".mlp"};
}

void block_linears(const std::string& prefix, const Block& block, bool mtp,
                   std::vector<NamedLinear>& out) {
  if (block.shared_weights) return;
  const ModuleNames names = module_names(prefix, block);
  attention_linears(names.attention, block.attention, mtp, out);
  if (block.cross_attention) {
    attention_linears(fmt::format("{}.{}", prefix, block.cross_attention->name),
                      *block.cross_attention, mtp, out);
  }
  if (block.ssm) ssm_linears(names.ssm, *block.ssm, mtp, out);
  mlp_linears(names.ffn, block.mlp, mtp, 0, out);
  if (block.moe) {
    const Moe& moe = *block.moe;
    const std::int64_t hidden = moe.hidden_dim > 0 ? moe.hidden_dim : moe.expert.input_dim;
    out.push_back({names.ffn + ".gate", moe.num_experts, hidden, mtp, true, false, 1,
                   LinearKind::mlp, moe.router_bias});
    mlp_linears(names.ffn + ".experts.*", moe.expert, mtp, moe.num_experts, out);
    if (moe.shared) mlp_linears(names.ffn + ".shared_experts", *moe.shared, mtp, 0, out);
    if (moe.latent_dim > 0) {
      out.push_back({names.ffn + ".fc1_latent_proj", moe.latent_dim, hidden, mtp, false, false, 1,
                     LinearKind::latent});
      out.push_back({names.ffn + ".fc2_latent_proj", hidden, moe.latent_dim, mtp, false, false, 1,
                     LinearKind::latent});
    }
  }
}

std::vector<NamedLinear> named_linears(const ModelDescription& model) {
  std::vector<NamedLinear> out;
  for (const Stack& stack : model.stacks) {
    if (stack.vision) continue;
    const std::string base = stack.mtp ? "mtp.layers" : "layers";
    for (std::size_t i = 0; i < stack.blocks.size(); ++i) {
      block_linears(fmt::format("{}.{}", base, i), stack.blocks[i], stack.mtp, out);
    }
  }
  if (model.has_lm_head && !model.tie_word_embeddings) {
    out.push_back({"lm_head", model.vocab_size, model.embedding_dim, false, false, false, 1,
                   LinearKind::head, model.lm_head_bias});
  }
  return out;
}

std::int64_t tensor_count(const ModelDescription& model) {
  std::int64_t n = 1;  // token embedding
  if (model.learned_positions > 0) ++n;
  if (model.token_types > 0) ++n;
  if (model.embedding_norm) n += norm_tensors(*model.embedding_norm);
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) n = checked_add(n, block_tensors(block));
    if (stack.final_norm) n += norm_tensors(*stack.final_norm);
  }
  if (model.has_lm_head) {
    if (!model.tie_word_embeddings) ++n;
    if (model.lm_head_bias) ++n;
  }
  for (const ExtraParameter& extra : model.extra_parameters) {
    if (const std::optional<LayerScales> scales = layer_scales(model, extra)) {
      n += scales->layers * static_cast<std::int64_t>(scales->leaves.size());
      continue;
    }
    n += extra.op == "LayerNorm" || extra.shape_has_bias() ? 2 : 1;
  }
  return n;
}

std::optional<LayerScales> layer_scales(const ModelDescription& model,
                                        const ExtraParameter& extra) {
  const std::size_t star = extra.name.find(".*.");
  if (extra.op != "LayerScale" || star == std::string::npos) return std::nullopt;
  LayerScales scales;
  scales.layers_prefix = extra.name.substr(0, star);
  const std::string stack_name = scales.layers_prefix.substr(0, scales.layers_prefix.rfind('.'));
  std::string rest = extra.name.substr(star + 3);
  for (std::size_t slash = rest.find('/'); slash != std::string::npos; slash = rest.find('/')) {
    scales.leaves.push_back(rest.substr(0, slash));
    rest.erase(0, slash + 1);
  }
  scales.leaves.push_back(rest);
  for (const Stack& stack : model.stacks) {
    if (stack.name == stack_name) scales.layers = static_cast<std::int64_t>(stack.blocks.size());
  }
  const std::int64_t count =
      checked_mul(scales.layers, static_cast<std::int64_t>(scales.leaves.size()));
  if (count == 0 || extra.params % count != 0) return std::nullopt;
  scales.width = extra.params / count;
  return scales;
}

std::vector<std::pair<std::string, ModuleFormat>>::const_iterator first_at_or_after(
    const ModeloptScheme& scheme, std::string_view name) {
  return std::lower_bound(scheme.module_formats.begin(), scheme.module_formats.end(), name,
                          [](const std::pair<std::string, ModuleFormat>& entry,
                             std::string_view wanted) { return entry.first < wanted; });
}

ModuleFormat modelopt_format(const ModeloptScheme& scheme, const std::string& name, bool mtp,
                             bool router) {
  if (router) return ModuleFormat::unquantized;
  const auto exact = first_at_or_after(scheme, name);
  if (exact != scheme.module_formats.end() && exact->first == name) return exact->second;
  for (const auto& [pattern, format] : scheme.module_patterns) {
    if (glob_match(pattern, name)) return format;
  }
  // ModelOpt exports leave MTP layers at full precision unless its map names them.
  if (mtp || excluded(scheme, name)) return ModuleFormat::unquantized;
  return scheme.default_format;
}

std::int64_t StoredTensor::elements() const {
  std::int64_t n = 1;
  for (const std::int64_t extent : shape) n = checked_mul(n, extent, "the storage size");
  return n;
}

namespace {

// re.match: anchored at the start of the name, not at its end.
bool re_match(const std::regex& pattern, const std::string& name) {
  return std::regex_search(name, pattern, std::regex_constants::match_continuous);
}

bool mentions_single_expert(std::string_view entry) {
  for (const std::string_view marker : {"experts.", "experts\\."}) {
    for (std::size_t at = entry.find(marker); at != std::string_view::npos;
         at = entry.find(marker, at + 1)) {
      const std::size_t next = at + marker.size();
      if (next < entry.size() && entry[next] >= '0' && entry[next] <= '9') return true;
    }
  }
  return false;
}

}  // namespace

CtMatcher::CtMatcher(const CompressedTensorsScheme& scheme) : scheme_(scheme) {
  const auto note = [&](const std::string& entry) {
    single_experts_ = single_experts_ || mentions_single_expert(entry);
  };
  for (const CtGroup& group : scheme.groups) {
    std::vector<std::regex>& compiled = group_regexes_.emplace_back();
    for (const std::string& pattern : group.regexes) {
      compiled.emplace_back(pattern);
      note(pattern);
    }
    for (const std::string& name : group.names) note(name);
  }
  for (const std::string& pattern : scheme.ignore_regexes) {
    ignore_regexes_.emplace_back(pattern);
    note(pattern);
  }
  for (const std::string& name : scheme.ignore_names) note(name);
}

const CtGroup* CtMatcher::group_for(const std::string& name, bool router) const {
  // MoE routers are left unquantized: DeepSeek-style gates are no nn.Linear at all, and
  // llm-compressor recipes ignore the nn.Linear ones ("re:.*mlp.gate$"). Other router-like
  // Linears (the DSA indexer's weights_proj) are quantized like any Linear when targeted.
  if (router && name.ends_with(".gate")) return nullptr;
  if (std::binary_search(scheme_.ignore_names.begin(), scheme_.ignore_names.end(), name)) {
    return nullptr;
  }
  for (const std::regex& pattern : ignore_regexes_) {
    if (re_match(pattern, name)) return nullptr;
  }
  const CtGroup* found = nullptr;
  for (std::size_t g = 0; g < scheme_.groups.size(); ++g) {
    const CtGroup& group = scheme_.groups[g];
    bool matches = group.all_linears ||
                   std::find(group.names.begin(), group.names.end(), name) != group.names.end();
    for (const std::regex& pattern : group_regexes_[g]) {
      if (matches) break;
      matches = re_match(pattern, name);
    }
    if (!matches) continue;
    if (found != nullptr) {
      throw ConfigError(fmt::format(
          "quantization_config: config_groups.{} and config_groups.{} both target \"{}\"; trace "
          "cannot tell which scheme stores it",
          found->name, group.name, name));
    }
    found = &group;
  }
  return found;
}

std::vector<StoredTensor> ct_tensors(const CtGroup& group, std::int64_t rows, std::int64_t cols,
                                     std::string_view base_dtype, std::int64_t base_bytes) {
  std::vector<StoredTensor> out;
  // Scale shape by strategy (initialize.py): one per tensor, per output row, per group of
  // inputs, or per block.
  std::vector<std::int64_t> scale_shape = {1};
  switch (group.strategy) {
    case CtStrategy::tensor: break;
    case CtStrategy::channel: scale_shape = {rows, 1}; break;
    case CtStrategy::group:
    case CtStrategy::tensor_group:
      scale_shape = {rows, std::max<std::int64_t>(ceil_div(cols, group.group_size), 1)};
      break;
    case CtStrategy::block:
      scale_shape = {ceil_div(rows, group.block_rows), ceil_div(cols, group.block_cols)};
      break;
  }
  switch (group.storage) {
    case CtStorage::pack_quantized: {
      // pack_quantized.py: 32/bits values per int32 along the input; the zero point (asymmetric
      // group / channel only) packed the same way along the output.
      const std::int64_t per_int32 = 32 / group.num_bits;
      out.push_back({"weight_packed", {rows, ceil_div(cols, per_int32)}, "I32", 4, true});
      out.push_back({"weight_scale", scale_shape, base_dtype, base_bytes});
      out.push_back({"weight_shape", {2}, "I64", 8});  // torch.tensor(weight.shape)
      if (!group.symmetric) {
        out.push_back({"weight_zero_point", {ceil_div(rows, per_int32), scale_shape[1]}, "I32", 4});
      }
      break;
    }
    case CtStorage::int8:
      // naive_quantized.py: the weight cast to int8; the zero point beside it when asymmetric.
      out.push_back({"weight", {rows, cols}, "I8", 1, true});
      out.push_back({"weight_scale", scale_shape, base_dtype, base_bytes});
      if (!group.symmetric) out.push_back({"weight_zero_point", scale_shape, "I8", 1});
      break;
    case CtStorage::fp8:
      out.push_back({"weight", {rows, cols}, "F8_E4M3", 1, true});
      out.push_back({"weight_scale", scale_shape, base_dtype, base_bytes});
      break;
    case CtStorage::nvfp4:
      // nvfp4_quantized.py: two E2M1 values per byte, F8_E4M3 scale per group, F32 global scale.
      out.push_back({"weight_packed", {rows, ceil_div(cols, 2)}, "U8", 1, true});
      out.push_back({"weight_scale", scale_shape, "F8_E4M3", 1});
      out.push_back({"weight_global_scale", {1}, "F32", 4});
      break;
  }
  if (group.g_idx) out.push_back({"weight_g_idx", {cols}, "I32", 4});
  if (group.input_scale) out.push_back({"input_scale", {1}, base_dtype, base_bytes});
  if (group.input_global_scale) out.push_back({"input_global_scale", {1}, "F32", 4});
  return out;
}

}  // namespace trace::layout
