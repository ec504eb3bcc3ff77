// Jamba (model_type jamba: AI21 Jamba-v0.1, Jamba-1.5-Mini, Jamba-1.5-Large). Every layer is
//   input_layernorm -> mixer -> pre_ff_layernorm -> feed-forward
// where the mixer is attention on layers with i % attn_layer_period == attn_layer_offset and a
// Mamba-1 mixer elsewhere, and the feed-forward is an MoE on layers with
// i % expert_layer_period == expert_layer_offset (when num_experts > 1) and a dense MLP elsewhere.
//  attention: GQA q/k/v/o without biases, head_dim = hidden / heads (no head_dim key), no
//    positional encoding (Jamba has none: the Mamba layers carry order);
//  Mamba-1 mixer (JambaMambaMixer): in_proj [2 d_inner, H] (+bias if mamba_proj_bias), conv1d
//    [d_inner, 1, K] (+bias if mamba_conv_bias), x_proj [dt_rank + 2N, d_inner], dt_proj
//    [d_inner, dt_rank] + bias, A_log [d_inner, N], D [d_inner], out_proj [H, d_inner]
//    (+bias if mamba_proj_bias), and the dt/B/C RMSNorms (dt_rank, N, N); d_inner =
//    mamba_expand x hidden, dt_rank = mamba_dt_rank ("auto" = ceil(hidden / 16));
//  MLP: gate/up/down SwiGLU of intermediate_size; MoE: router Linear(H, num_experts) without
//    bias and num_experts such MLPs, top num_experts_per_tok per token.
// final_layernorm closes the stack; embeddings are untied by default (JambaConfig).
// Sources: transformers models/jamba/configuration_jamba.py and modeling_jamba.py; the counts
// are derived in tests/data/configs/SOURCES-jamba-granite.md.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

// A layer schedule (period, offset): offset must lie below the period (JambaConfig checks it).
struct Period {
  std::int64_t period = 1;
  std::int64_t offset = 0;
  bool hits(std::int64_t layer) const { return layer % period == offset; }
};

Period read_period(const ConfigReader& config, const char* period_key, const char* offset_key,
                   std::int64_t period_default, std::int64_t offset_default) {
  Period p;
  p.period = config.int_or({period_key}, period_default, 1, k_max_layers);
  p.offset = config.int_or({offset_key}, offset_default, 0, k_max_layers);
  if (p.offset >= p.period) {
    config.fail(offset_key, fmt::format("is {}, not smaller than '{}' = {}; the offset must lie "
                                        "in 0..{}",
                                        p.offset, period_key, p.period, p.period - 1));
  }
  return p;
}

std::int64_t read_dt_rank(const ConfigReader& config, std::int64_t hidden) {
  const std::int64_t automatic = ceil_div(hidden, 16);
  if (config.has("mamba_dt_rank") && config.json().at("mamba_dt_rank").is_string()) {
    if (config.json().at("mamba_dt_rank").get<std::string>() != "auto") {
      config.fail("mamba_dt_rank", "must be an integer or \"auto\"");
    }
    return automatic;
  }
  return config.int_or({"mamba_dt_rank"}, automatic, 1, k_max_width);
}

}  // namespace

ModelDescription build_jamba(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = "Jamba (hybrid Mamba-1 / attention, MoE every other layer)";
  model.position = PositionKind::none;

  const HeadShape heads =
      read_head_shape(config, hidden, {"num_attention_heads"}, {"num_key_value_heads"}, false);
  const Period attention_layers =
      read_period(config, "attn_layer_period", "attn_layer_offset", 8, 4);
  const Period expert_layers =
      read_period(config, "expert_layer_period", "expert_layer_offset", 2, 1);
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  const std::int64_t intermediate = config.int_or({"intermediate_size"}, 14336, 1, k_max_width);
  const Mlp mlp{MlpKind::gated, activation, hidden, intermediate, false, false, false};

  Ssm ssm;
  ssm.kind = SsmKind::mamba1;
  ssm.hidden = hidden;
  ssm.inner = checked_mul(config.int_or({"mamba_expand"}, 2, 1, 1024), hidden);
  if (ssm.inner > k_max_width) config.fail("mamba_expand", "makes d_inner implausibly wide");
  ssm.state = config.int_or({"mamba_d_state"}, 16, 1, k_max_width);
  ssm.conv_kernel = config.int_or({"mamba_d_conv"}, 4, 1, 1024);
  ssm.dt_rank = read_dt_rank(config, hidden);
  ssm.conv_bias = config.bool_or("mamba_conv_bias", true);
  ssm.proj_bias = config.bool_or("mamba_proj_bias", false);
  ssm.gated_norm = false;
  ssm.dt_bc_norms = true;

  // layers_num_experts: num_experts on the expert schedule, 1 elsewhere; a layer gets the sparse
  // MoE block only when that number exceeds 1.
  const std::int64_t num_experts = config.int_or({"num_experts"}, 16, 1, 1 << 20);
  std::optional<Moe> moe;
  if (num_experts > 1) {
    Moe routed;
    routed.num_experts = num_experts;
    routed.top_k = config.int_or({"num_experts_per_tok"}, 2, 1, 1 << 20);
    if (routed.top_k > num_experts) {
      config.fail("num_experts_per_tok",
                  fmt::format("is {}: more experts per token than the {} there are",
                              routed.top_k, num_experts));
    }
    routed.expert = mlp;
    routed.hidden_dim = hidden;
    moe = routed;
  }

  Stack stack;
  stack.name = "decoder";
  std::int64_t attention_count = 0;
  std::int64_t moe_count = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.norms = {rms_norm("input_layernorm", hidden), rms_norm("pre_ff_layernorm", hidden)};
    if (attention_layers.hits(i)) {
      block.attention = self_attention(hidden, heads, false, false);
      block.attention.rotary_dim = 0;
      ++attention_count;
    } else {
      block.attention.kind = AttentionKind::none;
      block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = hidden;
      block.ssm = ssm;
    }
    if (moe && expert_layers.hits(i)) {
      set_moe(block, *moe, hidden);
      ++moe_count;
    } else {
      block.mlp = mlp;
    }
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("final_layernorm", hidden);
  model.stacks.push_back(std::move(stack));
  note_defaults(model, config, "JambaConfig",
                {{"num_key_value_heads", "num_attention_heads"}, {"intermediate_size", "14336"},
                 {"attn_layer_period", "8"}, {"attn_layer_offset", "4"},
                 {"expert_layer_period", "2"}, {"expert_layer_offset", "1"},
                 {"num_experts", "16"}, {"num_experts_per_tok", "2"}, {"mamba_expand", "2"},
                 {"mamba_d_state", "16"}, {"mamba_d_conv", "4"}, {"mamba_dt_rank", "auto"},
                 {"mamba_conv_bias", "true"}, {"mamba_proj_bias", "false"},
                 {"tie_word_embeddings", "false"}});
  model.notes.push_back(fmt::format(
      "{} attention layers (every {} from layer {}), {} Mamba-1 layers; {} MoE layers (every {} "
      "from layer {}), {} dense MLP layers",
      attention_count, attention_layers.period, attention_layers.offset, layers - attention_count,
      moe_count, expert_layers.period, expert_layers.offset, layers - moe_count));
  return model;
}

}  // namespace trace::family
