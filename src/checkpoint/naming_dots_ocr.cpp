// Checkpoint namings of dots.ocr and DeepSeek-OCR (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

// DotsOCRForCausalLM (rednote-hilab's remote modeling_dots_ocr.py, a Qwen2ForCausalLM with a
// vision_tower beside it): Qwen2's model.* and lm_head, the tower at the top level as
// modeling_dots_vision.py names it: vision_tower.patch_embed.patchifier.{proj (Conv2d + bias),
// norm}, blocks.N.{norm1, norm2, attn.qkv, attn.proj, mlp.fc1 (gate), mlp.fc3 (up), mlp.fc2
// (down)}, post_trunk_norm, merger.{ln_q, mlp.0, mlp.2}. vLLM's dots_ocr.py hf_to_vllm_mapper
// reads exactly these (.attn.qkv., .attn.proj., fc1 / fc3 stacked, model. and lm_head. at the
// top); tests/data/configs/SOURCES-ocr-names.md.
std::optional<Naming> dots_ocr_naming(const std::string& type) {
  if (type != "dots_ocr") return std::nullopt;
  return Naming{.label = "dots.ocr (model.*, vision_tower.blocks.N, attn.qkv, mlp.fc1/fc2/fc3)",
                .renames = {{"vision_tower.", ".attn.qkv_proj.", ".attn.qkv."},
                            {"vision_tower.", ".attn.o_proj.", ".attn.proj."},
                            {"vision_tower.", ".mlp.gate_proj.", ".mlp.fc1."},
                            {"vision_tower.", ".mlp.up_proj.", ".mlp.fc3."},
                            {"vision_tower.", ".mlp.down_proj.", ".mlp.fc2."}},
                .vision_root = ""};
}

// DeepseekOCRForCausalLM (deepseek-ai/DeepSeek-OCR's remote modeling_deepseekocr.py; model_type
// deepseek_vl_v2, tagged "deepseek_ocr" by its family): unlike DeepSeek-VL2, every tensor sits
// under DeepseekOCRModel's model.*, the head at lm_head. The DeepSeek-V2 text layers keep their
// names; the SAM ViT-B as sam_vary_sdpa.py names it, model.sam_model.blocks.N.{norm1, norm2,
// attn.qkv, attn.proj, attn.rel_pos_h / rel_pos_w, mlp.lin1, mlp.lin2}; the CLIP-L of
// clip_sdpa.py as model.vision_model.transformer.layers.N.{layer_norm1, layer_norm2,
// self_attn.qkv_proj, self_attn.out_proj, mlp.fc1, mlp.fc2}; the family's extras (patch_embed,
// pos_embed, neck.0-3, net_2, net_3, embeddings.*, pre_layrnorm) at their own names, then
// model.projector.layers, model.image_newline, model.view_seperator. The upload's safetensors
// listing (2,710 tensors) names each; tests/data/configs/SOURCES-ocr-names.md.
Naming deepseek_ocr_naming() {
  return Naming{.label =
                    "DeepSeek-OCR (model.*, model.sam_model.blocks.N, "
                    "model.vision_model.transformer.layers.N, model.projector)",
                .renames = {{"sam_model.", ".self_attn.qkv_proj.", ".attn.qkv."},
                            {"sam_model.", ".self_attn.o_proj.", ".attn.proj."},
                            {"sam_model.", ".mlp.up_proj.", ".mlp.lin1."},
                            {"sam_model.", ".mlp.down_proj.", ".mlp.lin2."},
                            {"vision_model.", ".self_attn.o_proj.", ".self_attn.out_proj."},
                            {"vision_model.", ".mlp.up_proj.", ".mlp.fc1."},
                            {"vision_model.", ".mlp.down_proj.", ".mlp.fc2."}},
                .vision_root = "model.",
                .vision_stack = "sam_model",
                .other_towers = {{"vision_model", "transformer.layers"}}};
}

}  // namespace trace::checkpoint
