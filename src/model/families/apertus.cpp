// Apertus (model_type apertus, ApertusForCausalLM): swiss-ai/Apertus-8B-2509, Apertus-70B-2509 and
// their -Instruct-2509 checkpoints. A Llama-layout pre-norm decoder (RMSNorm, GQA, Llama-3 RoPE)
// whose two norms are named attention_layernorm / feedforward_layernorm, with per-head RMSNorm
// QK-norm (q_norm / k_norm, always built) and an ungated MLP: up_proj -> xIELU -> down_proj, no
// biases. xIELU holds two learnable scalars per layer, mlp.act_fn.alpha_p and alpha_n (shape [1]),
// and two buffers the checkpoints store too, mlp.act_fn.beta and eps (one value each, BF16).
// Checkpoint names: transformers' under model.* (embed_tokens, layers.N.self_attn.{q,k,v,o}_proj,
// q_norm, k_norm, attention_layernorm, feedforward_layernorm, mlp.{up,down}_proj, mlp.act_fn.*,
// norm), lm_head.
// Tensor list: transformers models/apertus/modular_apertus.py (modeling_apertus.py) and
// activations.py XIELUActivation.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

// Keys the remote-code configs carry (qk_norm, post_norm, mlp_bias) that ApertusForCausalLM
// ignores: it always builds QK-norm, pre-norms and bias-free MLPs. A config asking otherwise
// describes a model transformers would not load as written.
void refuse_ignored_switches(const ConfigReader& config) {
  const nlohmann::json& json = config.json();
  const auto is = [&](const char* key, bool value) {
    return json.contains(key) && json.at(key).is_boolean() && json.at(key).get<bool>() == value;
  };
  if (is("qk_norm", false)) {
    config.fail("qk_norm", "is false, but ApertusForCausalLM always builds q_norm / k_norm");
  }
  if (is("post_norm", true)) {
    config.fail("post_norm", "is true, but ApertusForCausalLM only builds pre-norm layers");
  }
  if (is("mlp_bias", true)) {
    config.fail("mlp_bias", "is true, but ApertusMLP builds up_proj / down_proj without bias");
  }
}

}  // namespace

ModelDescription build_apertus(const ConfigReader& config) {
  ModelDescription model;
  refuse_ignored_switches(config);
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Apertus (decoder-only, Llama-3 RoPE, RMSNorm, QK-norm, xIELU MLP, GQA)";
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 65536;
  const std::string activation = config.optional_string("hidden_act").value_or("xielu");
  const bool attention_bias = config.bool_or("attention_bias", false);

  DecoderLayout layout;
  layout.norm_names = {"attention_layernorm", "feedforward_layernorm"};
  layout.qk_norm = DecoderLayout::QkNorm::per_head;
  layout.qkv_bias = layout.o_bias = attention_bias;
  layout.mlp = Mlp{MlpKind::plain, activation, hidden, intermediate, false, false, false};
  layout.rotary_dim = rotary_dims(config, dims.heads.head_dim);
  model.stacks.push_back(decoder_stack(hidden, layers, dims.heads, layout));

  // Only the xIELU activation has weights; any other hidden_act comes from ACT2FN, weightless.
  if (activation == "xielu") {
    for (std::int64_t i = 0; i < layers; ++i) {
      const std::string prefix = fmt::format("model.layers.{}.mlp.act_fn.", i);
      model.extra_parameters.push_back({prefix + "alpha_p", "mlp", "xIELU", 1});
      model.extra_parameters.push_back({prefix + "alpha_n", "mlp", "xIELU", 1});
    }
    for (const char* buffer : {"beta", "eps"}) {
      model.stored_extras.push_back(StoredExtra{
          fmt::format("model.layers.*.mlp.act_fn.{}", buffer), layers, 1,
          model.torch_dtype == "float32" ? "F32" : "BF16", true,
          "xIELU constant (a persistent buffer, not a parameter); the Hub's safetensors total "
          "includes it"});
    }
  }
  note_defaults(model, config, "ApertusConfig",
                {{"hidden_act", "xielu"},
                 {"attention_bias", "false"},
                 {"max_position_embeddings", "65536"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
