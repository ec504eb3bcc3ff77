// GLM-5.3-Flash (model_type glm5_next: Glm5NextForConditionalGeneration, a text_config of
// model_type glm5_next_text beside a vision_config; glm5_next_text alone is the text model).
// Text model (Glm5NextTextModel), every layer:
//   mHC           the hidden state between layers is hc_mult parallel residual streams of hidden
//                 width (the embedding copied hc_mult times; the final norm reads their
//                 unweighted mean, hc_head, which holds no tensor). Each layer mixes them twice,
//                 before attention (hc_attn_*) and before the FFN (hc_ffn_*), each site holding
//                 fn [(2 + n) n, n H] (stored BF16), base [(2 + n) n] and scale [3] (stored F32),
//                 n = hc_mult;
//   input_layernorm, then one token mixer chosen by layer_types:
//     linear_attention          Kimi Delta Attention (as Kimi-Linear's): q/k/v_proj [Hk dk, H],
//                               q/k/v_conv1d [width, 1, K] without bias, f_a_proj [dk, H] ->
//                               f_b_proj [Hk dk, dk], dt_bias [Hk dk], A_log [Hk], b_proj [Hk, H],
//                               g_a_proj -> g_b_proj, o_norm [dk], o_proj [H, Hk dk]; heads, head
//                               dim and kernel from linear_attn_config;
//     deepseek_sparse_attention MLA without RoPE (qk_rope_head_dim 0): q_a_proj, q_a_layernorm,
//                               q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj,
//                               and (indexer_types "full") a DSA indexer: wq_b [Ih Id, q_lora],
//                               wk [Id, H], k_norm LayerNorm(Id), weights_proj [Ih, H], plus the
//                               k-pool compression index_kpool_compress_ape [kpool, Id] and
//                               index_kpool_compress_gate [Id, H];
//   post_attention_layernorm, then the FFN chosen by mlp_layer_types: dense SwiGLU of
//   intermediate_size, or MoE: a sigmoid router [E, H] with e_score_correction_bias [E], E routed
//   experts of moe_intermediate_size (top num_experts_per_tok) and n_shared_experts shared ones
//   fused into one SwiGLU.
// MTP (checkpoint layers.{num_hidden_layers}, which transformers skips on load; vLLM reads
// num_nextn_predict_layers): a sparse-attention layer with its own indexer and the MoE, without
// mHC tensors, plus enorm, hnorm, eh_proj [H, 2H] and shared_head.norm; embedding and head are
// the backbone's.
// Vision (Glm5NextVisionModel): patch_embed Conv3d [D, C, T, P, P] + bias, depth blocks (norm1 /
// norm2 RMSNorm, attn.qkv [3D, D] and attn.proj [D, D] with attention_bias biases, q_norm / k_norm
// RMSNorm over one head, SwiGLU gate / up [I, D] and down [D, I] with attention_bias biases),
// post_layernorm, downsample Conv2d [O, D, m, m] + bias, merger: proj [O, O], post_projection_norm
// LayerNorm(O), SwiGLU gate / up [Ip, O], down [O, Ip] without biases (O = out_hidden_size, which
// must be the text width; Ip = projection_intermediate_size). Rotary only: no position table.
// Checkpoint names: model.language_model.*, model.visual.*, lm_head.weight.
// Sources: transformers models/glm5_next/modeling_glm5_next.py and configuration_glm5_next.py,
// vLLM glm5_next.py (the hc_* checkpoint names and their F32 storage); the tensor-by-tensor
// derivation against the published checkpoint in tests/data/configs/SOURCES-glm5_next.md.
#include <fmt/format.h>

#include <algorithm>

#include "family.hpp"

