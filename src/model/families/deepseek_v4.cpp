// DeepSeek-V4 (model_type deepseek_v4: DeepSeek-V4-Flash, DeepseekV4ForCausalLM). Tensor list from
// DeepSeek's reference inference/model.py (ModelArgs, Attention, Compressor, Indexer, Gate, MoE,
// Block, MTPBlock, Transformer); checkpoint names and dtypes from the published
// model.safetensors.index.json and a shard header (tests/data/configs/SOURCES-deepseek_v4.md).
// Every layer (Block):
//   mHC           hc_mult residual streams of hidden width between layers; two mixing sites per
//                 layer (hc_attn_*, hc_ffn_*), each fn [(2 + n) n, n H], base [(2 + n) n],
//                 scale [3], all F32; the head collapses the streams with hc_head_fn [n, n H],
//                 hc_head_base [n], hc_head_scale [1] (F32);
//   attn_norm, attention (attn.*): wq_a [q_lora, H], q_norm [q_lora], wq_b [heads x head_dim,
//                 q_lora], one shared key/value head wkv [head_dim, H] + kv_norm [head_dim],
//                 grouped output wo_a [o_groups x o_lora, heads x head_dim / o_groups] and
//                 wo_b [H, o_groups x o_lora], attn_sink [heads]; a sliding window of
//                 sliding_window tokens, plus per compress_ratios[layer]:
//                   0    nothing more (sliding window only);
//                   r    a Compressor pooling r tokens into one KV row: ape [r, c d] (F32),
//                        wkv, wgate [c d, H] (BF16), norm [d], with d = head_dim and c = 2 when
//                        r == 4 (overlapping windows), else 1;
//                   4    also an Indexer: wq_b [index_n_heads x index_head_dim, q_lora],
//                        weights_proj [index_n_heads, H] and its own Compressor (ratio 4,
//                        d = index_head_dim);
//   ffn_norm, MoE (ffn.*): gate.weight [E, H]; the first num_hash_layers layers route by a fixed
//                 token table gate.tid2eid [vocab, top_k] (I64) and hold no bias, the rest hold
//                 gate.bias [E] (F32); E routed SwiGLU experts w1/w3 [I, H], w2 [H, I] and one
//                 shared expert of the same width.
// MTP (mtp.{i}, num_nextn_predict_layers): a Block for layer num_hidden_layers + i (scored
// routing, compress_ratios[num_hidden_layers + i]) plus e_proj, h_proj [H, H], enorm, hnorm,
// norm and its own hc_head_*; embedding and head are the backbone's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../quantization.hpp"
#include "family.hpp"

namespace trace::family {

namespace {

// Keys of later DeepSeek-V4 variants (V4.1, Vision-Exp) whose tensors this file does not know.
constexpr const char* k_unknown_layouts[] = {
    "kv_source_layer_ids",
    "index_source_layer_ids",
    "candidate_source_layer_id",
    "engram_layer_ids",
    "vision_config",
    "text_config",
    "mlp_layer_types",
    "layer_types",
};

std::vector<std::int64_t> read_ratios(const ConfigReader& config, std::int64_t needed) {
  if (!config.has("compress_ratios")) {
    config.fail("compress_ratios",
                "is missing; DeepSeek-V4 reads each layer's attention kind from it (0 sliding "
                "window, 4 compressed + indexer, 128 compressed)");
  }
  const nlohmann::json& list = config.json().at("compress_ratios");
  if (!list.is_array()) config.fail("compress_ratios", "must be a list of integers");
  if (static_cast<std::int64_t>(list.size()) < needed) {
    config.fail("compress_ratios",
                fmt::format("has {} entries; num_hidden_layers + num_nextn_predict_layers = {} "
                            "are needed (one per layer, the MTP layers last)",
                            list.size(), needed));
  }
  std::vector<std::int64_t> ratios;
  for (std::int64_t i = 0; i < needed; ++i) {
    const nlohmann::json& value = list[static_cast<std::size_t>(i)];
    if (!value.is_number_integer()) config.fail("compress_ratios", "must be a list of integers");
    const std::int64_t ratio = value.get<std::int64_t>();
    if (ratio != 0 && ratio != 4 && ratio != 128) {
      config.fail("compress_ratios",
                  fmt::format("[{}] = {} is not supported yet (only 0, 4 and 128 are checked "
                              "against a published checkpoint)",
                              i, ratio));
    }
    ratios.push_back(ratio);
  }
  return ratios;
}

// One Compressor: ape [ratio, c d] + wkv, wgate [c d, H] + norm [d].
std::int64_t compressor_params(std::int64_t ratio, std::int64_t dim, std::int64_t hidden) {
  const std::int64_t width = (ratio == 4 ? 2 : 1) * dim;
  return checked_add(checked_add(checked_mul(ratio, width), dim),
                     checked_product({2, width, hidden}, "the compressor parameters"));
}

// Accumulates StoredTensorRuns, one per dtype and role.
class LayoutRuns {
 public:
  LayoutRuns(std::int64_t block_rows, std::int64_t block_cols)
      : block_rows_(block_rows), block_cols_(block_cols) {}

