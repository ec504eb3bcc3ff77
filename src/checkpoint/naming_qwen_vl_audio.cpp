// Checkpoint namings of Qwen-VL and Qwen2-Audio (naming.hpp). Sources:
// tests/data/configs/SOURCES-qwen_vl-qwen2_audio-names.md.
#include "naming.hpp"

namespace trace::checkpoint {

namespace {

// QWenLMHeadModel (the first Qwen generation's remote modeling_qwen.py: Qwen-7B / 14B / 72B and
// Qwen-VL / Qwen-VL-Chat, model_type qwen) as its uploads store it: transformer.wte,
// transformer.h.N.{ln_1, attn.c_attn (fused q, k, v; always biased), attn.c_proj, ln_2, mlp.w2
// (the SiLU gate), mlp.w1 (up), mlp.c_proj (down)}, transformer.ln_f, an untied lm_head at the top;
// nn.Linear, weights [out, in]; rotary inv_freq not persistent. Qwen-VL's visual.py tower sits
// inside the transformer: transformer.visual.{conv1 (no bias), positional_embedding (a bare
// [256, width] Parameter), ln_pre, transformer.resblocks.N.{ln_1, attn.in_proj, attn.out_proj,
// ln_2, mlp.c_fc, mlp.c_proj} (all biased), attn_pool.{pos_embed, query (bare), kv_proj (no bias),
// attn (nn.MultiheadAttention: in_proj_weight, in_proj_bias, out_proj), ln_q, ln_kv}, ln_post,
// proj (bare)}. Qwen-VL-Chat's index (transformer.visual.transformer.resblocks.0.attn.in_proj.*),
// the printed module tree, vLLM's qwen.py / qwen_vl.py, rtp-llm's QWen / QWen-VL weight tables
// (every tower name) and llama.cpp's tensor map (mlp.w2 is the gate).
Naming qwen_naming() {
  return {.label = "Qwen remote code (transformer.h.N, c_attn, mlp.w1/w2, transformer.visual.*)",
          .root = "transformer.",
          .embedding = "wte",
          .renames = {{"visual.", ".attn.qkv_proj.", ".attn.in_proj."},
                      {"visual.", ".attn.o_proj.", ".attn.out_proj."},
                      {"visual.", ".mlp.up_proj.", ".mlp.c_fc."},
                      {"visual.", ".mlp.down_proj.", ".mlp.c_proj."},
                      {"transformer.h.", ".attn.qkv_proj.", ".attn.c_attn."},
                      {"transformer.h.", ".attn.o_proj.", ".attn.c_proj."},
                      {"transformer.h.", ".mlp.gate_proj.", ".mlp.w2."},
                      {"transformer.h.", ".mlp.up_proj.", ".mlp.w1."},
                      {"transformer.h.", ".mlp.down_proj.", ".mlp.c_proj."}},
          .layers = "h",
          .vision_root = "transformer.",
          .vision_layers = "transformer.resblocks"};
}

// Qwen2AudioForConditionalGeneration (transformers modeling_qwen2_audio.py; no conversion
// mapping) as Qwen/Qwen2-Audio-7B(-Instruct) store it: the Qwen2 text model under
// language_model.model.* with language_model.lm_head; the Whisper encoder copy under
// audio_tower.{conv1, conv2 (biased Conv1d), embed_positions (the stored sinusoidal table),
// layers.N.{self_attn.{q,k,v,out}_proj (k_proj bias-free), self_attn_layer_norm, fc1, fc2,
// final_layer_norm}, layer_norm} (avg_pooler holds nothing); multi_modal_projector.linear
// (biased). vLLM's qwen2_audio.py loads them by module path, llama.cpp's WhisperEncoderModel maps
// every audio_tower / multi_modal_projector name, rtp-llm reads the same prefixes.
Naming qwen2_audio_naming() {
  return {.label = "Qwen2-Audio (language_model.model.*, audio_tower.layers.N, projector)",
          .root = "language_model.model.",
          .renames = {{"audio_tower.", ".self_attn.o_proj.", ".self_attn.out_proj."},
                      {"audio_tower.", ".mlp.up_proj.", ".fc1."},
                      {"audio_tower.", ".mlp.down_proj.", ".fc2."},
                      {"", "lm_head.", "language_model.lm_head."}},
          .vision_root = "",
          .vision_layers = "layers",
          .vision_stack = "audio_tower"};
}

}  // namespace

std::optional<Naming> qwen_vl_audio_naming(const std::string& type) {
  if (type == "qwen") return qwen_naming();
  if (type == "qwen2_audio") return qwen2_audio_naming();
  return std::nullopt;
}

}  // namespace trace::checkpoint
