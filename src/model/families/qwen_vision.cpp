// The Qwen vision towers (the `visual.*` tensors of Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5),
// shared by the families that wrap a Qwen text model around one. Every tower cuts the image (or
// T video frames) into P x P patches with a Conv3d, runs `depth` bidirectional blocks with a
// fused qkv, and merges each m x m group of patches into one token of the text width.
//  - Qwen2-VL (qwen2_vl): patch_embed.proj Conv3d [D, C, T, P, P] without bias; blocks: norm1 /
//    norm2 LayerNorm(D), attn.qkv [3D, D] + bias, attn.proj [D, D] + bias, mlp.fc1 [D r, D] +
//    bias, mlp.fc2 [D, D r] + bias (r = mlp_ratio, quick_gelu); merger: ln_q LayerNorm(D),
//    mlp.0 [D m^2, D m^2] + bias, mlp.2 [out, D m^2] + bias (out = vision_config.hidden_size).
//  - Qwen2.5-VL (qwen2_5_vl): as Qwen2-VL but norm1 / norm2 / ln_q are RMSNorm(D) and the MLP
//    is gated with biases: gate_proj / up_proj [I, D] + bias, down_proj [D, I] + bias (silu);
//    out = out_hidden_size. Windowed attention except fullatt_block_indexes (no tensors).
//  - Qwen3-VL (qwen3_vl, qwen3_vl_moe, qwen3_5, qwen3_5_moe): patch_embed.proj Conv3d + bias,
//    pos_embed [num_position_embeddings, D], blocks with LayerNorm norm1 / norm2, fused qkv and
//    proj with bias, linear_fc1 / linear_fc2 with bias (gelu_pytorch_tanh); merger (LayerNorm
//    [D], linear_fc1 [D m^2, D m^2], linear_fc2 [out, D m^2], biases) plus one post-shuffle
//    merger (LayerNorm [D m^2]) per deepstack_visual_indexes entry.
// Tensor lists: transformers models/qwen2_vl/modeling_qwen2_vl.py,
// models/qwen2_5_vl/modeling_qwen2_5_vl.py, models/qwen3_vl/modeling_qwen3_vl.py; derivations in
// docs/parameters.md sections 9 and 12.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

struct TowerShape {
  std::int64_t hidden = 0;
  std::int64_t depth = 0;
  std::int64_t heads = 0;
  std::int64_t channels = 3;
  std::int64_t patch = 0;
  std::int64_t temporal = 0;
  std::int64_t merge = 0;
};

// The widths every Qwen tower config gives; `hidden_key` is embed_dim (Qwen2-VL) or hidden_size.
TowerShape read_tower(const ConfigReader& vision, std::string_view hidden_key) {
  TowerShape shape;
  shape.hidden = vision.require_int({hidden_key}, 1, k_max_width);
  shape.depth = vision.require_int({"depth"}, 1, k_max_layers);
  shape.heads = vision.require_int({"num_heads"}, 1, k_max_heads);
  shape.channels = vision.int_or({"in_channels", "in_chans"}, 3, 1, 64);
  shape.patch = vision.require_int({"patch_size"}, 1, 4096);
  shape.temporal = vision.require_int({"temporal_patch_size"}, 1, 64);
  shape.merge = vision.require_int({"spatial_merge_size"}, 1, 64);
  if (shape.hidden % shape.heads != 0) {
    vision.fail(hidden_key, fmt::format("= {} is not a multiple of num_heads = {}", shape.hidden,
                                        shape.heads));
  }
  return shape;
}

Stack tower_stack(const TowerShape& shape, const Mlp& mlp, bool rms_norms) {
  HeadShape heads;
  heads.num_heads = heads.num_kv_heads = shape.heads;
  heads.head_dim = shape.hidden / shape.heads;
  Stack stack;
  stack.name = "visual";
  stack.causal = false;
  stack.vision = true;
  for (std::int64_t i = 0; i < shape.depth; ++i) {
    Block block;
    block.attention = self_attention(shape.hidden, heads, true, true);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.mlp = mlp;
    block.norms = rms_norms ? std::vector<Norm>{rms_norm("norm1", shape.hidden),
                                                rms_norm("norm2", shape.hidden)}
                            : std::vector<Norm>{layer_norm("norm1", shape.hidden),
                                                layer_norm("norm2", shape.hidden)};
    stack.blocks.push_back(std::move(block));
  }
  return stack;
}

// Qwen2-VL / Qwen2.5-VL PatchMerger: ln_q over D, then Linear(D m^2, D m^2) + GELU +
// Linear(D m^2, out), both biased.
void add_patch_merger(ModelDescription& model, const TowerShape& shape, std::int64_t out,
                      bool rms_norm_q) {
  const std::int64_t merged = checked_product({shape.hidden, shape.merge, shape.merge});
  model.extra_parameters.push_back({"visual.merger.ln_q", "vision",
                                    rms_norm_q ? "RMSNorm" : "LayerNorm",
                                    rms_norm_q ? shape.hidden : 2 * shape.hidden});
  model.extra_parameters.push_back({"visual.merger.mlp.0",
                                    "vision",
                                    "Linear",
                                    checked_add(checked_mul(merged, merged), merged),
                                    {merged, merged}});
  model.extra_parameters.push_back({"visual.merger.mlp.2",
                                    "vision",
                                    "Linear",
                                    checked_add(checked_mul(merged, out), out),
                                    {out, merged}});
}

