// The decoder stack of the Llama lineage and of the families that differ from it only in where
// their norms sit, which norm they use, their biases, QK-norm, FFN shape, sliding windows and
// which layers apply RoPE: llama.cpp and the families built like it (grep decoder_stack), dense
// and MoE alike (an MoE family sets the FFN of each block afterwards). Each family reads its
// config and fills a DecoderLayout.
#include "family.hpp"

namespace trace::family {

namespace {

std::vector<std::string> default_norm_names(DecoderLayout::Norms placement) {
  switch (placement) {
    case DecoderLayout::Norms::pre:
      return {"input_layernorm", "post_attention_layernorm"};
    case DecoderLayout::Norms::post:  // OLMo 2 / 3: no input_layernorm
      return {"post_attention_layernorm", "post_feedforward_layernorm"};
    case DecoderLayout::Norms::sandwich:  // GLM-4-0414's spelling
      return {"input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm",
              "post_mlp_layernorm"};
    case DecoderLayout::Norms::parallel:
      return {"input_layernorm"};
  }
  return {};
}

}  // namespace

Stack decoder_stack(std::int64_t hidden, std::int64_t layers, const HeadShape& shape,
                    const DecoderLayout& layout) {
  const std::vector<std::string> norm_names =
      layout.norm_names.empty() ? default_norm_names(layout.norms) : layout.norm_names;
  const auto norm = [&](const std::string& name, std::int64_t dim) {
    return Norm{name, layout.norm_kind, dim};
  };
  Stack stack;
  stack.name = "decoder";
  stack.blocks.reserve(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) {
    const auto index = static_cast<std::size_t>(i);
    Block block;
    block.attention = self_attention(hidden, shape, layout.qkv_bias, layout.o_bias);
    block.attention.name = layout.attention_name;
    block.attention.fused_qkv = layout.fused_qkv;
    // .at(): a per-layer list shorter than the stack is a builder bug, never undefined behaviour.
    const bool rope = layout.rope_layers.empty() || layout.rope_layers.at(index);
    block.attention.rotary_dim = rope ? layout.rotary_dim : 0;
    if (!layout.windows.empty()) block.attention.sliding_window = layout.windows.at(index);
    if (layout.qk_norm == DecoderLayout::QkNorm::per_head) {
      block.attention.q_norm = norm(layout.qk_norm_names.first, shape.head_dim);
      block.attention.k_norm = norm(layout.qk_norm_names.second, shape.head_dim);
    } else if (layout.qk_norm == DecoderLayout::QkNorm::full_width) {
      block.attention.q_norm = norm(layout.qk_norm_names.first, shape.num_heads * shape.head_dim);
      block.attention.k_norm =
          norm(layout.qk_norm_names.second, shape.num_kv_heads * shape.head_dim);
    }
    block.mlp = layout.mlp;
    for (const std::string& name : norm_names) block.norms.push_back(norm(name, hidden));
    block.post_norm = layout.norms == DecoderLayout::Norms::post;
    block.parallel_residual = layout.norms == DecoderLayout::Norms::parallel;
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = norm(layout.final_norm_name, hidden);
  return stack;
}

}  // namespace trace::family
