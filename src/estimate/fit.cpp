#include "trace/estimate/fit.hpp"

#include <algorithm>
#include <cmath>

#include "trace/checked_math.hpp"

namespace trace {

namespace {

std::int64_t attention_heads(const ModelDescription& model, bool kv, MlaCache mla_cache) {
  for (const Stack& stack : model.stacks) {
    if (stack.vision || stack.mtp) continue;
    for (const Block& block : stack.blocks) {
      const Attention& attention = block.attention;
      // MLA's latent is one shared "head": every tensor-parallel rank keeps all of it.
      if (attention.kind == AttentionKind::mla) {
        return kv && mla_cache == MlaCache::latent ? 1 : attention.num_heads;
      }
      if (attention.kind != AttentionKind::standard) continue;
      return kv ? attention.num_kv_heads : attention.num_heads;
    }
  }
  return 1;
}

std::int64_t routed_experts(const ModelDescription& model) {
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (block.moe) return block.moe->num_experts;
    }
  }
  return 0;
}

// Peak on each of `cards` cards at batch 1.
std::int64_t per_card_bytes(const ModeMemory& mode, std::int64_t cards, bool tensor_parallel,
                            std::int64_t kv_heads) {
  const std::int64_t unsharded = mode.fixed_bytes - mode.shardable_bytes;  // overhead
  const std::int64_t sharded = ceil_div(mode.shardable_bytes, cards);
  std::int64_t per_sequence = mode.per_sequence_bytes;
  if (tensor_parallel) {
    // KV heads split across cards; past kv_heads cards they are replicated.
    per_sequence = ceil_div(per_sequence, std::min(cards, std::max<std::int64_t>(kv_heads, 1)));
  }
  return unsharded + sharded + per_sequence;
}

}  // namespace

ModeFit fit_mode(const ModeMemory& mode, std::int64_t budget_bytes, std::int64_t tp_divisor,
                 std::int64_t kv_heads) {
  ModeFit fit;
  const std::int64_t at_one = checked_add(mode.fixed_bytes, mode.per_sequence_bytes);
  fit.fits = at_one <= budget_bytes;
  if (fit.fits) {
    fit.min_cards = 1;
    fit.bytes_per_card = at_one;
    fit.max_batch = mode.per_sequence_bytes > 0
                        ? std::min(k_max_reported_batch,
                                   (budget_bytes - mode.fixed_bytes) / mode.per_sequence_bytes)
                        : k_max_reported_batch;
    return fit;
  }
  const bool tensor_parallel = tp_divisor > 0;
  fit.strategy = tensor_parallel ? "tensor parallel" : "ZeRO-3";
  for (std::int64_t cards = 2; cards <= k_max_cards; ++cards) {
    if (tensor_parallel && tp_divisor % cards != 0) continue;
    const std::int64_t bytes = per_card_bytes(mode, cards, tensor_parallel, kv_heads);
    if (bytes <= budget_bytes) {
      fit.min_cards = cards;
      fit.bytes_per_card = bytes;
      break;
    }
  }
  return fit;
}

ModeFit fit_expert_parallel(const ModeMemory& mode, std::int64_t budget_bytes,
                            std::int64_t num_experts) {
  ModeFit fit = fit_mode(mode, budget_bytes, 0, 1);
  if (fit.fits) return fit;
  fit.min_cards.reset();
  fit.bytes_per_card = 0;
  fit.strategy = "expert parallel";
  const std::int64_t replicated = mode.fixed_bytes - mode.expert_bytes;
  for (std::int64_t cards = 2; cards <= std::min(num_experts, k_max_cards); ++cards) {
    if (num_experts % cards != 0) continue;
    const std::int64_t bytes = replicated + ceil_div(mode.expert_bytes, cards) +
                               mode.per_sequence_bytes;
    if (bytes <= budget_bytes) {
      fit.min_cards = cards;
      fit.bytes_per_card = bytes;
      break;
    }
  }
  return fit;
}

std::int64_t longest_context(const ModelDescription& model, const MemoryAssumptions& a,
                             std::int64_t budget_bytes, std::int64_t fixed_bytes,
                             std::int64_t concurrency) {
  if (concurrency < 1) return 0;
  const std::int64_t state = ssm_state_bytes(model, effective_ssm_dtype(model, a), a.conv_state_bytes);
  const auto fits = [&](std::int64_t context) {
    const std::int64_t per_request = checked_add(kv_cache_bytes(model, context, a.kv_dtype, {1, a.mla_cache}), state);
    // compare without overflow: fixed + concurrency x per_request <= budget
    if (budget_bytes < fixed_bytes) return false;
    return per_request <= (budget_bytes - fixed_bytes) / concurrency;
  };
  constexpr std::int64_t k_max_context = 1LL << 27;
  if (!fits(1)) return 0;
  if (fits(k_max_context)) return k_max_context;
  std::int64_t low = 1, high = k_max_context;  // fits(low), !fits(high)
  while (high - low > 1) {
    const std::int64_t mid = low + (high - low) / 2;
    (fits(mid) ? low : high) = mid;
  }
  return low;
}

std::vector<CardFit> fit_cards(const MemoryEstimate& memory, const ModelDescription& model,
                               const std::vector<const GpuSpec*>& gpus,
                               const MemoryAssumptions& assumptions) {
  const std::int64_t heads = attention_heads(model, false, assumptions.mla_cache);
  const std::int64_t kv_heads = attention_heads(model, true, assumptions.mla_cache);
  std::vector<CardFit> fits;
  for (const GpuSpec* gpu : gpus) {
    CardFit card;
    card.id = gpu->id;
    card.name = gpu->name;
    card.memory_bytes = gpu->memory_bytes_usable;
    card.budget_bytes = budget_bytes(gpu->memory_bytes_usable, assumptions.headroom_fraction);
    card.full_finetune = fit_mode(memory.full_finetune, card.budget_bytes, 0, kv_heads);
    card.lora = fit_mode(memory.lora, card.budget_bytes, 0, kv_heads);
    const std::int64_t experts = routed_experts(model);
    card.serve = assumptions.expert_parallel && experts > 1
                     ? fit_expert_parallel(memory.serve, card.budget_bytes, experts)
                     : fit_mode(memory.serve, card.budget_bytes, heads, kv_heads);
    fits.push_back(std::move(card));
  }
  return fits;
}

std::int64_t budget_bytes(std::int64_t usable_bytes, double headroom_fraction) {
  const double headroom = std::clamp(headroom_fraction, 0.0, 0.99);
  return static_cast<std::int64_t>(
      std::floor(static_cast<double>(usable_bytes) * (1.0 - headroom)));
}

}  // namespace trace
