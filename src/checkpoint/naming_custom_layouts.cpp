// Checkpoint namings of decoders whose checkpoints lay their modules out otherwise (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

std::optional<Naming> custom_layout_naming(const std::string& type) {
  if (type == "opt") {
    // modeling_opt.py (OPTForCausalLM, base_model_prefix "model") as facebook/opt-125m, -1.3b,
    // -2.7b and -66b store it: model.decoder.{embed_tokens, embed_positions
    // (max_position_embeddings + 2 rows, OPTLearnedPositionalEmbedding's offset),
    // final_layer_norm},
    // model.decoder.layers.N.{self_attn.{q,k,v,out}_proj, self_attn_layer_norm, fc1, fc2,
    // final_layer_norm}, all biased, and lm_head.weight, the tied embedding stored again (a
    // buffer). opt-350m, -6.7b, -13b and -30b were saved from a bare OPTModel (decoder.*, no
    // lm_head; DeepSpeed #4694, vLLM's opt.py load_weights): bare_prefix lets either spelling
    // reconcile (SOURCES-opt.md).
    return Naming{.label = "OPT (model.decoder.layers.N, self_attn.out_proj, fc1/fc2)",
                  .root = "model.decoder.",
                  .renames = {{"", ".self_attn.o_proj.", ".self_attn.out_proj."},
                              {"", ".mlp.up_proj.", ".fc1."},
                              {"", ".mlp.down_proj.", ".fc2."}},
                  .positions = "embed_positions",
                  .buffers = Buffers::tied_head_copy,
                  .bare_prefix = "model."};
  }
  if (type == "falcon_h1") {
    // modeling_falcon_h1.py FalconH1DecoderLayer: input_layernorm, `mamba` (FalconH1Mixer:
    // in_proj, conv1d, dt_bias, A_log, D, a gated norm only with mamba_rms_norm, out_proj) beside
    // self_attn.{q,k,v,o}_proj, pre_ff_layernorm, feed_forward.{gate,up,down}_proj;
    // FalconH1Model.{embed_tokens, final_layernorm}; mup_vector is non-persistent. vLLM's
    // falcon_h1.py loads the uploads under these names (SOURCES-falcon_h1.md).
    return Naming{.label = "Falcon-H1 (model.*, mamba beside self_attn, feed_forward)",
                  .renames = {{"", ".mlp.", ".feed_forward."}}};
  }
  if (type == "minicpm3") {
    // openbmb's remote modeling_minicpm.py for MiniCPM3 (transformers' modular_minicpm3.py and
    // vLLM's minicpm3.py build the same modules): Llama's layer names with DeepSeek-V2's MLA
    // under self_attn (q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm,
    // kv_b_proj, o_proj); the rotary buffers are non-persistent (SOURCES-minicpm3.md).
    return Naming{.label = "MiniCPM3 remote code (model.*, DeepSeek-V2's MLA names)"};
  }
  return std::nullopt;
}

}  // namespace trace::checkpoint
