// ERNIE 4.5 MoE (ernie4_5_moe): Llama attention (q/k/v/o, biases when use_bias), layers
// moe_layer_start_index..moe_layer_end_index whose (index + 1) is a multiple of moe_layer_interval
// hold the MoE (the others a dense SwiGLU of intermediate_size): a router gate Linear(hidden,
// moe_num_experts) without bias, moe_statics.e_score_correction_bias [1, moe_num_experts] (F32),
// moe_num_experts routed experts of moe_intermediate_size and one shared MLP of
// moe_num_shared_experts x moe_intermediate_size. Tied embeddings by default.
// The PT checkpoints also carry num_nextn_predict_layers MTP layers that transformers skips
// (_keys_to_ignore_on_load_unexpected = ["mtp"]) and vLLM's ernie_mtp loads: mtp_emb_norm,
// mtp_hidden_norm, mtp_linear_proj (2h -> h, no bias) and mtp_block, a dense decoder layer
// (attention + SwiGLU of intermediate_size); the head and embedding are the main model's.
// Tensor lists: transformers models/ernie4_5_moe/modeling_ernie4_5_moe.py, vLLM
// model_executor/models/ernie_mtp.py.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

ModelDescription build_ernie4_5_moe(const ConfigReader& config) {
  ModelDescription model;
  const DecoderDims dims = read_decoder_dims(config, model, true);
  const std::int64_t hidden = dims.hidden;
  const std::int64_t layers = dims.layers;
  model.family = "ERNIE 4.5 MoE (GQA, MoE with shared experts and expert-bias routing, MTP)";
  const std::int64_t dense_width = config.require_int({"intermediate_size"}, 1, k_max_width);
  const bool bias = config.bool_or("use_bias", false);
  model.lm_head_bias = bias && !model.tie_word_embeddings;
  const std::string activation = config.optional_string("hidden_act").value_or("silu");
  if (config.has("moe_num_experts") && !config.json().at("moe_num_experts").is_number_integer()) {
    config.fail("moe_num_experts",
                "is a list (one entry per modality, ERNIE-4.5-VL); trace reads the text-only "
                "ernie4_5_moe layout, where it is one number");
  }
  if (config.has("moe_intermediate_size") &&
      !config.json().at("moe_intermediate_size").is_number_integer()) {
    config.fail("moe_intermediate_size",
                "is a list (one entry per modality, ERNIE-4.5-VL); the text model gives one number");
  }
  Moe moe = routed_experts(config, hidden, {"moe_num_experts"}, {"moe_k"},
                           config.require_int({"moe_intermediate_size"}, 1, k_max_width));
  moe.expert.activation = activation;
  moe.expert.up_bias = moe.expert.down_bias = bias;
  set_shared_experts(moe, config.int_or({"moe_num_shared_experts"}, 0, 0, 1 << 16), bias);
  moe.router_correction_bias = true;  // moe_statics.e_score_correction_bias, always built

  const std::int64_t start = config.int_or({"moe_layer_start_index"}, 1, 0, k_max_layers);
  std::int64_t end = config.int_or({"moe_layer_end_index"}, -1, -1, k_max_layers);
  if (end == -1) end = layers - 1;
  const std::int64_t interval = config.int_or({"moe_layer_interval"}, 1, 1, k_max_layers);
  note_defaults(model, config, "Ernie4_5_MoeConfig",
                {{"use_bias", "false"},
                 {"moe_num_shared_experts", "2"},
                 {"moe_layer_start_index", "1"},
                 {"moe_layer_end_index", "-1 (the last layer)"},
                 {"moe_layer_interval", "1"},
                 {"tie_word_embeddings", "true"}});
  const auto is_moe_layer = [&](std::int64_t index) {
    return (index + 1) % interval == 0 && index >= start && index <= end;
  };

  const auto make_block = [&](bool with_moe) {
    Block block;
    block.attention = self_attention(hidden, dims.heads, bias, bias);
    block.attention.rotary_dim = dims.heads.head_dim;
    if (with_moe) {
      set_moe(block, moe, hidden);
    } else {
      block.mlp = Mlp{MlpKind::gated, activation, hidden, dense_width, bias, bias, false};
    }
    block.norms = pre_norm_pair(hidden);
    return block;
  };

  Stack stack;
  stack.name = "decoder";
  std::int64_t moe_layers = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    const bool with_moe = is_moe_layer(i);
    moe_layers += with_moe ? 1 : 0;
    stack.blocks.push_back(make_block(with_moe));
  }
  if (moe_layers == 0) {
    config.fail("moe_layer_start_index",
                fmt::format("with moe_layer_end_index {} and moe_layer_interval {} leaves no MoE "
                            "layer among {}; check the three keys",
                            end, interval, layers));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  // The routers are stored in F32 as the biases are (Baidu's remote modeling file builds
  // mlp.gate in float32; SOURCES-ernie4_5_moe-names.md).
  model.fp32_stored_params =
      checked_product({moe_layers, moe.num_experts, hidden}, "the ERNIE 4.5 routers");

  const std::int64_t mtp_layers = config.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  if (mtp_layers > 0) {
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t i = 0; i < mtp_layers; ++i) {
      mtp.blocks.push_back(make_block(false));
      // Stored shapes: the two norms [h], mtp_linear_proj nn.Linear(2h, h)'s weight [h, 2h].
      model.extra_parameters.push_back(
          {fmt::format("model.mtp_emb_norm.{}", i), "mtp", "RMSNorm", hidden, {hidden}});
      model.extra_parameters.push_back(
          {fmt::format("model.mtp_hidden_norm.{}", i), "mtp", "RMSNorm", hidden, {hidden}});
      model.extra_parameters.push_back({fmt::format("model.mtp_linear_proj.{}", i),
                                        "mtp",
                                        "Linear",
                                        checked_mul(2 * hidden, hidden),
                                        {hidden, 2 * hidden}});
    }
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
    model.notes.push_back(fmt::format(
        "{} MTP layer(s) (model.mtp_block.*, a dense decoder layer, plus mtp_emb_norm, "
        "mtp_hidden_norm, mtp_linear_proj) counted: the PT checkpoints store them, transformers "
        "skips them, vLLM's ernie_mtp loads them",
        mtp_layers));
  }
  return model;
}

}  // namespace trace::family