namespace trace::family {

namespace {

// The per-layer mixer schedule: true = KDA (linear_attention), false = sparse MLA.
std::vector<bool> linear_schedule(const ConfigReader& text, std::int64_t layers,
                                  ModelDescription& model) {
  std::vector<bool> kda(static_cast<std::size_t>(layers), false);
  const std::vector<std::string> types =
      read_string_list(text, "layer_types", layers,
                       {"linear_attention", "deepseek_sparse_attention", "full_attention"});
  if (types.empty()) {
    // Glm5NextTextConfig: every fourth layer (index % 4 == 3) is sparse attention.
    for (std::int64_t i = 0; i < layers; ++i) kda[static_cast<std::size_t>(i)] = i % 4 != 3;
    model.notes.push_back(
        "Glm5NextTextConfig default used: layer_types = linear_attention "
        "except every layer i with i % 4 == 3 (deepseek_sparse_attention)");
  } else {
    for (std::size_t i = 0; i < types.size(); ++i) kda[i] = types[i] == "linear_attention";
  }
  return kda;
}

// linear_attn_config's layer lists (0-based in GLM-5.3's config; transformers ignores them) must
// agree with the schedule used, or the config contradicts itself.
void check_layer_lists(const ConfigReader& linear, const std::vector<bool>& kda) {
  const auto layers = static_cast<std::int64_t>(kda.size());
  for (const char* key : {"kda_layers", "full_attn_layers"}) {
    if (!linear.has(key)) continue;
    const bool want_kda = std::string_view(key) == "kda_layers";
    const std::vector<std::int64_t> list = read_layer_list(linear, key, layers);
    const auto expected = static_cast<std::size_t>(std::count(kda.begin(), kda.end(), want_kda));
    if (list.size() != expected) {
      linear.fail(key, fmt::format("names {} layers, but layer_types has {} {} layers (0-based "
                                   "indices expected); make them agree",
                                   list.size(), expected, want_kda ? "KDA" : "sparse-attention"));
    }
    for (const std::int64_t index : list) {
      if (kda[static_cast<std::size_t>(index)] != want_kda) {
        linear.fail(key, fmt::format("names layer {}, which layer_types makes {}; make them agree",
                                     index, want_kda ? "sparse attention" : "KDA"));
      }
    }
  }
}

// Dense or sparse FFN per layer: mlp_layer_types, else Glm5NextTextConfig's min(3, layers) dense
// layers. vLLM reads first_k_dense_replace instead; a value that disagrees is refused.
std::vector<bool> sparse_schedule(const ConfigReader& text, std::int64_t layers,
                                  ModelDescription& model) {
  std::vector<bool> sparse(static_cast<std::size_t>(layers), true);
  const std::vector<std::string> types =
      read_string_list(text, "mlp_layer_types", layers, {"dense", "sparse"});
  const std::optional<std::int64_t> first_dense =
      text.optional_int({"first_k_dense_replace"}, 0, k_max_layers);
  if (!types.empty()) {
    for (std::size_t i = 0; i < types.size(); ++i) sparse[i] = types[i] == "sparse";
  } else {
    for (std::int64_t i = 0; i < std::min<std::int64_t>(3, layers); ++i) {
      sparse[static_cast<std::size_t>(i)] = false;
    }
    if (!first_dense) {
      model.notes.push_back(
          "Glm5NextTextConfig default used: mlp_layer_types = 3 x dense, then "
          "sparse");
    }
  }
  if (first_dense) {
    // vLLM builds dense MLPs on the layers before first_k_dense_replace, MoE on the rest.
    for (std::int64_t i = 0; i < layers; ++i) {
      if (sparse[static_cast<std::size_t>(i)] != (i >= *first_dense)) {
        text.fail("first_k_dense_replace",
                  fmt::format("= {} disagrees with {} at layer {} (transformers reads the "
                              "latter, vLLM the former); make them agree",
                              *first_dense,
                              types.empty() ? "Glm5NextTextConfig's default mlp_layer_types "
                                              "(3 dense layers)"
                                            : "mlp_layer_types",
                              i));
      }
    }
  }
  return sparse;
}

// Which sparse-attention layers run an indexer: indexer_types, else index_topk_pattern ("F" /
// "S"), else the index_topk_freq / index_skip_topk_offset rule of Glm5NextTextConfig.
std::vector<bool> indexer_schedule(const ConfigReader& text, std::int64_t layers) {
  std::vector<bool> full(static_cast<std::size_t>(layers), true);
  std::vector<std::string> types =
      read_string_list(text, "indexer_types", layers, {"full", "shared"});
  if (types.empty() && text.has("index_topk_pattern")) {
    const std::optional<std::string> pattern = text.optional_string("index_topk_pattern");
    if (!pattern || static_cast<std::int64_t>(pattern->size()) != layers ||
        pattern->find_first_not_of("FS") != std::string::npos) {
      text.fail("index_topk_pattern",
                fmt::format("must be a string of {} letters F (full) or S (shared)", layers));
    }
    for (const char letter : *pattern) types.emplace_back(letter == 'F' ? "full" : "shared");
  }
  if (!types.empty()) {
    for (std::size_t i = 0; i < types.size(); ++i) full[i] = types[i] == "full";
    return full;
  }
  const std::int64_t frequency = text.int_or({"index_topk_freq"}, 1, 1, k_max_layers);
  const std::int64_t offset = text.int_or({"index_skip_topk_offset"}, 2, 0, k_max_layers);
  for (std::int64_t i = 0; i < layers; ++i) {
    full[static_cast<std::size_t>(i)] = std::max<std::int64_t>(i - offset + 1, 0) % frequency == 0;
  }
  return full;
}

ModelDescription glm5_next_text(const ConfigReader& text, const std::string& prefix) {
  ModelDescription model;
  const std::int64_t vocab = text.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = text.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = text.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = text.require_int({"num_attention_heads"}, 1, k_max_heads);
  if (const std::optional<std::int64_t> kv_heads =
          text.optional_int({"num_key_value_heads"}, 1, k_max_heads);
      kv_heads && *kv_heads != heads) {
    text.fail("num_key_value_heads",
              fmt::format("= {} differs from num_attention_heads = {}; Glm5NextTextConfig "
                          "requires them equal (MLA)",
                          *kv_heads, heads));
  }
  fill_decoder_basics(model, text, vocab, hidden, false);
  model.position = PositionKind::none;  // KDA layers carry none; the MLA layers are NoPE
  // mHC.
  if (!text.bool_or("mhc", true)) {
    text.fail("mhc",
              "is false; Glm5NextTextModel always builds its hyper-connections, and a "
              "layout without them is not supported");
  }
  const std::int64_t streams = text.require_int({"hc_mult", "mhc_num_residual_streams"}, 1, 64);
  const std::int64_t mix = (2 + streams) * streams;
  const std::int64_t hc_site =
      checked_add(checked_product({mix, streams, hidden}, "the mHC parameters"), mix + 3);
  model.family = fmt::format(
      "GLM-5.3-Flash (Kimi Delta Attention + NoPE MLA with DSA k-pool "
      "indexer, {}-stream mHC, MoE with shared expert, MTP)",
      streams);

  // Kimi Delta Attention: linear_attn_config wins over the flat linear_* fields, as in
  // Glm5NextTextConfig.__post_init__.
  std::int64_t kda_heads = 0, kda_head_dim = 0, kda_kernel = 0;
  if (text.has("linear_attn_config")) {
    const ConfigReader linear = text.child("linear_attn_config");
    kda_heads = linear.require_int({"num_heads"}, 1, k_max_heads);
    kda_head_dim = linear.require_int({"head_dim"}, 1, k_max_width);
    kda_kernel = linear.int_or({"short_conv_kernel_size"}, 4, 1, 1024);
    note_defaults(model, linear, "Glm5NextTextConfig (linear_attn_config)",
                  {{"short_conv_kernel_size", "4"}});
  } else if (text.has("linear_num_heads") || text.has("linear_head_dim")) {
    kda_heads = text.require_int({"linear_num_heads"}, 1, k_max_heads);
    kda_head_dim = text.require_int({"linear_head_dim"}, 1, k_max_width);
    kda_kernel = text.int_or({"linear_conv_kernel_dim"}, 4, 1, 1024);
    note_defaults(model, text, "Glm5NextTextConfig", {{"linear_conv_kernel_dim", "4"}});
  } else {
    text.fail("linear_attn_config",
              "is missing (and so are linear_num_heads / linear_head_dim); trace cannot size the "
              "Kimi Delta Attention layers");
  }
  const Ssm kda = kimi_delta_attention(hidden, kda_heads, kda_head_dim, kda_kernel);
  const std::vector<bool> is_kda = linear_schedule(text, layers, model);
  if (text.has("linear_attn_config")) check_layer_lists(text.child("linear_attn_config"), is_kda);

  // Sparse MLA (NoPE) and its indexer.
  MlaShape mla;
  if (!text.has("q_lora_rank")) {
    text.fail("q_lora_rank",
              "is missing or null; Glm5NextTextConfig requires it (the DSA "
              "indexer reads the query latent)");
  }
  mla.q_lora_rank = text.require_int({"q_lora_rank"}, 1, k_max_width);
  mla.kv_lora_rank = text.require_int({"kv_lora_rank"}, 1, k_max_width);
  mla.qk_nope_head_dim = text.require_int({"qk_nope_head_dim"}, 1, k_max_width);
  mla.qk_rope_head_dim = text.require_int({"qk_rope_head_dim"}, 0, k_max_width);
  mla.v_head_dim = text.require_int({"v_head_dim"}, 1, k_max_width);
  if (mla.qk_rope_head_dim != 0) {
    text.fail("qk_rope_head_dim", fmt::format("= {}; Glm5NextTextConfig requires 0 (the sparse "
                                              "attention layers use no RoPE)",
                                              mla.qk_rope_head_dim));
  }
  const SparseIndexer indexer{text.require_int({"index_n_heads"}, 1, k_max_heads),
                              text.require_int({"index_head_dim"}, 1, k_max_width),
                              mla.q_lora_rank};
  const std::int64_t kpool = text.int_or({"index_kpool"}, 16, 1, 1 << 20);
  note_defaults(model, text, "Glm5NextTextConfig", {{"index_kpool", "16"}});
  // index_kpool_compress_ape [kpool, Id] + index_kpool_compress_gate [Id, H], per indexer.
  const std::int64_t kpool_params =
      checked_add(checked_mul(kpool, indexer.head_dim), checked_mul(indexer.head_dim, hidden));
  const bool bias = text.bool_or("attention_bias", false);
  const Attention attention = mla_attention(mla, hidden, heads, bias);  // qk_rope_head_dim is 0
  const std::vector<bool> has_indexer = indexer_schedule(text, layers);

  // FFN.
  const std::int64_t dense_width = text.require_int({"intermediate_size"}, 1, k_max_width);
  Moe moe = routed_experts(text, hidden, {"n_routed_experts"}, {"num_experts_per_tok"},
                           text.require_int({"moe_intermediate_size"}, 1, k_max_width));
  set_shared_experts(moe, text.int_or({"n_shared_experts"}, 1, 0, 1 << 16));
  note_defaults(model, text, "Glm5NextTextConfig", {{"n_shared_experts", "1"}});
  moe.router_correction_bias = true;  // Glm5NextTextTopkRouter always holds the buffer
  const std::vector<bool> is_sparse = sparse_schedule(text, layers, model);

  const auto make_block = [&](bool linear, bool sparse, bool with_indexer) {
    Block block;
    block.norms = pre_norm_pair(hidden);
    if (linear) {
      block.attention.kind = AttentionKind::none;
      block.attention.input_dim = block.attention.kv_input_dim = block.attention.output_dim =
          hidden;
      block.ssm = kda;
    } else {
      block.attention = attention;
      if (with_indexer) block.attention.indexer = indexer;
    }
    if (sparse) {
      set_moe(block, moe, hidden);
    } else {
      block.mlp =
          Mlp{MlpKind::gated, moe.expert.activation, hidden, dense_width, false, false, false};
    }
    return block;
  };

  Stack stack;
  stack.name = "decoder";
  std::int64_t kda_layers = 0;
  std::int64_t indexers = 0;
  std::string indexer_layers;
  for (std::int64_t i = 0; i < layers; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const bool with_indexer = !is_kda[at] && has_indexer[at];
    Block block = make_block(is_kda[at], is_sparse[at], with_indexer);
    block.residual_streams = streams;
    stack.blocks.push_back(std::move(block));
    kda_layers += is_kda[at] ? 1 : 0;
    if (with_indexer) {
      ++indexers;
      indexer_layers += fmt::format("{}{}", indexer_layers.empty() ? "" : ",", i);
    }
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));
  // Kept in F32 by the checkpoint: each mHC site's base and scale.
  model.fp32_stored_params = checked_mul(2 * layers, mix + 3, "the F32 parameters");

