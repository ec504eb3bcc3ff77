// Checkpoint namings of GLM-5.3-Flash (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

// GLM-5.3-Flash (Glm5NextForConditionalGeneration) as zai-org/GLM-5.3-Flash(-BF16) store it:
// the text model under model.language_model.*: embed_tokens, layers.N.{input_layernorm,
// post_attention_layernorm, hc_attn_{fn,base,scale}, hc_ffn_{fn,base,scale}, self_attn.*, mlp.*},
// norm; KDA layers' self_attn.{q,k,v}_proj, {q,k,v}_conv1d, f_a_proj, f_b_proj, b_proj, g_a_proj,
// g_b_proj, A_log [heads] and dt_bias (F32), o_norm, o_proj; sparse-attention layers' MLA
// (q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj) and
// self_attn.indexer.{wq_b, wk, k_norm, weights_proj, index_kpool_compress_ape,
// index_kpool_compress_gate}; mlp.gate.weight with its F32 e_score_correction_bias, one tensor per
// expert and projection mlp.experts.E.{gate,up,down}_proj, mlp.shared_experts.*; the MTP layer
// as layers.{num_hidden_layers} (enorm, hnorm, eh_proj, shared_head.norm, no hc_* tensors);
// lm_head.weight at the top; the tower under model.visual.* (blocks.N.{norm1, norm2, attn.qkv,
// attn.proj, attn.q_norm, attn.k_norm, mlp.{gate,up,down}_proj}, patch_embed.proj,
// post_layernorm, downsample, merger.*). Sources: vLLM glm5_next.py, transformers
// modeling_glm5_next.py and the published tensor table (tests/data/configs/
// SOURCES-glm5_next-names.md).
std::optional<Naming> glm5_next_naming(const std::string& type) {
  if (type != "glm5_next") return std::nullopt;
  return Naming{.label =
                    "GLM-5.3-Flash (model.language_model.*, hc_* per layer, MTP as "
                    "layers.N, model.visual.*)",
                .root = "model.language_model.",
                .renames = {{"visual.", ".attn.qkv_proj.", ".attn.qkv."},
                            {"visual.", ".attn.o_proj.", ".attn.proj."}},
                .mtp_after_layers = true,
                .vision_root = "model.",
                .kda_a_log_vector = true,
                .mhc_sites = {"attn", "ffn"},
                .indexer_kpool = true};
}

}  // namespace trace::checkpoint
