// Zamba2 (model_type zamba2: Zyphra Zamba2-1.2B / 2.7B / 7B). A Mamba-2 backbone; the layers that
// layers_block_type marks "hybrid" first run one of num_mem_blocks shared transformer blocks
// (cycled: hybrid use j runs block j % num_mem_blocks), pass its output through a per-layer
// Linear(H, H) (no bias), add that to the Mamba layer's input, then run the Mamba layer.
//  Mamba layer (every layer): input_layernorm [H]; mixer: in_proj [d + (d + 2 G N) + heads, H]
//    (bias = add_bias_linear), conv1d [(d + 2 G N), 1, K] + bias (always: the module passes
//    bias=True, use_conv_bias is not read), dt_bias / A_log / D per head, gated RMSNorm [d],
//    out_proj [H, d] (bias = add_bias_linear); d = mamba_expand x H, head_dim = d / n_mamba_heads.
//  Shared block k: input_layernorm [2H] over concat(hidden, original embeddings); attention
//    q [heads x hd, 2H], k / v [kv_heads x hd, 2H], o [H, heads x hd], all bias-free, with
//    hd = 2H / num_attention_heads; pre_ff_layernorm [H]; MLP gate_up_proj [2I, H] + down_proj
//    [H, I] (bias = add_bias_linear).
//  Per hybrid use (not shared): the MLP's gate_up adapter Linear(H, r) + Linear(r, 2I) (always
//    built, whatever use_shared_mlp_adapter says), and with use_shared_attention_adapter a q, k
//    and v adapter each Linear(2H, r) + Linear(r, 2H); r = adapter_rank.
// Each shared block's tensors are stored once (the model lists the later uses in
// _tied_weights_keys), so the first use of block k is a Block with its weights and later uses
// are Blocks with shared_weights = true (they still run and keep their own KV cache). The lm_head
// is tied to the embedding unless tie_word_embeddings is false.
// Source: transformers models/zamba2/modeling_zamba2.py, configuration_zamba2.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_zamba2(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  fill_decoder_basics(model, config, vocab, hidden, true);
  model.family = "Zamba2 (Mamba-2 backbone with shared transformer blocks and per-use LoRA adapters)";
  model.ssm_cache_dtype = config.optional_string("mamba_ssm_cache_dtype").value_or("");
  if (!config.has("tie_word_embeddings")) {
    model.notes.push_back("tie_word_embeddings absent: PretrainedConfig's default true (lm_head tied)");
  }

  // ---- the schedule ----
  if (!config.has("layers_block_type")) {
    config.fail("layers_block_type",
                "is missing; list \"mamba\" or \"hybrid\" for every layer as the published "
                "config.json does");
  }
  const nlohmann::json& types = config.json().at("layers_block_type");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != layers) {
    config.fail("layers_block_type",
                fmt::format("must be a list of num_hidden_layers = {} entries", layers));
  }
  std::vector<bool> hybrid(static_cast<std::size_t>(layers), false);
  std::int64_t uses = 0;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string type = types[i].is_string() ? types[i].get<std::string>() : "";
    if (type == "hybrid") {
      hybrid[i] = true;
      ++uses;
    } else if (type != "mamba") {
      config.fail("layers_block_type",
                  fmt::format("entry {} is {}; expected \"mamba\" or \"hybrid\"", i, types[i].dump()));
    }
  }

  // ---- the Mamba-2 mixer ----
  Ssm ssm;
  ssm.kind = SsmKind::mamba2;
  ssm.hidden = hidden;
  const std::optional<double> expand = config.optional_number("mamba_expand");
  if (!expand) config.fail("mamba_expand", "is missing; the mixer width is mamba_expand x hidden_size");
  const double inner = *expand * static_cast<double>(hidden);
  if (inner < 1.0 || inner > static_cast<double>(k_max_width) ||
      static_cast<double>(static_cast<std::int64_t>(inner)) != inner) {
    config.fail("mamba_expand", fmt::format("x hidden_size = {} is not a valid width", inner));
  }
  ssm.inner = static_cast<std::int64_t>(inner);
  ssm.num_heads = config.require_int({"n_mamba_heads"}, 1, k_max_heads);
  if (ssm.inner % ssm.num_heads != 0) {
    config.fail("n_mamba_heads",
                fmt::format("= {} does not divide the mixer width {}", ssm.num_heads, ssm.inner));
  }
  ssm.head_dim = ssm.inner / ssm.num_heads;
  ssm.state = config.require_int({"mamba_d_state"}, 1, k_max_width);
  ssm.groups = config.int_or({"mamba_ngroups"}, 1, 1, k_max_heads);
  ssm.conv_kernel = config.int_or({"mamba_d_conv"}, 4, 1, 1024);
  ssm.chunk_size = config.int_or({"chunk_size"}, 256, 1, k_max_positions);
  const bool linear_bias = config.bool_or("add_bias_linear", false);
  ssm.proj_bias = linear_bias;
  ssm.conv_bias = true;
  ssm.gated_norm = true;

  // ---- the shared transformer blocks ----
  const std::int64_t mem_blocks = config.require_int({"num_mem_blocks"}, 1, 1 << 16);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  const std::int64_t kv_heads = config.int_or({"num_key_value_heads"}, heads, 1, k_max_heads);
  if (heads % kv_heads != 0) {
    config.fail("num_attention_heads", "is not a multiple of num_key_value_heads");
  }
  const std::int64_t attention_width = checked_mul(2, hidden);
  if (attention_width % heads != 0) {
    config.fail("num_attention_heads", fmt::format("does not divide 2 x hidden_size = {}", attention_width));
  }
  const std::int64_t intermediate =
      config.int_or({"intermediate_size"}, checked_mul(4, hidden), 1, k_max_width);
  const std::int64_t rank = config.require_int({"adapter_rank"}, 1, k_max_width);
  const bool attention_adapters = config.bool_or("use_shared_attention_adapter", false);
  const bool rope = config.bool_or("use_mem_rope", false);
  for (const char* key : {"mamba_ngroups", "mamba_d_conv", "chunk_size", "add_bias_linear",
                          "intermediate_size", "num_key_value_heads",
                          "use_shared_attention_adapter", "use_mem_rope"}) {
    if (!config.has(key)) {
      model.notes.push_back(fmt::format("{} absent: Zamba2Config's default taken", key));
    }
  }
  model.position = rope ? PositionKind::rope : PositionKind::none;

  Attention attention;
  attention.input_dim = attention_width;
  attention.kv_input_dim = attention_width;
  attention.output_dim = hidden;
  attention.num_heads = heads;
  attention.num_kv_heads = kv_heads;
  attention.head_dim = attention_width / heads;
  attention.rotary_dim = rope ? attention.head_dim : 0;
  const Mlp mlp{MlpKind::gated, config.optional_string("hidden_act").value_or("gelu"), hidden,
                intermediate, linear_bias, linear_bias, true};

  Stack stack;
  stack.name = "decoder";
  std::int64_t use = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    if (hybrid[static_cast<std::size_t>(i)]) {
      // The shared transformer block that runs before this layer's Mamba mixer.
      Block shared;
      shared.norms = {rms_norm("shared_transformer.input_layernorm", attention_width),
                      rms_norm("shared_transformer.pre_ff_layernorm", hidden)};
      shared.attention = attention;
      shared.mlp = mlp;
      shared.shared_weights = use >= mem_blocks;
      stack.blocks.push_back(std::move(shared));
      ++use;
    }
    Block mamba;
    mamba.single_mixer = true;
    mamba.norms = {rms_norm("input_layernorm", hidden)};
    mamba.attention.kind = AttentionKind::none;
    mamba.attention.input_dim = mamba.attention.kv_input_dim = mamba.attention.output_dim = hidden;
    mamba.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
    mamba.ssm = ssm;
    stack.blocks.push_back(std::move(mamba));
  }
  stack.final_norm = rms_norm("final_layernorm", hidden);
  model.stacks.push_back(std::move(stack));

  // Per hybrid use: the D x D linear and the adapters (never shared).
  if (uses > 0) {
    model.extra_parameters.push_back(
        {fmt::format("model.layers.*.linear ({} hybrid layers)", uses), "other", "Linear",
         checked_mul(uses, checked_mul(hidden, hidden))});
    model.extra_parameters.push_back(
        {fmt::format("shared_transformer.feed_forward.gate_up_proj_adapter_list ({} uses)", uses),
         "mlp", "LoRA", checked_mul(uses, checked_mul(rank, hidden + 2 * intermediate))});
    if (attention_adapters) {
      model.extra_parameters.push_back(
          {fmt::format("shared_transformer.self_attn.linear_{{q,k,v}}_adapter_list ({} uses)", uses),
           "attention", "LoRA",
           checked_mul(3 * uses, checked_mul(rank, 2 * attention_width))});
    }
  }
  if (uses > 0 && uses < mem_blocks) {
    model.notes.push_back(fmt::format(
        "num_mem_blocks = {} but only {} hybrid layers: Zamba2Model never registers the unused "
        "blocks, so they hold no stored weights",
        mem_blocks, uses));
  }
  return model;
}

}  // namespace trace::family
