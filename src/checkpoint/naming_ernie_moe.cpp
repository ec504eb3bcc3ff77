// Checkpoint namings of ERNIE 4.5 MoE (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

// ernie4_5_moe, as Baidu's -PT uploads store it (tests/data/configs/SOURCES-ernie4_5_moe-names.md):
// transformers' Llama names under model.* with one expert per Linear (mlp.experts.E.{gate,up,
// down}_proj, mlp.shared_experts.*, the router mlp.gate); the correction bias beside the router as
// mlp.moe_statics.e_score_correction_bias [1, E] (Ernie4_5_MoeStatics, one expert group; the
// FastDeploy and NeMo loaders rename it, both checkpoints hold it at the MoE-block level); the
// router and that bias in F32 (the remote modeling_ernie4_5_moe.py builds gate = nn.Linear(...,
// dtype=torch.float32) and the statics in float32; transformers' _keep_in_fp32_modules_strict).
// The MTP layer vLLM's ernie_mtp.py loads: model.mtp_block.N (a dense decoder layer) beside
// model.mtp_emb_norm.N, mtp_hidden_norm.N and mtp_linear_proj.N (the family's extras).
std::optional<Naming> ernie_moe_naming(const std::string& type) {
  if (type != "ernie4_5_moe") return std::nullopt;
  return Naming{.label = "ERNIE 4.5 MoE (model.*, mlp.moe_statics, MTP as model.mtp_block.N)",
                .renames = {{"", ".mlp.gate.e_score_correction_bias.",
                             ".mlp.moe_statics.e_score_correction_bias."},
                            {"", "mtp.layers.", "model.mtp_block."}},
                .routers_f32 = true,
                .router_bias_row = true};
}

}  // namespace trace::checkpoint
