#include "trace/model/layer_graph.hpp"

#include <fmt/format.h>

#include "trace/estimate/parameters.hpp"

namespace trace {

namespace {

std::string attention_detail(const Attention& attention, PositionKind position) {
  if (attention.kind == AttentionKind::none) return "no attention in this layer";
  if (attention.kind == AttentionKind::linear) {
    return fmt::format("{} -> {}, replaces attention", attention.input_dim, attention.output_dim);
  }
  if (attention.kind == AttentionKind::mla) {
    const MlaShape& m = attention.mla;
    std::string detail = fmt::format("MLA {} heads, {}kv_lora {}, qk {}+{} rope, v {}",
                                     attention.num_heads,
                                     m.q_lora_rank > 0 ? fmt::format("q_lora {}, ", m.q_lora_rank)
                                                       : std::string(),
                                     m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim,
                                     m.v_head_dim);
    if (attention.indexer) {
      detail += fmt::format(", sparse indexer {}x{}", attention.indexer->num_heads,
                            attention.indexer->head_dim);
    }
    return detail;
  }
  std::string kind = "MHA";
  if (attention.num_kv_heads == 1 && attention.num_heads > 1) {
    kind = "MQA";
  } else if (attention.num_kv_heads < attention.num_heads) {
    kind = "GQA";
  }
  std::string detail = fmt::format("{} {}q/{}kv x {}", kind, attention.num_heads,
                                   attention.num_kv_heads, attention.head_dim);
  if (attention.is_cross) detail += ", cross";
  if (attention.fused_qkv) detail += ", fused qkv";
  if (attention.q_bias || attention.o_bias) {
    detail += attention.o_bias ? ", biases" : ", qkv bias";
  }
  if (attention.q_norm) detail += ", QK-norm";
  if (attention.output_gate) detail += ", output gate";
  if (attention.rotary_dim > 0) {
    detail += attention.rotary_dim == attention.head_dim
                  ? ", RoPE"
                  : fmt::format(", RoPE on {}/{} dims", attention.rotary_dim, attention.head_dim);
  } else if (position == PositionKind::alibi) {
    detail += ", ALiBi";
  }
  if (attention.relative_attention_buckets > 0) {
    detail += fmt::format(", relative bias {} buckets", attention.relative_attention_buckets);
  }
  if (attention.sliding_window > 0) detail += fmt::format(", window {}", attention.sliding_window);
  if (attention.sinks) detail += ", sinks";
  return detail;
}

std::string attention_op(const Attention& attention) {
  switch (attention.kind) {
    case AttentionKind::mla: return "Attention(MLA)";
    case AttentionKind::linear: return "Linear";
    case AttentionKind::none: return "NoOp";
    case AttentionKind::standard: break;
  }
  return "Attention";
}

std::string moe_detail(const Moe& moe) {
  std::string detail = fmt::format("{} experts, top-{}, expert {} -> {} -> {}", moe.num_experts,
                                   moe.top_k, moe.expert.input_dim, moe.expert.intermediate,
                                   moe.expert.input_dim);
  if (moe.shared) {
    detail += fmt::format(", {} shared ({} wide)", std::max<std::int64_t>(moe.num_shared_experts, 1),
                          moe.shared->intermediate);
  }
  if (moe.latent_dim > 0) detail += fmt::format(", latent {}", moe.latent_dim);
  if (moe.router_correction_bias) detail += ", router correction bias";
  if (moe.expert.up_bias) detail += ", biases";
  return detail;
}

std::string mlp_detail(const Mlp& mlp) {
  return fmt::format("{} {} -> {} -> {}{}{}",
                     mlp.kind == MlpKind::gated ? "gated" : "plain", mlp.input_dim,
                     mlp.intermediate, mlp.input_dim,
                     mlp.kind == MlpKind::gated ? fmt::format(", {} x up", mlp.activation)
                                                : fmt::format(", {}", mlp.activation),
                     mlp.up_bias || mlp.down_bias ? ", biases" : "");
}

std::string mlp_op(const Mlp& mlp) {
  if (mlp.kind == MlpKind::linear) return "Linear";
  if (mlp.kind == MlpKind::none) return "NoOp";
  if (mlp.kind == MlpKind::plain) return "MLP";
  if (mlp.activation.rfind("gelu", 0) == 0) return "MLP(GeGLU)";
  return "MLP(SwiGLU)";
}

}  // namespace

std::string norm_op_name(NormKind kind) {
  switch (kind) {
    case NormKind::rms_norm: return "RMSNorm";
    case NormKind::layer_norm: return "LayerNorm";
    case NormKind::layer_norm_no_bias: return "LayerNorm(no bias)";
    case NormKind::layer_norm_no_affine: return "LayerNorm(no affine)";
  }
  return "Norm";
}

LayerGraph build_layer_graph(const ModelDescription& model, std::int64_t seq_len,
                             std::int64_t batch) {
  LayerGraph graph;
  graph.batch = batch;
  graph.seq_len = seq_len;
  auto& nodes = graph.nodes;
  const auto shape = [&](std::int64_t width) {
    return std::vector<std::int64_t>{batch, seq_len, width};
  };

  nodes.push_back({"embed_tokens", "Embedding",
                   fmt::format("{} x {}{}", model.vocab_size, model.embedding_dim,
                               model.embedding_scale != 1.0 ? ", scaled by sqrt(hidden)" : ""),
                   "embedding", "", -1, shape(model.embedding_dim),
                   model.vocab_size * model.embedding_dim});
  const std::int64_t table_width = model.position_width();
  if (model.position == PositionKind::learned) {
    nodes.push_back({"embed_positions", "Embedding",
                     fmt::format("{} x {} learned positions", model.learned_positions, table_width),
                     "position_embedding", "", -1, shape(table_width),
                     model.learned_positions * table_width});
  }
  if (model.token_types > 0) {
    nodes.push_back({"token_type_embeddings", "Embedding",
                     fmt::format("{} x {}", model.token_types, table_width), "embedding", "", -1,
                     shape(table_width), model.token_types * table_width});
  }
  if (model.embedding_norm) {
    nodes.push_back({model.embedding_norm->name, norm_op_name(model.embedding_norm->kind), "",
                     "norm", "", -1, shape(model.hidden_size), norm_params(*model.embedding_norm)});
  }
  for (const ExtraParameter& extra : model.extra_parameters) {
    if (extra.component != "embedding") continue;
    nodes.push_back({extra.name, extra.op, "", extra.component, "", -1, shape(model.hidden_size),
                     extra.params});
  }

  for (const Stack& stack : model.stacks) {
    for (std::size_t i = 0; i < stack.blocks.size(); ++i) {
      const Block& block = stack.blocks[i];
      const auto layer = static_cast<std::int64_t>(i);
      const std::string prefix = fmt::format("{}.layers.{}", stack.name, i);
      const std::string component = stack.vision ? "vision" : stack.mtp ? "mtp" : "";
      const std::int64_t width = block.attention.input_dim;
      const std::size_t first_node = nodes.size();
      const auto add_norm = [&](const Norm& norm) {
        nodes.push_back({fmt::format("{}.{}", prefix, norm.name), norm_op_name(norm.kind), "",
                         component.empty() ? "norm" : component, stack.name, layer, shape(width),
                         norm_params(norm)});
      };
      // Which norm sits where: see Block::post_norm.
      const std::size_t count = block.norms.size();
      const auto norm_at = [&](std::size_t index) {
        if (index < count) add_norm(block.norms[index]);
      };
      const auto add_attention = [&](const Attention& attention) {
        nodes.push_back({fmt::format("{}.{}", prefix, attention.name), attention_op(attention),
                         attention_detail(attention, model.position),
                         component.empty() ? "attention" : component, stack.name, layer,
                         shape(attention.output_dim), attention_params(attention)});
      };
      const auto add_mlp = [&] {
        if (block.mlp.kind != MlpKind::none || !block.moe) {
          nodes.push_back({fmt::format("{}.mlp", prefix), mlp_op(block.mlp),
                           block.mlp.kind == MlpKind::linear || block.mlp.kind == MlpKind::none
                               ? std::string()
                               : mlp_detail(block.mlp),
                           component.empty() ? "mlp" : component, stack.name, layer,
                           shape(block.mlp.input_dim), mlp_params(block.mlp)});
        }
        if (block.moe) {
          nodes.push_back({fmt::format("{}.moe", prefix), "MoE", moe_detail(*block.moe),
                           component.empty() ? "experts" : component, stack.name, layer,
                           shape(block.moe->expert.input_dim), moe_params(*block.moe).total});
        }
      };
      const auto add_ssm = [&](const Ssm& ssm) {
        std::string op = "Mamba";
        std::string detail = fmt::format("inner {}, state {}, dt_rank {}, conv {}", ssm.inner,
                                         ssm.state, ssm.dt_rank, ssm.conv_kernel);
        if (ssm.kind == SsmKind::mamba2) {
          op = "Mamba2";
          detail = fmt::format("{} heads x {}, state {}, {} groups, conv {}", ssm.num_heads,
                               ssm.head_dim, ssm.state, ssm.groups, ssm.conv_kernel);
        } else if (ssm.kind == SsmKind::gated_delta_net || ssm.kind == SsmKind::kimi_delta) {
          op = ssm.kind == SsmKind::kimi_delta ? "KimiDeltaAttention" : "GatedDeltaNet";
          detail = fmt::format("{} v heads x {}, {} qk heads x {}, conv {}", ssm.num_heads,
                               ssm.head_dim, ssm.groups, ssm.state, ssm.conv_kernel);
        } else if (ssm.kind == SsmKind::short_conv) {
          op = "ShortConv";
          detail = fmt::format("{} channels, conv {}", ssm.inner, ssm.conv_kernel);
        } else if (ssm.kind == SsmKind::lightning) {
          op = "LightningAttention";
          detail = fmt::format("{} heads x {}, state {} x {}", ssm.num_heads, ssm.head_dim,
                               ssm.head_dim, ssm.state);
        }
        nodes.push_back({fmt::format("{}.{}", prefix, block.single_mixer ? "mixer" : ssm.name), op,
                         detail, component.empty() ? "ssm" : component, stack.name, layer,
                         shape(ssm.hidden), ssm_params(ssm)});
      };
      // The token mixers of a block: attention, a state-space mixer, or both side by side
      // (Falcon-H1).
      const auto add_mixers = [&] {
        if (block.attention.kind != AttentionKind::none) add_attention(block.attention);
        if (block.ssm) add_ssm(*block.ssm);
      };
      if (block.single_mixer) {
        // Nemotron-H / Mamba: one norm, one mixer.
        for (std::size_t n = 0; n < count; ++n) norm_at(n);
        if (block.ssm) {
          add_ssm(*block.ssm);
        } else if (block.attention.kind != AttentionKind::none) {
          add_attention(block.attention);
        } else {
          add_mlp();
        }
      } else if (block.attention.kind == AttentionKind::none && !block.ssm) {
        // DeciLM no_op attention: its only norm sits before the MLP.
        add_attention(block.attention);
        for (std::size_t n = 0; n < count; ++n) norm_at(n);
        add_mlp();
      } else if (block.post_norm) {
        // self-attention, its norm, [cross-attention, its norm,] MLP, its norm
        add_attention(block.attention);
        norm_at(0);
        std::size_t next = 1;
        if (block.cross_attention) {
          add_attention(*block.cross_attention);
          if (count == 3) norm_at(next++);
        }
        add_mlp();
        for (; next < count; ++next) norm_at(next);
      } else if (count == 4) {
        norm_at(0);
        add_mixers();
        norm_at(1);
        norm_at(2);
        add_mlp();
        norm_at(3);
      } else {
        norm_at(0);
        add_mixers();
        std::size_t next = 1;
        if (block.cross_attention) {
          if (count == 3) norm_at(next++);
          add_attention(*block.cross_attention);
        }
        for (; next < count; ++next) norm_at(next);
        add_mlp();
      }
      if (block.shared_weights) {
        for (std::size_t n = first_node; n < nodes.size(); ++n) {
          nodes[n].params = 0;
          nodes[n].detail += nodes[n].detail.empty() ? "shared weights" : ", shared weights";
        }
      }
    }
    if (stack.final_norm) {
      const std::int64_t width =
          stack.blocks.empty() ? model.hidden_size : stack.blocks.front().attention.input_dim;
      nodes.push_back({fmt::format("{}.{}", stack.name, stack.final_norm->name),
                       norm_op_name(stack.final_norm->kind), "",
                       stack.vision ? "vision" : stack.mtp ? "mtp" : "norm", stack.name, -1,
                       shape(width),
                       norm_params(*stack.final_norm)});
    }
  }

  for (const ExtraParameter& extra : model.extra_parameters) {
    if (extra.component == "embedding") continue;
    nodes.push_back({extra.name, extra.op, "", extra.component, "", -1, shape(model.hidden_size),
                     extra.params});
  }
  if (model.has_lm_head) {
    const std::int64_t head_params =
        (model.tie_word_embeddings ? 0 : model.vocab_size * model.embedding_dim) +
        (model.lm_head_bias ? model.vocab_size : 0);
    nodes.push_back({"lm_head", "Linear",
                     fmt::format("{} -> {}{}{}", model.embedding_dim, model.vocab_size,
                                 model.tie_word_embeddings ? ", tied to embed_tokens" : "",
                                 model.lm_head_bias ? ", bias" : ""),
                     "head", "", -1, shape(model.vocab_size), head_params});
  }
  return graph;
}

}  // namespace trace
