// InternLM2 / InternLM2.5 (model_type internlm2, remote code InternLM2ForCausalLM):
// internlm2-chat-1_8b / 7b / 20b, internlm2_5-1_8b / 7b / 20b (-chat, -1m). A Llama-shaped
// decoder with its own tensor names: model.tok_embeddings [vocab, h]; per layer attention_norm,
// attention.wqkv [(heads + 2 x kv_heads) x head_dim, h] holding q, k and v of each kv group
// packed together, attention.wo [h, h], ffn_norm, feed_forward.w1 / w3 [inter, h] and
// w2 [h, inter] (SwiGLU, never biased); model.norm; output [vocab, h] (untied by default).
// The config's `bias` puts a bias on wqkv and wo only.
// Tensor list: modeling_internlm2.py / configuration_internlm2.py of the internlm/* repos.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_internlm2(const ConfigReader& config) {
  // The reward models (internlm2-*-reward) swap `output` for a v_head scalar head; the classes
  // other than the causal LM were not checked, so they are refused rather than miscounted.
  const std::string architecture = first_architecture(config);
  if (!architecture.empty() && architecture != "InternLM2ForCausalLM") {
    config.fail("architectures",
                fmt::format("names {}; trace counts only InternLM2ForCausalLM (the reward and "
                            "classification heads are not modelled)",
                            architecture));
  }

  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // InternLM2Attention sizes heads as hidden_size / num_attention_heads and reads no head_dim.
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  if (config.has("head_dim") &&
      config.require_int({"head_dim"}, 1, k_max_width) != shape.head_dim) {
    config.fail("head_dim", fmt::format("differs from hidden_size / num_attention_heads = {}, "
                                        "the only head width modeling_internlm2.py builds",
                                        shape.head_dim));
  }

  fill_decoder_basics(model, config, vocab, hidden, false, {"max_position_embeddings"});
  if (model.max_position_embeddings == 0) model.max_position_embeddings = 2048;
  model.family = "InternLM2 (remote code; packed GQA wqkv, RMSNorm, SwiGLU, RoPE)";
  model.position = PositionKind::rope;
  note_defaults(model, config, "InternLM2Config",
                {{"bias", "true"},
                 {"num_key_value_heads", "num_attention_heads"},
                 {"tie_word_embeddings", "false"},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", "2048"}});
  // Every release config says bias: false; the class default (true) biases wqkv and wo.
  const bool bias = config.bool_or("bias", true);

  DecoderLayout layout;
  layout.qkv_bias = layout.o_bias = bias;
  layout.fused_qkv = true;
  layout.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"),
                   hidden,         intermediate,
                   false,          false,
                   false};
  layout.rotary_dim = shape.head_dim;  // RoPE over the whole head
  // model.layers.N.attention.wqkv / wo, feed_forward.w1 / w3 / w2, attention_norm, ffn_norm.
  layout.attention_name = "attention";
  layout.norm_names = {"attention_norm", "ffn_norm"};
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  // The rotary inv_freq / cos / sin caches are registered with persistent=False: never stored.
  return model;
}

}  // namespace trace::family
