#pragma once
/// The layer graph: the model as an ordered list of nodes with real operator types, output shapes
/// at a chosen batch and sequence length, and each node's parameter count. The counts come from
/// the same functions as count_parameters, so the nodes always sum to the total.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/model_description.hpp"

namespace trace {

struct GraphNode {
  std::string name;       ///< checkpoint-style path, e.g. "decoder.layers.3.self_attn"
  std::string op;         ///< operator type: Embedding, RMSNorm, LayerNorm, Attention, MLP, Linear...
  std::string detail;     ///< shapes and options, e.g. "GQA 32q/8kv x 128, RoPE, window 4096"
  std::string component;  ///< the by_component bucket its parameters fall in
  std::string stack;      ///< "decoder", "encoder", "vision_tower", or "" outside stacks
  std::int64_t layer = -1;  ///< layer index within its stack, -1 outside layers
  std::vector<std::int64_t> output_shape;  ///< [batch, sequence, width]
  std::int64_t params = 0;
};

struct LayerGraph {
  std::int64_t batch = 1;
  std::int64_t seq_len = 0;
  std::vector<GraphNode> nodes;
};

/// Builds the graph at `batch` sequences of `seq_len` tokens (images for a vision tower use
/// their patch count).
LayerGraph build_layer_graph(const ModelDescription& model, std::int64_t seq_len,
                             std::int64_t batch = 1);

/// Human name of a norm kind ("RMSNorm", "LayerNorm", ...).
std::string norm_op_name(NormKind kind);

}  // namespace trace