  const std::string layer_names = prefix + "layers.*.";
  model.extra_parameters.push_back({layer_names + "hc_attn_fn, hc_attn_base, hc_attn_scale",
                                    "other", "mHC", checked_mul(layers, hc_site)});
  model.extra_parameters.push_back({layer_names + "hc_ffn_fn, hc_ffn_base, hc_ffn_scale", "other",
                                    "mHC", checked_mul(layers, hc_site)});
  if (indexers > 0) {
    model.extra_parameters.push_back(
        {fmt::format("{}layers.{{{}}}.self_attn.indexer.index_kpool_compress_ape, "
                     "index_kpool_compress_gate",
                     prefix, indexer_layers),
         "attention", "Parameter", checked_mul(indexers, kpool_params)});
  }

  // MTP.
  const std::int64_t mtp_layers = text.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  if (!text.has("num_nextn_predict_layers")) {
    model.notes.push_back(
        "num_nextn_predict_layers absent: no MTP layer counted (GLM-5.3-Flash's "
        "checkpoint stores one, as layer num_hidden_layers)");
  }
  if (mtp_layers > 0) {
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t i = 0; i < mtp_layers; ++i) {
      mtp.blocks.push_back(make_block(false, true, true));
      const std::string at = fmt::format("{}layers.{}", prefix, layers + i);
      model.extra_parameters.push_back({at + ".enorm", "mtp", "RMSNorm", hidden});
      model.extra_parameters.push_back({at + ".hnorm", "mtp", "RMSNorm", hidden});
      model.extra_parameters.push_back(
          {at + ".eh_proj", "mtp", "Linear", checked_mul(2 * hidden, hidden)});
      model.extra_parameters.push_back({at + ".shared_head.norm", "mtp", "RMSNorm", hidden});
      model.extra_parameters.push_back(
          {at + ".self_attn.indexer.index_kpool_compress_ape, index_kpool_compress_gate", "mtp",
           "Parameter", kpool_params});
    }
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
    model.notes.push_back(fmt::format(
        "{} MTP layer(s) stored as layers.{}: a sparse-attention MoE layer with its own indexer, "
        "no mHC tensors, plus enorm, hnorm, eh_proj, shared_head.norm (embedding and head shared): "
        "in parameters.total and parameters.mtp, not in active",
        mtp_layers, layers));
  }

