// Checkpoint namings of T5Gemma and Kimi-VL (naming.hpp). Sources:
// tests/data/configs/SOURCES-t5gemma-kimi_vl-names.md.
#include "naming.hpp"

namespace trace::checkpoint {

namespace {

// T5GemmaForConditionalGeneration (transformers modular_t5gemma.py, base_model_prefix "model")
// as google/t5gemma-* store it: model.encoder.{embed_tokens, layers.N.{self_attn.{q,k,v,o}_proj,
// pre_self_attn_layernorm, post_self_attn_layernorm, mlp.{gate,up,down}_proj,
// pre_feedforward_layernorm, post_feedforward_layernorm}, norm}; model.decoder.* the same plus
// layers.N.{cross_attn.{q,k,v,o}_proj (k / v read the encoder's width), pre_cross_attn_layernorm,
// post_cross_attn_layernorm}; the head lm_head.out_proj (T5GemmaLMHead), tied to
// model.decoder.embed_tokens by default and then not stored (a copy some saves may keep is listed
// as a buffer). The loaders that read the uploads use these names (keras-hub's
// convert_t5gemma.py, ComfyUI-style detectors keyed on
// model.encoder.layers.0.pre_self_attn_layernorm.weight). A bare T5GemmaModel /
// T5GemmaEncoderModel save is not named (emit_named_stacks leaves it partial).
Naming t5gemma_naming() {
  return {.label = "T5Gemma (model.encoder/decoder.layers.N, cross_attn, lm_head.out_proj)",
          .embedding = "decoder.embed_tokens",
          .renames = {{"", "lm_head.", "lm_head.out_proj."}},
          .stack_layers = true,
          .buffers = Buffers::tied_head_copy};
}

// KimiVLForConditionalGeneration (moonshotai's remote modeling_kimi_vl.py) as
// moonshotai/Kimi-VL-A3B-* store it: the DeepSeek-V3 text model under language_model.model.*
// (transformers' DeepSeek names: self_attn.{q_proj, kv_a_proj_with_mqa, kv_a_layernorm,
// kv_b_proj, o_proj}, mlp.{gate.weight, gate.e_score_correction_bias, experts.E.*,
// shared_experts.*}, a dense mlp on layer 0) with language_model.lm_head; MoonViT as
// vision_tower.patch_embed.{proj, pos_emb}, vision_tower.encoder.blocks.N.{norm0, norm1, wqkv, wo,
// mlp.fc0, mlp.fc1} (all biased) and vision_tower.encoder.final_layernorm;
// multi_modal_projector.{pre_norm, linear_1, linear_2}. The per-layer
// self_attn.rotary_emb.inv_freq the upload holds is the description's StoredExtra.
Naming kimi_vl_naming() {
  return {.label = "Kimi-VL (language_model.model.*, vision_tower.encoder.blocks.N, wqkv / wo)",
          .root = "language_model.model.",
          .renames = {{"vision_tower.", ".wqkv.qkv_proj.", ".wqkv."},
                      {"vision_tower.", ".wqkv.o_proj.", ".wo."},
                      {"vision_tower.", ".mlp.up_proj.", ".mlp.fc0."},
                      {"vision_tower.", ".mlp.down_proj.", ".mlp.fc1."},
                      {"", "lm_head.", "language_model.lm_head."}},
          .vision_root = "",
          .vision_layers = "blocks",
          .vision_stack = "vision_tower.encoder",
          .buffers = Buffers::stored_extras};
}

}  // namespace

std::optional<Naming> t5gemma_kimi_vl_naming(const std::string& type) {
  if (type == "t5gemma") return t5gemma_naming();
  if (type == "kimi_vl") return kimi_vl_naming();
  return std::nullopt;
}

}  // namespace trace::checkpoint
