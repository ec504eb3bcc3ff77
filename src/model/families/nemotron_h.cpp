// Nemotron-H (model_type nemotron_h: Nemotron-H 4B-56B, Nano v2, Nemotron 3 Nano/Super) and the
// Puzzle variant (nemotron_h_puzzle: per-layer block_configs). Every block is one RMSNorm and one
// mixer, chosen by the layer schedule:
//   M  Mamba-2: in_proj (z, xBC, dt), conv1d over x|B|C, A_log/D/dt_bias per head, gated RMSNorm
//      over d_inner = mamba_num_heads x mamba_head_dim (never expand x hidden), out_proj;
//   *  attention: GQA without RoPE, q/k/v/o (biases per attention_bias);
//   -  MLP: non-gated ReLU^2, up_proj / down_proj of intermediate_size;
//   E  MoE: router [E, H] + e_score_correction_bias [E], routed non-gated experts of
//      moe_intermediate_size working in moe_latent_size when set (LatentMoE: fc1/fc2_latent_proj),
//      shared experts of moe_shared_expert_intermediate_size x n_shared_experts on the hidden
//      state.
// The schedule: hybrid_override_pattern (string), layers_block_type (list), or block_configs
// (Puzzle; each entry's block_type, with per-layer overrides of the MoE width, top-k, expert
// count, latent and ssm_state_size; a value is the block's if present, else the top level's).
// num_hidden_layers may be null: the schedule's length is the layer count.
// MTP (num_nextn_predict_layers): per depth, enorm, hnorm, eh_proj [H, 2H], the sub-layers of
// mtp_hybrid_override_pattern / mtp_layers_block_type / mtp_block_configs, final_layernorm; the
// embedding and head are shared with the backbone.
// Sources: transformers models/nemotron_h/modeling_nemotron_h.py; vLLM nemotron_h.py and
// nemotron_h_mtp.py; the shapes are tabulated in docs/parameters.md.
#include <fmt/format.h>

#include "family.hpp"
#include "trace/error.hpp"

namespace trace::family {

namespace {

enum class BlockType { mamba, attention, mlp, moe };

struct ScheduledBlock {
  BlockType type = BlockType::mamba;
  const nlohmann::json* overrides = nullptr;  // the Puzzle block_configs entry, if any
  std::string where;                          // for messages: "block_configs[3]"
};

BlockType letter_type(const ConfigReader& config, const std::string& key, char letter,
                      std::size_t index) {
  switch (letter) {
    case 'M': return BlockType::mamba;
    case '*': return BlockType::attention;
    case '-': return BlockType::mlp;
    case 'E': return BlockType::moe;
    default:
      config.fail(key, fmt::format("has '{}' at position {}; the letters are M (Mamba-2), * "
                                   "(attention), - (MLP) and E (MoE)",
                                   letter, index));
  }
}

BlockType word_type(const ConfigReader& config, const std::string& where, const nlohmann::json& word) {
  const std::string name = word.is_string() ? word.get<std::string>() : word.dump();
  if (name == "mamba" || name == "M") return BlockType::mamba;
  if (name == "attention" || name == "*") return BlockType::attention;
  if (name == "mlp" || name == "-") return BlockType::mlp;
  if (name == "moe" || name == "E") return BlockType::moe;
  throw ConfigError(fmt::format(
      "config.json ({}): '{}' is {}; block types are \"mamba\", \"attention\", \"mlp\" and \"moe\"",
      config.model_type(), where, word.dump()));
}

// Reads a schedule from a pattern string, a list of words, or a list of block_configs objects.
std::vector<ScheduledBlock> read_schedule(const ConfigReader& config,
                                          std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (!config.has(key)) continue;
    const nlohmann::json& value = config.json().at(key);
    std::vector<ScheduledBlock> schedule;
    if (value.is_string()) {
      const std::string pattern = value.get<std::string>();
      for (std::size_t i = 0; i < pattern.size(); ++i) {
        schedule.push_back({letter_type(config, key, pattern[i], i), nullptr,
                            fmt::format("{}[{}]", key, i)});
      }
    } else if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string where = fmt::format("{}[{}]", config.key_path(key), i);
        const nlohmann::json& entry = value[i];
        if (entry.is_object()) {
          if (!entry.contains("block_type")) {
            throw ConfigError(fmt::format("config.json ({}): '{}' has no 'block_type'",
                                          config.model_type(), where));
          }
          schedule.push_back({word_type(config, where + ".block_type", entry["block_type"]),
                              &entry, where});
        } else {
          schedule.push_back({word_type(config, where, entry), nullptr, where});
        }
      }
    } else {
      config.fail(key, "must be a pattern string or a list");
    }
    if (schedule.empty()) config.fail(key, "is empty");
    return schedule;
  }
  return {};
}

