// Checkpoint namings of MiniCPM-V (naming.hpp). The sources, commits and tensor counts are in
// tests/data/configs/SOURCES-minicpmv-names.md.
#include "naming.hpp"

namespace trace::checkpoint {

// MiniCPMV (openbmb's remote modeling_minicpmv.py: MiniCPM-Llama3-V 2.5, MiniCPM-V 2.6, 4.0,
// 4.5) as openbmb's uploads store it, the state dict of its three attributes:
//  - llm: the release's <Text>ForCausalLM (Llama 3, Qwen2, Llama, Qwen3) in transformers' own
//    names under llm.: llm.model.{embed_tokens, layers.N.*, norm}, llm.lm_head (untied); no
//    rotary inv_freq (non-persistent since transformers 4.31; the 2.6 index lists none);
//  - vpm: the SigLIP / Idefics2 tower, vpm.embeddings.{patch_embedding (w+b),
//    position_embedding}, vpm.encoder.layers.N.{layer_norm1, layer_norm2,
//    self_attn.{q,k,v,out}_proj, mlp.fc1, mlp.fc2} (all biased), vpm.post_layernorm beside the
//    encoder;
//  - resampler: the bare query [Q, D] and proj [D, D], kv_proj.weight [D, d], nn.
//    MultiheadAttention's attn.in_proj_weight [3D, D] / attn.in_proj_bias [3D] and
//    attn.out_proj (w+b), ln_q / ln_kv / ln_post (w+b); pos_embed (and 4.5's temporal table) are
//    non-persistent buffers, never stored.
// MiniCPM-V 2.6's index (789 tensors, the text part renamed for RKLLM), vLLM's minicpmv.py
// (get_mm_mapping: language_model "llm", connector "resampler", tower_model "vpm"), llama.cpp's
// minicpmv-surgery.py (the "resampler" / "vpm" prefixes, model.llm saved alone) and loaders of
// the official MiniCPM-V / MiniCPM-o files (llm.model.*, llm.lm_head.weight, resampler.*).
std::optional<Naming> minicpmv_naming(const std::string& type) {
  if (type != "minicpmv") return std::nullopt;
  return Naming{.label = "MiniCPM-V (llm.model.*, vpm.encoder.layers.N, resampler.*)",
                .root = "llm.model.",
                .renames = {{"", "lm_head.", "llm.lm_head."},
                            // The SigLIP tower's spellings (naming.cpp's clip_tower_renames).
                            {"vpm.", ".encoder.post_layernorm", ".post_layernorm"},
                            {"vpm.", ".self_attn.o_proj.", ".self_attn.out_proj."},
                            {"vpm.", ".mlp.up_proj.", ".mlp.fc1."},
                            {"vpm.", ".mlp.down_proj.", ".mlp.fc2."}},
                .vision_root = "",
                .vision_layers = "layers",
                .vision_stack = "vpm.encoder"};
}

}  // namespace trace::checkpoint