  void set_mtp(bool mtp) { mtp_ = mtp; }
  // A tensor held at its own dtype, `count` times.
  void plain(const char* dtype, std::int64_t bytes_each, std::int64_t elements,
             std::int64_t count = 1) {
    add({dtype, bytes_each, checked_mul(elements, count), count, checked_mul(elements, count)});
  }
  // An FP8 E4M3 Linear [rows, cols] with one UE8M0 scale byte per block.
  void fp8(std::int64_t rows, std::int64_t cols) {
    const std::int64_t values = checked_mul(rows, cols, "the checkpoint layout");
    add({"F8_E4M3", 1, values, 1, values, true});
    add({"F8_E8M0", 1, checked_mul(ceil_div(rows, block_rows_), ceil_div(cols, block_cols_)), 1,
         0});
  }
  // `count` FP4 routed-expert Linears [rows, cols]: two values a byte (I8) and one UE8M0 scale
  // byte per 32 values along the input.
  void fp4_experts(std::int64_t rows, std::int64_t cols, std::int64_t count) {
    const std::int64_t values = checked_product({rows, cols, count}, "the checkpoint layout");
    add({"I8", 1, checked_product({rows, ceil_div(cols, 2), count}), count, values, true, true});
    add({"F8_E8M0", 1, checked_product({rows, ceil_div(cols, 32), count}), count, 0, false, true});
  }
  std::vector<StoredTensorRun> take() { return std::move(runs_); }

