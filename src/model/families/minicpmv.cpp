// MiniCPM-V (model_type minicpmv, remote code MiniCPMV): openbmb/MiniCPM-Llama3-V-2_5,
// MiniCPM-V-2_6, MiniCPM-V-4, MiniCPM-V-4_5 (and their fine-tunes). The config is the text
// model's own config at top level (MiniCPMVConfig subclasses LlamaConfig, Qwen2Config or
// Qwen3Config) plus vision_config, query_num and drop_vision_last_layer. Three parts, all stored:
//  - llm.*: the text decoder MiniCPMV builds for its release, picked (as vLLM's MiniCPMV does) by
//    the `version` key: 2.5 Llama-3, 2.6 Qwen2, 4.0 Llama (MiniCPM4-3B), 4.5 Qwen3; a config
//    without `version` is 2.5 (the Llama3-V 2.5 config has none).
//  - vpm.*: a SigLIP-layout tower (Idefics2VisionTransformer for 2.5, the navit
//    SiglipVisionTransformer for 2.6 / 4.x): patch Conv2d with bias, a learned position table of
//    (image_size / patch_size)^2 rows, pre-norm encoder layers, post_layernorm, no pooling head.
//    With drop_vision_last_layer the last layer is cut off at construction and never stored.
//  - resampler.*: one cross-attention perceiver: query [query_num, D] (D = text hidden), kv_proj
//    [D, vision hidden] without bias (absent when the widths agree), an nn.MultiheadAttention of
//    D / 128 heads (in_proj_weight [3D, D] + in_proj_bias, out_proj [D, D] + bias), LayerNorms
//    ln_q / ln_kv / ln_post, and proj [D, D]. Its 2-D sin-cos pos_embed (and 4.5's temporal table)
//    are non-persistent buffers.
// MiniCPM-V 1.0 / 2.0 (timm SigLIP towers, vision_encoder key) and MiniCPM-o (audio encoder, TTS)
// are refused. Tensor list: each Hub repo's modeling_minicpmv.py, resampler.py,
// configuration_minicpm.py, modeling_navit_siglip.py; vLLM models/minicpmv.py for the dispatch.
// Derivation and published totals: tests/data/configs/SOURCES-minicpmv.md.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "family.hpp"

namespace trace::family {

namespace {

struct Release {
  const char* name;
  ModelDescription (*build_text)(const ConfigReader&);
  SiglipDefaults vision_defaults;  ///< the class vision_config is read into, with its defaults
};

// Idefics2VisionConfig (2.5) and SiglipVisionConfig (2.6 / 4.x) differ only in patch_size.
const Release k_v2_5{"2.5", build_llama, {"Idefics2VisionConfig", 768, 12, 3072, 12, 32, 224}};
const Release k_v2_6{"2.6", build_qwen2, {"SiglipVisionConfig", 768, 12, 3072, 12, 16, 224}};
const Release k_v4_0{"4.0", build_llama, {"SiglipVisionConfig", 768, 12, 3072, 12, 16, 224}};
const Release k_v4_5{"4.5", build_qwen3, {"SiglipVisionConfig", 768, 12, 3072, 12, 16, 224}};

// The config's `version` as tenths (26 for 2.6); MiniCPMV reads it through str(), so a string
// works as well as a number.
std::int64_t version_tenths(const ConfigReader& config) {
  const nlohmann::json& value = config.json().at("version");
  double version = 0.0;
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    char* end = nullptr;
    version = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      config.fail("version", fmt::format("= \"{}\" is not a version number such as 2.6", text));
    }
  } else {
    version = *config.optional_number("version");
  }
  const double tenths = version * 10.0;
  if (!(std::fabs(tenths - std::round(tenths)) < 1e-6) || tenths < 0.0 || tenths > 1000.0) {
    config.fail("version", fmt::format("= {} is not a MiniCPM-V release number", version));
  }
  return std::llround(tenths);
}

// The release MiniCPMV builds; `note` says when the version had to be inferred.
const Release& read_release(const ConfigReader& config, std::string& note) {
  if (config.has("vision_encoder")) {
    config.fail("vision_encoder",
                "names a timm vision tower (MiniCPM-V 1.0 / 2.0), whose timm tensor layout trace "
                "does not model; supported: MiniCPM-Llama3-V 2.5, MiniCPM-V 2.6, 4.0, 4.5");
  }
  if (!config.has("version")) {
    // vLLM's rule for configs saved before the key existed: 2304 wide with 64 queries is 2.0.
    if (config.int_or({"hidden_size"}, 0, 0, k_max_width) == 2304 &&
        config.int_or({"query_num"}, 64, 1, 1 << 20) == 64) {
      config.fail("version",
                  "is absent and hidden_size 2304 with query_num 64 marks MiniCPM-V "
                  "2.0 (timm vision tower), which trace does not model");
    }
    note =
        "version absent: MiniCPM-Llama3-V 2.5 layout assumed (Llama-3 decoder, Idefics2 "
        "vision tower), as MiniCPMV does for configs without the key";
    return k_v2_5;
  }
  const std::int64_t tenths = version_tenths(config);
  switch (tenths) {
    case 25:
      return k_v2_5;
    case 26:
      return k_v2_6;
    case 40:
      return k_v4_0;
    case 45:
      return k_v4_5;
    case 20:
      config.fail("version", "= 2.0 (MiniCPM-V 2.0, timm vision tower) is not supported");
    default:
      config.fail("version", fmt::format("= {}.{} is not a MiniCPM-V release trace knows "
                                         "(supported: 2.5, 2.6, 4.0, 4.5; MiniCPM-V 4.6 has its "
                                         "own model_type minicpmv4_6)",
                                         tenths / 10, tenths % 10));
  }
}