// The bias-free Conv3d patch embedding of Qwen2-VL and Qwen2.5-VL: [D, C, T, P, P].
void add_patch_embed(ModelDescription& model, const TowerShape& shape) {
  model.extra_parameters.push_back(
      {"visual.patch_embed.proj",
       "vision",
       "Conv3d",
       checked_product({shape.hidden, shape.channels, shape.temporal, shape.patch, shape.patch}),
       {shape.hidden, shape.channels, shape.temporal, shape.patch, shape.patch}});
}

}  // namespace

void add_qwen2_vl_vision(const ConfigReader& vision, ModelDescription& model) {
  const TowerShape shape = read_tower(vision, "embed_dim");
  const std::int64_t out = vision.require_int({"hidden_size"}, 1, k_max_width);
  std::int64_t intermediate = checked_mul(shape.hidden, 4);
  if (const std::optional<double> ratio = vision.optional_number("mlp_ratio")) {
    if (!(*ratio > 0.0 && *ratio <= 64.0)) vision.fail("mlp_ratio", "must lie in (0, 64]");
    intermediate = static_cast<std::int64_t>(static_cast<double>(shape.hidden) * *ratio);
  }
  note_defaults(model, vision, "Qwen2VLVisionConfig", {{"mlp_ratio", "4"}, {"in_chans", "3"}});
  add_patch_embed(model, shape);
  add_patch_merger(model, shape, out, false);
  const Mlp mlp{MlpKind::plain, vision.optional_string("hidden_act").value_or("quick_gelu"),
                shape.hidden, intermediate, true, true, false};
  model.stacks.push_back(tower_stack(shape, mlp, false));
}

void add_qwen2_5_vl_vision(const ConfigReader& vision, ModelDescription& model) {
  const TowerShape shape = read_tower(vision, "hidden_size");
  const std::int64_t out = vision.require_int({"out_hidden_size"}, 1, k_max_width);
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  add_patch_embed(model, shape);
  add_patch_merger(model, shape, out, true);
  const Mlp mlp{MlpKind::gated, vision.optional_string("hidden_act").value_or("silu"),
                shape.hidden, intermediate, true, true, false};
  model.stacks.push_back(tower_stack(shape, mlp, true));
}

void add_qwen3_vl_vision(const ConfigReader& vision, std::int64_t text_hidden,
                         ModelDescription& model) {
  const TowerShape shape = read_tower(vision, "hidden_size");
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t positions = vision.require_int({"num_position_embeddings"}, 1, k_max_positions);
  const std::int64_t out = vision.int_or({"out_hidden_size"}, text_hidden, 1, k_max_width);
  std::int64_t deepstack = 0;
  if (vision.has("deepstack_visual_indexes")) {
    const nlohmann::json& list = vision.json().at("deepstack_visual_indexes");
    if (!list.is_array()) vision.fail("deepstack_visual_indexes", "must be a list of block indices");
    deepstack = static_cast<std::int64_t>(list.size());
  }
  const std::int64_t hidden = shape.hidden;
  const std::int64_t merged = checked_product({hidden, shape.merge, shape.merge});
  const auto extra = [&](std::string name, const char* op, std::int64_t params,
                         std::vector<std::int64_t> weight_shape) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, params, std::move(weight_shape)});
  };
  extra("visual.patch_embed.proj", "Conv3d",
        checked_add(
            checked_product({hidden, shape.channels, shape.temporal, shape.patch, shape.patch}),
            hidden),
        {hidden, shape.channels, shape.temporal, shape.patch, shape.patch});
  extra("visual.pos_embed", "Embedding", checked_mul(positions, hidden), {positions, hidden});
  const auto merger = [&](const std::string& prefix, std::int64_t norm_dim) {
    extra(prefix + ".norm", "LayerNorm", 2 * norm_dim, {});
    extra(prefix + ".linear_fc1", "Linear", checked_add(checked_mul(merged, merged), merged),
          {merged, merged});
    extra(prefix + ".linear_fc2", "Linear", checked_add(checked_mul(merged, out), out),
          {out, merged});
  };
  merger("visual.merger", hidden);
  for (std::int64_t i = 0; i < deepstack; ++i) {
    merger(fmt::format("visual.deepstack_merger_list.{}", i), merged);
  }
  const Mlp mlp{MlpKind::plain, vision.optional_string("hidden_act").value_or("gelu_pytorch_tanh"),
                hidden, intermediate, true, true, false};
  model.stacks.push_back(tower_stack(shape, mlp, false));
}

ConfigReader nested_text_config(const ConfigReader& config, nlohmann::json& storage) {
  storage = config.child("text_config").json();
  if (!storage.contains("tie_word_embeddings") && config.has("tie_word_embeddings")) {
    storage["tie_word_embeddings"] = config.json().at("tie_word_embeddings");
  }
  if (!storage.contains("torch_dtype") && !storage.contains("dtype")) {
    if (config.has("torch_dtype")) storage["torch_dtype"] = config.json().at("torch_dtype");
    else if (config.has("dtype")) storage["dtype"] = config.json().at("dtype");
  }
  return ConfigReader(storage, "text_config", config.model_type());
}

}  // namespace trace::family
