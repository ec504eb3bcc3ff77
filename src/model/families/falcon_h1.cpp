// Falcon-H1 (model_type falcon_h1: TII Falcon-H1 0.5B / 1.5B / 1.5B-Deep / 3B / 7B / 34B). Every
// decoder layer is a parallel hybrid: input_layernorm feeds attention and a Mamba-2 mixer side by
// side (their outputs are summed into the residual), then pre_ff_layernorm and a SwiGLU MLP.
//  attention: q/k/v/o (bias = attention_bias on all four), head_dim from the `head_dim` key
//    (else hidden / heads), RoPE;
//  mamba (FalconH1Mixer): in_proj [d_ssm + (d_ssm + 2 G N) + H, hidden] (bias = mamba_proj_bias),
//    conv1d over x|B|C [(d_ssm + 2 G N), 1, K] (+ bias = mamba_conv_bias), dt_bias / A_log / D
//    per head, a gated RMSNorm over d_ssm only when mamba_rms_norm, out_proj [hidden, d_ssm]
//    (bias = projectors_bias, not mamba_proj_bias);
//    d_ssm = mamba_d_ssm, or mamba_expand x hidden when mamba_d_ssm is null; the config class
//    requires mamba_n_heads x mamba_d_head == d_ssm ("auto" d_head = d_ssm / heads);
//  feed_forward: gate/up/down of intermediate_size (bias = mlp_bias).
// final_layernorm closes the stack. The muP multipliers (embedding, lm_head, key, attention in /
// out, ssm in / out, ssm_multipliers, mlp_multipliers) are scalars and the per-layer mup_vector
// is a non-persistent buffer: no parameters.
// Source: transformers models/falcon_h1/modeling_falcon_h1.py, configuration_falcon_h1.py.
#include <cmath>
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_falcon_h1(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, false);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t intermediate = config.require_int({"intermediate_size"}, 1, k_max_width);
  model.family = "Falcon-H1 (parallel hybrid: attention + Mamba-2 in every layer, SwiGLU MLP)";
  model.ssm_cache_dtype = config.optional_string("mamba_ssm_cache_dtype").value_or("");
  if (!config.has("tie_word_embeddings")) {
    model.notes.push_back("tie_word_embeddings absent: FalconH1Config's default false (separate lm_head)");
  }

  // ---- the Mamba-2 mixer ----
  Ssm ssm;
  ssm.kind = SsmKind::mamba2;
  ssm.hidden = hidden;
  if (!config.json().contains("mamba_d_ssm")) {
    config.fail("mamba_d_ssm",
                "is missing; give the mixer's inner width (or null to use mamba_expand x "
                "hidden_size) as the published config.json does");
  }
  if (config.has("mamba_d_ssm")) {
    ssm.inner = config.require_int({"mamba_d_ssm"}, 1, k_max_width);
  } else {
    const std::optional<double> expand = config.optional_number("mamba_expand");
    if (!expand) config.fail("mamba_expand", "is missing while mamba_d_ssm is null; set one of them");
    const double inner = *expand * static_cast<double>(hidden);
    if (inner < 1.0 || inner > static_cast<double>(k_max_width) || std::floor(inner) != inner) {
      config.fail("mamba_expand", fmt::format("x hidden_size = {} is not a valid width", inner));
    }
    ssm.inner = static_cast<std::int64_t>(inner);
  }
  ssm.num_heads = config.require_int({"mamba_n_heads"}, 1, k_max_heads);
  if (ssm.inner % ssm.num_heads != 0) {
    config.fail("mamba_n_heads",
                fmt::format("= {} does not divide the mixer width {}", ssm.num_heads, ssm.inner));
  }
  if (config.has("mamba_d_head") && config.json().at("mamba_d_head").is_string()) {
    if (config.json().at("mamba_d_head").get<std::string>() != "auto") {
      config.fail("mamba_d_head", "must be an integer or \"auto\"");
    }
    ssm.head_dim = ssm.inner / ssm.num_heads;
  } else {
    ssm.head_dim = config.require_int({"mamba_d_head"}, 1, k_max_width);
  }
  if (checked_mul(ssm.head_dim, ssm.num_heads) != ssm.inner) {
    throw ConfigError(fmt::format(
        "config.json (falcon_h1): 'mamba_d_head' = {} x 'mamba_n_heads' = {} must equal the mixer "
        "width {} (mamba_d_ssm, or mamba_expand x hidden_size)",
        ssm.head_dim, ssm.num_heads, ssm.inner));
  }
  ssm.state = config.require_int({"mamba_d_state"}, 1, k_max_width);
  ssm.groups = config.int_or({"mamba_n_groups"}, 1, 1, k_max_heads);
  if (ssm.num_heads % ssm.groups != 0) {
    config.fail("mamba_n_groups", "must divide mamba_n_heads");
  }
  ssm.conv_kernel = config.int_or({"mamba_d_conv"}, 4, 1, 1024);
  ssm.chunk_size = config.int_or({"mamba_chunk_size"}, 256, 1, k_max_positions);
  ssm.conv_bias = config.bool_or("mamba_conv_bias", true);
  ssm.gated_norm = config.bool_or("mamba_rms_norm", false);
  for (const char* key : {"mamba_n_groups", "mamba_d_conv", "mamba_chunk_size", "mamba_conv_bias",
                          "mamba_rms_norm", "mamba_proj_bias", "projectors_bias"}) {
    if (!config.has(key)) {
      model.notes.push_back(fmt::format("{} absent: FalconH1Config's default taken", key));
    }
  }
  // in_proj's bias follows mamba_proj_bias, out_proj's follows projectors_bias. Ssm has one flag
  // for both; when only one of them is on, its bias vectors are counted as extra tensors.
  const bool in_bias = config.bool_or("mamba_proj_bias", false);
  const bool out_bias = config.bool_or("projectors_bias", false);
  ssm.proj_bias = in_bias && out_bias;

  const HeadShape& shape = dims.heads;
  const bool attention_bias = config.bool_or("attention_bias", false);
  const bool mlp_bias = config.bool_or("mlp_bias", false);
  const std::string activation = config.optional_string("hidden_act").value_or("silu");

  Stack stack;
  stack.name = "decoder";
  stack.blocks.reserve(static_cast<std::size_t>(dims.layers));
  for (std::int64_t i = 0; i < dims.layers; ++i) {
    Block block;
    block.norms = {rms_norm("input_layernorm", hidden), rms_norm("pre_ff_layernorm", hidden)};
    block.attention = self_attention(hidden, shape, attention_bias, attention_bias);
    block.attention.rotary_dim = shape.head_dim;
    block.ssm = ssm;
    block.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, mlp_bias, mlp_bias, false};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("final_layernorm", hidden);
  model.stacks.push_back(std::move(stack));

  if (in_bias != out_bias) {
    const std::int64_t width = in_bias ? ssm.in_proj_width() : hidden;
    model.extra_parameters.push_back(
        {in_bias ? "model.layers.*.mamba.in_proj.bias" : "model.layers.*.mamba.out_proj.bias",
         "ssm", "Bias", checked_mul(dims.layers, width)});
  }
  return model;
}

}  // namespace trace::family
