// Baichuan (model_type baichuan, remote code): Baichuan-7B (BaiChuanForCausalLM), Baichuan-13B,
// Baichuan2-7B and Baichuan2-13B Base / Chat (BaichuanForCausalLM). One layout for all: model.
// embed_tokens [vocab, h]; per layer input_layernorm, self_attn.W_pack [3h, h] (q, k, v of all
// heads, no bias, no GQA), self_attn.o_proj [h, h], post_attention_layernorm, mlp.gate_proj /
// up_proj [inter, h] and down_proj [h, inter] (SwiGLU, no bias); model.norm; lm_head [vocab, h]
// (Baichuan 2's NormHead normalises the rows at run time but stores the same one matrix).
// The 7B models use RoPE and size it by max_position_embeddings; the 13B models use ALiBi and
// size their mask by model_max_length. Neither stores a buffer in the published configs' code:
// Baichuan2's rotary tables are plain attributes and the ALiBi mask is persistent=False; the
// first Baichuan-7B registered inv_freq as a persistent buffer (see stored_extras).
// Tensor list: modeling_baichuan.py / configuration_baichuan.py of the baichuan-inc/* repos.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

ModelDescription build_baichuan(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  // BaichuanAttention: head_dim = hidden / heads, W_pack is 3 x hidden wide (no kv grouping).
  const HeadShape shape = read_head_shape(config, hidden, {"num_attention_heads"}, {}, false);
  if (const std::optional<std::int64_t> kv =
          config.optional_int({"num_key_value_heads"}, 1, k_max_heads);
      kv && *kv != shape.num_heads) {
    config.fail("num_key_value_heads",
                fmt::format("= {} differs from num_attention_heads = {}; Baichuan's W_pack packs "
                            "full-width q, k and v",
                            *kv, shape.num_heads));
  }

  // The RoPE modeling file (the 7B ones) reads max_position_embeddings; the ALiBi one (13B)
  // reads only model_max_length and its config class has no max_position_embeddings, so the
  // key's presence tells the two apart. vLLM decides by hidden_size == 4096 instead; both agree
  // on every baichuan-inc release.
  const bool rope = config.has("max_position_embeddings");
  if (!rope && !config.has("model_max_length")) {
    config.fail("model_max_length",
                "is missing, and so is max_position_embeddings; a Baichuan config gives "
                "max_position_embeddings (RoPE, 7B) or model_max_length (ALiBi, 13B)");
  }
  fill_decoder_basics(model, config, vocab, hidden, false,
                      {rope ? "max_position_embeddings" : "model_max_length"});
  model.position = rope ? PositionKind::rope : PositionKind::alibi;
  model.family = rope ? "Baichuan (remote code; W_pack qkv, RMSNorm, SwiGLU, RoPE)"
                      : "Baichuan (remote code; W_pack qkv, RMSNorm, SwiGLU, ALiBi)";
  if (rope != (hidden == 4096)) {
    model.notes.push_back(fmt::format(
        "positions taken as {} from the {} key; vLLM would pick {} from hidden_size = {}",
        rope ? "RoPE" : "ALiBi", rope ? "max_position_embeddings" : "model_max_length",
        rope ? "ALiBi" : "RoPE", hidden));
  }
  note_defaults(model, config, "BaichuanConfig",
                {{"tie_word_embeddings", "false"}, {"hidden_act", "silu"}});

  DecoderLayout layout;
  layout.fused_qkv = true;  // W_pack
  layout.mlp = Mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("silu"),
                   hidden,         intermediate,
                   false,          false,
                   false};
  layout.rotary_dim = rope ? shape.head_dim : 0;
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));
  if (rope) {
    // Baichuan-7B's modeling file registers inv_freq as a persistent buffer, so its
    // pytorch_model.bin may hold one per layer; Baichuan2-7B keeps it as a plain attribute.
    model.stored_extras.push_back(StoredExtra{
        "model.layers.*.self_attn.rotary_emb.inv_freq", layers, shape.head_dim / 2, "F32", false,
        "RoPE frequency buffer: persistent in Baichuan-7B's modeling file, a plain attribute "
        "(not stored) in Baichuan2-7B's; never a parameter"});
  }
  return model;
}

}  // namespace trace::family
