// Bamba (model_type bamba: ibm-ai-platform/Bamba-9B, Bamba-9B-v1 / -v2, the ibm-fms/Bamba-9B-2T /
// -1.8T intermediate checkpoints): a Llama-style pre-norm decoder whose mixer is Mamba-2 except on
// the layers listed in attn_layer_indices, which run full GQA attention. Every layer is
//   input_layernorm -> mixer -> pre_ff_layernorm -> feed_forward (SwiGLU gate/up/down_proj)
//  mixer "mamba" (BambaMixer): in_proj [d_inner + conv_dim + heads, H] (+bias if mamba_proj_bias),
//    conv1d over x|B|C (conv_dim = d_inner + 2 groups N; +bias if mamba_conv_bias), dt_bias /
//    A_log / D per head, gated RMSNorm over d_inner, out_proj [H, d_inner];
//    d_inner = int(mamba_expand x H) = mamba_n_heads x mamba_d_head ("auto" = d_inner / heads);
//  mixer "self_attn": q/k/v/o_proj without biases, RoPE on the first half of each head (the config
//    class forces partial_rotary_factor 0.5; vLLM reads attn_rotary_emb instead).
// The final norm is final_layernorm; the head is untied by default.
// Tensor list: transformers models/bamba/modeling_bamba.py (configuration_bamba.py for defaults);
// the counts are derived in tests/data/configs/SOURCES-bamba.md.
#include <fmt/format.h>

#include <algorithm>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_bamba(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  model.ssm_cache_dtype = config.optional_string("mamba_ssm_cache_dtype").value_or("");

  // BambaConfig defaults num_key_value_heads to 8 when the key is absent (an explicit null means
  // one per query head, which read_head_shape already gives).
  HeadShape heads = dims.heads;
  if (!config.json().contains("num_key_value_heads")) {
    heads.num_kv_heads = 8;
    if (heads.num_heads % heads.num_kv_heads != 0) {
      config.fail("num_attention_heads",
                  fmt::format("= {} is not a multiple of BambaConfig's default of 8 key/value "
                              "heads; set num_key_value_heads",
                              heads.num_heads));
    }
  }

  // Attention layers by index; every other layer is Mamba-2. Absent, null or empty: all Mamba.
  const std::vector<std::int64_t> listed = read_layer_list(config, "attn_layer_indices", layers);
  std::vector<bool> attention(static_cast<std::size_t>(layers), false);
  for (const std::int64_t index : listed) attention[static_cast<std::size_t>(index)] = true;
  const auto attention_count =
      static_cast<std::int64_t>(std::count(attention.begin(), attention.end(), true));
  const std::int64_t mamba_count = layers - attention_count;

  // BambaConfig overwrites partial_rotary_factor with 0.5 whatever the config says, so
  // transformers rotates head_dim / 2 dims; vLLM rotates attn_rotary_emb dims. Refuse a config
  // on which the two would run different models.
  const std::int64_t rotary_dim = heads.head_dim / 2;
  if (const std::optional<std::int64_t> stated =
          config.optional_int({"attn_rotary_emb"}, 0, heads.head_dim);
      stated && *stated != rotary_dim) {
    config.fail("attn_rotary_emb",
                fmt::format("= {}, but transformers' BambaConfig fixes the rotary width at half "
                            "of head_dim ({}); vLLM and transformers would disagree",
                            *stated, rotary_dim));
  }

  DecoderLayout layout;
  // BambaConfig pins attention_bias / mlp_bias to false; a config key would still override them.
  layout.qkv_bias = layout.o_bias = config.bool_or("attention_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  layout.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, mlp_bias, mlp_bias, false};
  layout.rotary_dim = rotary_dim;
  layout.norm_names = {"input_layernorm", "pre_ff_layernorm"};
  layout.final_norm_name = "final_layernorm";
  Stack stack = decoder_stack(hidden, layers, heads, layout);

  // decoder_stack gives every layer attention; the Mamba layers swap it for the mixer.
  std::optional<Ssm> ssm;
  if (mamba_count > 0) ssm = read_mamba2_keys(config, hidden);
  for (std::int64_t i = 0; i < layers; ++i) {
    if (attention[static_cast<std::size_t>(i)]) continue;
    Block& block = stack.blocks[static_cast<std::size_t>(i)];
    block.attention = Attention{};
    block.attention.kind = AttentionKind::none;
    block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = hidden;
    block.ssm = ssm;
  }
  model.stacks.push_back(std::move(stack));
  model.position = attention_count > 0 ? PositionKind::rope : PositionKind::none;
  model.family =
      fmt::format("Bamba ({})", attention_count == 0 ? "Mamba-2"
                                : mamba_count == 0   ? "attention-only"
                                                     : "hybrid Mamba-2 / attention, SwiGLU FFN");

  note_defaults(
      model, config, "BambaConfig",
      {{"num_key_value_heads", "8"}, {"hidden_act", "silu"}, {"tie_word_embeddings", "false"}});
  if (ssm) {
    note_defaults(model, config, "BambaConfig (Mamba-2)",
                  {{"mamba_expand", "2"},
                   {"mamba_n_heads", "128"},
                   {"mamba_d_head", "auto"},
                   {"mamba_d_state", "256"},
                   {"mamba_n_groups", "1"},
                   {"mamba_d_conv", "4"},
                   {"mamba_chunk_size", "256"},
                   {"mamba_conv_bias", "true"},
                   {"mamba_proj_bias", "false"}});
  }
  if (listed.empty()) {
    model.notes.push_back("no attn_layer_indices: every layer is Mamba-2 (BambaConfig's default)");
  }
  model.notes.push_back(
      fmt::format("{} Mamba-2 layers, {} attention layers (RoPE on {} of {} dims per head)",
                  mamba_count, attention_count, rotary_dim, heads.head_dim));
  return model;
}

}  // namespace trace::family
