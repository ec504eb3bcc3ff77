// vLLM V1's hybrid KV cache layout, read from vLLM's source: the page unification of
// Platform._align_hybrid_block_size (formerly HybridAttentionMambaModelConfig), the grouping of
// _get_kv_cache_groups_uniform_page_size and the block count of get_kv_cache_config_from_groups
// (vllm/v1/core/kv_cache_utils.py). Checked against vLLM issue #40691: Qwen3.5-27B at
// max_model_len 32,768 logs 290,864 tokens and 33.04x concurrency from 1,487 blocks.
#include "trace/estimate/engine_blocks.hpp"

#include <algorithm>

#include "trace/checked_math.hpp"

namespace trace {

std::int64_t HybridBlocks::block_bytes() const {
  return checked_mul(page_bytes, group_layers, "the KV cache");
}

std::int64_t HybridBlocks::blocks_in(std::int64_t pool_bytes) const {
  return std::max<std::int64_t>(pool_bytes, 0) / std::max<std::int64_t>(block_bytes(), 1);
}

std::int64_t HybridBlocks::blocks_per_request(std::int64_t tokens) const {
  const std::int64_t attention = checked_mul(ceil_div(tokens, block_tokens), attention_groups);
  const std::int64_t window = checked_mul(
      ceil_div(std::min(tokens, std::max<std::int64_t>(window_tokens, 1)), block_tokens),
      window_groups);
  return checked_add(checked_add(attention, window), state_groups);
}

std::optional<HybridBlocks> vllm_hybrid_blocks(const ModelDescription& model, Dtype kv_dtype,
                                               Dtype ssm_dtype, std::int64_t conv_state_bytes,
                                               const KvSplit& split, std::int64_t alignment) {
  std::int64_t full_layers = 0, window_layers = 0, state_layers = 0;
  std::int64_t token_bytes = 0;  // the widest attention layer's KV per token
  std::int64_t state_bytes = 0;  // the largest state layer's
  HybridBlocks blocks;
  for (const Stack& stack : model.stacks) {
    if (stack.vision || !stack.causal || (stack.mtp && !split.mtp)) continue;
    for (const Block& block : stack.blocks) {
      // A layer with both (Falcon-H1, Hymba) registers an attention and a state layer.
      if (const std::int64_t kv = kv_bytes_per_token(block.attention, kv_dtype, split); kv > 0) {
        token_bytes = std::max(token_bytes, kv);
        if (block.attention.sliding_window > 0) {
          ++window_layers;
          blocks.window_tokens = std::max(blocks.window_tokens, block.attention.sliding_window);
        } else {
          ++full_layers;
        }
      }
      if (block.ssm) {
        ++state_layers;
        state_bytes = std::max(
            state_bytes, ssm_layer_state_bytes(*block.ssm, ssm_dtype, conv_state_bytes, split.tp));
      }
    }
  }
  if (state_layers == 0 || full_layers + window_layers == 0) return std::nullopt;
  // Attention blocks grow (never shrink) in steps of the kernel's alignment until one page holds
  // a layer's state; the state page is then padded to the attention page.
  alignment = std::max<std::int64_t>(alignment, 1);
  blocks.block_tokens = checked_mul(
      alignment,
      std::max<std::int64_t>(1, ceil_div(state_bytes, checked_mul(alignment, token_bytes))));
  blocks.page_bytes = std::max(checked_mul(blocks.block_tokens, token_bytes), state_bytes);
  // One group size for every kind: the smallest kind's count, or the largest's when no kind has
  // 1.5 times the smallest's; each kind splits into groups of that size, the last padded.
  std::int64_t smallest = state_layers, largest = state_layers;
  for (const std::int64_t count : {full_layers, window_layers}) {
    if (count == 0) continue;
    smallest = std::min(smallest, count);
    largest = std::max(largest, count);
  }
  blocks.group_layers = 2 * largest < 3 * smallest ? largest : smallest;
  blocks.attention_groups = ceil_div(full_layers, blocks.group_layers);
  blocks.window_groups = ceil_div(window_layers, blocks.group_layers);
  blocks.state_groups = ceil_div(state_layers, blocks.group_layers);
  return blocks;
}

std::optional<HybridBlocks> vllm_hybrid_blocks(const ModelDescription& model, Dtype kv_dtype,
                                               const MemoryAssumptions& assumptions,
                                               const KvSplit& split) {
  return vllm_hybrid_blocks(model, kv_dtype, effective_ssm_dtype(model, assumptions),
                            assumptions.conv_state_bytes, split);
}

}  // namespace trace
