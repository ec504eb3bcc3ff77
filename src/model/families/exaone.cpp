// EXAONE 3.0 / 3.5 (model_type exaone, trust_remote_code; LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct,
// EXAONE-3.5-2.4B/7.8B/32B-Instruct, EXAONE-Deep): a Llama-shaped decoder under GPT-2-style
// names. transformer.wte; per layer ln_1 (RMSNorm), attn.attention.{q,k,v,out}_proj (no biases,
// GQA), ln_2, mlp.c_fc_0 (gate) / c_fc_1 (up) / c_proj (down) SwiGLU; transformer.ln_f; lm_head
// (tied per tie_word_embeddings, which PretrainedConfig defaults to true: EXAONE-3.5-2.4B ties).
// Heads are always hidden_size / num_attention_heads wide. EXAONE 4.0 is model_type exaone4.
// Tensor list: the repos' remote code modeling_exaone.py / configuration_exaone.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_exaone(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  // ExaoneConfig maps num_hidden_layers onto num_layers; both present must agree.
  const std::int64_t layers =
      config.require_int({"num_layers", "num_hidden_layers"}, 1, k_max_layers);
  // intermediate_size null or 0 means 4 x hidden_size in ExaoneConfig.
  std::int64_t intermediate = config.int_or({"intermediate_size"}, 0, 0, k_max_width);
  if (intermediate == 0) intermediate = checked_mul(4, hidden);
  // ExaoneSelfAttention ignores any head_dim key: heads are hidden / heads wide.
  const HeadShape shape =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  if (const std::optional<std::int64_t> head_dim =
          config.optional_int({"head_dim"}, 1, k_max_width);
      head_dim && *head_dim != shape.head_dim) {
    config.fail("head_dim",
                fmt::format("= {} contradicts hidden_size / num_attention_heads = {}, which "
                            "EXAONE's attention always uses",
                            *head_dim, shape.head_dim));
  }

  fill_decoder_basics(model, config, vocab, hidden, true);
  if (!config.has("max_position_embeddings")) model.max_position_embeddings = 2048;
  model.position = PositionKind::rope;
  model.family = "EXAONE 3.x (decoder-only, RoPE, RMSNorm, SwiGLU, GQA; GPT-2-style names)";
  note_defaults(model, config, "ExaoneConfig",
                {{"num_key_value_heads", "num_attention_heads"},
                 {"intermediate_size", "4 x hidden_size"},
                 {"activation_function", "silu"},
                 {"max_position_embeddings", "2048"},
                 {"tie_word_embeddings", "true (PretrainedConfig)"}});
  DecoderLayout layout;
  layout.mlp = Mlp{MlpKind::gated, config.optional_string("activation_function").value_or("silu"),
                   hidden,         intermediate,
                   false,          false,
                   false};
  layout.rotary_dim = shape.head_dim;
  // GPT-2-style module names: transformer.h.N.ln_1 / attn.attention / ln_2, transformer.ln_f.
  layout.attention_name = "attn.attention";
  layout.norm_names = {"ln_1", "ln_2"};
  layout.final_norm_name = "ln_f";
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  // The rotary inv_freq buffers (one in the model, one per attention) are non-persistent.
  return model;
}

}  // namespace trace::family