// A per-block value (Puzzle) or else the top-level one.
std::int64_t block_int(const ConfigReader& config, const ScheduledBlock& block, const char* key,
                       std::optional<std::int64_t> fallback, std::int64_t min, std::int64_t max) {
  if (block.overrides && block.overrides->contains(key) && !(*block.overrides)[key].is_null()) {
    const nlohmann::json& value = (*block.overrides)[key];
    if (!value.is_number_integer() || value.get<std::int64_t>() < min ||
        value.get<std::int64_t>() > max) {
      throw ConfigError(fmt::format("config.json ({}): '{}.{}' = {} must be an integer in {}..{}",
                                    config.model_type(), block.where, key, value.dump(), min, max));
    }
    return value.get<std::int64_t>();
  }
  if (const std::optional<std::int64_t> top = config.optional_int({key}, min, max)) return *top;
  if (fallback) return *fallback;
  throw ConfigError(fmt::format(
      "config.json ({}): '{}' needs '{}' (in the block or at the top level); add it",
      config.model_type(), block.where, key));
}

struct NemotronShape {
  std::int64_t hidden = 0;
  HeadShape attention;
  bool attention_bias = false;
  bool mlp_bias = false;
  std::string activation;
};

Block make_block(const ConfigReader& config, const NemotronShape& shape,
                 const ScheduledBlock& scheduled) {
  const std::int64_t h = shape.hidden;
  Block block;
  block.single_mixer = true;
  block.norms = {rms_norm("norm", h)};
  block.attention.kind = AttentionKind::none;
  block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim = h;
  block.mlp = Mlp{MlpKind::none, "", h, 0, false, false, false};
  switch (scheduled.type) {
    case BlockType::mamba: {
      Ssm ssm;
      ssm.kind = SsmKind::mamba2;
      ssm.hidden = h;
      ssm.num_heads = block_int(config, scheduled, "mamba_num_heads", std::nullopt, 1, k_max_heads);
      ssm.head_dim = block_int(config, scheduled, "mamba_head_dim", std::nullopt, 1, k_max_width);
      ssm.inner = checked_mul(ssm.num_heads, ssm.head_dim);
      ssm.state = block_int(config, scheduled, "ssm_state_size", std::nullopt, 1, k_max_width);
      ssm.groups = block_int(config, scheduled, "n_groups", 1, 1, k_max_heads);
      ssm.conv_kernel = block_int(config, scheduled, "conv_kernel", 4, 1, 1024);
      ssm.chunk_size = block_int(config, scheduled, "chunk_size", 256, 1, k_max_positions);
      ssm.proj_bias = config.bool_or("mamba_proj_bias", config.bool_or("use_bias", false));
      ssm.conv_bias = config.bool_or("use_conv_bias", true);
      block.ssm = ssm;
      break;
    }
    case BlockType::attention:
      block.attention = self_attention(h, shape.attention, shape.attention_bias, shape.attention_bias);
      block.attention.rotary_dim = 0;  // Nemotron-H attention has no positional encoding
      break;
    case BlockType::mlp:
      block.mlp = Mlp{MlpKind::plain, shape.activation, h,
                      block_int(config, scheduled, "intermediate_size", std::nullopt, 1, k_max_width),
                      shape.mlp_bias, shape.mlp_bias, false};
      break;
    case BlockType::moe: {
      Moe moe;
      moe.hidden_dim = h;
      moe.num_experts = block_int(config, scheduled, "n_routed_experts", std::nullopt, 1, 1 << 20);
      moe.top_k = block_int(config, scheduled, "num_experts_per_tok", std::nullopt, 1, 1 << 20);
      if (moe.top_k > moe.num_experts) {
        throw ConfigError(fmt::format(
            "config.json ({}): '{}' routes each token to {} of only {} experts",
            config.model_type(), scheduled.where, moe.top_k, moe.num_experts));
      }
      moe.latent_dim = block_int(config, scheduled, "moe_latent_size", 0, 0, k_max_width);
      const std::int64_t width =
          block_int(config, scheduled, "moe_intermediate_size", std::nullopt, 1, k_max_width);
      moe.expert = Mlp{MlpKind::plain, shape.activation,
                       moe.latent_dim > 0 ? moe.latent_dim : h, width, shape.mlp_bias,
                       shape.mlp_bias, false};
      moe.num_shared_experts = block_int(config, scheduled, "n_shared_experts", 1, 0, 1 << 16);
      const std::int64_t shared_width = block_int(
          config, scheduled, "moe_shared_expert_intermediate_size", 0, 0, k_max_width);
      if (moe.num_shared_experts > 0 && shared_width > 0) {
        moe.shared = Mlp{MlpKind::plain, shape.activation, h,
                         checked_mul(moe.num_shared_experts, shared_width), shape.mlp_bias,
                         shape.mlp_bias, false};
      }
      moe.router_correction_bias = true;  // NemotronHTopkRouter registers e_score_correction_bias
      // Nemotron 3 Nano (no latent) stores its router [E, H] in F32; the LatentMoE releases
      // (Super, Puzzle) store it in BF16 (safetensors headers, docs/parameters.md section 6).
      moe.router_fp32 = moe.latent_dim == 0;
      block.moe = moe;
      break;
    }
  }
  return block;
}

}  // namespace

