// Checkpoint namings of GLM-4V (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

// Glm4vForConditionalGeneration (GLM-4.1V-9B-Thinking / -Base, GLM-4.6V-Flash) and
// Glm4vMoeForConditionalGeneration (GLM-4.5V, GLM-4.6V) as zai-org's uploads store them: the
// text model under model.language_model.* (glm4v: GLM-4-0414's layer, the four sandwich norms and
// a fused mlp.gate_up_proj; glm4v_moe: GLM-4.5-Air's, layer 0 dense, then mlp.gate with its F32
// e_score_correction_bias, one tensor per expert and projection mlp.experts.E.*, and
// mlp.shared_experts.*; no MTP layer), lm_head.weight at the top, and the tower under
// model.visual.*: blocks.N.{norm1, norm2, attn.qkv, attn.proj, mlp.gate_proj / up_proj /
// down_proj}, post_layernorm, and the family's extras under their own names (patch_embed.proj,
// post_conv_layernorm, embeddings.position_embedding, downsample, merger.{proj,
// post_projection_norm, gate_proj, up_proj, down_proj}). Sources: the official Megatron-to-HF
// converters convert_glm4v(_moe)_mgt_weights_to_hf.py, vLLM's glm4_1v.py hf_to_vllm_mapper
// (lm_head., model.language_model., model.visual.), and GLM-4.5V's 18,106-tensor shard scan
// (tests/data/configs/SOURCES-glm4v-names.md). glm46v, transformers' wrapper type, saves the same
// modules.
std::optional<Naming> glm4v_naming(const std::string& type) {
  if (type != "glm4v" && type != "glm4v_moe" && type != "glm46v") return std::nullopt;
  const std::string_view label =
      type == "glm4v" ? "GLM-4.1V (model.language_model.*, model.visual.*)"
      : type == "glm4v_moe"
          ? "GLM-4.5V (model.language_model.*, experts per expert, model.visual.*)"
          : "GLM-4.6V (model.language_model.*, model.visual.*)";
  return Naming{.label = label,
                .root = "model.language_model.",
                .renames = {{"visual.", ".attn.qkv_proj.", ".attn.qkv."},
                            {"visual.", ".attn.o_proj.", ".attn.proj."}},
                .vision_root = "model."};
}

}  // namespace trace::checkpoint
