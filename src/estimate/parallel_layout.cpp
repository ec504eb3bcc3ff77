#include "trace/estimate/parallel_layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

#include "trace/error.hpp"

namespace trace {

namespace {

std::optional<std::string> attention_problem(const Attention& attention, std::int64_t tp) {
  if (attention.kind != AttentionKind::standard && attention.kind != AttentionKind::mla) {
    return std::nullopt;
  }
  if (attention.num_heads % tp != 0) {
    return fmt::format("its {} attention heads are not divisible by {}", attention.num_heads, tp);
  }
  if (attention.kind == AttentionKind::mla) return std::nullopt;  // one latent, whole on each rank
  const std::int64_t kv = attention.num_kv_heads;
  if (kv <= 0) return std::nullopt;  // a parsed layer always has one; never divide by zero
  if (kv >= tp && kv % tp != 0) {
    return fmt::format("its {} KV heads are not divisible by {}", kv, tp);
  }
  if (kv < tp && tp % kv != 0) {
    return fmt::format("{} is not a multiple of its {} KV heads (each replicated on {} / {} ranks)",
                       tp, kv, tp, kv);
  }
  return std::nullopt;
}

std::optional<std::string> ssm_problem(const Ssm& ssm, std::int64_t tp) {
  if (ssm.kind == SsmKind::mamba1 || ssm.kind == SsmKind::short_conv) {
    if (ssm.inner % tp != 0) {
      return fmt::format("its {} SSM channels are not divisible by {}", ssm.inner, tp);
    }
    return std::nullopt;
  }
  if (ssm.num_heads % tp != 0) {
    return fmt::format("its {} SSM heads are not divisible by {}", ssm.num_heads, tp);
  }
  if (ssm.kind == SsmKind::mamba2 && ssm.groups != 1 && ssm.groups % tp != 0) {
    return fmt::format("its {} SSM groups are not divisible by {} (nor one group)", ssm.groups, tp);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> tensor_parallel_problem(const ModelDescription& model, std::int64_t tp) {
  if (tp <= 1) return std::nullopt;
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    for (std::size_t i = 0; i < stack.blocks.size(); ++i) {
      const Block& block = stack.blocks[i];
      std::optional<std::string> problem = attention_problem(block.attention, tp);
      if (!problem && block.cross_attention)
        problem = attention_problem(*block.cross_attention, tp);
      if (!problem && block.ssm) problem = ssm_problem(*block.ssm, tp);
      if (problem) return fmt::format("{} layer {}: {}", stack.name, i, *problem);
    }
  }
  return std::nullopt;
}

std::vector<std::int64_t> tensor_parallel_sizes(const ModelDescription& model, std::int64_t limit) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t tp = 1; tp <= limit; ++tp) {
    if (!tensor_parallel_problem(model, tp)) sizes.push_back(tp);
  }
  return sizes;
}

void require_tensor_parallel(const ModelDescription& model, std::int64_t tp, const char* flag) {
  const std::optional<std::string> problem = tensor_parallel_problem(model, tp);
  if (!problem) return;
  throw ConfigError(fmt::format(
      "{} {} cannot split {} (vLLM and Megatron give each rank whole heads); sizes that split "
      "every layer: {}",
      flag, tp, *problem, fmt::join(tensor_parallel_sizes(model, 64), ", ")));
}

StageAndExpertLimits stage_and_expert_limits(const ModelDescription& model) {
  StageAndExpertLimits limits;
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    limits.layers += static_cast<std::int64_t>(stack.blocks.size());
    for (const Block& block : stack.blocks) {
      if (block.moe) limits.experts_gcd = std::gcd(limits.experts_gcd, block.moe->num_experts);
    }
  }
  return limits;
}

void require_stage_and_expert_layout(const StageAndExpertLimits& limits, const Job& job) {
  if (job.pp > limits.layers) {
    throw ConfigError(fmt::format(
        "--pp {} asks for more pipeline stages than the model's {} layers; use at most {}", job.pp,
        limits.layers, limits.layers));
  }
  if (job.ep <= 1) return;
  if (limits.experts_gcd == 0) {
    throw ConfigError(
        fmt::format("--ep {}: the model has no routed experts to split; leave --ep at 1", job.ep));
  }
  if (limits.experts_gcd % job.ep != 0) {
    throw ConfigError(fmt::format(
        "--ep {} does not divide the {} routed experts of an MoE layer (each rank holds whole "
        "experts)",
        job.ep, limits.experts_gcd));
  }
  const std::int64_t stage_ranks = job.gpus / job.pp;  // tp x data-parallel
  if (stage_ranks % job.ep != 0) {
    throw ConfigError(fmt::format(
        "--ep {} does not divide the {} GPUs of a pipeline stage (--gpus {} / --pp {}) that "
        "expert parallelism spreads over",
        job.ep, stage_ranks, job.gpus, job.pp));
  }
}

void require_parallel_layout(const ModelDescription& model, const Job& job) {
  require_tensor_parallel(model, job.tp, "--tp");
  require_stage_and_expert_layout(stage_and_expert_limits(model), job);
}

}  // namespace trace
