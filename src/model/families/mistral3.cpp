// The Mistral 3 multimodal wrapper (model_type mistral3, Mistral3ForConditionalGeneration):
// Mistral Small 3.1 / 3.2 (2503, 2506), Magistral Small 2509, Devstral Small. Three parts, all
// held by the checkpoint and all counted:
//  - text_config: a plain `mistral` decoder (built by the mistral builder); its lm_head is stored
//    unless tie_word_embeddings says otherwise.
//  - vision_config: a Pixtral vision tower. patch_conv Conv2d(channels -> d, p x p, no bias),
//    ln_pre RMSNorm(d), then layers of attention_norm RMSNorm, q/k/v/o_proj (d x d, no bias;
//    head_dim = d / heads, as PixtralAttention computes it), ffn_norm RMSNorm and a gated MLP
//    gate/up/down (no bias). No post-norm, no learned positions (2-D RoPE; its inv_freq buffer is
//    not persistent, so not in the checkpoint).
//  - multi_modal_projector: norm RMSNorm(d), patch_merger.merging_layer Linear(d * s^2 -> d, no
//    bias) with s = spatial_merge_size, linear_1 Linear(d * feature layers -> text hidden) and
//    linear_2 Linear(text hidden -> text hidden), both biased only when multimodal_projector_bias.
// Keys the wrapper omits take transformers' Mistral3Config / PixtralVisionConfig defaults; each
// one used is listed in the report's notes.
// Tensor lists: transformers models/mistral3/modular_mistral3.py,
// models/pixtral/modeling_pixtral.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