// MiniCPM-o shares MiniCPMV's vision path but adds a Whisper audio encoder and a TTS decoder.
void refuse_omni(const ConfigReader& config) {
  for (const char* key : {"init_audio", "init_tts", "audio_config", "tts_config"}) {
    if (config.has(key)) {
      config.fail(key,
                  "marks MiniCPM-o (Whisper audio encoder, TTS decoder), which the minicpmv "
                  "builder does not model; only the MiniCPM-V vision-language releases are "
                  "supported");
    }
  }
  if (first_architecture(config) == "MiniCPMO") {
    config.fail("architectures",
                "names MiniCPMO (MiniCPM-o: audio encoder and TTS decoder), "
                "which the minicpmv builder does not model");
  }
}

void add_resampler(const ConfigReader& config, std::int64_t text_hidden, std::int64_t vision_hidden,
                   ModelDescription& model) {
  // MiniCPMV builds the resampler with D / 128 heads; nn.MultiheadAttention needs them to divide.
  const std::int64_t d = text_hidden;
  const std::int64_t heads = d / 128;
  if (heads == 0 || d % heads != 0) {
    config.fail("hidden_size", fmt::format("= {} cannot feed the resampler: it runs hidden_size "
                                           "/ 128 = {} heads, which must divide hidden_size",
                                           d, heads));
  }
  const std::int64_t queries = config.int_or({"query_num"}, 64, 1, 1 << 20);
  // Each with its stored shape (a bias of shape[0] where the count holds one more); bare: an
  // nn.Parameter stored under its own name.
  const auto extra = [&model](std::string name, const char* op, std::int64_t params,
                              std::vector<std::int64_t> shape = {}, bool bare = false) {
    model.extra_parameters.push_back(
        {std::move(name), "vision", op, params, std::move(shape), bare});
  };
  extra("resampler.query", "Parameter", checked_mul(queries, d), {queries, d}, true);
  if (vision_hidden != d) {
    extra("resampler.kv_proj", "Linear", checked_mul(d, vision_hidden), {d, vision_hidden});
  }
  // nn.MultiheadAttention stores its packed q/k/v projection as two bare parameters,
  // in_proj_weight [3D, D] and in_proj_bias [3D], beside the biased out_proj Linear.
  add_vision_multihead_attention(model, "resampler.attn", d);
  extra("resampler.ln_q", "LayerNorm", 2 * d);
  extra("resampler.ln_kv", "LayerNorm", 2 * d);
  extra("resampler.ln_post", "LayerNorm", 2 * d);
  extra("resampler.proj", "Parameter", checked_mul(d, d), {d, d}, true);
  model.notes.push_back(
      fmt::format("resampler: {} learned queries, {} heads of 128; its sin-cos position tables are "
                  "non-persistent buffers (not stored)",
                  queries, heads));
}

}  // namespace

ModelDescription build_minicpmv(const ConfigReader& config) {
  refuse_omni(config);
  std::string release_note;
  const Release& release = read_release(config, release_note);

  ModelDescription model = release.build_text(config);
  model.family = fmt::format("MiniCPM-V {} (SigLIP-layout tower + perceiver resampler + {})",
                             release.name, model.family);
  // Every release was saved by transformers >= 4.40, whose rotary inv_freq buffers are
  // non-persistent (the 2.6 index lists none).
  model.stored_extras.clear();
  if (!release_note.empty()) model.notes.push_back(release_note);
  note_defaults(model, config, "MiniCPMVConfig",
                {{"query_num", "64"}, {"drop_vision_last_layer", "true"}});

  // vision_config left out: MiniCPMVConfig builds its default_vision_config (SigLIP-400M at 980
  // px, 27 layers); given: the release's vision config class fills the keys it lacks.
  nlohmann::json empty_vision = nlohmann::json::object();
  const bool vision_given = config.has("vision_config");
  const ConfigReader vision =
      vision_given ? config.child("vision_config")
                   : ConfigReader(empty_vision, "vision_config", config.model_type());
  const SiglipDefaults defaults =
      vision_given
          ? release.vision_defaults
          : SiglipDefaults{"MiniCPMVConfig.default_vision_config", 1152, 27, 4304, 16, 14, 980};
  Stack tower = siglip_tower(
      vision, {"vpm", "vpm.encoder", defaults, SiglipLayout::PoolingHead::never}, model);
  if (config.bool_or("drop_vision_last_layer", true)) {
    if (tower.blocks.size() < 2) {
      config.fail("drop_vision_last_layer",
                  "= true would leave the vision tower without layers (vision_config has 1)");
    }
    tower.blocks.pop_back();
    model.notes.push_back(fmt::format(
        "drop_vision_last_layer: the last of {} vision layers is cut off at construction and "
        "not stored; {} counted",
        tower.blocks.size() + 1, tower.blocks.size()));
  }
  const std::int64_t vision_hidden = tower.blocks.front().attention.input_dim;
  model.stacks.push_back(std::move(tower));
  add_resampler(config, model.hidden_size, vision_hidden, model);
  return model;
}

}  // namespace trace::family
