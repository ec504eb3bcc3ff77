#pragma once
/// Floating-point operations per token: the compute side of the roofline. A multiply-add is two
/// FLOPs. Formulas and sources: docs/cost.md, "FLOPs".
#include <cstdint>

#include "trace/estimate/job.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

/// Forward FLOPs of one text token, by kind of work.
struct TokenFlops {
  /// 2 x every weight the token multiplies: the active parameters of the text path less the
  /// input lookup tables (the output head stays), shared blocks once per use.
  double matmul = 0;
  /// Scores and the weighted sum over the keys the token attends to:
  /// 2 x heads x (qk head dim + v head dim) x keys, per attention layer.
  double attention = 0;
  /// The recurrent scan of SSM / linear-attention layers (k_scan_flops_per_state_element x the
  /// layer's state elements).
  double ssm = 0;
  double total() const { return matmul + attention + ssm; }
};

/// FLOPs per state element and token of the recurrent update and readout: Mamba's
/// h = exp(dt A) h + dt x B^T (3) and y = C h (2); delta rules add the prediction h k (2).
inline constexpr double k_scan_flops_per_state_element = 5;
inline constexpr double k_delta_scan_flops_per_state_element = 7;

/// The average number of keys a query attends to in a causal sequence of `seq_len` tokens under
/// a sliding window (0: none): (1/L) x sum over positions p of min(p, window).
double average_causal_keys(std::int64_t seq_len, std::int64_t window);

/// One token of a training sequence of `seq_len` tokens (each query sees its causal prefix).
TokenFlops training_token_flops(const ModelDescription& model, const ParameterCount& params,
                                std::int64_t seq_len);
/// One generated token at position `context` (it attends to min(context, window) keys).
TokenFlops decode_token_flops(const ModelDescription& model, const ParameterCount& params,
                              std::int64_t context);
/// A whole prompt of `tokens` tokens in one pass (tokens x the average causal token).
double prefill_flops(const ModelDescription& model, const ParameterCount& params,
                     std::int64_t tokens);

/// What one training token costs, forward and backward (docs/cost.md, "Training FLOPs"):
///  full:       3 x (matmul + attention + ssm)          (backward = 2 x forward)
///  lora/qlora: 2 x matmul + 3 x (attention + ssm) + 6 x adapter parameters
///              (frozen weights skip their weight-gradient third)
///  + one more forward with full checkpointing (recomputation), the attention forward with
///  selective checkpointing.
struct TrainingFlops {
  TokenFlops forward;        ///< per token, one forward pass
  double per_token = 0;      ///< everything one token costs in a step, recomputation included
  double model_per_token = 0;  ///< the same without recomputation ("model FLOPs" of MFU)
  std::int64_t adapter_params = 0;
  /// Preference training: sequences per item (the pair's chosen and rejected, 2), which
  /// per_token and model_per_token include; a "token" is one position of the pair.
  std::int64_t sequences = 1;
  /// DPO: the reference model's forward over both sequences, per token of the pair; inside
  /// per_token and model_per_token unless the log-probabilities were precomputed, in which
  /// case plan_training adds one pass over an epoch's tokens.
  double reference_per_token = 0;
};
TrainingFlops training_flops(const ModelDescription& model, const ParameterCount& params,
                             const Job& job);

}  // namespace trace
