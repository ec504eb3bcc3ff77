// Checkpoint namings of Mistral 3 and Mllama (naming.hpp). The sources, commits and tensor counts
// are in tests/data/configs/SOURCES-mistral3-mllama-names.md.
#include "naming.hpp"

namespace trace::checkpoint {

std::optional<Naming> mistral3_mllama_naming(const std::string& type) {
  if (type == "mistral3") {
    // Mistral3ForConditionalGeneration as the Hub uploads store it, the layout transformers'
    // convert_mistral3_weights_to_hf.py writes and that save_pretrained keeps (the class's
    // _checkpoint_conversion_mapping is reversed on save): the Mistral or Ministral 3 text model
    // under language_model.model.* with language_model.lm_head (not stored when tied: the 3B),
    // the Pixtral tower under vision_tower.{patch_conv, ln_pre, transformer.layers.N.
    // {attention_norm, attention.{q,k,v,o}_proj, ffn_norm, feed_forward.{gate,up,down}_proj}}, all
    // bias-free, and multi_modal_projector.{norm, patch_merger.merging_layer, linear_1,
    // linear_2}. The Ministral 3 uploads are FP8 per tensor (FP8Linear: F8_E4M3 weight,
    // weight_scale_inv and, static, activation_scale scalars) in the text layers only.
    // modeling_mistral3.py, modeling_pixtral.py; llama.cpp's and MLC's Mistral 3 loaders strip
    // "language_model." to reach the text model.
    return Naming{.label = "Mistral 3 (language_model.model.*, vision_tower.transformer.layers.N)",
                  .root = "language_model.model.",
                  .renames = {{"", "lm_head.", "language_model.lm_head."},
                              {"vision_tower.", ".mlp.", ".feed_forward."}},
                  .vision_root = "",
                  .vision_layers = "transformer.layers",
                  .fp8_tensor_scale_inv = true};
  }
  if (type == "mllama") {
    // MllamaForConditionalGeneration as meta-llama's uploads store it (transformers 4.45's
    // convert_mllama_weights_to_hf.py; the names every tensor of Llama-3.2-11B-Vision's index
    // carries): language_model.model.embed_tokens [V + 8, H], language_model.model.layers.N with
    // Llama's self_attn.* or, on the cross-attention layers, cross_attn.{q,k,v,o}_proj,
    // cross_attn.q_norm / k_norm and the bare cross_attn_attn_gate / cross_attn_mlp_gate [1];
    // language_model.model.norm, language_model.lm_head; vision_model.{patch_embedding,
    // class_embedding, gated_positional_embedding.{embedding, gate, tile_embedding},
    // pre_tile_positional_embedding.{embedding, gate}, post_tile_positional_embedding.*,
    // layernorm_pre, layernorm_post}, vision_model.transformer.layers.N and
    // vision_model.global_transformer.layers.N (input_layernorm, self_attn.{q,k,v,o}_proj,
    // post_attention_layernorm, mlp.fc1 / fc2; the global ones' gate_attn / gate_ffn [1]); one
    // biased multi_modal_projector. modeling_mllama.py.
    return Naming{.label = "Mllama (language_model.model.*, cross_attn, vision_model.*)",
                  .root = "language_model.model.",
                  .renames = {{"", "lm_head.", "language_model.lm_head."},
                              {"vision_model.", ".mlp.up_proj.", ".mlp.fc1."},
                              {"vision_model.", ".mlp.down_proj.", ".mlp.fc2."}},
                  .vision_root = "",
                  .vision_layers = "layers",
                  .embedding_rows_extra = true,
                  .layer_gates = true};
  }
  return std::nullopt;
}

}  // namespace trace::checkpoint
