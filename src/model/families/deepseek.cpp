// DeepSeek-V2/V3 lineage: multi-head latent attention (MLA), the first first_k_dense_replace
// layers dense (intermediate_size), the rest MoE every moe_layer_freq layers with n_routed_experts
// of moe_intermediate_size (top num_experts_per_tok) and n_shared_experts fused into one MLP of
// n_shared x moe_intermediate_size; V3's noaux_tc routing stores e_score_correction_bias.
// num_nextn_predict_layers MTP layers are stored after the main stack: each a full decoder layer
// plus enorm, hnorm, eh_proj (2h -> h), shared_head.norm, and its own copies of the embedding and
// head. deepseek_v32 adds the DSA lightning indexer to every layer's attention.
// model_types: deepseek_v2, deepseek_v3, kimi_k2 (the V3 layout), deepseek_v32, and glm_moe_dsa
// (GLM-5: the same MLA + indexer; indexer_types marks "shared" layers that reuse another layer's
// top-k and hold no indexer; mlp_layer_types marks dense/sparse layers; its MTP layer has no
// embedding or head copies).
// glm4_moe_lite (GLM-4.7-Flash): DeepSeek-V3 attention (MLA with q_lora_rank) and GLM-4.5's MoE:
// the router always holds e_score_correction_bias (Glm4MoeTopkRouter), mlp_layer_types marks
// dense/sparse layers (Glm4MoeLiteConfig defaults it to one dense layer, then sparse), and the
// MTP layer keeps its own embedding and shared_head.head copies, as GLM-4.5's does.
// Tensor lists: deepseek-ai's modeling_deepseek.py (DeepseekV3Attention, DeepseekV3MoE,
// MoEGate) and transformers models/deepseek_v3/modeling_deepseek_v3.py.
#include <fmt/format.h>

#include "family.hpp"

