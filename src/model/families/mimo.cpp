// MiMo (model_type mimo, MiMoForCausalLM): XiaomiMiMo/MiMo-7B-Base, MiMo-7B-SFT, MiMo-7B-RL,
// MiMo-7B-RL-Zero, MiMo-7B-RL-0530 (remote code). The Qwen2 decoder (q/k/v biased, o_proj not,
// RMSNorm, SwiGLU, GQA, optional sliding windows from max_window_layers on) plus
// num_nextn_predict_layers MTP layers stored under model.mtp_layers.N: token_layernorm and
// hidden_layernorm (RMSNorm H), input_proj [H, 2H] (no bias), a full Qwen2 decoder layer
// (input_layernorm, self_attn, post_attention_layernorm, mlp) and final_layernorm. They share the
// model's embedding and head.
// Checkpoint names: transformers' Qwen2 names under model.* unchanged, plus model.mtp_layers.N.*.
// Tensor list: XiaomiMiMo's modeling_mimo.py (MiMoMTPLayers, MiMoModel) over transformers
// models/qwen2/modeling_qwen2.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// MiMoMTPLayers' tensors around its decoder layer.
void add_mimo_mtp_extras(ModelDescription& model, std::int64_t index, std::int64_t hidden) {
  const std::string prefix = fmt::format("model.mtp_layers.{}", index);
  model.extra_parameters.push_back({prefix + ".token_layernorm", "mtp", "RMSNorm", hidden});
  model.extra_parameters.push_back({prefix + ".hidden_layernorm", "mtp", "RMSNorm", hidden});
  model.extra_parameters.push_back(
      {prefix + ".input_proj", "mtp", "Linear", checked_mul(2 * hidden, hidden)});
  model.extra_parameters.push_back({prefix + ".final_layernorm", "mtp", "RMSNorm", hidden});
}

}  // namespace

ModelDescription build_mimo(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "MiMo (Qwen2 decoder, QKV bias, RMSNorm, SwiGLU, GQA, MTP layers)";

  DecoderLayout layout;
  layout.qkv_bias = true;  // Qwen2Attention: q/k/v always biased, o_proj never
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};
  layout.rotary_dim = rotary_dims(config, dims.heads.head_dim);
  // Qwen2's rule: windows only with use_sliding_window, and only from max_window_layers on.
  WindowRule windows;
  if (config.bool_or("use_sliding_window", false)) {
    windows = {config.int_or({"sliding_window"}, 0, 0, k_max_positions),
               WindowRule::Pattern::from_layer,
               config.int_or({"max_window_layers"}, 0, 0, k_max_layers)};
  }
  layout.windows = resolve_windows(config, layers, windows);
  model.stacks.push_back(decoder_stack(hidden, layers, dims.heads, layout));

  const std::int64_t mtp_layers = config.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  if (mtp_layers > 0) {
    DecoderLayout mtp_layout = layout;
    mtp_layout.windows.clear();  // the MTP layer's attention is built as layer 0: full context
    Stack mtp = decoder_stack(hidden, mtp_layers, dims.heads, mtp_layout);
    mtp.name = "mtp";
    mtp.mtp = true;
    mtp.final_norm.reset();  // each layer's final_layernorm is an extra below
    for (std::int64_t i = 0; i < mtp_layers; ++i) add_mimo_mtp_extras(model, i, hidden);
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
    model.notes.push_back(
        fmt::format("{} MTP layer(s) stored as model.mtp_layers.* (embedding and head shared): in "
                    "parameters.total and parameters.mtp, not in active",
                    mtp_layers));
  }
  note_defaults(model, config, "MiMoConfig (Qwen2Config)",
                {{"num_nextn_predict_layers", "0"},
                 {"hidden_act", "silu"},
                 {"use_sliding_window", "false"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
