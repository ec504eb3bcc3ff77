// Pure state-space models: Mamba-1 (mamba, falcon_mamba) and Mamba-2 (mamba2). Each layer is an
// RMSNorm and a mixer; embeddings are tied by default (MambaConfig), norm_f closes the stack.
//  Mamba-1 mixer: in_proj [2 d_inner, H] (+bias if use_bias), conv1d [d_inner, 1, K] + bias,
//  x_proj [dt_rank + 2N, d_inner], dt_proj [d_inner, dt_rank] + bias, A_log [d_inner, N], D,
//  out_proj [H, d_inner]; d_inner = expand x hidden (intermediate_size when given), dt_rank =
//  time_step_rank ("auto" = ceil(hidden / 16)). Falcon-Mamba's extra B/C/dt RMSNorms hold no
//  weights.
//  Mamba-2 mixer: see nemotron_h.cpp (d_inner = num_heads x head_dim).
// Tensor lists: transformers models/mamba/modeling_mamba.py, models/mamba2/modeling_mamba2.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_mamba(const ConfigReader& config) {
  ModelDescription model;
  const bool mamba2 = config.model_type() == "mamba2";
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size", "d_model"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers", "n_layer"}, 1, k_max_layers);
  fill_decoder_basics(model, config, vocab, hidden, !mamba2);
  model.family = mamba2 ? "Mamba-2 (state-space model, SSD mixer)"
                        : "Mamba (selective state-space model)";
  model.position = PositionKind::none;
  model.ssm_cache_dtype = config.optional_string("mamba_ssm_cache_dtype").value_or("");

  Ssm ssm;
  ssm.kind = mamba2 ? SsmKind::mamba2 : SsmKind::mamba1;
  ssm.hidden = hidden;
  ssm.state = config.int_or({"state_size", "ssm_state_size"}, mamba2 ? 128 : 16, 1, k_max_width);
  ssm.conv_kernel = config.int_or({"conv_kernel", "d_conv"}, 4, 1, 1024);
  ssm.proj_bias = config.bool_or("use_bias", false);
  ssm.conv_bias = config.bool_or("use_conv_bias", true);
  const std::optional<double> expand = config.optional_number("expand");
  const std::int64_t expanded =
      static_cast<std::int64_t>(expand.value_or(2.0) * static_cast<double>(hidden));
  if (mamba2) {
    ssm.num_heads = config.require_int({"num_heads"}, 1, k_max_heads);
    ssm.head_dim = config.require_int({"head_dim"}, 1, k_max_width);
    ssm.inner = checked_mul(ssm.num_heads, ssm.head_dim);
    ssm.groups = config.int_or({"n_groups"}, 1, 1, k_max_heads);
    ssm.chunk_size = config.int_or({"chunk_size"}, 256, 1, k_max_positions);
    if (expand && ssm.inner != expanded) {
      throw ConfigError(fmt::format(
          "config.json (mamba2): num_heads x head_dim = {} contradicts expand x hidden_size = {}",
          ssm.inner, expanded));
    }
  } else {
    ssm.inner = config.int_or({"intermediate_size"}, expanded, 1, k_max_width);
    ssm.gated_norm = false;
    if (config.has("time_step_rank") && config.json().at("time_step_rank").is_string()) {
      if (config.json().at("time_step_rank").get<std::string>() != "auto") {
        config.fail("time_step_rank", "must be an integer or \"auto\"");
      }
      ssm.dt_rank = ceil_div(hidden, 16);
    } else {
      ssm.dt_rank = config.int_or({"time_step_rank", "dt_rank"}, ceil_div(hidden, 16), 1, k_max_width);
    }
  }

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.single_mixer = true;
    block.norms = {rms_norm("norm", hidden)};
    block.attention.kind = AttentionKind::none;
    block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = hidden;
    block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
    block.ssm = ssm;
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("norm_f", hidden);
  model.stacks.push_back(std::move(stack));
  return model;
}

}  // namespace trace::family