namespace trace::family {

namespace {

Block deepseek_block(const ConfigReader& config, std::int64_t hidden, std::int64_t heads,
                     const MlaShape& mla, const std::optional<SparseIndexer>& indexer,
                     bool is_moe, const Moe& moe, std::int64_t dense_width) {
  Block block;
  block.attention = mla_attention(mla, hidden, heads, config.bool_or("attention_bias", false));
  block.attention.indexer = indexer;
  if (is_moe) {
    block.mlp = Mlp{MlpKind::none, "", hidden, 0, false, false, false};
    block.moe = moe;
  } else {
    block.mlp = Mlp{MlpKind::gated, moe.expert.activation, hidden, dense_width, false, false, false};
  }
  block.norms = {rms_norm("input_layernorm", hidden), rms_norm("post_attention_layernorm", hidden)};
  return block;
}

}  // namespace

ModelDescription build_deepseek(const ConfigReader& config) {
  ModelDescription model;
  const std::string& type = config.model_type();
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  const std::int64_t dense_width = config.require_int({"intermediate_size"}, 1, k_max_width);
  MlaShape mla;
  mla.q_lora_rank = config.int_or({"q_lora_rank"}, 0, 0, k_max_width);
  mla.kv_lora_rank = config.require_int({"kv_lora_rank"}, 1, k_max_width);
  mla.qk_nope_head_dim = config.require_int({"qk_nope_head_dim"}, 0, k_max_width);
  mla.qk_rope_head_dim = config.require_int({"qk_rope_head_dim"}, 0, k_max_width);
  mla.v_head_dim = config.require_int({"v_head_dim"}, 1, k_max_width);
  std::optional<SparseIndexer> indexer;
  const bool glm = type == "glm_moe_dsa";
  const bool lite = type == "glm4_moe_lite";
  if (lite) {
    // Glm4MoeLiteConfig's defaults (q_lora_rank 768, 64 routed + 1 shared experts) differ from
    // what this builder assumes for an absent key (no query LoRA, no experts): ask for them.
    for (const char* key : {"q_lora_rank", "n_routed_experts", "n_shared_experts"}) {
      if (!config.json().contains(key)) {
        config.fail(key, "is missing; glm4_moe_lite configs state it (Glm4MoeLiteConfig's default "
                         "differs from DeepSeek's), so trace will not guess");
      }
    }
  }
  if (type == "deepseek_v32" || glm) {
    if (mla.q_lora_rank == 0) config.fail("q_lora_rank", "must be set: the indexer reads the query latent");
    indexer = SparseIndexer{config.require_int({"index_n_heads"}, 1, k_max_heads),
                            config.require_int({"index_head_dim"}, 1, k_max_width),
                            mla.q_lora_rank};
  }
  fill_decoder_basics(model, config, vocab, hidden, false);
  model.family = type == "deepseek_v2"
                     ? "DeepSeek-V2 (MLA, fine-grained MoE with shared experts)"
                 : type == "deepseek_v32"
                     ? "DeepSeek-V3.2 (MLA + sparse-attention indexer, MoE, MTP)"
                 : glm ? "GLM-5 (MLA + DSA indexer with shared layers, MoE, MTP)"
                 : lite ? "GLM-4.7-Flash (MLA, GLM MoE with shared expert, MTP)"
                        : "DeepSeek-V3 layout (MLA, MoE with shared experts, MTP)";
  model.position = PositionKind::rope;

  // Routed experts: absent (null) n_routed_experts makes every layer dense.
  const bool has_experts = config.has("n_routed_experts");
  Moe moe;
  if (has_experts) {
    moe = routed_experts(config, hidden, {"n_routed_experts"}, {"num_experts_per_tok"},
                         config.require_int({"moe_intermediate_size"}, 1, k_max_width));
    set_shared_experts(moe, config.int_or({"n_shared_experts"}, 0, 0, 1 << 16));
    moe.router_correction_bias =
        lite || config.optional_string("topk_method").value_or("") == "noaux_tc";
  }
  // Glm4MoeLiteConfig reads no first_k_dense_replace: without mlp_layer_types it builds one dense
  // layer, then sparse ones. GLM-4.7-Flash's config names first_k_dense_replace 1, which agrees
  // (vLLM's DeepSeek-based loader reads that key); trace reads it too, and defaults it to 1.
  const std::int64_t first_dense =
      config.int_or({"first_k_dense_replace"}, lite ? 1 : 0, 0, k_max_layers);
  if (lite && !config.has("first_k_dense_replace") && !config.has("mlp_layer_types")) {
    model.notes.push_back(
        "Glm4MoeLiteConfig default used: mlp_layer_types = [\"dense\"] + [\"sparse\"] * "
        "(num_hidden_layers - 1)");
  }
  const std::int64_t frequency = config.int_or({"moe_layer_freq"}, 1, 1, k_max_layers);
  const std::vector<std::string> mlp_types = read_string_list(config, "mlp_layer_types", layers,
                                                              {"dense", "sparse"});
  const auto is_moe_layer = [&](std::int64_t index) {
    if (!has_experts) return false;
    if (!mlp_types.empty() && index < layers) {
      return mlp_types[static_cast<std::size_t>(index)] == "sparse";
    }
    return index >= first_dense && index % frequency == 0;
  };
  const std::vector<std::string> indexer_types =
      glm ? read_string_list(config, "indexer_types", layers, {"full", "shared"})
          : std::vector<std::string>{};
  if (glm && indexer_types.empty() && config.int_or({"index_topk_freq"}, 1, 1, k_max_layers) != 1) {
    config.fail("indexer_types", "is missing while index_topk_freq != 1; trace cannot tell which "
                                 "layers hold an indexer");
  }
  const auto layer_indexer = [&](std::int64_t index) {
    if (!indexer_types.empty() && index < layers &&
        indexer_types[static_cast<std::size_t>(index)] == "shared") {
      return std::optional<SparseIndexer>{};
    }
    return indexer;
  };

  Stack stack;
  stack.name = "decoder";
  for (std::int64_t i = 0; i < layers; ++i) {
    stack.blocks.push_back(deepseek_block(config, hidden, heads, mla, layer_indexer(i),
                                          is_moe_layer(i), moe, dense_width));
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));

  const std::int64_t mtp_layers = config.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  if (mtp_layers > 0) {
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t i = 0; i < mtp_layers; ++i) {
      mtp.blocks.push_back(deepseek_block(config, hidden, heads, mla, indexer,
                                          is_moe_layer(layers + i), moe, dense_width));
      add_mtp_extras(model, layers + i, vocab, hidden, !glm);
    }
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
    model.notes.push_back(fmt::format(
        "{} multi-token-prediction layer(s) stored{}: in parameters.total and parameters.mtp, not "
        "in active",
        mtp_layers, glm ? "" : " with their own embedding and head copies"));
  }
  return model;
}

}  // namespace trace::family
