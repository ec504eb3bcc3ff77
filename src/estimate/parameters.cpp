#include "trace/estimate/parameters.hpp"

#include <array>

#include "trace/checked_math.hpp"

namespace trace {

namespace {

// weight (+ bias) of a Linear layer.
std::int64_t linear(std::int64_t in, std::int64_t out, bool bias) {
  return checked_add(checked_mul(in, out, "a weight matrix"), bias ? out : 0, "a weight matrix");
}

constexpr std::array<const char*, 8> k_components{
    "embedding", "position_embedding", "attention", "mlp", "norm", "head", "vision", "other"};

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
  const std::int64_t q_width = checked_mul(attention.num_heads, attention.head_dim);
  const std::int64_t kv_width = checked_mul(attention.num_kv_heads, attention.head_dim);
  std::int64_t params = linear(attention.input_dim, q_width, attention.q_bias);
  params = checked_add(params, linear(attention.kv_input_dim, kv_width, attention.k_bias));
  params = checked_add(params, linear(attention.kv_input_dim, kv_width, attention.v_bias));
  params = checked_add(params, linear(q_width, attention.output_dim, attention.o_bias));
  if (attention.q_norm) params = checked_add(params, norm_params(*attention.q_norm));
  if (attention.k_norm) params = checked_add(params, norm_params(*attention.k_norm));
  params = checked_add(params,
                       checked_mul(attention.relative_attention_buckets, attention.num_heads));
  return params;
}

std::int64_t mlp_params(const Mlp& mlp) {
  const std::int64_t up = linear(mlp.input_dim, mlp.intermediate, mlp.up_bias);
  const std::int64_t down = linear(mlp.intermediate, mlp.input_dim, mlp.down_bias);
  return checked_add(checked_mul(mlp.kind == MlpKind::gated ? 2 : 1, up), down);
}

std::int64_t block_params(const Block& block) {
  std::int64_t params = checked_add(attention_params(block.attention), mlp_params(block.mlp));
  if (block.cross_attention) params = checked_add(params, attention_params(*block.cross_attention));
  for (const Norm& norm : block.norms) params = checked_add(params, norm_params(norm));
  return params;
}

ParameterCount count_parameters(const ModelDescription& model) {
  Tally tally;
  const std::int64_t token_embedding = checked_mul(model.vocab_size, model.embedding_dim);
  tally.add("embedding", token_embedding);
  const std::int64_t positions = checked_mul(model.learned_positions, model.hidden_size);
  tally.add("position_embedding", positions);
  const std::int64_t token_types = checked_mul(model.token_types, model.hidden_size);
  tally.add("embedding", token_types);
  if (model.embedding_norm) tally.add("norm", norm_params(*model.embedding_norm));

  std::int64_t vision = 0;
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (stack.vision) {
        vision = checked_add(vision, block_params(block));
        continue;
      }
      tally.add("attention", attention_params(block.attention));
      if (block.cross_attention) tally.add("attention", attention_params(*block.cross_attention));
      tally.add("mlp", mlp_params(block.mlp));
      for (const Norm& norm : block.norms) tally.add("norm", norm_params(norm));
    }
    if (stack.final_norm) {
      if (stack.vision) {
        vision = checked_add(vision, norm_params(*stack.final_norm));
      } else {
        tally.add("norm", norm_params(*stack.final_norm));
      }
    }
  }
  tally.add("vision", vision);

  if (model.has_lm_head) {
    if (!model.tie_word_embeddings) tally.add("head", token_embedding);
    if (model.lm_head_bias) tally.add("head", model.vocab_size);
  }
  for (const ExtraParameter& extra : model.extra_parameters) {
    tally.add(extra.component, extra.params);
    if (extra.component == "vision") vision = checked_add(vision, extra.params);
  }

  ParameterCount count;
  for (std::size_t i = 0; i < k_components.size(); ++i) {
    count.by_component.emplace_back(k_components[i], tally.counts[i]);
    count.total = checked_add(count.total, tally.counts[i], "the parameter count");
  }
  count.active = count.total;
  count.vision = vision;
  // Vendors that publish "without embeddings" leave out the input lookup tables but keep the
  // output head; with tied embeddings the matrix is the head, so it stays.
  const std::int64_t lookup = (model.tie_word_embeddings && model.has_lm_head ? 0 : token_embedding) +
                              positions + token_types;
  count.active_without_embedding = count.active - lookup;
  return count;
}

}  // namespace trace