ModelDescription build_nemotron_h(const ConfigReader& config) {
  ModelDescription model;
  const bool puzzle = config.model_type() == "nemotron_h_puzzle";
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::vector<ScheduledBlock> schedule =
      puzzle ? read_schedule(config, {"block_configs"})
             : read_schedule(config, {"hybrid_override_pattern", "layers_block_type"});
  if (schedule.empty()) {
    throw ConfigError(fmt::format(
        "config.json ({}): no layer schedule; add {}", config.model_type(),
        puzzle ? "'block_configs'" : "'hybrid_override_pattern' or 'layers_block_type'"));
  }
  const auto layers = static_cast<std::int64_t>(schedule.size());
  if (layers > k_max_layers) config.fail("hybrid_override_pattern", "has too many layers");
  if (const std::optional<std::int64_t> declared =
          config.optional_int({"num_hidden_layers"}, 1, k_max_layers);
      declared && *declared != layers) {
    throw ConfigError(fmt::format(
        "config.json ({}): 'num_hidden_layers' = {} but the layer schedule ({}) has {} entries; "
        "they must agree",
        config.model_type(), *declared, schedule.front().where.substr(0, schedule.front().where.find('[')),
        layers));
  }
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = puzzle ? "Nemotron-H Puzzle (per-layer heterogeneous Mamba-2 / MoE / attention)"
                        : "Nemotron-H (hybrid Mamba-2 / attention / MLP / MoE)";
  model.position = PositionKind::none;
  model.ssm_cache_dtype = config.optional_string("mamba_ssm_cache_dtype").value_or("");

  NemotronShape shape;
  shape.hidden = hidden;
  shape.attention.num_heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  shape.attention.num_kv_heads =
      config.int_or({"num_key_value_heads"}, shape.attention.num_heads, 1, k_max_heads);
  if (shape.attention.num_heads % shape.attention.num_kv_heads != 0) {
    config.fail("num_attention_heads", "is not a multiple of num_key_value_heads");
  }
  shape.attention.head_dim = config.int_or({"head_dim", "attention_head_dim"},
                                           hidden / shape.attention.num_heads, 1, k_max_width);
  shape.attention_bias = config.bool_or("attention_bias", false);
  shape.mlp_bias = config.bool_or("mlp_bias", false);
  shape.activation = config.optional_string("mlp_hidden_act").value_or("relu2");

  Stack stack;
  stack.name = "decoder";
  for (const ScheduledBlock& scheduled : schedule) {
    stack.blocks.push_back(make_block(config, shape, scheduled));
  }
  stack.final_norm = rms_norm("norm_f", hidden);
  model.stacks.push_back(std::move(stack));

  const std::int64_t depths = config.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  if (depths > 0) {
    const std::vector<ScheduledBlock> mtp_schedule =
        read_schedule(config, {"mtp_block_configs", "mtp_hybrid_override_pattern",
                               "mtp_layers_block_type"});
    if (mtp_schedule.empty()) {
      config.fail("num_nextn_predict_layers",
                  "is set but no MTP schedule is given (mtp_hybrid_override_pattern, "
                  "mtp_layers_block_type or mtp_block_configs)");
    }
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t depth = 0; depth < depths; ++depth) {
      for (const ScheduledBlock& scheduled : mtp_schedule) {
        mtp.blocks.push_back(make_block(config, shape, scheduled));
      }
      const std::string prefix = fmt::format("mtp.layers.{}", depth * static_cast<std::int64_t>(mtp_schedule.size()));
      model.extra_parameters.push_back({prefix + ".enorm", "mtp", "RMSNorm", hidden});
      model.extra_parameters.push_back({prefix + ".hnorm", "mtp", "RMSNorm", hidden});
      model.extra_parameters.push_back(
          {prefix + ".eh_proj", "mtp", "Linear", checked_mul(2 * hidden, hidden)});
      model.extra_parameters.push_back({prefix + ".final_layernorm", "mtp", "RMSNorm", hidden});
    }
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = depths;
    model.notes.push_back(fmt::format(
        "{} MTP depth(s) of {} sub-layers stored (embedding and head shared with the backbone): in "
        "parameters.total and parameters.mtp, not in active",
        depths, mtp_schedule.size()));
  }
  return model;
}

}  // namespace trace::family
