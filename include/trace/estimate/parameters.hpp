#pragma once
/// Exact parameter counts from a ModelDescription: every learnable tensor the checkpoint holds,
/// each once (a tied head is the embedding matrix, counted once). Formulas: docs/parameters.md.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/model/model_description.hpp"

namespace trace {

/// Parameters of one norm (RMSNorm: dim; LayerNorm: 2 x dim; ...).
std::int64_t norm_params(const Norm& norm);
/// q, k, v, o projections with their biases, QK-norms and any relative-position table.
std::int64_t attention_params(const Attention& attention);
/// gate/up/down (gated) or fc1/fc2 (plain) with biases.
std::int64_t mlp_params(const Mlp& mlp);
/// MLA projections (+ the sparse indexer), used by attention_params.
std::int64_t mla_params(const Attention& attention);

struct MoeParams {
  std::int64_t routed_expert = 0;  ///< one routed expert
  std::int64_t routed = 0;         ///< all routed experts
  std::int64_t router = 0;         ///< router weight (+ bias, + correction bias)
  std::int64_t shared = 0;         ///< shared experts (+ their gate)
  std::int64_t total = 0;
  std::int64_t active = 0;  ///< top_k routed + router + shared
};
MoeParams moe_params(const Moe& moe);

/// A Mamba-1 or Mamba-2 mixer's parameters.
std::int64_t ssm_params(const Ssm& ssm);

/// Every parameter held by one layer (0 for a layer that re-uses an earlier one's weights).
std::int64_t block_params(const Block& block);
/// The parameters one token touches in this layer (top-k of the routed experts).
std::int64_t block_active_params(const Block& block);
/// The weights a token multiplies by in this layer, its own or the earlier layer's it runs
/// again (Zamba2, ALBERT): what FLOPs count, where block_active_params counts storage.
std::int64_t block_active_weights(const Block& block);

struct ParameterCount {
  std::int64_t total = 0;
  std::int64_t active = 0;  ///< per token: equals total for dense models
  std::int64_t active_without_embedding = 0;  ///< active minus the input lookup tables
  std::int64_t mtp = 0;  ///< multi-token-prediction layers, inside total, never active
  std::int64_t vision = 0;                    ///< image encoder + projector, inside total
  /// Parameters of the parts a serving engine does not load (ModelDescription::not_served), inside
  /// total and vision.
  std::int64_t not_served = 0;
  /// Router e_score_correction_bias elements inside total (stored F32 buffers; transformers'
  /// num_parameters() leaves them out, trace counts them: docs/parameters.md).
  std::int64_t router_bias_buffers = 0;
  /// component -> count, in a fixed order: embedding, position_embedding, attention, ssm, mlp,
  /// experts, shared_experts, router, norm, head, vision, mtp, other. Sums to total.
  std::vector<std::pair<std::string, std::int64_t>> by_component;
};

/// One by_component bucket's count (0 for an unknown name).
std::int64_t component_count(const ParameterCount& count, std::string_view component);

/// Counts every parameter of the model. Throws ConfigError if a count overflows int64.
ParameterCount count_parameters(const ModelDescription& model);

/// The parameters a serving engine loads: the total less the MTP layers (unless it decodes
/// speculatively with them) and the parts it does not load (Qwen-Omni's talker and vocoder).
std::int64_t served_params(const ParameterCount& count, bool with_mtp);

}  // namespace trace
