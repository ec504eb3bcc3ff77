#include "trace/cost/flops.hpp"

#include <algorithm>

#include "trace/estimate/memory.hpp"

namespace trace {

namespace {

// FLOPs per attended key of one attention module: q.k over the query/key width, then the
// probabilities times V over the value width, for every query head.
double flops_per_key(const Attention& attention) {
  if (attention.kind == AttentionKind::mla) {
    const MlaShape& mla = attention.mla;
    const std::int64_t qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    // No value projection (DeepSeek-V4): the cached key row is the value too.
    const std::int64_t v = mla.v_head_dim > 0 ? mla.v_head_dim : qk;
    return 2.0 * static_cast<double>(attention.num_heads) * static_cast<double>(qk + v);
  }
  if (attention.kind != AttentionKind::standard) return 0;
  return 2.0 * static_cast<double>(attention.num_heads) * 2.0 *
         static_cast<double>(attention.head_dim);
}

double scan_flops(const Ssm& ssm) {
  const double per_element = ssm.kind == SsmKind::gated_delta_net || ssm.kind == SsmKind::kimi_delta
                                 ? k_delta_scan_flops_per_state_element
                                 : k_scan_flops_per_state_element;
  return per_element * static_cast<double>(ssm.state_elements());
}

// How often a stack runs per text token: once, or for an encoder of a fixed length (Whisper's
// audio frames) fixed / text tokens of the sequence in training and prefill, and never while
// decoding (`text_tokens` 0): the encoder ran once for the request.
double runs_per_text_token(const Stack& stack, std::int64_t text_tokens) {
  if (stack.fixed_tokens <= 0) return 1.0;
  if (text_tokens <= 0) return 0.0;
  return static_cast<double>(stack.fixed_tokens) / static_cast<double>(text_tokens);
}

// Weights multiplied per token: active parameters less the input lookup tables, plus the blocks
// that reuse an earlier block's weights (Zamba2), which run again without new parameters, and
// a fixed-length encoder's blocks as often as it runs.
double matmul_flops(const ModelDescription& model, const ParameterCount& params,
                    std::int64_t text_tokens) {
  double weights = static_cast<double>(params.active_without_embedding);
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    const double runs = runs_per_text_token(stack, text_tokens);
    for (const Block& block : stack.blocks) {
      // active_without_embedding holds a block's own weights once; a re-used block holds none
      const auto block_weights = static_cast<double>(block_active_weights(block));
      weights += (block.shared_weights ? runs : runs - 1.0) * block_weights;
    }
  }
  return 2.0 * weights;
}

// DeepSeek-V4's compressed layers: a token attends to `pooled_rows` pooled rows, or to the
// index_topk best of them, and its indexer scores every one (index heads x index key width).
double compressed_attention_flops(const Attention& attention, double pooled_rows) {
  const CompressedKv& pooled = *attention.compressed_kv;
  if (pooled.index_heads == 0) return flops_per_key(attention) * pooled_rows;
  const double attended = std::min(pooled_rows, static_cast<double>(pooled.index_topk));
  return flops_per_key(attention) * attended +
         2.0 * static_cast<double>(pooled.index_heads * pooled.index_key_dim) * pooled_rows;
}

// `keys(window, causal)`: how many keys a token attends to under that window; a fixed-length
// encoder's positions see all of its own. `pooled_rows(ratio)`: how many pooled rows of a
// compressed layer a token sees.
template <typename Keys, typename PooledRows>
TokenFlops token_flops(const ModelDescription& model, const ParameterCount& params, Keys keys,
                       PooledRows pooled_rows, std::int64_t cross_keys, std::int64_t text_tokens) {
  TokenFlops flops;
  flops.matmul = matmul_flops(model, params, text_tokens);
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    const double runs = runs_per_text_token(stack, text_tokens);
    for (const Block& block : stack.blocks) {
      const double self_keys = stack.fixed_tokens > 0
                                   ? static_cast<double>(stack.fixed_tokens)
                                   : keys(block.attention.sliding_window, stack.causal);
      flops.attention += runs * flops_per_key(block.attention) * self_keys;
      if (block.attention.compressed_kv) {
        flops.attention +=
            runs * compressed_attention_flops(block.attention,
                                              pooled_rows(block.attention.compressed_kv->ratio));
      }
      if (block.cross_attention) {
        const std::int64_t source = block.cross_attention->cross_source_tokens > 0
                                        ? block.cross_attention->cross_source_tokens
                                        : cross_keys;
        flops.attention +=
            runs * flops_per_key(*block.cross_attention) * static_cast<double>(source);
      }
      if (block.ssm) flops.ssm += runs * scan_flops(*block.ssm);
    }
  }
  return flops;
}

}  // namespace

