#pragma once
/// vLLM V1's KV cache for a hybrid model, one with both attention layers and state layers
/// (Mamba, Mamba-2, Gated DeltaNet, KDA): every layer gets one page size (attention blocks grow
/// until a page holds one layer's state, and the state page is padded to it), layers of each
/// kind are split into groups of one size, and one pool of block ids serves every group, each
/// id a page in every layer of a group. The engine refuses to start when max_num_seqs exceeds
/// the pool's blocks (docs/memory.md, "vLLM's hybrid blocks").
#include <cstdint>
#include <optional>

#include "trace/dtype.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

struct HybridBlocks {
  std::int64_t block_tokens = 0;      ///< attention tokens per block (vLLM's block_size)
  std::int64_t page_bytes = 0;        ///< one layer's page
  std::int64_t group_layers = 0;      ///< layers per group
  std::int64_t attention_groups = 0;  ///< groups of full-attention layers
  std::int64_t window_groups = 0;     ///< groups of sliding-window layers
  std::int64_t window_tokens = 0;     ///< the widest sliding window
  std::int64_t state_groups = 0;      ///< groups of state layers
  /// Bytes one block id takes: a page in each layer of a group.
  std::int64_t block_bytes() const;
  /// Block ids a pool of `pool_bytes` holds (0 for an empty or negative pool).
  std::int64_t blocks_in(std::int64_t pool_bytes) const;
  /// Block ids one request of `tokens` holds: its tokens' pages in each attention group (its
  /// window's in a sliding-window group), one state page per state group.
  std::int64_t blocks_per_request(std::int64_t tokens) const;
};

/// The layout for one tensor-parallel rank; nullopt unless the served text model has both
/// attention and state layers. `alignment`: the attention kernel's block granularity (16).
std::optional<HybridBlocks> vllm_hybrid_blocks(const ModelDescription& model, Dtype kv_dtype,
                                               Dtype ssm_dtype, std::int64_t conv_state_bytes,
                                               const KvSplit& split, std::int64_t alignment = 16);
/// The same with the SSM state of `assumptions` (effective_ssm_dtype, conv_state_bytes).
std::optional<HybridBlocks> vllm_hybrid_blocks(const ModelDescription& model, Dtype kv_dtype,
                                               const MemoryAssumptions& assumptions,
                                               const KvSplit& split);

}  // namespace trace
