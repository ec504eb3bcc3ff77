// Memory formulas. Sources and derivations: docs/memory.md. The activation terms follow
// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// §4.1, generalised from GPT's fixed shapes to each layer's real widths, with flash/SDPA attention
// (no s x s score matrix saved).
#include "trace/estimate/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "checkpoint_layout.hpp"
#include "trace/checked_math.hpp"
#include "trace/error.hpp"

namespace trace {

namespace {

// Values (not bytes) one token of one layer saves for backward.
std::int64_t attention_saved_values(const Attention& attention) {
  const std::int64_t heads = attention.num_heads;
  switch (attention.kind) {
    case AttentionKind::none: return 0;
    case AttentionKind::linear: return attention.input_dim;  // the Linear's input
    case AttentionKind::mla: {
      // input, q latent, Q, kv latent (+ rope key), K, V, attention output
      const MlaShape& m = attention.mla;
      const std::int64_t q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
      return attention.input_dim + m.q_lora_rank + heads * q_head + m.kv_lora_rank +
             m.qk_rope_head_dim + heads * q_head + 2 * heads * m.v_head_dim;
    }
    case AttentionKind::standard: break;
  }
  const std::int64_t q_width = heads * attention.head_dim;
  const std::int64_t kv_width = attention.num_kv_heads * attention.head_dim;
  // projection input + Q + K + V + attention output (input of o_proj)
  return attention.input_dim + q_width + 2 * kv_width + q_width;
}

// Activations transformers writes as Python expressions (ACT2FN) save the intermediate
// tensors their backward needs, beyond the input a fused kernel keeps: gelu_new and
// gelu_accurate (0.5x (1 + tanh(k (x + 0.044715 x^3)))): tanh's output, 1 + tanh and 0.5x;
// gelu_fast also the two factors of the tanh's argument; quick_gelu (x sigmoid(1.702 x)): the
// sigmoid's output. Per intermediate value; measured on an H200 (docs/memory.md). Frameworks
// with their own models (LitGPT, torchtune, Megatron) call a fused kernel instead.
std::int64_t composed_activation_values(const std::string& activation) {
  if (activation == "gelu_new" || activation == "gelu_accurate") return 3;
  if (activation == "gelu_fast") return 5;
  if (activation == "quick_gelu") return 1;
  return 0;
}

// Under autocast torch.pow runs in fp32 (autocast's fp32 op list), so gelu_new's cube upcasts
// its input and everything computed from it: the fp32 input pow keeps (in place of the bf16
// one), tanh's output and 1 + tanh are fp32. Values per intermediate value that take 2 bytes
// more.
std::int64_t composed_activation_fp32_values(const std::string& activation) {
  return activation == "gelu_new" || activation == "gelu_accurate" ? 3 : 0;
}

// An MLP's intermediate width times `per_value(its activation)` (0 without an activation).
template <typename PerValue>
std::int64_t per_intermediate_value(const Mlp& mlp, PerValue per_value) {
  if (mlp.kind != MlpKind::gated && mlp.kind != MlpKind::plain) return 0;
  return checked_mul(per_value(mlp.activation), mlp.intermediate, "the activation size");
}

// Values one token saves inside an MLP, its input excluded.
std::int64_t mlp_inner_values(const Mlp& mlp) {
  switch (mlp.kind) {
    case MlpKind::none:
    case MlpKind::linear: return 0;
    // gate out, act(gate), up out, product (input of down) | fc1 out, act out
    case MlpKind::gated: return 4 * mlp.intermediate;
    case MlpKind::plain: return 2 * mlp.intermediate;
  }
  return 0;
}

// The saved values of an MLP that come out of its up/gate (fc1) projections or their
// activation: its inner values but the down projection's input (gate out, act(gate), up out |
// fc1 out), which a bitsandbytes Linear keeps as its own compute-dtype copy.
std::int64_t mlp_projection_output_values(const Mlp& mlp) {
  const std::int64_t inner = mlp_inner_values(mlp);
  return inner > 0 ? inner - mlp.intermediate : 0;
}

// The saved values a compiler can recompute from the others: act(gate) and act(gate) x up of a
// gated MLP, act(fc1) of a plain one.
std::int64_t mlp_pointwise_values(const Mlp& mlp) {
  switch (mlp.kind) {
    case MlpKind::gated: return 2 * mlp.intermediate;
    case MlpKind::plain: return mlp.intermediate;
    case MlpKind::none:
    case MlpKind::linear: return 0;
  }
  return 0;
}

// The sum of `per_mlp` over the MLPs one token passes through: the dense MLP, the top-k routed
// experts and the shared experts.
template <typename PerMlp>
std::int64_t over_token_mlps(const Block& block, PerMlp per_mlp) {
  std::int64_t values = per_mlp(block.mlp);
  if (block.moe) {
    values += block.moe->top_k * per_mlp(block.moe->expert);
    if (block.moe->shared) values += per_mlp(*block.moe->shared);
  }
  return values;
}

std::int64_t ffn_pointwise_values(const Block& block) {
  return over_token_mlps(block, mlp_pointwise_values);
}

std::int64_t ffn_saved_values(const Block& block) {
  std::int64_t values = 0;
  if (block.mlp.kind != MlpKind::none) values += block.mlp.input_dim + mlp_inner_values(block.mlp);
  if (block.moe) {
    const Moe& moe = *block.moe;
    // input, router logits, and the top-k experts each token is routed to (+ shared experts;
    // + the latent projections' outputs for LatentMoE); each routed copy's output, which the
    // routing weight multiplies (transformers' experts, Megatron's unpermute keep it for the
    // weight's gradient)
    values += moe.expert.input_dim + moe.num_experts + moe.top_k * mlp_inner_values(moe.expert) +
              2 * moe.latent_dim + (moe.latent_dim == 0 ? moe.top_k * moe.expert.input_dim : 0);
    if (moe.shared) values += mlp_inner_values(*moe.shared);
  }
  return values;
}

// An activation whose backward reads its output, so the output is kept whatever reads it next.
bool activation_keeps_output(const std::string& activation) {
  return activation == "relu" || activation == "relu6" || activation == "sigmoid" ||
         activation == "tanh";
}

// The down (fc2) input of an MLP as values_per_token counts it: a gated MLP's act x up product;
// a plain one's activation output, unless the activation keeps it anyway.
std::int64_t mlp_down_input(const Mlp& mlp) {
  if (mlp.kind == MlpKind::gated) return mlp.intermediate;
  if (mlp.kind == MlpKind::plain && !activation_keeps_output(mlp.activation))
    return mlp.intermediate;
  return 0;
}

LinearInputs layer_linear_inputs(const Block& block) {
  LinearInputs inputs;
  const Attention& attention = block.attention;
  if (attention.kind == AttentionKind::standard && !attention.is_cross) {
    inputs.attention = attention.input_dim;
    inputs.attention_output = attention.num_heads * attention.head_dim;
  }
  if (block.mlp.kind == MlpKind::gated || block.mlp.kind == MlpKind::plain) {
    inputs.mlp = block.mlp.input_dim;
    inputs.mlp_down = mlp_down_input(block.mlp);
  }
  if (block.moe && block.moe->latent_dim == 0) {
    const Moe& moe = *block.moe;
    inputs.moe = moe.expert.input_dim;
    inputs.experts_down = moe.top_k * mlp_down_input(moe.expert);
    inputs.experts_gathered = moe.top_k * moe.expert.input_dim;
    if (moe.shared) {
      inputs.moe_shared = true;
      inputs.experts_down += mlp_down_input(*moe.shared);
    }
  }
  return inputs;
}

// The distinct inputs of a block's Linears, per token.
std::int64_t linear_input_values(const Block& block) {
  std::int64_t values = 0;
  const Attention& attention = block.attention;
  switch (attention.kind) {
    case AttentionKind::none: break;
    case AttentionKind::linear: values += attention.input_dim; break;
    case AttentionKind::mla: {
      const MlaShape& m = attention.mla;
      // the hidden state (q_a / kv_a), the two latents (q_b, kv_b), the attention output (o)
      values += attention.input_dim + m.q_lora_rank + m.kv_lora_rank +
                attention.num_heads * m.v_head_dim;
      break;
    }
    case AttentionKind::standard:
      values += attention.input_dim + attention.num_heads * attention.head_dim;
      break;
  }
  if (block.mlp.kind != MlpKind::none && block.mlp.kind != MlpKind::linear) {
    values += block.mlp.input_dim + block.mlp.intermediate;
  }
  if (block.moe) {
    const Moe& moe = *block.moe;
    // each routed copy of the token enters its expert's up/gate and down projections
    values += moe.top_k * (moe.expert.input_dim + moe.expert.intermediate);
    if (moe.shared) values += moe.shared->input_dim + moe.shared->intermediate;
  }
  if (block.ssm) values += block.ssm->hidden + block.ssm->inner;
  return values;
}

// Values one token saves inside a Mamba mixer: in_proj input and output, conv output, scan
// output, the gated norm's two inputs and out_proj's input (same method as the attention terms).
std::int64_t ssm_saved_values(const Ssm& ssm) {
  const std::int64_t conv = ssm.conv_channels();
  if (ssm.kind == SsmKind::mamba1) {
    return ssm.hidden + 2 * ssm.inner + ssm.inner + (ssm.dt_rank + 2 * ssm.state) + 3 * ssm.inner;
  }
  return ssm.hidden + ssm.in_proj_width() + conv + 3 * ssm.inner;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

// Whether LoRA `targets` reach the Linear called `name` (checkpoint names, checkpoint_layout).
bool lora_adapts(LoraTargets targets, std::string_view name) {
  const bool q = ends_with(name, ".q_proj") || ends_with(name, ".q_a_proj") ||
                 ends_with(name, ".q_b_proj") || ends_with(name, ".qkv_proj");
  const bool v = ends_with(name, ".v_proj") || ends_with(name, ".kv_b_proj");
  const bool attention = q || v || ends_with(name, ".k_proj") || ends_with(name, ".o_proj") ||
                         ends_with(name, ".kv_a_proj_with_mqa") || ends_with(name, ".linear_attn");
  switch (targets) {
    case LoraTargets::attention_qv: return q || v;
    case LoraTargets::attention: return attention;
    case LoraTargets::all_linear: return name != "lm_head";
  }
  return false;
}

namespace {

// KV-cache values one token holds in one layer's attention on one tensor-parallel rank.
std::int64_t kv_values_per_token(const Attention& attention, const KvSplit& split) {
  // Heads split over the ranks; past `heads` ranks each keeps one (vLLM replicates KV heads).
  const auto heads_per_rank = [&split](std::int64_t heads) {
    return ceil_div(std::max<std::int64_t>(heads, 1), std::max<std::int64_t>(split.tp, 1));
  };
  if (attention.kv_from_earlier_layer) return 0;
  switch (attention.kind) {
    case AttentionKind::none:
    case AttentionKind::linear: return 0;
    case AttentionKind::mla: {
      const MlaShape& m = attention.mla;
      const std::int64_t k_width = m.qk_nope_head_dim + m.qk_rope_head_dim;
      switch (split.mla) {
        case MlaCache::per_head:
          return heads_per_rank(attention.num_heads) * (k_width + m.v_head_dim);
        case MlaCache::per_head_padded: return heads_per_rank(attention.num_heads) * 2 * k_width;
        case MlaCache::latent: break;
      }
      // The compressed latent and the shared rope key (what vLLM/SGLang cache); not split by
      // tensor parallelism. A lightning indexer's keys have a format of their own
      // (kv_row_bytes).
      return m.kv_lora_rank + m.qk_rope_head_dim;
    }
    case AttentionKind::standard: break;
  }
  return 2 * heads_per_rank(attention.num_kv_heads) * attention.head_dim;
}

// One token's cache bytes in one layer's attention on one tensor-parallel rank. The values of
// kv_values_per_token at the cache's dtype, except under sparse MLA (a DeepSeek-V3.2 lightning
// indexer beside the latent, cached as the model's reference code and vLLM cache it):
//  - the indexer's key (index_key_bytes), whatever the dtype;
//  - an FP8 latent row is FlashMLA's sparse format (vLLM's fp8_ds_mla): the latent in FP8 with
//    an F32 scale per 128 values, the rope key in BF16 (656 bytes for 512 + 64).
std::int64_t kv_row_bytes(const Attention& attention, Dtype kv_dtype, const KvSplit& split) {
  const std::int64_t values = kv_values_per_token(attention, split);
  if (attention.kind != AttentionKind::mla || !attention.indexer || split.mla != MlaCache::latent ||
      attention.kv_from_earlier_layer) {
    return bytes_for(values, kv_dtype);
  }
  const MlaShape& m = attention.mla;
  const std::int64_t row =
      kv_dtype == Dtype::fp8
          ? m.kv_lora_rank + 4 * ceil_div(m.kv_lora_rank, 128) + 2 * m.qk_rope_head_dim
          : bytes_for(values, kv_dtype);
  return row + index_key_bytes(*attention.indexer);
}

}  // namespace

void validate_assumptions(const MemoryAssumptions& a) {
  struct Range {
    const char* flag;
    std::int64_t value;
    std::int64_t min;
    std::int64_t max;
  };
  // Generous limits: a 100M-token context or a batch of a million is absurd but representable.
  const Range ranges[] = {
      {"--seq-len", a.seq_len, 1, 1LL << 27},
      {"--batch", a.batch, 1, 1LL << 20},
      {"--context", a.context, 1, 1LL << 27},
      {"--concurrency", a.concurrency, 1, 1LL << 20},
      {"--lora-rank", a.lora_rank, 1, 1LL << 16},
      {"--cuda-context-mib", a.cuda_context_bytes / k_mib, 0, 1LL << 20},
      {"--cuda-graph-mib", a.cuda_graph_bytes / k_mib, 0, 1LL << 20},
      {"--awq-split-k", a.awq_split_k, 0, 64},
  };
  for (const Range& range : ranges) {
    if (range.value < range.min || range.value > range.max) {
      throw ConfigError(fmt::format("{} = {} is out of range ({}..{})", range.flag, range.value,
                                    range.min, range.max));
    }
  }
  // 0.9 is --gpu-memory-utilization 0.1, the lowest share that flag takes.
  if (!(a.headroom_fraction >= 0.0 && a.headroom_fraction <= 0.9)) {
    throw ConfigError(fmt::format("--headroom = {} is out of range (0 to 0.9)", a.headroom_fraction));
  }
}

std::int64_t MemoryBreakdown::total() const {
  std::int64_t sum = 0;
  for (const std::int64_t term :
       {weights, gradients, optimizer, activations, logits, kv_cache, ssm_state, overhead,
        generation}) {
    sum = checked_add(sum, term, "a memory total");
  }
  return sum;
}

std::int64_t lora_parameters(const ModelDescription& model, std::int64_t rank,
                             LoraTargets targets) {
  std::int64_t params = 0;
  for (const layout::NamedLinear& linear : layout::named_linears(model)) {
    if (linear.mtp || linear.router || !lora_adapts(targets, linear.name)) continue;
    params = checked_add(params, checked_product({rank, linear.rows + linear.cols, linear.count},
                                                 "the LoRA adapters"));
  }
  return params;
}

namespace {

// Inference forward pass, per token on one tensor-parallel rank: the tensors a sub-layer holds
// at once, as vLLM's modules keep them (locals live until the module returns). Its input and the
// residual belong to the block and are counted there.
struct ForwardValues {
  std::int64_t per_token = 0;         // grows with every token of the pass
  std::int64_t per_routed_token = 0;  // MoE caches: grow with min(tokens, moe_chunk_tokens)
};

std::int64_t rank_share(std::int64_t values, std::int64_t tp) { return ceil_div(values, tp); }

// The extra values a Linear producing `out` values per token holds while AWQ's split-K GEMM runs
// (awq_split_k partial sums, summed into its output afterwards): nothing without split-K.
std::int64_t split_k_values(std::int64_t split_k, std::int64_t out) {
  return split_k * out;
}

// A sub-layer of `values` per token under AWQ's split-K: the larger of those values, its first
// projection's partial sums (`first_out` wide) beside what is alive when it runs
// (`alive_at_first`), and its last projection's (`last_out` wide) beside every value.
std::int64_t with_split_k(std::int64_t values, std::int64_t alive_at_first, std::int64_t first_out,
                          std::int64_t last_out, std::int64_t split_k) {
  if (split_k == 0) return values;
  return std::max({values, alive_at_first + split_k_values(split_k, first_out),
                   values + split_k_values(split_k, last_out)});
}

std::int64_t attention_forward_values(const Attention& attention, std::int64_t tp,
                                      std::int64_t split_k) {
  const std::int64_t heads = attention.num_heads;
  switch (attention.kind) {
    case AttentionKind::none: return 0;
    case AttentionKind::linear:
      return attention.output_dim + split_k_values(split_k, attention.output_dim);
    case AttentionKind::mla: {
      // q latent, Q, kv latent + rope key, K/V expanded, attention output, o_proj output
      const MlaShape& m = attention.mla;
      const std::int64_t q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
      const std::int64_t q = rank_share(heads * q_head, tp);
      const std::int64_t kv = rank_share(heads * (m.qk_nope_head_dim + m.v_head_dim), tp);
      const std::int64_t values = m.q_lora_rank + q + m.kv_lora_rank + m.qk_rope_head_dim + kv +
                                  rank_share(heads * m.v_head_dim, tp) + attention.output_dim;
      // split-K beside every value (an upper bound): its widest Linear's partial sums
      return values + split_k_values(split_k, std::max({q, kv, attention.output_dim}));
    }
    case AttentionKind::standard: break;
  }
  // the qkv projection's output (KV heads replicated past their count, as in the KV cache),
  // the attention output and o_proj's output
  const std::int64_t q_width = heads * attention.head_dim;
  const std::int64_t kv_width =
      ceil_div(std::max<std::int64_t>(attention.num_kv_heads, 1), tp) * attention.head_dim;
  const std::int64_t qkv = rank_share(q_width * (attention.output_gate ? 2 : 1), tp) + 2 * kv_width;
  const std::int64_t attended = rank_share(q_width, tp);
  // qkv's partial sums beside its output; o_proj's beside qkv, the attention output and its own
  return with_split_k(qkv + attended + attention.output_dim, qkv, qkv, attention.output_dim,
                      split_k);
}

// gate_up's output, act(gate) x up and down's output | fc1's output, act and fc2's output; with
// AWQ's split-K, each projection's partial sums beside what is alive when it runs.
std::int64_t mlp_forward_values(const Mlp& mlp, std::int64_t tp, std::int64_t split_k) {
  switch (mlp.kind) {
    case MlpKind::none: return 0;
    case MlpKind::linear:
      return mlp.input_dim + split_k_values(split_k, mlp.input_dim);
    case MlpKind::gated: {
      const std::int64_t gate_up = rank_share(2 * mlp.intermediate, tp);
      return with_split_k(rank_share(3 * mlp.intermediate, tp) + mlp.input_dim, gate_up, gate_up,
                          mlp.input_dim, split_k);
    }
    case MlpKind::plain: {
      const std::int64_t fc1 = rank_share(mlp.intermediate, tp);
      return with_split_k(rank_share(2 * mlp.intermediate, tp) + mlp.input_dim, fc1, fc1,
                          mlp.input_dim, split_k);
    }
  }
  return 0;
}

// in_proj's output, the conv output, the scan output, the gated norm's output, out_proj's output
std::int64_t ssm_forward_values(const Ssm& ssm, std::int64_t tp) {
  if (ssm.kind == SsmKind::mamba1) {
    // in_proj (x, z), conv, x_proj (dt, B, C), dt_proj, scan output, out_proj
    return rank_share(2 * ssm.inner, tp) + rank_share(ssm.inner, tp) + ssm.dt_rank +
           2 * ssm.state + 2 * rank_share(ssm.inner, tp) + ssm.hidden;
  }
  return rank_share(ssm.in_proj_width(), tp) + rank_share(ssm.conv_channels(), tp) +
         2 * rank_share(ssm.inner, tp) + ssm.hidden;
}

// vLLM's fused MoE: router logits, the shared experts' output, the output; per routed copy of a
// token the w13 output, act(gate) x up and the w2 output (intermediate caches 1-3).
ForwardValues moe_forward_values(const Moe& moe, std::int64_t tp) {
  ForwardValues values;
  values.per_token = moe.num_experts + moe.hidden_dim + 2 * moe.latent_dim +
                     (moe.shared ? moe.hidden_dim : 0);
  const std::int64_t expert_inner = moe.expert.kind == MlpKind::gated
                                        ? rank_share(3 * moe.expert.intermediate, tp)
                                        : rank_share(2 * moe.expert.intermediate, tp);
  values.per_routed_token = moe.top_k * (expert_inner + moe.expert.input_dim);
  return values;
}

// A whole expert run on every token, as vLLM's Mixtral before 0.3.0 (and mixtral_quant.py)
// runs each expert this rank holds: router logits and the running sum of the expert outputs,
// and the expert's locals, w1 and w3 apart (MixtralMLP): act(w1) and w3's output, their product,
// w2's output, all alive until it returns. With AWQ's split-K: w3's partial sums beside act(w1)
// and w3's output, w2's beside the three.
std::int64_t dense_expert_forward_values(const Moe& moe, std::int64_t split_k) {
  const Mlp& expert = moe.expert;
  const std::int64_t inner = expert.intermediate;
  const std::int64_t out = expert.input_dim;
  const std::int64_t values = expert.kind == MlpKind::gated
                                  ? with_split_k(3 * inner + out, 2 * inner, inner, out, split_k)
                                  : with_split_k(2 * inner + out, inner, inner, out, split_k);
  return moe.num_experts + moe.hidden_dim + values;
}

// The chunked scan's states over a prefill of `tokens`, one per chunk and head on this rank:
// Mamba-2's SSD (vLLM's mamba_chunk_scan_combined) writes them in fp32 and passes them on as a
// copy at the activation dtype, both alive while the states pass; the chunked delta rule
// (chunk_gated_delta_rule_fwd_h, Gated DeltaNet and KDA) writes h at the activation dtype.
std::int64_t scan_chunk_state_bytes(const Ssm& ssm, std::int64_t tokens, std::int64_t tp,
                                    std::int64_t activation_bytes) {
  if (ssm.kind == SsmKind::mamba1 || ssm.kind == SsmKind::short_conv) return 0;
  const std::int64_t bytes_per_value =
      ssm.kind == SsmKind::mamba2 ? 4 + activation_bytes : activation_bytes;
  return checked_product({ceil_div(tokens, std::max<std::int64_t>(ssm.chunk_size, 1)),
                          rank_share(ssm.num_heads, tp), ssm.head_dim, ssm.state, bytes_per_value},
                         "the scan's chunk states");
}

}  // namespace

bool serves_awq(const ModelDescription& model, const MemoryAssumptions& assumptions) {
  if (assumptions.serve_quantization) {
    return assumptions.serve_quantization->scheme.format == QuantFormat::awq;
  }
  return model.quantization && model.quantization->format == QuantFormat::awq;
}

std::int64_t forward_working_bytes(const ModelDescription& model, std::int64_t tokens,
                                   std::int64_t tp, const MemoryAssumptions& assumptions) {
  tp = std::max<std::int64_t>(tp, 1);
  const std::int64_t routed_tokens =
      assumptions.moe_chunk_tokens > 0 ? std::min(tokens, assumptions.moe_chunk_tokens) : tokens;
  const std::int64_t act = assumptions.activation_bytes;
  const auto values_bytes = [&](std::int64_t values, std::int64_t count) {
    return checked_product({values, count, act}, "the activations");
  };
  const std::int64_t split_k = serves_awq(model, assumptions) ? assumptions.awq_split_k : 0;
  std::int64_t widest = 0;
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    // A fixed-length encoder (Whisper) runs its own positions: one sequence's at a time.
    const std::int64_t stack_tokens = stack.fixed_tokens > 0 ? stack.fixed_tokens : tokens;
    for (const Block& block : stack.blocks) {
      // The sub-layers run one after another; a parallel-residual block keeps the attention
      // output while its MLP runs.
      const std::int64_t kept = block.parallel_residual ? model.hidden_size : 0;
      std::int64_t sublayer = attention_forward_values(block.attention, tp, split_k);
      if (block.cross_attention) {
        sublayer =
            std::max(sublayer, attention_forward_values(*block.cross_attention, tp, split_k));
      }
      std::int64_t bytes = values_bytes(
          std::max(sublayer, kept + mlp_forward_values(block.mlp, tp, split_k)), stack_tokens);
      if (block.ssm) {
        bytes = std::max(bytes,
                         checked_add(values_bytes(ssm_forward_values(*block.ssm, tp), tokens),
                                     scan_chunk_state_bytes(*block.ssm, tokens, tp, act)));
      }
      if (block.moe) {
        if (block.moe->shared) {
          bytes = std::max(
              bytes,
              values_bytes(kept + mlp_forward_values(*block.moe->shared, tp, split_k), tokens));
        }
        if (assumptions.moe_dense_experts) {
          bytes = std::max(
              bytes, values_bytes(kept + dense_expert_forward_values(*block.moe, split_k), tokens));
        } else {
          const ForwardValues moe = moe_forward_values(*block.moe, tp);
          bytes = std::max(bytes, checked_add(values_bytes(kept + moe.per_token, tokens),
                                              values_bytes(moe.per_routed_token, routed_tokens)));
        }
      }
      // the block's input and the residual stream (every AltUp stream)
      bytes = checked_add(
          bytes,
          values_bytes(checked_mul(2 * model.hidden_size, block.residual_streams), stack_tokens));
      widest = std::max(widest, bytes);
    }
  }
  return widest;
}

std::int64_t sampling_bytes(const ModelDescription& model, std::int64_t sequences,
                            std::int64_t tokens, const MemoryAssumptions& assumptions) {
  return checked_add(checked_product({sequences, model.vocab_size, assumptions.sampler_bytes_per_logit},
                                     "the sampler"),
                     checked_product({tokens, model.hidden_size, assumptions.activation_bytes},
                                     "the sampler"));
}

std::int64_t encoder_sequence_bytes(const ModelDescription& model, std::int64_t tokens,
                                    std::int64_t tp, const MemoryAssumptions& assumptions) {
  tp = std::max<std::int64_t>(tp, 1);
  const std::int64_t act = assumptions.activation_bytes;
  std::int64_t bytes = forward_working_bytes(model, tokens, tp, assumptions);
  if (model.eager_attention_only) {
    // The widest attention's heads on this rank, beside the layer's working set (an upper
    // bound: the working set's widest sub-layer may be the MLP).
    std::int64_t heads = 0;
    for (const Stack& stack : model.stacks) {
      if (stack.vision || stack.mtp) continue;
      for (const Block& block : stack.blocks) {
        heads = std::max(heads, ceil_div(block.attention.num_heads, tp));
      }
    }
    bytes =
        checked_add(bytes, checked_product({model.eager_score_tensors, heads, tokens, tokens, act},
                                           "the attention scores"));
  }
  const std::int64_t head_values = model.training_logits_width();
  return checked_add(bytes, checked_product({head_values, tokens, act}, "the head's output"));
}

namespace {

// Whether a text layer attends through a sliding window shorter than `context` tokens.
bool has_window_shorter_than(const ModelDescription& model, std::int64_t context) {
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      const std::int64_t window = block.attention.sliding_window;
      if (block.attention.kind == AttentionKind::standard && window > 0 && window < context) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::int64_t serving_transient_bytes(const ModelDescription& model, std::int64_t context,
                                     std::int64_t concurrency, std::int64_t tp,
                                     const MemoryAssumptions& assumptions) {
  if (model.encoder_only()) {
    return checked_mul(encoder_sequence_bytes(model, context, tp, assumptions), concurrency,
                       "the activations");
  }
  std::int64_t tokens = checked_mul(context, concurrency, "the prompt tokens");
  if (assumptions.prefill_chunk_tokens > 0) tokens = std::min(tokens, assumptions.prefill_chunk_tokens);
  std::int64_t forward = forward_working_bytes(model, tokens, tp, assumptions);
  if (assumptions.prefill_chunk_tokens == 0 && assumptions.max_num_seqs == 0 &&
      has_window_shorter_than(model, context)) {
    // transformers' generate(): the sliding-window layers' materialised mask over the prompt
    forward = checked_add(forward, checked_product({concurrency, context, context,
                                                    assumptions.generate_window_mask_bytes},
                                                   "the attention mask"));
  }
  return std::max(forward, sampling_bytes(model, std::max(concurrency, assumptions.max_num_seqs),
                                          tokens, assumptions));
}

std::int64_t pipeline_stage_of(std::int64_t layer, std::int64_t layers, std::int64_t pp) {
  pp = std::clamp<std::int64_t>(pp, 1, std::max<std::int64_t>(layers, 1));
  const std::int64_t base = std::max<std::int64_t>(layers / pp, 1);
  const std::int64_t extra = layers % pp;  // one more each for stages pp-1-extra .. pp-2
  const std::int64_t first_longer = pp - 1 - extra;
  const std::int64_t before = first_longer * base;  // layers of the stages before those
  if (layer < before) return layer / base;
  if (layer < before + extra * (base + 1)) return first_longer + (layer - before) / (base + 1);
  return pp - 1;
}

std::vector<std::int64_t> stage_totals(const ModelDescription& model, std::int64_t pp,
                                       const std::function<bool(const Stack&)>& counted,
                                       const std::function<std::int64_t(const Block&)>& of,
                                       const char* what) {
  std::int64_t layers = 0;
  for (const Stack& stack : model.stacks) {
    if (counted(stack)) layers += static_cast<std::int64_t>(stack.blocks.size());
  }
  std::vector<std::int64_t> stages(static_cast<std::size_t>(std::clamp<std::int64_t>(
                                       pp, 1, std::max<std::int64_t>(layers, 1))),
                                   0);
  const auto stage_count = static_cast<std::int64_t>(stages.size());
  std::int64_t layer = 0;
  for (const Stack& stack : model.stacks) {
    if (!counted(stack)) continue;
    for (const Block& block : stack.blocks) {
      std::int64_t& stage =
          stages[static_cast<std::size_t>(pipeline_stage_of(layer++, layers, stage_count))];
      stage = checked_add(stage, of(block), what);
    }
  }
  return stages;
}

KvSplit serving_split(const MemoryAssumptions& assumptions, std::int64_t tp, std::int64_t pp) {
  return {tp, assumptions.mla_cache, pp, assumptions.serve_mtp};
}

namespace {

// The stacks a served sequence holds a cache for: not a vision tower, and the MTP layers only
// when speculative decoding loads them.
bool served(const Stack& stack, const KvSplit& split) {
  return !stack.vision && (!stack.mtp || split.mtp);
}

// The busiest pipeline stage's total of `of(block)` (stage_totals; the whole sum for pp = 1).
template <typename Counted, typename Of>
std::int64_t busiest_stage(const ModelDescription& model, std::int64_t pp, Counted counted, Of of,
                           const char* what) {
  const std::vector<std::int64_t> stages = stage_totals(model, pp, counted, of, what);
  return *std::max_element(stages.begin(), stages.end());
}

}  // namespace

std::int64_t kv_cache_bytes(const ModelDescription& model, std::int64_t context, Dtype kv_dtype,
                            KvSplit split) {
  // Cross attention over a fixed-length source (Mllama's image tokens) caches that source,
  // whatever the context; T5's cross attention caches an encoder as long as the context.
  const auto cached_tokens = [context](const Attention& attention) {
    if (attention.is_cross && attention.cross_source_tokens > 0) {
      return attention.cross_source_tokens;
    }
    return attention.sliding_window > 0 ? std::min(context, attention.sliding_window) : context;
  };
  // Encoders recompute and cache nothing.
  const auto cached_by = [&split](const Stack& stack) {
    return served(stack, split) && stack.causal;
  };
  return busiest_stage(
      model, split.pp, cached_by,
      [&](const Block& block) {
        std::int64_t layer = checked_mul(kv_row_bytes(block.attention, kv_dtype, split),
                                         cached_tokens(block.attention), "the KV cache");
        if (const auto& pooled = block.attention.compressed_kv) {
          // DeepSeek-V4: one pooled row (and index key) per `ratio` tokens beside the window,
          // and the compressors' unfinished windows in F32 whatever the cache's dtype
          const std::int64_t row = kv_values_per_token(block.attention, split);
          layer = checked_add(layer, bytes_for(checked_mul(row + pooled->index_key_dim,
                                                           context / pooled->ratio, "the KV cache"),
                                               kv_dtype));
          layer = checked_add(layer, 4 * pooled->state_fp32_values(block.attention.head_dim),
                              "the KV cache");
        }
        if (block.cross_attention) {
          layer = checked_add(layer,
                              checked_mul(kv_row_bytes(*block.cross_attention, kv_dtype, split),
                                          cached_tokens(*block.cross_attention), "the KV cache"));
        }
        return layer;
      },
      "the KV cache");
}

// The reference Indexer's k_cache + k_scale_cache; vLLM's DeepseekV32IndexerCache.
std::int64_t index_key_bytes(const SparseIndexer& indexer) {
  return indexer.head_dim + 4 * ceil_div(indexer.head_dim, 128);
}

std::int64_t kv_bytes_per_token(const Attention& attention, Dtype kv_dtype, const KvSplit& split) {
  return kv_row_bytes(attention, kv_dtype, split);
}

std::int64_t ssm_layer_state_bytes(const Ssm& ssm, Dtype ssm_dtype, std::int64_t conv_state_bytes,
                                   std::int64_t tp) {
  tp = std::max<std::int64_t>(tp, 1);
  // Under TP each rank holds heads / tp and conv channels / tp; Mamba-2 B/C groups that do not
  // divide among the ranks are replicated to one per rank first (vLLM's
  // extra_groups_for_head_shards), so the conv covers x + 2 x tp x d_state then.
  std::int64_t conv_channels = ssm.conv_channels();
  if (ssm.kind == SsmKind::mamba2 && tp > 1 && ssm.groups % tp != 0) {
    conv_channels = ssm.inner + 2 * tp * ssm.state;
  }
  const std::int64_t conv = checked_product(
      {ssm.conv_kernel - 1, ceil_div(conv_channels, tp), conv_state_bytes}, "the SSM state");
  const std::int64_t state_elements =
      ssm.kind == SsmKind::mamba1
          ? checked_mul(ceil_div(ssm.inner, tp), ssm.state, "the SSM state")
          : checked_product({ceil_div(ssm.num_heads, tp), ssm.head_dim, ssm.state},
                            "the SSM state");
  return checked_add(conv, bytes_for(state_elements, ssm_dtype), "the SSM state");
}

std::int64_t ssm_state_bytes(const ModelDescription& model, Dtype ssm_dtype,
                             std::int64_t conv_state_bytes, KvSplit split) {
  return busiest_stage(
      model, split.pp, [&](const Stack& stack) { return served(stack, split); },
      [&](const Block& block) -> std::int64_t {
        return block.ssm ? ssm_layer_state_bytes(*block.ssm, ssm_dtype, conv_state_bytes, split.tp)
                         : 0;
      },
      "the SSM state");
}

std::int64_t sequence_cache_bytes(const ModelDescription& model, std::int64_t context,
                                  Dtype kv_dtype, Dtype ssm_dtype,
                                  std::int64_t conv_state_bytes, KvSplit split) {
  return checked_add(kv_cache_bytes(model, context, kv_dtype, split),
                     ssm_state_bytes(model, ssm_dtype, conv_state_bytes, split),
                     "a sequence's cache");
}

Dtype effective_ssm_dtype(const ModelDescription& model, const MemoryAssumptions& assumptions) {
  if (assumptions.ssm_dtype) return *assumptions.ssm_dtype;
  if (const std::optional<Dtype> dtype = parse_dtype(model.ssm_cache_dtype)) return *dtype;
  return Dtype::fp32;
}

std::int64_t serving_comm_bytes(std::int64_t gpus, const MemoryAssumptions& assumptions) {
  return gpus > 1 ? assumptions.tp_comm_bytes : 0;
}

namespace {

// An encoder that always runs `fixed` positions (Whisper's audio frames) against a text sequence
// of `seq_len` tokens: its per-position values, restated per text token (x fixed / seq_len,
// rounded up), so every caller's "per token x tokens" counts the encoder's own positions. Its
// attention sees `fixed` keys from each of `fixed` queries.
void per_text_token(LayerActivation& layer, std::int64_t fixed, std::int64_t seq_len) {
  seq_len = std::max<std::int64_t>(seq_len, 1);
  const auto scale = [&](std::int64_t& values) {
    values = ceil_div(checked_mul(values, fixed, "the activation size"), seq_len);
  };
  scale(layer.values_per_token);
  scale(layer.input_width);
  scale(layer.repeated_kv_values);
  scale(layer.linear_input_values);
  scale(layer.pointwise_values);
  scale(layer.residual_dtype_values);
  scale(layer.rms_norm_input_values);
  scale(layer.qk_rms_norm_values);
  scale(layer.autocast_extra_values);
  scale(layer.autocast_rms_weight_values);
  scale(layer.composed_activation_values);
  scale(layer.composed_autocast_fp32_values);
  LinearInputs& inputs = layer.linear_inputs;
  for (std::int64_t* values :
       {&inputs.attention, &inputs.attention_output, &inputs.mlp, &inputs.mlp_down, &inputs.moe,
        &inputs.experts_down, &inputs.experts_gathered}) {
    scale(*values);
  }
  if (layer.attention_heads > 0) {
    layer.attended_tokens = fixed;
    scale(layer.attended_tokens);
  }
}

// What autocast over fp32 weights saves beyond a bf16 model, per token (LayerActivation::
// autocast_extra_values): the Linears reading the residual stream's norms each cast it to bf16
// apart (autocast caches only leaf weights' casts), a residual-width RMSNorm's normalised input
// stays fp32, and a LayerNorm's saved input is the fp32 stream.
void autocast_values(const Block& block, LayerActivation& layer) {
  const std::int64_t width = block.attention.input_dim;
  std::int64_t extra_casts = 0;
  if (block.attention.kind == AttentionKind::standard && !block.attention.fused_qkv &&
      !block.attention.is_cross) {
    extra_casts += 2;  // q, k, v
  }
  if (block.mlp.kind == MlpKind::gated && !block.mlp.fused_gate_up) extra_casts += 1;  // gate, up
  if (block.parallel_residual && block.attention.kind != AttentionKind::none &&
      block.mlp.kind != MlpKind::none) {
    extra_casts += 1;  // one norm's output read by the attention and the MLP
  }
  std::int64_t norms = 0;  // residual-width norms: each holds one fp32 value more
  std::int64_t rms = 0;
  for (const Norm& norm : block.norms) {
    if (norm.dim != width) continue;
    ++norms;
    if (norm.kind == NormKind::rms_norm) ++rms;
  }
  layer.autocast_rms_weight_values = checked_mul(rms, width, "the activation size");
  layer.autocast_extra_values = checked_mul(extra_casts + norms, width, "the activation size");
}

// QK-norm (Qwen3, Gemma 3, OLMo 2 / OLMoE): the norm over Q and over K keeps what a norm keeps,
// per value of Q and of K, beside the normalised Q and K the kernel saves (the projections'
// outputs are otherwise not kept: RoPE and the kernel read the norm's output). Its input, in
// the compute dtype; an RMSNorm counted also with the residual norms' extras
// (qk_rms_norm_values: an eager one's fp32 copy, and its normalised input where its weight
// trains). Whatever the norm's own width (per head or the whole of Q), it sees every value.
void qk_norm_values(const Attention& attention, LayerActivation& layer) {
  if (attention.kind != AttentionKind::standard) return;
  const std::int64_t q_width = attention.num_heads * attention.head_dim;
  const std::int64_t kv_width = attention.num_kv_heads * attention.head_dim;
  for (const auto& [norm, width] :
       {std::pair{attention.q_norm, q_width}, std::pair{attention.k_norm, kv_width}}) {
    if (!norm) continue;
    layer.values_per_token = checked_add(layer.values_per_token, width, "the activation size");
    if (norm->kind == NormKind::rms_norm) layer.qk_rms_norm_values += width;
  }
}

}  // namespace

std::vector<LayerActivation> layer_activations(const ModelDescription& model,
                                               std::int64_t seq_len) {
  std::vector<LayerActivation> layers;
  for (const Stack& stack : model.stacks) {
    // Image tokens are not modelled yet. MTP layers are marked: they run only where trained.
    if (stack.vision) continue;
    for (const Block& block : stack.blocks) {
      LayerActivation layer;
      layer.mtp = stack.mtp;
      layer.values_per_token = attention_saved_values(block.attention);
      if (block.cross_attention) layer.values_per_token += attention_saved_values(*block.cross_attention);
      layer.values_per_token += ffn_saved_values(block);
      if (block.ssm) layer.values_per_token += ssm_saved_values(*block.ssm);
      // each norm saves its input
      layer.values_per_token +=
          static_cast<std::int64_t>(block.norms.size()) * block.attention.input_dim;
      layer.input_width = block.attention.input_dim;
      if (block.residual_streams > 1) {
        // AltUp (Gemma 3n): the layer's input is every stream, and its predict step (an einsum
        // with learned coefficients) and correct step (the innovation repeated over the streams,
        // times coefficients) each save a streams x width tensor for backward.
        const std::int64_t streams_width =
            checked_mul(block.residual_streams, block.attention.input_dim, "the activation size");
        layer.input_width = streams_width;
        layer.values_per_token = checked_add(layer.values_per_token, 2 * streams_width);
      }
      layer.linear_input_values = linear_input_values(block);
      layer.linear_inputs = layer_linear_inputs(block);
      layer.pointwise_values = ffn_pointwise_values(block);
      for (const Norm& norm : block.norms) {
        if (norm.kind == NormKind::rms_norm && norm.dim == block.attention.input_dim) {
          layer.rms_norm_input_values += norm.dim;
        }
      }
      layer.residual_dtype_values =
          static_cast<std::int64_t>(block.norms.size()) * block.attention.input_dim +
          over_token_mlps(block, mlp_projection_output_values);
      autocast_values(block, layer);
      layer.composed_activation_values = over_token_mlps(block, [](const Mlp& mlp) {
        return per_intermediate_value(mlp, composed_activation_values);
      });
      layer.composed_autocast_fp32_values = over_token_mlps(block, [](const Mlp& mlp) {
        return per_intermediate_value(mlp, composed_activation_fp32_values);
      });
      qk_norm_values(block.attention, layer);
      if (block.attention.kind == AttentionKind::standard &&
          block.attention.num_kv_heads < block.attention.num_heads) {
        layer.repeated_kv_values =
            2 * (block.attention.num_heads - block.attention.num_kv_heads) * block.attention.head_dim;
      }
      if (block.attention.kind == AttentionKind::standard ||
          block.attention.kind == AttentionKind::mla) {
        layer.attention_heads = block.attention.num_heads;
        layer.attended_tokens = block.attention.is_cross && block.attention.cross_source_tokens > 0
                                    ? block.attention.cross_source_tokens
                                : block.attention.sliding_window > 0
                                    ? std::min(seq_len, block.attention.sliding_window)
                                    : seq_len;
      }
      // Mamba-2's chunked scan (SSD, Dao & Gu 2024) keeps one fp32 state per chunk for
      // backward; the chunked gated delta rule (Yang et al. 2024) does the same.
      if (block.ssm && block.ssm->kind != SsmKind::mamba1) {
        const Ssm& ssm = *block.ssm;
        layer.chunk_state_bytes = checked_product(
            {ceil_div(seq_len, ssm.chunk_size), ssm.num_heads, ssm.head_dim, ssm.state, 4},
            "the activation size");
      }
      if (stack.fixed_tokens > 0) per_text_token(layer, stack.fixed_tokens, seq_len);
      layers.push_back(layer);
    }
  }
  return layers;
}

std::int64_t training_activation_bytes(const ModelDescription& model, std::int64_t seq_len,
                                       const MemoryAssumptions& assumptions) {
  std::int64_t values_per_token = 0;
  std::int64_t chunk_states = 0;
  for (const LayerActivation& layer : layer_activations(model, seq_len)) {
    // transformers' implementations neither load nor run the MTP layers
    if (layer.mtp) continue;
    // every weight trains: each routed copy's gathered input is kept too
    values_per_token =
        checked_add(values_per_token, layer.values_per_token + layer.linear_inputs.experts_gathered,
                    "the activation size");
    chunk_states = checked_add(chunk_states, layer.chunk_state_bytes, "the activation size");
  }
  // final norm input + head input, per text stack (MTP layers left out)
  for (const Stack& stack : model.stacks) {
    if (!stack.vision && !stack.mtp) {
      values_per_token = checked_add(values_per_token, 2 * model.hidden_size);
    }
  }
  std::int64_t hidden_bytes = checked_product(
      {values_per_token, seq_len, assumptions.activation_bytes}, "the activation size");
  hidden_bytes = checked_add(hidden_bytes, chunk_states, "the activation size");
  // Logits and the loss: vocab x tokens, upcast to fp32 (the largest term for small models with
  // 128k-256k vocabularies).
  const std::int64_t logits_bytes = checked_product(
      {model.training_logits_width(), seq_len, assumptions.logits_bytes_per_value},
      "the logits size");
  return checked_add(hidden_bytes, logits_bytes, "the activation size");
}

namespace {

MemoryEstimate memory_terms(const ModelDescription& model, const ParameterCount& params,
                            const MemoryAssumptions& a) {
  MemoryEstimate estimate;
  const std::int64_t total = params.total;
  const std::int64_t activation_per_sequence = training_activation_bytes(model, a.seq_len, a);
  estimate.training_activation_bytes_per_sequence = activation_per_sequence;

  // Full fine-tune.
  ModeMemory& full = estimate.full_finetune;
  full.mode = "full_finetune";
  full.batch = a.batch;
  full.breakdown.weights =
      checked_mul(total, a.master_weight_bytes + a.autocast_copy_bytes, "the weight memory");
  full.breakdown.gradients = checked_mul(total, a.gradient_bytes, "the gradient memory");
  full.breakdown.optimizer = checked_mul(total, a.optimizer_bytes, "the optimizer memory");
  full.breakdown.overhead = a.cuda_context_bytes;
  full.per_sequence_bytes = activation_per_sequence;
  full.breakdown.activations = checked_mul(activation_per_sequence, a.batch, "the activations");
  full.shardable_bytes = checked_add(checked_add(full.breakdown.weights, full.breakdown.gradients),
                                     full.breakdown.optimizer);
  full.fixed_bytes = checked_add(full.shardable_bytes, full.breakdown.overhead);
  full.formula = fmt::format(
      "params x ({} master + {} autocast copy + {} grad + {} AdamW) + activations x batch + "
      "CUDA context",
      a.master_weight_bytes, a.autocast_copy_bytes, a.gradient_bytes, a.optimizer_bytes);

  // LoRA.
  const std::int64_t adapters = lora_parameters(model, a.lora_rank);
  estimate.lora_trainable_params = adapters;
  ModeMemory& lora = estimate.lora;
  lora.mode = "lora";
  lora.batch = a.batch;
  lora.breakdown.weights = checked_add(bytes_for(total, a.lora_base_dtype), checked_mul(adapters, 4));
  lora.breakdown.gradients = checked_mul(adapters, 4);
  lora.breakdown.optimizer =
      checked_mul(adapters, a.adapter_bytes_per_param - 8, "the optimizer memory");
  lora.breakdown.overhead = a.cuda_context_bytes;
  lora.per_sequence_bytes = activation_per_sequence;
  lora.breakdown.activations = checked_mul(activation_per_sequence, a.batch, "the activations");
  lora.shardable_bytes = checked_add(checked_add(lora.breakdown.weights, lora.breakdown.gradients),
                                     lora.breakdown.optimizer);
  lora.fixed_bytes = checked_add(lora.shardable_bytes, lora.breakdown.overhead);
  lora.formula = fmt::format(
      "params x {} bytes (frozen {}) + {} adapter params x {} bytes + activations x batch + "
      "CUDA context",
      static_cast<double>(dtype_info(a.lora_base_dtype).bits) / 8.0, dtype_info(a.lora_base_dtype).name, adapters,
      a.adapter_bytes_per_param);

  // Serving.
  ModeMemory& serve = estimate.serve;
  serve.mode = "serve";
  serve.batch = a.concurrency;
  // serve_weight_bytes (a quantized checkpoint's stored size) already leaves MTP out unless
  // serve_mtp; see make_report.
  serve.breakdown.weights =
      a.serve_weight_bytes >= 0
          ? a.serve_weight_bytes
          : bytes_for(served_params(params, a.serve_mtp), a.serve_weight_dtype);
  serve.breakdown.overhead = checked_add(a.cuda_context_bytes, a.cuda_graph_bytes);
  const Dtype ssm_dtype = effective_ssm_dtype(model, a);
  const KvSplit one_gpu = serving_split(a);
  estimate.ssm_state_bytes_per_sequence =
      ssm_state_bytes(model, ssm_dtype, a.conv_state_bytes, one_gpu);
  serve.per_sequence_bytes = checked_add(kv_cache_bytes(model, a.context, a.kv_dtype, one_gpu),
                                         estimate.ssm_state_bytes_per_sequence);
  // What one more token of context adds (a cross-attention source of fixed length, Mllama's
  // image tokens, is per sequence and stays out).
  estimate.kv_cache_bytes_per_token =
      a.context > 0 ? kv_cache_bytes(model, 2, a.kv_dtype, one_gpu) -
                          kv_cache_bytes(model, 1, a.kv_dtype, one_gpu)
                    : 0;
  serve.breakdown.kv_cache =
      checked_mul(serve.per_sequence_bytes - estimate.ssm_state_bytes_per_sequence, a.concurrency,
                  "the KV cache");
  serve.breakdown.ssm_state =
      checked_mul(estimate.ssm_state_bytes_per_sequence, a.concurrency, "the SSM state");
  serve.shardable_bytes = serve.breakdown.weights;
  const std::int64_t routed = component_count(params, "experts");
  serve.expert_bytes = a.serve_expert_bytes >= 0 ? a.serve_expert_bytes
                                                 : bytes_for(routed, a.serve_weight_dtype);
  // The prefill's forward pass or the sampling step, whichever is larger (at the concurrency
  // asked; up to max_num_seqs sequences it does not grow).
  serve.breakdown.activations =
      serving_transient_bytes(model, a.context, a.concurrency, 1, a);
  serve.fixed_bytes = checked_add(checked_add(serve.breakdown.weights, serve.breakdown.overhead),
                                  serve.breakdown.activations);
  if (model.encoder_only()) {
    // Each sequence's cost is its share of the forward pass that encodes the batch whole.
    serve.per_sequence_bytes = encoder_sequence_bytes(model, a.context, 1, a);
    serve.fixed_bytes = checked_add(serve.breakdown.weights, serve.breakdown.overhead);
  }
  const std::string weights_formula =
      a.serve_weight_bytes >= 0
          ? std::string("the checkpoint's stored bytes")
          : fmt::format("params x {} ({})",
                        static_cast<double>(dtype_info(a.serve_weight_dtype).bits) / 8.0,
                        dtype_info(a.serve_weight_dtype).name);
  serve.formula =
      model.encoder_only()
          ? fmt::format(
                "{} + the forward pass's activations ({} per sequence at {} tokens) x "
                "concurrency + CUDA context + the engine's CUDA graphs",
                weights_formula, serve.per_sequence_bytes, a.context)
          : fmt::format(
                "{} + (KV cache + SSM state) ({} per sequence at {} tokens, KV {}) x "
                "concurrency + the prefill or sampling transient + CUDA context + the "
                "engine's CUDA graphs",
                weights_formula, serve.per_sequence_bytes, a.context, dtype_info(a.kv_dtype).name);
  return estimate;
}

}  // namespace

MemoryEstimate estimate_memory(const ModelDescription& model, const ParameterCount& params,
                               const MemoryAssumptions& a) {
  try {
    return memory_terms(model, params, a);
  } catch (const SizeOverflowError& error) {
    // Each workload flag is in range on its own; their product is what overflowed.
    throw SizeOverflowError(
        fmt::format("{} (this plan trains {} sequence(s) of {} tokens and serves {} request(s) "
                    "of {} tokens; lower --batch or --seq-len, --concurrency or --context)",
                    error.what(), a.batch, a.seq_len, a.concurrency, a.context));
  }
}

}  // namespace trace