 private:
  void add(StoredTensorRun run) {
    run.mtp = mtp_;
    for (StoredTensorRun& same : runs_) {
      if (same.dtype == run.dtype && same.expert == run.expert && same.mtp == run.mtp &&
          (same.values == 0) == (run.values == 0)) {
        same.elements = checked_add(same.elements, run.elements, "the checkpoint layout");
        same.tensors += run.tensors;
        same.values = checked_add(same.values, run.values, "the checkpoint layout");
        return;
      }
    }
    runs_.push_back(std::move(run));
  }
  std::int64_t block_rows_;
  std::int64_t block_cols_;
  bool mtp_ = false;
  std::vector<StoredTensorRun> runs_;
};

// The published checkpoint's layout, tensor by tensor, from the reference model.py and the
// shard headers (SOURCES-deepseek_v4.md): FP4 routed experts; FP8 E4M3 + UE8M0 block scales for
// wq_a, wq_b, wkv, wo_a, wo_b, the shared expert, the indexers' wq_b and MTP's e_proj / h_proj;
// BF16 embed, head, norms, gate.weight, the compressors' wkv / wgate and the indexers'
// weights_proj; F32 attn_sink, ape, gate.bias and mHC; I64 tid2eid. Attached only when the
// config names that layout (expert_dtype fp4, fp8 e4m3 with ue8m0 scales); any other
// quantization_config is read by the generic table, which says it is unverified here.
// Reads the layers from the model's own blocks (a compressed_kv's ratio, hash routing where a
// router has no correction bias); the grouped output's o_groups x o_lora is no block's field.
void attach_checkpoint_layout(ModelDescription& model, const ConfigReader& config,
                              std::int64_t o_groups, std::int64_t o_lora) {
  std::optional<Quantization> quantization = parse_quantization(config);
  const bool fp4_experts = config.optional_string("expert_dtype").value_or("") == "fp4";
  if (!quantization || quantization->format != QuantFormat::fp8_block || !fp4_experts ||
      config.child("quantization_config").optional_string("scale_fmt").value_or("") != "ue8m0" ||
      config.child("quantization_config").optional_string("fmt").value_or("e4m3") != "e4m3") {
    if (quantization) {
      model.notes.push_back(
          "storage: trace derives DeepSeek-V4's checkpoint tensor by tensor only for the "
          "published layout (expert_dtype fp4, fp8 e4m3 with ue8m0 scales); this config's is "
          "priced by the generic table, unverified here");
    }
    model.quantization = std::move(quantization);
    return;
  }
  LayoutRuns runs(quantization->block_rows, quantization->block_cols);
  const std::int64_t h = model.hidden_size;
  const auto compressor = [&](std::int64_t ratio, std::int64_t dim) {
    const std::int64_t width = (ratio == 4 ? 2 : 1) * dim;
    runs.plain("F32", 4, checked_mul(ratio, width));  // ape
    runs.plain("BF16", 2, checked_mul(width, h), 2);  // wkv, wgate
    runs.plain("BF16", 2, dim);                       // norm
  };
  const auto hc_head = [&](std::int64_t streams) {
    runs.plain("F32", 4, checked_mul(streams, streams * h));
    runs.plain("F32", 4, streams);
    runs.plain("F32", 4, 1);
  };
  const auto layer = [&](const Block& block) {
    const Attention& a = block.attention;
    const Moe& moe = *block.moe;
    const std::int64_t n = block.residual_streams;
    const std::int64_t mix = (2 + n) * n;
    const std::int64_t width = moe.expert.intermediate;
    runs.plain("BF16", 2, h, 2);                                       // attn_norm, ffn_norm
    runs.plain("F32", 4, a.num_heads);                                 // attn_sink
    runs.fp8(a.mla.q_lora_rank, h);                                    // wq_a
    runs.plain("BF16", 2, a.mla.q_lora_rank);                          // q_norm
    runs.fp8(a.num_heads * a.head_dim, a.mla.q_lora_rank);             // wq_b
    runs.fp8(a.head_dim, h);                                           // wkv
    runs.plain("BF16", 2, a.head_dim);                                 // kv_norm
    runs.fp8(o_groups * o_lora, a.num_heads * a.head_dim / o_groups);  // wo_a
    runs.fp8(h, o_groups * o_lora);                                    // wo_b
    if (const auto& pooled = a.compressed_kv) {
      compressor(pooled->ratio, a.head_dim);
      if (pooled->index_heads > 0) {
        runs.fp8(pooled->index_heads * pooled->index_key_dim, a.mla.q_lora_rank);  // wq_b
        runs.plain("BF16", 2, checked_mul(pooled->index_heads, h));                // weights_proj
        compressor(pooled->ratio, pooled->index_key_dim);
      }
    }
    runs.plain("BF16", 2, checked_mul(moe.num_experts, h));  // gate.weight
    if (moe.router_correction_bias) {
      runs.plain("F32", 4, moe.num_experts);  // gate.bias
    } else {
      runs.plain("I64", 8, checked_mul(model.vocab_size, moe.top_k));  // gate.tid2eid
    }
    runs.fp4_experts(width, h, 2 * moe.num_experts);  // w1, w3
    runs.fp4_experts(h, width, moe.num_experts);      // w2
    runs.fp8(width, h);                               // shared w1, w3, w2
    runs.fp8(width, h);
    runs.fp8(h, width);
    runs.plain("F32", 4, checked_mul(mix, n * h), 2);  // hc_attn_fn, hc_ffn_fn
    runs.plain("F32", 4, mix, 2);                      // hc_*_base
    runs.plain("F32", 4, 3, 2);                        // hc_*_scale
  };
  runs.plain("BF16", 2, checked_mul(model.vocab_size, h), 2);  // embed, head
  runs.plain("BF16", 2, h);                                    // norm
  for (const Stack& stack : model.stacks) {
    runs.set_mtp(stack.mtp);
    for (const Block& block : stack.blocks) {
      layer(block);
      if (stack.mtp) {
        runs.fp8(h, h);               // e_proj
        runs.fp8(h, h);               // h_proj
        runs.plain("BF16", 2, h, 3);  // enorm, hnorm, norm
        hc_head(block.residual_streams);
      }
    }
    if (!stack.mtp) hc_head(stack.blocks.front().residual_streams);
  }
  quantization->family_layout = runs.take();
  quantization->family_layout_name = "DeepSeek-V4 (FP4 experts + FP8 e4m3, UE8M0 scales)";
  model.quantization = std::move(quantization);
}
}  // namespace

ModelDescription build_deepseek_v4(const ConfigReader& config) {
  for (const char* key : k_unknown_layouts) {
    if (config.has(key)) {
      config.fail(key,
                  "is not supported yet (a DeepSeek-V4 variant whose tensors trace has not "
                  "checked against a published checkpoint)");
    }
  }
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"num_hidden_layers"}, 1, k_max_layers);
  const std::int64_t heads = config.require_int({"num_attention_heads"}, 1, k_max_heads);
  const std::int64_t head_dim = config.require_int({"head_dim"}, 1, k_max_width);
  const std::int64_t rope = config.require_int({"qk_rope_head_dim"}, 0, head_dim);
  const std::int64_t q_lora = config.require_int({"q_lora_rank"}, 1, k_max_width);
  const std::int64_t o_lora = config.require_int({"o_lora_rank"}, 1, k_max_width);
  const std::int64_t o_groups = config.require_int({"o_groups"}, 1, k_max_heads);
  const std::int64_t window = config.require_int({"sliding_window"}, 1, k_max_positions);
  if (const std::optional<std::int64_t> kv =
          config.optional_int({"num_key_value_heads"}, 1, k_max_heads);
      kv && *kv != 1) {
    config.fail("num_key_value_heads",
                fmt::format("= {} is not supported yet (DeepSeek-V4's attention holds one shared "
                            "key/value head, wkv [head_dim, hidden])",
                            *kv));
  }
  if (heads % o_groups != 0) {
    config.fail("o_groups",
                fmt::format("= {} does not divide num_attention_heads = {}", o_groups, heads));
  }
  if (config.bool_or("attention_bias", false)) {
    config.fail("attention_bias", "= true is not supported yet (the reference has no biases)");
  }
  if (config.bool_or("tie_word_embeddings", false)) {
    config.fail("tie_word_embeddings",
                "= true is not supported yet (the reference stores head.weight apart)");
  }
  if (config.int_or({"first_k_dense_replace"}, 0, 0, k_max_layers) != 0) {
    config.fail("first_k_dense_replace",
                "is not supported yet (every DeepSeek-V4 layer is MoE in the reference)");
  }
  const std::int64_t streams = config.require_int({"hc_mult"}, 1, 64);
  if (!config.has("num_hash_layers")) {
    config.fail("num_hash_layers",
                "is missing; the first num_hash_layers layers store gate.tid2eid [vocab, top_k] "
                "instead of gate.bias, so trace needs the count");
  }
  const std::int64_t hash_layers = config.require_int({"num_hash_layers"}, 0, layers);
  const std::int64_t mtp_layers = config.int_or({"num_nextn_predict_layers"}, 0, 0, 64);
  const std::vector<std::int64_t> ratios = read_ratios(config, layers + mtp_layers);

  fill_decoder_basics(model, config, vocab, hidden, false);
  model.position = PositionKind::rope;

  // MoE.
  Moe moe = routed_experts(config, hidden, {"n_routed_experts"}, {"num_experts_per_tok"},
                           config.require_int({"moe_intermediate_size"}, 1, k_max_width));
  const std::int64_t shared = config.int_or({"n_shared_experts"}, 1, 0, 1 << 16);
  if (shared != 1) {
    config.fail("n_shared_experts",
                fmt::format("= {} is not supported yet (the reference asserts exactly 1)", shared));
  }
  set_shared_experts(moe, 1);
  note_defaults(model, config, "ModelArgs", {{"n_shared_experts", "1"}});

  // Indexer sizes, needed only where a ratio-4 layer exists.
  bool any_indexer = false;
  for (const std::int64_t ratio : ratios) any_indexer = any_indexer || ratio == 4;
  std::int64_t index_heads = 0;
  std::int64_t index_dim = 0;
  std::int64_t index_topk = 0;
  if (any_indexer) {
    index_heads = config.require_int({"index_n_heads"}, 1, k_max_heads);
    index_dim = config.require_int({"index_head_dim"}, 1, k_max_width);
    index_topk = config.require_int({"index_topk"}, 1, k_max_positions);
  }
  // What a layer of each ratio caches beyond its window (reference Compressor / Indexer).
  const auto compressed_kv = [&](std::int64_t ratio) -> std::optional<CompressedKv> {
    if (ratio == 0) return std::nullopt;
    CompressedKv kv;
    kv.ratio = ratio;
    if (ratio == 4) {
      kv.index_heads = index_heads;
      kv.index_key_dim = index_dim;
      kv.index_topk = index_topk;
    }
    return kv;
  };

  // The attention as trace can hold it: MLA's low-rank query (wq_a, q_norm, wq_b) and one
  // head_dim-wide key/value projection (wkv) cached per token, no kv_b and no o_proj; the grouped
  // output, kv_norm and sinks are extra tensors below.
  Attention attention = mla_attention(MlaShape{q_lora, 0, 0, head_dim, 0}, hidden, heads);
  attention.name = "attn";
  attention.num_kv_heads = 1;
  attention.rotary_dim = rope;  // of the head_dim-wide row, only the last rope dims rotate
  attention.sliding_window = window;
  // kv_norm [head_dim] + wo_a [o_groups o_lora, heads head_dim / o_groups] + wo_b [H, o_groups
  // o_lora] + attn_sink [heads].
  const std::int64_t attention_rest = checked_add(
      checked_add(head_dim + heads, checked_product({o_groups, o_lora, heads * head_dim / o_groups},
                                                    "the attention parameters")),
      checked_product({hidden, o_groups, o_lora}, "the attention parameters"));
  const std::int64_t indexer_params =
      any_indexer ? checked_add(checked_add(compressor_params(4, index_dim, hidden),
                                            checked_mul(index_heads, hidden)),
                                checked_product({q_lora, index_heads, index_dim}))
                  : 0;
  const std::int64_t mix = (2 + streams) * streams;
  const std::int64_t hc_site =
      checked_add(checked_product({mix, streams, hidden}, "the mHC parameters"), mix + 3);
  const std::int64_t hc_head =
      checked_add(checked_product({streams, streams, hidden}), streams + 1);
  const std::int64_t tid2eid = checked_mul(vocab, moe.top_k);

  const auto make_block = [&](bool hashed) {
    Block block;
    block.norms = {rms_norm("attn_norm", hidden), rms_norm("ffn_norm", hidden)};
    block.attention = attention;
    Moe layer_moe = moe;
    layer_moe.router_correction_bias = !hashed;
    set_moe(block, layer_moe, hidden);
    block.residual_streams = streams;
    return block;
  };

  Stack stack;
  stack.name = "decoder";
  std::vector<std::int64_t> csa;  // ratio 4: overlapping compressor + indexer
  std::vector<std::int64_t> hca;  // ratio 128: compressor only
  std::int64_t compressor_f32 = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    stack.blocks.push_back(make_block(i < hash_layers));
    const std::int64_t ratio = ratios[static_cast<std::size_t>(i)];
    stack.blocks.back().attention.compressed_kv = compressed_kv(ratio);
    if (ratio == 4) csa.push_back(i);
    if (ratio == 128) hca.push_back(i);
  }
  stack.final_norm = rms_norm("norm", hidden);
  model.stacks.push_back(std::move(stack));

  const auto extra = [&model](std::string name, const char* component, const char* op,
                              std::int64_t params) {
    if (params > 0) model.extra_parameters.push_back({std::move(name), component, op, params});
  };
  extra("layers.*.attn.kv_norm, wo_a, wo_b, attn_sink", "attention", "Linear",
        checked_mul(layers, attention_rest));
  if (!csa.empty()) {
    const auto n = static_cast<std::int64_t>(csa.size());
    extra(fmt::format("layers.{{{}}}.attn.compressor (ratio 4)", fmt::join(csa, ",")), "attention",
          "Compressor", checked_mul(n, compressor_params(4, head_dim, hidden)));
    extra(fmt::format("layers.{{{}}}.attn.indexer", fmt::join(csa, ",")), "attention", "Indexer",
          checked_mul(n, indexer_params));
    compressor_f32 += n * (4 * 2 * head_dim + 4 * 2 * index_dim);
  }
  if (!hca.empty()) {
    const auto n = static_cast<std::int64_t>(hca.size());
    extra(fmt::format("layers.{{{}}}.attn.compressor (ratio 128)", fmt::join(hca, ",")),
          "attention", "Compressor", checked_mul(n, compressor_params(128, head_dim, hidden)));
    compressor_f32 += n * 128 * head_dim;
  }
  if (hash_layers > 0) {
    extra(fmt::format("layers.{{0..{}}}.ffn.gate.tid2eid", hash_layers - 1), "router", "Embedding",
          checked_mul(hash_layers, tid2eid));
  }
  extra("layers.*.hc_attn_fn, hc_attn_base, hc_attn_scale", "other", "mHC",
        checked_mul(layers, hc_site));
  extra("layers.*.hc_ffn_fn, hc_ffn_base, hc_ffn_scale", "other", "mHC",
        checked_mul(layers, hc_site));
  extra("hc_head_fn, hc_head_base, hc_head_scale", "other", "mHC", hc_head);
  // F32 in the checkpoint (outside the MTP layers; the routers' gate.bias is counted apart):
  // attn_sink, every compressor's ape, the mHC sites and hc_head.
  model.fp32_stored_params = checked_add(checked_add(checked_mul(layers, heads), compressor_f32),
                                         checked_add(checked_mul(2 * layers, hc_site), hc_head));

  if (mtp_layers > 0) {
    Stack mtp;
    mtp.name = "mtp";
    mtp.mtp = true;
    for (std::int64_t i = 0; i < mtp_layers; ++i) {
      // MTPBlock: layer_id = num_hidden_layers + i, never below num_hash_layers: scored routing.
      mtp.blocks.push_back(make_block(false));
      const std::int64_t ratio = ratios[static_cast<std::size_t>(layers + i)];
      mtp.blocks.back().attention.compressed_kv = compressed_kv(ratio);
      const std::string at = fmt::format("mtp.{}.", i);
      extra(at + "attn.kv_norm, wo_a, wo_b, attn_sink", "mtp", "Linear", attention_rest);
      if (ratio != 0) {
        extra(at + "attn.compressor", "mtp", "Compressor",
              compressor_params(ratio, head_dim, hidden));
      }
      if (ratio == 4) extra(at + "attn.indexer", "mtp", "Indexer", indexer_params);
      extra(at + "e_proj, h_proj", "mtp", "Linear", checked_mul(2 * hidden, hidden));
      extra(at + "enorm, hnorm, norm", "mtp", "RMSNorm", 3 * hidden);
      extra(at + "hc_attn_*, hc_ffn_*, hc_head_*", "mtp", "mHC",
            checked_add(checked_mul(2, hc_site), hc_head));
    }
    model.stacks.push_back(std::move(mtp));
    model.mtp_depths = mtp_layers;
  } else if (!config.has("num_nextn_predict_layers")) {
    model.notes.push_back(
        "num_nextn_predict_layers absent: no MTP layer counted (DeepSeek-V4-Flash's checkpoint "
        "stores one, mtp.0)");
  }

  model.family = fmt::format(
      "DeepSeek-V4 (shared-KV MQA with sliding window + compressed / sparse-indexed KV, "
      "{}-stream mHC, hash + scored MoE with shared expert, MTP)",
      streams);
  model.notes.push_back(fmt::format(
      "attention layers by compress_ratios: {} sliding-window only (ratio 0), {} with a ratio-4 "
      "compressor and indexer (layers {}), {} with a ratio-128 compressor (layers {})",
      layers - static_cast<std::int64_t>(csa.size() + hca.size()), csa.size(), fmt::join(csa, ","),
      hca.size(), fmt::join(hca, ",")));
  model.notes.push_back(fmt::format(
      "the attention is shown as MLA with q_lora {} and one {}-wide key/value row per token "
      "(kv_lora 0, qk 0+{}): trace has no kind for DeepSeek-V4's shared-KV attention, whose head "
      "is {} nope + {} rope dims; kv_norm, the grouped output wo_a [{}, {}] + wo_b [{}, {}] and "
      "attn_sink ({} parameters per layer) and the compressors / indexers are extra tensors",
      q_lora, head_dim, head_dim, head_dim - rope, rope, o_groups * o_lora,
      heads * head_dim / o_groups, hidden, o_groups * o_lora, attention_rest));
  model.notes.push_back(fmt::format(
      "KV cache per sequence, per layer: the window's min(context, {0}) rows of {1} values, plus "
      "context / ratio pooled rows of {1} on the compressed layers and, on the ratio-4 layers, "
      "an index key of {2} per pooled row; the compressors' unfinished windows in F32 (the "
      "reference model.py's caches; an engine's own row format is set with --kv-dtype)",
      window, head_dim, index_dim));
  if (hash_layers > 0) {
    model.notes.push_back(fmt::format(
        "hash routing on layers 0..{}: gate.tid2eid [{}, {}] (I64 in the checkpoint, counted as "
        "router parameters) replaces gate.bias; the other layers and the MTP layer hold "
        "gate.bias [{}] (F32)",
        hash_layers - 1, vocab, moe.top_k, moe.num_experts));
  }
  model.notes.push_back(fmt::format(
      "mHC: {} residual streams x {}; each layer's two sites hold fn [{}, {}] + base [{}] + "
      "scale [3] = {} parameters, hc_head {} (all F32, component other)",
      streams, hidden, mix, streams * hidden, mix, hc_site, hc_head));

  attach_checkpoint_layout(model, config, o_groups, o_lora);
  model.notes.push_back(
      "compress_rope_theta, index_topk, scoring_func, routed_scaling_factor, swiglu_limit and "
      "hc_sinkhorn_iters shape no tensor (index_topk bounds the pooled rows a ratio-4 layer "
      "attends to in the FLOP count)");
  return model;
}

}  // namespace trace::family