double average_causal_keys(std::int64_t seq_len, std::int64_t window) {
  if (seq_len <= 0) return 0;
  const double length = static_cast<double>(seq_len);
  if (window <= 0 || window >= seq_len) return (length + 1) / 2;
  const double w = static_cast<double>(window);
  // positions 1..w see p keys, the remaining L - w see w each.
  return (w * (w + 1) / 2 + (length - w) * w) / length;
}

TokenFlops training_token_flops(const ModelDescription& model, const ParameterCount& params,
                                std::int64_t seq_len) {
  const auto keys = [seq_len](std::int64_t window, bool causal) {
    if (!causal) return static_cast<double>(window > 0 ? std::min(window, seq_len) : seq_len);
    return average_causal_keys(seq_len, window);
  };
  // position p sees floor(p / ratio) pooled rows: about seq_len / ratio / 2 on average
  const auto pooled_rows = [seq_len](std::int64_t ratio) {
    return static_cast<double>(seq_len / ratio) / 2.0;
  };
  return token_flops(model, params, keys, pooled_rows, seq_len, seq_len);
}

TokenFlops decode_token_flops(const ModelDescription& model, const ParameterCount& params,
                              std::int64_t context) {
  const auto keys = [context](std::int64_t window, bool) {
    return static_cast<double>(window > 0 ? std::min(window, context) : context);
  };
  const auto pooled_rows = [context](std::int64_t ratio) {
    return static_cast<double>(context / ratio);
  };
  return token_flops(model, params, keys, pooled_rows, context, 0);
}

double prefill_flops(const ModelDescription& model, const ParameterCount& params,
                     std::int64_t tokens) {
  return static_cast<double>(tokens) * training_token_flops(model, params, tokens).total();
}

TrainingFlops training_flops(const ModelDescription& model, const ParameterCount& params,
                             const Job& job) {
  TrainingFlops result;
  result.forward = training_token_flops(model, params, job.seq_len);
  const TokenFlops& f = result.forward;
  const double weightless = f.attention + f.ssm;  // no weight gradient to skip
  if (job.mode == JobMode::lora || job.mode == JobMode::qlora) {
    result.adapter_params = lora_parameters(model, job.lora_rank, job.lora_targets);
    result.model_per_token =
        2 * f.matmul + 3 * weightless + 6.0 * static_cast<double>(result.adapter_params);
  } else {
    result.model_per_token = 3 * f.total();
  }
  result.per_token = result.model_per_token;
  if (job.checkpointing == Checkpointing::full || job.checkpointing == Checkpointing::offload) {
    result.per_token += f.total();
  } else if (job.checkpointing == Checkpointing::selective) {
    result.per_token += f.attention;
  }
  // Preference pairs: the policy runs over chosen and rejected; DPO's reference (the frozen
  // model, or the base with its adapters disabled) runs a forward over both. KTO: the policy's
  // forward over the KL batch under no_grad, the reference's over the completions and the KL
  // batch.
  result.sequences = sequences_per_item(job);
  const double sequences = static_cast<double>(result.sequences);
  result.per_token *= sequences;
  result.model_per_token *= sequences;
  if (job.preference == Preference::kto) {
    result.per_token += f.total();
    result.model_per_token += f.total();
  }
  if (job.rl && job.rl->reference) {
    // GRPO's reference (beta > 0) scores each generated sequence once, a forward under no_grad.
    result.reference_per_token = f.total();
    result.per_token += f.total();
    result.model_per_token += f.total();
  }
  if (has_reference(job.preference)) {
    result.reference_per_token = (job.preference == Preference::kto ? 2.0 : sequences) * f.total();
    if (!job.reference_precomputed) {
      result.per_token += result.reference_per_token;
      result.model_per_token += result.reference_per_token;
    }
  }
  return result;
}

}  // namespace trace
