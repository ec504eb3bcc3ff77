// NVIDIA Nemotron-4 / Minitron in transformers format (model_type nemotron:
// nvidia/Minitron-4B-Base, Minitron-8B-Base, Nemotron-Mini-4B-Instruct, nemotron-3-8b-base-4k-hf
// and their fine-tunes).
// A pre-norm decoder: LayerNorm1P (a LayerNorm with weight and bias whose weight is stored
// zero-centred and used as 1 + weight: the same tensors as nn.LayerNorm), GQA with partial RoPE,
// an explicit head_dim, and a non-gated squared-ReLU MLP (up_proj -> relu2 -> down_proj).
// attention_bias sets the bias of q/k/v/o, mlp_bias that of up/down; the head is untied.
// (Mistral-NeMo-Minitron-8B ships as model_type mistral; Nemotron-H is nemotron_h.cpp.)
// Tensor list: transformers models/nemotron/modeling_nemotron.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_nemotron(const ConfigReader& config) {
  ModelDescription model;
  // NemotronConfig ties nothing by default: lm_head is its own matrix.
  DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  HeadShape& shape = dims.heads;
  // Nemotron-Mini-4B-Instruct spells the head width kv_channels (Megatron's name), which
  // NemotronConfig does not read: transformers builds hidden / heads wide heads instead. Refuse a
  // config whose kv_channels would need another width rather than count the wrong tensors.
  if (!config.has("head_dim")) {
    if (const auto channels = config.optional_int({"kv_channels"}, 1, k_max_width)) {
      if (*channels != shape.head_dim) {
        config.fail("kv_channels",
                    fmt::format("is {}, but NemotronConfig ignores it and uses hidden_size / "
                                "num_attention_heads = {}; set 'head_dim' = {} explicitly",
                                *channels, shape.head_dim, *channels));
      }
    }
  }
  model.family = "Nemotron (decoder-only, partial RoPE, LayerNorm1P, GQA, squared-ReLU MLP)";

  // NemotronConfig reads only partial_rotary_factor (default 0.5). Early Minitron configs wrote
  // rope_percent / rope_percentage instead; transformers ignores those, so the default applies.
  std::int64_t rotary = shape.head_dim / 2;
  if (config.has("partial_rotary_factor")) {
    rotary = rotary_dims(config, shape.head_dim);
  } else if (config.has("rope_percent") || config.has("rope_percentage")) {
    model.notes.push_back(
        "rope_percent / rope_percentage are not read by NemotronConfig; partial_rotary_factor's "
        "default 0.5 applies");
  }

  const bool attention_bias = config.bool_or("attention_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  DecoderLayout layout;
  layout.norm_kind = NormKind::layer_norm;  // LayerNorm1P: weight and bias per norm
  layout.qkv_bias = layout.o_bias = attention_bias;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  const std::string activation = config.optional_string("hidden_act").value_or("relu2");
  layout.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, mlp_bias, mlp_bias, false};
  layout.rotary_dim = rotary;
  model.stacks.push_back(decoder_stack(hidden, dims.layers, shape, layout));
  note_defaults(model, config, "NemotronConfig",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"head_dim", "hidden_size / num_attention_heads"},
                 {"partial_rotary_factor", "0.5"},
                 {"hidden_act", "relu2"},
                 {"attention_bias", "false"},
                 {"mlp_bias", "false"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