  model.notes.push_back(fmt::format(
      "mHC: the hidden state between layers is {} residual streams x {} (the layers' "
      "residual_streams); each layer's two sites hold fn [{}, {}] + base [{}] + scale [3] = {} "
      "parameters ({} in all, component other, not shown per layer); the final collapse is an "
      "unweighted mean with no tensor",
      streams, hidden, mix, streams * hidden, mix, hc_site, 2 * layers * hc_site));
  model.notes.push_back(fmt::format(
      "{} KDA layers hold no KV cache: each keeps a {} x {} x {} recurrent state and a "
      "(kernel - 1) x {} conv state per sequence; {} sparse-attention layers cache the {}-wide "
      "latent (NoPE: no rope key) plus the indexer's {}-wide key per token",
      kda_layers, kda.num_heads, kda.state, kda.head_dim, kda.conv_channels(), layers - kda_layers,
      mla.kv_lora_rank, indexer.head_dim));
  model.notes.push_back(fmt::format(
      "DSA indexer with k-pool compression (index_kpool = {}): index_kpool_compress_ape [{}, {}] "
      "and index_kpool_compress_gate [{}, {}] per indexer ({} parameters each) are counted as "
      "extra tensors beside wq_b, wk, k_norm, weights_proj",
      kpool, kpool, indexer.head_dim, indexer.head_dim, hidden, kpool_params));
  model.notes.push_back(
      "the checkpoint stores KDA dt_bias / A_log, the mHC base / scale and the "
      "routers' e_score_correction_bias in F32, and so does the storage estimate");
  model.notes.push_back(
      "the SwiGLU gate and up projections are clamped at swiglu_limit (no "
      "tensor)");
  return model;
}

