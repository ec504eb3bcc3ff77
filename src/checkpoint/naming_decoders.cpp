// Checkpoint namings of decoders in transformers' module names with a few renames (naming.hpp).
// Each family cites the modeling file or loader its names were read from; the sources, commits
// and parameter counts are in tests/data/configs/SOURCES-<family>.md.
#include "naming.hpp"

namespace trace::checkpoint {

std::optional<Naming> decoder_naming(const std::string& type) {
  // Families whose uploads hold transformers' module names under model.* unchanged:
  // modular_vaultgemma.py (Gemma 2's modules without the post-norms), modular_cwm.py (Llama's),
  // modular_dots1.py (Qwen3's attention, DeepSeek-V3's mlp.gate with e_score_correction_bias,
  // mlp.experts.E.*, mlp.shared_experts.*; llama.cpp's Dots1Model reads the same names) and
  // modeling_flex_olmo.py (OLMoE's mlp.gate and per-expert mlp.experts.E.* as vLLM's
  // flex_olmo.py loads them, OLMo 2's post-norms).
  for (const char* plain : {"vaultgemma", "cwm", "dots1", "flex_olmo"}) {
    if (type == plain) return Naming{.label = "transformers (model.*)"};
  }
  if (type == "hunyuan_v1_moe") {
    // modular_hunyuan_v1_moe.py HunYuanMoE: the router Linear inside HunYuanTopKGate
    // (mlp.gate.wg, which vLLM's hunyuan_v1.py strips to load), one shared_mlp beside
    // mlp.experts.E.{gate,up,down}_proj (llama.cpp's HunYuanMoEModel stacks those per-expert
    // names); the QK-norms query_layernorm / key_layernorm are the description's names. Both
    // loaders skip an lm_head.weight a tied upload may still hold: a buffer.
    return Naming{.label = "Hunyuan MoE (model.*, mlp.gate.wg, mlp.shared_mlp)",
                  .renames = {{"", ".mlp.gate.", ".mlp.gate.wg."},
                              {"", ".mlp.shared_experts.", ".mlp.shared_mlp."}},
                  .buffers = Buffers::tied_head_copy};
  }
  if (type == "glm4_moe_lite") {
    // modular_glm4_moe_lite.py (GLM-4.7-Flash): DeepSeek-V3's MLA attention and GLM-4.5's MoE;
    // the MTP layer is stored as model.layers.{num_hidden_layers} (enorm, hnorm, eh_proj,
    // shared_head, its own embed_tokens), which the class ignores at load. The Hub's 9,703
    // tensors (SOURCES-glm4_moe_lite.md).
    return Naming{.label = "GLM-4.7-Flash (model.*, MLA, MTP as model.layers.N+i)",
                  .mtp_after_layers = true};
  }
  return std::nullopt;
}

}  // namespace trace::checkpoint
