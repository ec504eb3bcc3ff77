// Checkpoint namings of LongCat-Flash (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

// LongCat-Flash (meituan-longcat/LongCat-Flash-Chat, -Thinking), as vLLM's longcat_flash.py /
// longcat_flash_mtp.py, SGLang's longcat_flash(_nextn).py and Megatron-Bridge's LongCatFlashBridge
// read the uploads (tests/data/configs/SOURCES-longcat-names.md): model.embed_tokens,
// model.layers.N.{input_layernorm.{0,1}, post_attention_layernorm.{0,1}, self_attn.{0,1}.* (MLA:
// q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj),
// mlps.{0,1}.{gate,up,down}_proj, mlp.router.classifier [E + zero experts, H],
// mlp.router.e_score_correction_bias [E + zero experts], mlp.experts.E.{gate,up,down}_proj},
// model.norm, lm_head; the MTP layer as model.mtp.{embed_tokens, layers.0.{eh_proj, enorm.m,
// hnorm.m, input_layernorm, post_attention_layernorm, self_attn.*, transformer_layer.mlp.*},
// norm}. trace's blocks 2N and 2N + 1 are layer N's sub-layers 0 and 1 (the MoE with the first).
// The routers' dtype is not published (no index or header was found): the classifier is expected
// at the checkpoint's dtype and the correction bias in F32, as the storage estimate counts them,
// and each reconciles in the other (the engines build both in F32, router_dtype float32).
std::optional<Naming> longcat_naming(const std::string& type) {
  if (type != "longcat_flash") return std::nullopt;
  return Naming{
      .label = "LongCat-Flash (model.layers.N.{self_attn,mlps}.{0,1}, mlp.router, model.mtp.*)",
      .renames = {{"", ".mlp.gate.e_score_correction_bias.",
                   ".mlp.router.e_score_correction_bias."},
                  {"", ".mlp.gate.", ".mlp.router.classifier."},
                  {"model.mtp.layers.", ".mlp.", ".transformer_layer.mlp."}},
      .sub_layers = {{{"", ".mlp.gate_proj.", ".mlps.0.gate_proj."},
                      {"", ".mlp.up_proj.", ".mlps.0.up_proj."},
                      {"", ".mlp.down_proj.", ".mlps.0.down_proj."}},
                     {{"", ".mlp.", ".mlps.1."}}},
      .mtp_root = "model.",
      .router_rows_extra = true,
      .routers_either_dtype = true};
}

}  // namespace trace::checkpoint
