// Checkpoint namings of AFMoE (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

// AFMoE (Arcee's Trinity): transformers' AfmoeForCausalLM (models/afmoe/modeling_afmoe.py) holds
// model.embed_tokens, model.layers.N.{input_layernorm, post_attention_layernorm,
// pre_mlp_layernorm, post_mlp_layernorm}, self_attn.{q_proj, k_proj, v_proj, o_proj, q_norm,
// k_norm} and the output gate self_attn.gate_proj as a Linear of its own; a dense layer's
// mlp.{gate,up,down}_proj; an MoE layer's mlp.router.gate (AfmoeTokenChoiceRouter's Linear),
// mlp.expert_bias (a bare nn.Parameter, stored F32), mlp.shared_experts.{gate,up,down}_proj and
// mlp.experts.E.{gate,up,down}_proj one expert at a time; model.norm and the untied lm_head.
// vLLM's afmoe.py loads the same names (".router.gate.weight" mapped to its gate, q / k / v
// stacked into qkv_proj, self_attn.gate_proj kept apart). Sources: tests/data/configs/
// SOURCES-afmoe-names.md.
std::optional<Naming> afmoe_naming(const std::string& type) {
  if (type != "afmoe") return std::nullopt;
  return Naming{.label =
                    "AFMoE (model.layers.N, self_attn.gate_proj, mlp.router.gate, "
                    "mlp.expert_bias)",
                .renames = {{"", ".mlp.gate.e_score_correction_bias.", ".mlp.expert_bias."},
                            {"", ".mlp.gate.", ".mlp.router.gate."}},
                .split_output_gate = true};
}

}  // namespace trace::checkpoint
