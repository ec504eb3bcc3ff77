#include "trace/estimate/parameters.hpp"

#include <array>

#include "trace/checked_math.hpp"

namespace trace {

namespace {

// weight (+ bias) of a Linear layer.
std::int64_t linear(std::int64_t in, std::int64_t out, bool bias) {
  return checked_add(checked_mul(in, out, "a weight matrix"), bias ? out : 0, "a weight matrix");
}

constexpr std::array<const char*, 13> k_components{
    "embedding", "position_embedding", "attention", "ssm",    "mlp", "experts", "shared_experts",
    "router",    "norm",               "head",      "vision", "mtp", "other"};

struct Tally {
  std::array<std::int64_t, k_components.size()> counts{};
  void add(std::string_view component, std::int64_t params) {
    for (std::size_t i = 0; i < k_components.size(); ++i) {
      if (component == k_components[i]) {
        counts[i] = checked_add(counts[i], params, "the parameter count");
        return;
      }
    }
    counts.back() = checked_add(counts.back(), params, "the parameter count");
  }
};

}  // namespace

std::int64_t norm_params(const Norm& norm) {
  switch (norm.kind) {
    case NormKind::rms_norm:
    case NormKind::layer_norm_no_bias: return norm.dim;
    case NormKind::layer_norm: return checked_mul(2, norm.dim);
    case NormKind::layer_norm_no_affine: return 0;
  }
  return 0;
}

std::int64_t attention_params(const Attention& attention) {
  switch (attention.kind) {
    case AttentionKind::none: return 0;
    case AttentionKind::linear: return linear(attention.input_dim, attention.output_dim, false);
    case AttentionKind::mla: return mla_params(attention);
    case AttentionKind::standard: break;
  }
  const std::int64_t q_width = checked_mul(attention.num_heads, attention.head_dim);
  const std::int64_t kv_width = checked_mul(attention.num_kv_heads, attention.head_dim);
  std::int64_t params = linear(attention.input_dim,
                               attention.output_gate ? checked_mul(2, q_width) : q_width,
                               attention.q_bias);
  params = checked_add(params, linear(attention.kv_input_dim, kv_width, attention.k_bias));
  params = checked_add(params, linear(attention.kv_input_dim, kv_width, attention.v_bias));
  params = checked_add(params, linear(q_width, attention.output_dim, attention.o_bias));
  if (attention.q_norm) params = checked_add(params, norm_params(*attention.q_norm));
  if (attention.k_norm) params = checked_add(params, norm_params(*attention.k_norm));
  params = checked_add(params,
                       checked_mul(attention.relative_attention_buckets, attention.num_heads));
  if (attention.sinks) params = checked_add(params, attention.num_heads);
  return params;
}

std::int64_t mla_params(const Attention& attention) {
  // DeepSeek-V2/V3 MLA (modeling_deepseek.py, DeepseekV3Attention): q_a_proj + q_a_layernorm +
  // q_b_proj (or one q_proj), kv_a_proj_with_mqa + kv_a_layernorm + kv_b_proj, o_proj.
  const MlaShape& m = attention.mla;
  const std::int64_t heads = attention.num_heads;
  const std::int64_t q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
  std::int64_t params = 0;
  if (m.q_lora_rank > 0) {
    params = checked_add(linear(attention.input_dim, m.q_lora_rank, attention.q_bias),
                         m.q_lora_rank);
    params = checked_add(params, linear(m.q_lora_rank, checked_mul(heads, q_head), false));
  } else {
    params = linear(attention.input_dim, checked_mul(heads, q_head), attention.q_bias);
  }
  params = checked_add(params, linear(attention.input_dim, m.kv_lora_rank + m.qk_rope_head_dim,
                                      attention.k_bias));
  params = checked_add(params, m.kv_lora_rank);
  params = checked_add(params, linear(m.kv_lora_rank,
                                      checked_mul(heads, m.qk_nope_head_dim + m.v_head_dim), false));
  params = checked_add(params, linear(checked_mul(heads, m.v_head_dim), attention.output_dim,
                                      attention.o_bias));
  if (attention.indexer) {
    // Lightning indexer (DeepSeek-V3.2 Indexer): wq_b, wk, k_norm (LayerNorm), weights_proj.
    const SparseIndexer& index = *attention.indexer;
    params = checked_add(params, linear(index.query_input_dim,
                                        checked_mul(index.num_heads, index.head_dim), false));
    params = checked_add(params, linear(attention.input_dim, index.head_dim, false));
    params = checked_add(params, 2 * index.head_dim);
    params = checked_add(params, linear(attention.input_dim, index.num_heads, false));
  }
  return params;
}

std::int64_t mlp_params(const Mlp& mlp) {
  if (mlp.kind == MlpKind::none) return 0;
  if (mlp.kind == MlpKind::linear) return linear(mlp.input_dim, mlp.input_dim, false);
  const std::int64_t up = linear(mlp.input_dim, mlp.intermediate, mlp.up_bias);
  const std::int64_t down = linear(mlp.intermediate, mlp.input_dim, mlp.down_bias);
  return checked_add(checked_mul(mlp.kind == MlpKind::gated ? 2 : 1, up), down);
}

MoeParams moe_params(const Moe& moe) {
  MoeParams params;
  params.routed_expert = mlp_params(moe.expert);
  params.routed = checked_mul(moe.num_experts, params.routed_expert, "the expert parameters");
  const std::int64_t hidden = moe.hidden_dim > 0 ? moe.hidden_dim : moe.expert.input_dim;
  params.router = checked_add(checked_mul(hidden, moe.num_experts),
                              (moe.router_bias ? moe.num_experts : 0) +
                                  (moe.router_correction_bias ? moe.num_experts : 0));
  if (moe.shared) params.shared = mlp_params(*moe.shared);
  if (moe.shared_expert_gate) params.shared = checked_add(params.shared, hidden);
  if (moe.latent_dim > 0) {
    // fc1_latent_proj (hidden -> latent) and fc2_latent_proj (latent -> hidden), bias-free; every
    // token passes through them, so they count with the router.
    params.router = checked_add(params.router, checked_mul(2 * hidden, moe.latent_dim));
  }
  params.total = checked_add(checked_add(params.routed, params.router), params.shared);
  params.active = checked_add(checked_add(checked_mul(moe.top_k, params.routed_expert),
                                          params.router),
                              params.shared);
  return params;
}

std::int64_t ssm_params(const Ssm& ssm) {
  const std::int64_t h = ssm.hidden;
  const std::int64_t conv = ssm.conv_channels();
  // in_proj (all splits), then the depthwise conv1d.
  std::int64_t params = linear(h, ssm.in_proj_width(), ssm.proj_bias);
  params = checked_add(params, checked_mul(conv, ssm.conv_kernel) + (ssm.conv_bias ? conv : 0));
  switch (ssm.kind) {
    case SsmKind::mamba2:
      // A_log, D, dt_bias per head; gated RMSNorm over inner.
      params = checked_add(params, 3 * ssm.num_heads);
      if (ssm.gated_norm) params = checked_add(params, ssm.inner);
      break;
    case SsmKind::gated_delta_net:
      // A_log and dt_bias per value head; gated RMSNorm over one value head, shared by all.
      params = checked_add(params, 2 * ssm.num_heads);
      if (ssm.gated_norm) params = checked_add(params, ssm.head_dim);
      break;
    case SsmKind::kimi_delta:
      // The gates' up projections f_b_proj, g_b_proj [inner, head_dim]; A_log per head; dt_bias
      // per channel; gated RMSNorm over one value head.
      params = checked_add(params, checked_mul(2 * ssm.head_dim, ssm.inner));
      params = checked_add(params, ssm.num_heads + ssm.inner);
      if (ssm.gated_norm) params = checked_add(params, ssm.head_dim);
      break;
    case SsmKind::short_conv:  // in_proj, conv and out_proj only
      break;
    case SsmKind::lightning:  // qkv_proj + output_gate (as in_proj), the RMSNorm over inner
      params = checked_add(params, ssm.inner);
      break;
    case SsmKind::mamba1:
      // x_proj -> dt, B, C; dt_proj (+bias); A_log [inner, N]; D; Jamba's dt/B/C RMSNorms.
      params = checked_add(params, linear(ssm.inner, ssm.dt_rank + 2 * ssm.state, false));
      params = checked_add(params, linear(ssm.dt_rank, ssm.inner, true));
      params = checked_add(params, checked_mul(ssm.inner, ssm.state) + ssm.inner);
      if (ssm.dt_bc_norms) params = checked_add(params, ssm.dt_rank + 2 * ssm.state);
      break;
  }
  return checked_add(params, linear(ssm.inner, h, ssm.proj_bias));
}

namespace {

// A layer's weights whether it holds them or runs an earlier layer's again.
std::int64_t block_weights(const Block& block) {
  std::int64_t params = checked_add(attention_params(block.attention), mlp_params(block.mlp));
  if (block.ssm) params = checked_add(params, ssm_params(*block.ssm));
  if (block.cross_attention) params = checked_add(params, attention_params(*block.cross_attention));
  if (block.moe) params = checked_add(params, moe_params(*block.moe).total);
  for (const Norm& norm : block.norms) params = checked_add(params, norm_params(norm));
  return params;
}

}  // namespace

std::int64_t block_params(const Block& block) {
  return block.shared_weights ? 0 : block_weights(block);
}

std::int64_t block_active_weights(const Block& block) {
  if (!block.moe) return block_weights(block);
  const MoeParams moe = moe_params(*block.moe);
  return block_weights(block) - moe.total + moe.active;
}

std::int64_t block_active_params(const Block& block) {
  return block.shared_weights ? 0 : block_active_weights(block);
}

std::int64_t component_count(const ParameterCount& count, std::string_view component) {
  for (const auto& [name, params] : count.by_component) {
    if (name == component) return params;
  }
  return 0;
}

namespace {

// A stack or extra parameter named `name` is one of the model's not-served parts: a listed name,
// or below one ("talker.code_predictor" below "talker").
bool not_served(const ModelDescription& model, std::string_view name) {
  for (const std::string& part : model.not_served) {
    if (name == part ||
        (name.starts_with(part) && name.size() > part.size() && name[part.size()] == '.')) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::int64_t served_params(const ParameterCount& count, bool with_mtp) {
  return count.total - (with_mtp ? 0 : count.mtp) - count.not_served;
}

ParameterCount count_parameters(const ModelDescription& model) {
  Tally tally;
  std::int64_t unserved = 0;  // ModelDescription::not_served's parameters
  const std::int64_t token_embedding = checked_mul(model.vocab_size, model.embedding_dim);
  tally.add("embedding", token_embedding);
  const std::int64_t positions = checked_mul(model.learned_positions, model.position_width());
  tally.add("position_embedding", positions);
  const std::int64_t token_types = checked_mul(model.token_types, model.position_width());
  tally.add("embedding", token_types);
  if (model.embedding_norm) tally.add("norm", norm_params(*model.embedding_norm));

  std::int64_t vision = 0;
  std::int64_t bias_buffers = 0;
  std::int64_t inactive_experts = 0;  // routed experts a token does not use
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (block.moe && block.moe->router_correction_bias) {
        bias_buffers = checked_add(bias_buffers, block.moe->num_experts);
      }
      if (block.shared_weights) continue;  // counted where it is first defined
      if (stack.vision || stack.mtp) {
        tally.add(stack.vision ? "vision" : "mtp", block_params(block));
        if (stack.vision) vision = checked_add(vision, block_params(block));
        if (not_served(model, stack.name)) unserved = checked_add(unserved, block_params(block));
        continue;
      }
      tally.add("attention", attention_params(block.attention));
      if (block.cross_attention) tally.add("attention", attention_params(*block.cross_attention));
      tally.add("mlp", mlp_params(block.mlp));
      if (block.ssm) tally.add("ssm", ssm_params(*block.ssm));
      if (block.moe) {
        const MoeParams moe = moe_params(*block.moe);
        tally.add("experts", moe.routed);
        tally.add("router", moe.router);
        tally.add("shared_experts", moe.shared);
        inactive_experts = checked_add(inactive_experts, moe.total - moe.active);
      }
      for (const Norm& norm : block.norms) tally.add("norm", norm_params(norm));
    }
    if (stack.final_norm) {
      const std::int64_t norm = norm_params(*stack.final_norm);
      tally.add(stack.vision ? "vision" : stack.mtp ? "mtp" : "norm", norm);
      if (stack.vision) vision = checked_add(vision, norm);
      if (not_served(model, stack.name)) unserved = checked_add(unserved, norm);
    }
  }

  if (model.has_lm_head) {
    if (!model.tie_word_embeddings) tally.add("head", token_embedding);
    if (model.lm_head_bias) tally.add("head", model.vocab_size);
  }
  std::int64_t extra_lookups = 0;  // lookup tables outside the stacks (Gemma 3n's per-layer one)
  for (const ExtraParameter& extra : model.extra_parameters) {
    tally.add(extra.component, extra.params);
    if (extra.component == "vision") vision = checked_add(vision, extra.params);
    if (not_served(model, extra.name)) unserved = checked_add(unserved, extra.params);
    if (extra.component == "embedding" && extra.op == "Embedding") {
      extra_lookups = checked_add(extra_lookups, extra.params);
    }
  }

  ParameterCount count;
  for (std::size_t i = 0; i < k_components.size(); ++i) {
    count.by_component.emplace_back(k_components[i], tally.counts[i]);
    count.total = checked_add(count.total, tally.counts[i], "the parameter count");
    if (std::string_view(k_components[i]) == "mtp") count.mtp = tally.counts[i];
  }
  // Active per token: every parameter a text token touches. MTP layers only serve training and
  // speculative decoding; unselected routed experts sit idle; a vision tower runs per image, not
  // per token (Meta's "17B active" for Llama-4-Scout is the text path).
  count.vision = vision;
  count.not_served = unserved;
  count.router_bias_buffers = bias_buffers;
  count.active = count.total - count.mtp - inactive_experts - vision;
  // Vendors that publish "without embeddings" leave out the input lookup tables but keep the
  // output head; with tied embeddings the matrix is the head, so it stays.
  const std::int64_t lookup =
      (model.tie_word_embeddings && model.has_lm_head ? 0 : token_embedding) + positions +
      token_types + extra_lookups;
  count.active_without_embedding = count.active - lookup;
  return count;
}

}  // namespace trace