Stack pixtral_tower(const ConfigReader& vision, ModelDescription& model) {
  const std::int64_t hidden = vision.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = vision.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t patch = vision.require_int({"patch_size"}, 1, 4096);
  const std::int64_t channels = vision.int_or({"num_channels"}, 3, 1, 64);
  note_defaults(model, vision, "PixtralVisionConfig",
                {{"num_channels", "3"}, {"hidden_act", "gelu"}});
  // PixtralAttention sizes every projection hidden x hidden with head_dim = hidden / heads,
  // whatever vision_config.head_dim says.
  const HeadShape shape = read_head_shape(vision, hidden, {"num_attention_heads"}, {}, false);
  if (const std::optional<std::int64_t> head_dim =
          vision.optional_int({"head_dim"}, 1, k_max_width);
      head_dim && *head_dim != shape.head_dim) {
    vision.fail("head_dim",
                fmt::format("= {} disagrees with hidden_size / num_attention_heads = {}", *head_dim,
                            shape.head_dim));
  }
  ExtraParameter patch_conv{"vision_tower.patch_conv", "vision", "Conv2d",
                            checked_product({hidden, channels, patch, patch})};
  patch_conv.shape = {hidden, channels, patch, patch};  // bias-free: the weight alone
  model.extra_parameters.push_back(std::move(patch_conv));
  model.extra_parameters.push_back({"vision_tower.ln_pre", "vision", "RMSNorm", hidden});

  Stack stack;
  stack.name = "vision_tower";
  stack.causal = false;
  stack.vision = true;
  stack.blocks.reserve(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, false, false);
    block.attention.name = "attention";
    block.mlp = Mlp{MlpKind::gated, vision.optional_string("hidden_act").value_or("gelu"),
                    hidden,         intermediate,
                    false,          false,
                    false};
    block.norms = {rms_norm("attention_norm", hidden), rms_norm("ffn_norm", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  return stack;
}

namespace {

// Ministral3Config's defaults where they differ from MistralConfig's: head_dim 128 (an explicit
// null is hidden / heads) and 8 KV heads (null: as many as the query heads). The sizes it
// defaults like Mistral are the 8B's; trace requires them.
nlohmann::json with_ministral3_defaults(nlohmann::json text, std::vector<std::string>& used) {
  for (const auto& [key, value] : {std::pair<const char*, int>{"head_dim", 128},
                                   std::pair<const char*, int>{"num_key_value_heads", 8}}) {
    if (text.contains(key)) continue;
    text[key] = value;
    used.push_back(fmt::format("{} = {}", key, value));
  }
  return text;
}

}  // namespace

// Ministral 3 (model_type ministral3: Ministral-3 3B / 8B / 14B text models): Mistral's tensors
// exactly; its Llama-4-style query scaling (rope_parameters.llama_4_scaling_beta) is computed,
// not learned, so it adds no parameter.
ModelDescription build_ministral3(const ConfigReader& config) {
  std::vector<std::string> used;
  const nlohmann::json json = with_ministral3_defaults(config.json(), used);
  ModelDescription model = build_mistral(ConfigReader(json, config.path(), config.model_type()));
  model.family = "Ministral 3 (Mistral decoder; Llama-4 attention scaling, no extra tensors)";
  if (!used.empty()) {
    model.notes.push_back(fmt::format("Ministral3Config defaults used: {}", fmt::join(used, ", ")));
  }
  return model;
}

ModelDescription build_mistral3(const ConfigReader& config) {
  const ConfigReader text = config.child("text_config");
  const std::string text_type = text.optional_string("model_type").value_or("mistral");
  if (text_type != "mistral" && text_type != "ministral3") {
    text.fail("model_type", fmt::format("= \"{}\" is not supported inside mistral3 yet "
                                        "(supported: mistral, ministral3)",
                                        text_type));
  }
  nlohmann::json text_json = text.json();
  // Ministral 3 ties by text_config alone (the 3B ties, 8B and 14B do not), whatever the
  // wrapper's own tie_word_embeddings (Mistral3Config defaults that to true).
  if (!text.has("tie_word_embeddings") && config.has("tie_word_embeddings") &&
      text_type == "mistral") {
    text_json["tie_word_embeddings"] = config.json().at("tie_word_embeddings");
  }
  const ConfigReader text_reader(text_json, "text_config", config.model_type());
  ModelDescription model =
      text_type == "ministral3" ? build_ministral3(text_reader) : build_mistral(text_reader);
  model.family = fmt::format(
      "Mistral 3 multimodal ({} text decoder + Pixtral vision tower + "
      "patch-merger projector)",
      text_type == "ministral3" ? "Ministral 3" : "Mistral");
  if (!text.has("tie_word_embeddings") && !config.has("tie_word_embeddings")) {
    model.notes.push_back(
        "tie_word_embeddings absent: MistralConfig default false (lm_head stored apart)");
  }
  if (model.torch_dtype.empty()) {
    model.torch_dtype = config.optional_string("torch_dtype")
                            .value_or(config.optional_string("dtype").value_or(""));
  }

  const ConfigReader vision = config.child("vision_config");
  const std::string vision_type = vision.optional_string("model_type").value_or("pixtral");
  if (vision_type != "pixtral") {
    vision.fail(
        "model_type",
        fmt::format("= \"{}\" is not supported inside mistral3 (supported: pixtral)", vision_type));
  }
  Stack tower = pixtral_tower(vision, model);
  const std::int64_t vision_hidden = tower.blocks.front().attention.input_dim;

  note_defaults(model, config, "Mistral3Config",
                {{"spatial_merge_size", "2"},
                 {"vision_feature_layer", "-1"},
                 {"multimodal_projector_bias", "false"},
                 {"projector_hidden_act", "gelu"}});
  const std::int64_t merge = config.int_or({"spatial_merge_size"}, 2, 1, 64);
  std::int64_t feature_layers = 1;
  if (config.has("vision_feature_layer")) {
    const nlohmann::json& layer = config.json().at("vision_feature_layer");
    if (layer.is_array()) {
      if (layer.empty()) config.fail("vision_feature_layer", "is an empty list");
      feature_layers = static_cast<std::int64_t>(layer.size());
    } else if (!layer.is_number_integer()) {
      config.fail("vision_feature_layer", "must be an integer or a list of integers");
    }
  }
  const bool projector_bias = config.bool_or("multimodal_projector_bias", false);
  const std::int64_t text_hidden = model.hidden_size;
  const auto linear = [projector_bias](std::int64_t in, std::int64_t out) {
    return checked_add(checked_mul(in, out), projector_bias ? out : 0);
  };
  // (shapes as stored, for the tensor inventory: nn.Linear's [out, in])
  const std::int64_t projector_in = checked_mul(vision_hidden, feature_layers);
  model.extra_parameters.push_back(
      {"multi_modal_projector.norm", "vision", "RMSNorm", vision_hidden});
  const std::int64_t merged = checked_product({vision_hidden, merge, merge});
  model.extra_parameters.push_back({"multi_modal_projector.patch_merger.merging_layer",
                                    "vision",
                                    "Linear",
                                    checked_product({vision_hidden, merge, merge, vision_hidden}),
                                    {vision_hidden, merged}});
  model.extra_parameters.push_back({"multi_modal_projector.linear_1",
                                    "vision",
                                    "Linear",
                                    linear(projector_in, text_hidden),
                                    {text_hidden, projector_in}});
  model.extra_parameters.push_back({"multi_modal_projector.linear_2",
                                    "vision",
                                    "Linear",
                                    linear(text_hidden, text_hidden),
                                    {text_hidden, text_hidden}});
  model.stacks.push_back(std::move(tower));
  return model;
}

}  // namespace trace::family
