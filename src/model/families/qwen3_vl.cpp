// Qwen3-VL (model_type qwen3_vl: a Qwen3 dense text decoder) and Qwen3-VL-MoE (qwen3_vl_moe: a
// Qwen3-MoE text decoder, experts stored fused as gate_up_proj [E, H, 2I] and down_proj
// [E, I, H], the same count as per-expert Linears), each wrapping text_config around the
// Qwen3-VL vision tower in vision_config (qwen_vision.cpp: Conv3d patch embedding with bias,
// learned pos_embed, LayerNorm blocks, merger and one DeepStack merger per
// deepstack_visual_indexes entry). The text decoders are read by build_qwen3 / build_qwen3_moe
// from text_config; tie_word_embeddings and torch_dtype come from the top level where
// text_config leaves them out. Image tokens enter the text sequence, so the KV cache is the text
// decoder's.
// Tensor list: transformers models/qwen3_vl/modeling_qwen3_vl.py,
// models/qwen3_vl_moe/modeling_qwen3_vl_moe.py; derivations in tests/data/configs/SOURCES-vlm.md.
#include "family.hpp"

namespace trace::family {

namespace {

ModelDescription build_wrapper(const ConfigReader& config, bool moe) {
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  ModelDescription model = moe ? build_qwen3_moe(text) : build_qwen3(text);
  model.family = moe ? "Qwen3-VL-MoE (Qwen3-MoE decoder with M-RoPE + ViT, DeepStack mergers)"
                     : "Qwen3-VL (Qwen3 decoder with M-RoPE + ViT, DeepStack mergers)";
  add_qwen3_vl_vision(config.child("vision_config"), model.hidden_size, model);
  return model;
}

}  // namespace

ModelDescription build_qwen3_vl(const ConfigReader& config) { return build_wrapper(config, false); }

ModelDescription build_qwen3_vl_moe(const ConfigReader& config) {
  return build_wrapper(config, true);
}

}  // namespace trace::family