// Glm5NextVisionModel: the blocks as a stack, everything around them as extra tensors.
void add_glm5_next_vision(const ConfigReader& vision, std::int64_t text_hidden,
                          ModelDescription& model) {
  const std::int64_t hidden = vision.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t depth = vision.require_int({"depth"}, 1, k_max_layers);
  const std::int64_t heads = vision.require_int({"num_heads"}, 1, k_max_heads);
  const std::int64_t intermediate = vision.require_int({"intermediate_size"}, 1, k_max_width);
  const std::int64_t out = vision.require_int({"out_hidden_size"}, 1, k_max_width);
  const std::int64_t projection =
      vision.require_int({"projection_intermediate_size"}, 1, k_max_width);
  const std::int64_t patch = vision.require_int({"patch_size"}, 1, 4096);
  const std::int64_t channels = vision.int_or({"in_channels"}, 3, 1, 64);
  const std::int64_t temporal = vision.int_or({"temporal_patch_size"}, 2, 1, 64);
  const std::int64_t merge = vision.int_or({"spatial_merge_size"}, 2, 1, 64);
  const bool bias = vision.bool_or("attention_bias", true);
  const std::string activation = vision.optional_string("hidden_act").value_or("silu");
  note_defaults(model, vision, "Glm5NextVisionConfig",
                {{"in_channels", "3"},
                 {"temporal_patch_size", "2"},
                 {"spatial_merge_size", "2"},
                 {"attention_bias", "true"}});
  if (hidden % heads != 0) {
    vision.fail("num_heads", fmt::format("= {} does not divide hidden_size = {}", heads, hidden));
  }
  if (out != text_hidden) {
    vision.fail("out_hidden_size", fmt::format("= {} differs from the text hidden_size {}; the "
                                               "merger writes text embeddings",
                                               out, text_hidden));
  }

  // Shaped for the tensor inventory: weight [D, C, T, P, P] and a bias of D.
  model.extra_parameters.push_back(
      {"model.visual.patch_embed.proj",
       "vision",
       "Conv3d",
       checked_add(checked_product({hidden, channels, temporal, patch, patch}), hidden),
       {hidden, channels, temporal, patch, patch}});
  add_glm_vision_merger(model, hidden, out, merge, projection);

  HeadShape shape;
  shape.num_heads = shape.num_kv_heads = heads;
  shape.head_dim = hidden / heads;
  Stack stack;
  stack.name = "visual";
  stack.causal = false;
  stack.vision = true;
  for (std::int64_t i = 0; i < depth; ++i) {
    Block block;
    block.attention = self_attention(hidden, shape, bias, bias);
    block.attention.name = "attn";
    block.attention.fused_qkv = true;
    block.attention.q_norm = rms_norm("q_norm", shape.head_dim);
    block.attention.k_norm = rms_norm("k_norm", shape.head_dim);
    block.mlp = Mlp{MlpKind::gated, activation, hidden, intermediate, bias, bias, false};
    block.norms = {rms_norm("norm1", hidden), rms_norm("norm2", hidden)};
    stack.blocks.push_back(std::move(block));
  }
  stack.final_norm = rms_norm("post_layernorm", hidden);
  model.stacks.push_back(std::move(stack));
}

}  // namespace

ModelDescription build_glm5_next(const ConfigReader& config) {
  if (config.model_type() == "glm5_next_text") return glm5_next_text(config, "model.");
  // Glm5NextConfig would build flat text keys and a default vision tower (out_hidden_size 1536)
  // when text_config / vision_config are absent; GLM-5.3-Flash's config states both, and
  // child() refuses either missing, naming it.
  nlohmann::json storage;
  const ConfigReader text = nested_text_config(config, storage);
  if (const std::optional<std::string> type = text.optional_string("model_type");
      type && *type != "glm5_next_text") {
    text.fail("model_type", fmt::format("is \"{}\"; expected \"glm5_next_text\"", *type));
  }
  ModelDescription model = glm5_next_text(text, "model.language_model.");
  model.family += " + vision encoder";
  add_glm5_next_vision(config.child("vision_config"), model.hidden_size, model);
  return model;
}

}  // namespace trace::family
