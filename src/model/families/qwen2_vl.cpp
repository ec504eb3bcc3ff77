// Qwen2-VL (model_type qwen2_vl) and Qwen2.5-VL (qwen2_5_vl): a Qwen2 text decoder (q/k/v
// biases, SwiGLU, RMSNorm, untied head on the 7B / 72B; M-RoPE splits the rotary dims over time,
// height and width without adding tensors) and the ViT in `visual.*` (qwen_vision.cpp). The
// original configs keep the text keys at the top level; configs re-saved by transformers >= 4.52
// also nest them in text_config, which is read first when present. The KV cache and activations
// are the text decoder's; image tokens enter the text sequence as ordinary tokens, so a request's
// context must count them (about (H/28) x (W/28) per image at the default 2 x 2 merge).
// Tensor lists: transformers models/qwen2_vl/modeling_qwen2_vl.py,
// models/qwen2_5_vl/modeling_qwen2_5_vl.py; derivations in tests/data/configs/SOURCES-vlm.md and
// docs/parameters.md section 12.
#include "family.hpp"

namespace trace::family {

namespace {

ModelDescription qwen_vl_text(const ConfigReader& config) {
  if (config.has("text_config")) {
    nlohmann::json storage;
    return build_qwen2(nested_text_config(config, storage));
  }
  return build_qwen2(config);
}

}  // namespace

ModelDescription build_qwen2_vl(const ConfigReader& config) {
  ModelDescription model = qwen_vl_text(config);
  model.family = "Qwen2-VL (Qwen2 decoder with M-RoPE + ViT, 2x2 patch merger)";
  add_qwen2_vl_vision(config.child("vision_config"), model);
  return model;
}

ModelDescription build_qwen2_5_vl(const ConfigReader& config) {
  ModelDescription model = qwen_vl_text(config);
  model.family = "Qwen2.5-VL (Qwen2 decoder with M-RoPE + windowed ViT, SwiGLU, 2x2 patch merger)";
  add_qwen2_5_vl_vision(config.child("vision_config"), model);
  return model;
}

}  // namespace trace::family
