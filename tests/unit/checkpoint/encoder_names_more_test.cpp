// Namings of albert, deberta, deberta-v2, modernbert, marian, pegasus and m2m_100: the inventory
// must list exactly the tensors the published checkpoint holds, no more and no fewer. The
// expected lists are written by hand from the modules of transformers'
// modeling_{albert,deberta,deberta_v2,modernbert,marian,pegasus,m2m_100}.py and from what each
// upload is known to store (tests/data/configs/SOURCES-distilbert-albert.md, SOURCES-deberta.md,
// SOURCES-modernbert.md, SOURCES-bart.md):
//  - albert-base-v2 stores predictions.decoder.bias beside predictions.bias (Hub total =
//    parameters + vocab_size), not the tied decoder weight, and no position_ids (F32 only);
//  - microsoft/deberta-base and deberta-v3-base store an unused absolute position table and
//    lm_predictions.lm_head.* (their load warnings), v3 also mask_predictions.* (210 tensors);
//  - ModernBERT-base's header holds model.* (134 tensors), head.{dense,norm} and decoder.bias;
//  - the BART-style seq2seq uploads may keep the tied copies of model.shared (buffers);
//    google/pegasus-* lack the two sinusoidal tables trace counts (see the Pegasus case).
// Parameter elements are checked against the published totals where SOURCES gives one.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "tensor_lists.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

using namespace trace::test::tensors;

Inventory text_inventory(const std::string& json) {
  return trace::checkpoint::build_inventory(trace::parse_model_config(json));
}

void weight(Wanted& want, const std::string& at, Shape shape) {
  want[at + ".weight"] = {shape};
}

// Elements of the wanted parameters whose names start with `prefix` (a model's body alone).
std::int64_t parameters_under(const Wanted& want, const std::string& prefix) {
  std::int64_t n = 0;
  for (const auto& [name, wanted] : want) {
    if (!wanted.buffer && name.starts_with(prefix)) n += elements(wanted.shape);
  }
  return n;
}

std::int64_t stored_tensors(const Wanted& want) {
  return std::count_if(want.begin(), want.end(),
                       [](const auto& entry) { return !entry.second.buffer; });
}

// ---- ALBERT ----

// AlbertLayer under albert.encoder.albert_layer_groups.G.albert_layers.K: 16 tensors.
void albert_layer(Wanted& want, const std::string& at, std::int64_t h, std::int64_t ffn) {
  encoder_layer(want, at, h, ffn,
                {{"attention.query", "attention.key", "attention.value", "attention.dense"},
                 "attention.LayerNorm",
                 "ffn",
                 "ffn_output",
                 "full_layer_layer_norm"});
}

// AlbertForMaskedLM as the albert/* v2 uploads store it, one group of one layer: embeddings
// (E wide), mapping_in, the shared layer, the pooler, the MLM head; the decoder's weight is the
// tied word table and its bias a second copy of predictions.bias (a buffer here), position_ids
// the buffer transformers < 4.31 saved.
Wanted albert_mlm(std::int64_t vocab, std::int64_t e, std::int64_t h, std::int64_t ffn,
                  std::int64_t positions) {
  Wanted want;
  weight(want, "albert.embeddings.word_embeddings", {vocab, e});
  weight(want, "albert.embeddings.position_embeddings", {positions, e});
  weight(want, "albert.embeddings.token_type_embeddings", {2, e});
  layer_norm(want, "albert.embeddings.LayerNorm", e);
  want["albert.embeddings.position_ids"] = {{1, positions}, true};
  linear(want, "albert.encoder.embedding_hidden_mapping_in", h, e);
  albert_layer(want, "albert.encoder.albert_layer_groups.0.albert_layers.0.", h, ffn);
  linear(want, "albert.pooler", h, h);
  linear(want, "predictions.dense", e, h);
  layer_norm(want, "predictions.LayerNorm", e);
  want["predictions.bias"] = {{vocab}};
  want["predictions.decoder.bias"] = {{vocab}, true};
  return want;
}

// ---- DeBERTa ----

// DebertaV2Layer x L under deberta.encoder.layer (share_att_key: no position projections).
void deberta_v2_layers(Wanted& want, int layers, std::int64_t h, std::int64_t ffn) {
  for (int i = 0; i < layers; ++i) {
    const std::string at = "deberta.encoder.layer." + std::to_string(i) + ".";
    for (const char* projection : {"query_proj", "key_proj", "value_proj"}) {
      linear(want, at + "attention.self." + projection, h, h);
    }
    linear(want, at + "attention.output.dense", h, h);
    layer_norm(want, at + "attention.output.LayerNorm", h);
    linear(want, at + "intermediate.dense", ffn, h);
    linear(want, at + "output.dense", h, ffn);
    layer_norm(want, at + "output.LayerNorm", h);
  }
}

// DebertaV2Model as deberta-v3-base's shape has it: no absolute table in use, no token types,
// a bucketed rel_embeddings [2 x 256, h] and its LayerNorm; position_ids is the buffer older
// transformers saved.
Wanted deberta_v3_body(std::int64_t vocab, int layers, std::int64_t h, std::int64_t ffn,
                       std::int64_t positions) {
  Wanted want;
  weight(want, "deberta.embeddings.word_embeddings", {vocab, h});
  layer_norm(want, "deberta.embeddings.LayerNorm", h);
  want["deberta.embeddings.position_ids"] = {{1, positions}, true};
  weight(want, "deberta.encoder.rel_embeddings", {512, h});
  layer_norm(want, "deberta.encoder.LayerNorm", h);
  deberta_v2_layers(want, layers, h, ffn);
  return want;
}

// The MLM head Microsoft's pre-training uploads hold (the decoder is the tied word table).
void deberta_lm_head(Wanted& want, std::int64_t vocab, std::int64_t e, std::int64_t h) {
  linear(want, "lm_predictions.lm_head.dense", e, h);
  layer_norm(want, "lm_predictions.lm_head.LayerNorm", e);
  want["lm_predictions.lm_head.bias"] = {{vocab}};
}

// ---- ModernBERT ----

// ModernBertModel under model.*, norm_bias / attention_bias / mlp_bias false: layer 0 has no
// attn_norm (nn.Identity).
Wanted modernbert_body(std::int64_t vocab, int layers, std::int64_t h, std::int64_t ffn) {
  Wanted want;
  weight(want, "model.embeddings.tok_embeddings", {vocab, h});
  weight(want, "model.embeddings.norm", {h});
  for (int i = 0; i < layers; ++i) {
    const std::string at = "model.layers." + std::to_string(i) + ".";
    if (i > 0) weight(want, at + "attn_norm", {h});
    weight(want, at + "attn.Wqkv", {3 * h, h});
    weight(want, at + "attn.Wo", {h, h});
    weight(want, at + "mlp_norm", {h});
    weight(want, at + "mlp.Wi", {2 * ffn, h});
    weight(want, at + "mlp.Wo", {h, ffn});
  }
  weight(want, "model.final_norm", {h});
  return want;
}

// ModernBertPredictionHead, classifier_bias and norm_bias false.
void modernbert_head(Wanted& want, std::int64_t h) {
  weight(want, "head.dense", {h, h});
  weight(want, "head.norm", {h});
}

// ---- Marian, Pegasus, M2M100 ----

// BART's layer modules ("Copied from ... Bart") under model.{encoder,decoder}.layers.N.
void seq2seq_layers(Wanted& want, const std::string& stack, int layers, std::int64_t d,
                    std::int64_t ffn) {
  for (int i = 0; i < layers; ++i) {
    const std::string at = "model." + stack + ".layers." + std::to_string(i) + ".";
    std::vector<std::string> attentions{"self_attn"};
    if (stack == "decoder") attentions.push_back("encoder_attn");
    for (const std::string& attention : attentions) {
      for (const char* projection : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
        linear(want, at + attention + "." + projection, d, d);
      }
      layer_norm(want, at + attention + "_layer_norm", d);
    }
    linear(want, at + "fc1", ffn, d);
    linear(want, at + "fc2", d, ffn);
    layer_norm(want, at + "final_layer_norm", d);
  }
}

// model.shared, per stack the sinusoidal table (Marian, Pegasus: max_position_embeddings rows;
// 0 = M2M100's non-persistent buffer, not stored), the final layer_norm (pre-LN classes) and the
// layers; the tied copies older uploads keep (each stack's embed_tokens, lm_head) are buffers.
Wanted seq2seq_generation(std::int64_t vocab, int layers, std::int64_t d, std::int64_t ffn,
                          std::int64_t positions, bool final_norms) {
  Wanted want;
  weight(want, "model.shared", {vocab, d});
  for (const std::string stack : {"encoder", "decoder"}) {
    if (positions > 0) weight(want, "model." + stack + ".embed_positions", {positions, d});
    want["model." + stack + ".embed_tokens.weight"] = {{vocab, d}, true};
    if (final_norms) layer_norm(want, "model." + stack + ".layer_norm", d);
    seq2seq_layers(want, stack, layers, d, ffn);
  }
  want["lm_head.weight"] = {{vocab, d}, true};
  return want;
}

}  // namespace

TEST_CASE("ALBERT (albert-base-v2): one shared layer group, pooler, MLM head, decoder.bias copy",
          "[checkpoint][names][encoder]") {
  // V 30000, E 128, H 768, 12 runs of 1 group x 1 inner layer, I 3072, 512 positions. Hub:
  // { F32: 11842272 } = 11,812,272 parameters + the 30,000-element predictions.decoder.bias.
  const Inventory inventory = fixture_inventory("albert--albert-base-v2.reconstructed.json");
  const Wanted want = albert_mlm(30000, 128, 768, 3072, 512);
  CHECK(want.size() == 5 + 1 + 2 + 16 + 2 + 2 + 2 + 1 + 1);
  const std::int64_t parameters = check_exact(inventory, want);
  CHECK(parameters == 11'812'272);
  CHECK(parameters + 30'000 == 11'842'272);
  // AlbertModel (KerasHub albert_base_en_uncased): everything under albert.*.
  CHECK(parameters_under(want, "albert.") == 11'683'584);
  CHECK(tensor_named(inventory, "albert.embeddings.position_ids").dtype == "I64");
}

TEST_CASE("ALBERT large and xxlarge: the same tensors, 24 and 12 runs of one stored layer",
          "[checkpoint][names][encoder]") {
  // Hand-derived totals; the AlbertModel parts are KerasHub's published counts.
  const Inventory large = fixture_inventory("albert--albert-large-v2.reconstructed.json");
  const Wanted large_want = albert_mlm(30000, 128, 1024, 4096, 512);
  CHECK(check_exact(large, large_want) == 17'845'424);
  CHECK(parameters_under(large_want, "albert.") == 17'683'968);

  const Inventory xxlarge = fixture_inventory("albert--albert-xxlarge-v2.reconstructed.json");
  const Wanted xxlarge_want = albert_mlm(30000, 128, 4096, 16384, 512);
  CHECK(check_exact(xxlarge, xxlarge_want) == 223'150'256);
  CHECK(parameters_under(xxlarge_want, "albert.") == 222'595'584);
}

TEST_CASE("ALBERT groups: albert_layer_groups.G.albert_layers.K from the layer runs",
          "[checkpoint][names][encoder]") {
  // 4 runs over 2 groups of 2 inner layers: runs 0 and 2 own groups 0 and 1 (AlbertTransformer:
  // group = run / (layers / groups)), each storing albert_layers.0 and .1. A bare AlbertModel
  // upload has no "albert." prefix.
  const std::string grouped = R"({"model_type": "albert", "architectures": ["AlbertModel"],
    "vocab_size": 100, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 4,
    "num_attention_heads": 4, "intermediate_size": 64, "max_position_embeddings": 8,
    "num_hidden_groups": 2, "inner_group_num": 2, "torch_dtype": "float32"})";
  const Inventory inventory = text_inventory(grouped);
  Wanted want;
  weight(want, "embeddings.word_embeddings", {100, 16});
  weight(want, "embeddings.position_embeddings", {8, 16});
  weight(want, "embeddings.token_type_embeddings", {2, 16});
  layer_norm(want, "embeddings.LayerNorm", 16);
  want["embeddings.position_ids"] = {{1, 8}, true};
  linear(want, "encoder.embedding_hidden_mapping_in", 32, 16);
  for (const char* group : {"0", "1"}) {
    for (const char* inner : {"0", "1"}) {
      albert_layer(
          want,
          std::string("encoder.albert_layer_groups.") + group + ".albert_layers." + inner + ".", 32,
          64);
    }
  }
  linear(want, "pooler", 32, 32);
  check_exact(inventory, want);

  // Every run owning weights (num_hidden_groups = num_hidden_layers) reads the same as one group
  // of several inner layers: the inventory says it cannot tell.
  const std::string unshared = R"({"model_type": "albert", "architectures": ["AlbertModel"],
    "vocab_size": 100, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 64, "max_position_embeddings": 8,
    "num_hidden_groups": 2, "inner_group_num": 1})";
  CHECK_FALSE(text_inventory(unshared).complete);
}

TEST_CASE("DeBERTa-v3 (deberta-v3-base): query_proj names, rel_embeddings, MLM and RTD heads",
          "[checkpoint][names][encoder]") {
  // V 128100, h 768, 12 layers, I 3072, position_buckets 256, share_att_key. The upload holds
  // 210 tensors, 185,537,893 elements: 185,144,677 parameters and the unused absolute table
  // deberta.embeddings.position_embeddings [512, 768] (a buffer); no position_ids.
  const Inventory inventory = fixture_inventory("microsoft--deberta-v3-base.json");
  Wanted want = deberta_v3_body(128100, 12, 768, 3072, 512);
  want["deberta.embeddings.position_embeddings.weight"] = {{512, 768}, true};
  deberta_lm_head(want, 128100, 768, 768);
  linear(want, "mask_predictions.dense", 768, 768);
  layer_norm(want, "mask_predictions.LayerNorm", 768);
  linear(want, "mask_predictions.classifier", 1, 768);
  CHECK(stored_tensors(want) + 1 == 210);  // + the stored position table
  const std::int64_t parameters = check_exact(inventory, want);
  CHECK(parameters == 185'144'677);
  CHECK(parameters + 512 * 768 == 185'537'893);
  CHECK(parameters_under(want, "deberta.") == 183'831'552);  // DebertaV2Model (KerasHub)
}

TEST_CASE("DeBERTa-v3 classifier (cross-encoder/nli-deberta-v3-base): pooler.dense, classifier",
          "[checkpoint][names][encoder]") {
  // DebertaV2ForSequenceClassification over 3 labels: 184,424,451 parameters; no absolute table.
  const Inventory inventory =
      fixture_inventory("cross-encoder--nli-deberta-v3-base.reconstructed.json");
  Wanted want = deberta_v3_body(128100, 12, 768, 3072, 512);
  linear(want, "pooler.dense", 768, 768);
  linear(want, "classifier", 3, 768);
  CHECK(check_exact(inventory, want) == 184'424'451);
}

TEST_CASE("DeBERTa v1 (deberta-base): in_proj without bias, q_bias, v_bias, pos_proj, pos_q_proj",
          "[checkpoint][names][encoder]") {
  // V 50265, h 768, 12 layers, c2p|p2c, rel_embeddings [2 x 512, h]. The MLM load warning lists
  // deberta.embeddings.position_embeddings.weight and lm_predictions.lm_head.* as held by the
  // upload. 139,244,121 parameters (AutoModelForMaskedLM); DebertaModel 138,601,728.
  const Inventory inventory = fixture_inventory("microsoft--deberta-base.reconstructed.json");
  Wanted want;
  weight(want, "deberta.embeddings.word_embeddings", {50265, 768});
  layer_norm(want, "deberta.embeddings.LayerNorm", 768);
  want["deberta.embeddings.position_embeddings.weight"] = {{512, 768}, true};
  want["deberta.embeddings.position_ids"] = {{1, 512}, true};
  weight(want, "deberta.encoder.rel_embeddings", {1024, 768});
  for (int i = 0; i < 12; ++i) {
    const std::string at = "deberta.encoder.layer." + std::to_string(i) + ".";
    weight(want, at + "attention.self.in_proj", {3 * 768, 768});
    want[at + "attention.self.q_bias"] = {{768}};
    want[at + "attention.self.v_bias"] = {{768}};
    weight(want, at + "attention.self.pos_proj", {768, 768});
    linear(want, at + "attention.self.pos_q_proj", 768, 768);
    linear(want, at + "attention.output.dense", 768, 768);
    layer_norm(want, at + "attention.output.LayerNorm", 768);
    linear(want, at + "intermediate.dense", 3072, 768);
    linear(want, at + "output.dense", 768, 3072);
    layer_norm(want, at + "output.LayerNorm", 768);
  }
  deberta_lm_head(want, 50265, 768, 768);
  CHECK(want.size() == 3 + 2 + 1 + 12 * 16 + 5);
  CHECK(check_exact(inventory, want) == 139'244'121);
  CHECK(parameters_under(want, "deberta.") == 138'601'728);
}

TEST_CASE("DeBERTa-v2 options: E-wide tables, embed_proj, conv, pos_key/query_proj, legacy MLM",
          "[checkpoint][names][encoder]") {
  // A small DebertaV2ForMaskedLM (legacy head: cls.predictions.*) with every optional module:
  // absolute and token-type tables embedding_size (32) wide, embed_proj [64, 32] without bias,
  // encoder.conv (Conv1d 64 -> 64, kernel 3) and its LayerNorm, share_att_key false.
  const std::string config = R"({"model_type": "deberta-v2",
    "architectures": ["DebertaV2ForMaskedLM"], "vocab_size": 100, "hidden_size": 64,
    "embedding_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "max_position_embeddings": 16, "type_vocab_size": 2,
    "position_biased_input": true, "relative_attention": true, "position_buckets": 8,
    "norm_rel_ebd": "layer_norm", "share_att_key": false, "pos_att_type": "p2c|c2p",
    "conv_kernel_size": 3, "torch_dtype": "float32"})";
  const Inventory inventory = text_inventory(config);
  Wanted want;
  weight(want, "deberta.embeddings.word_embeddings", {100, 32});
  weight(want, "deberta.embeddings.position_embeddings", {16, 32});
  weight(want, "deberta.embeddings.token_type_embeddings", {2, 32});
  weight(want, "deberta.embeddings.embed_proj", {64, 32});
  layer_norm(want, "deberta.embeddings.LayerNorm", 64);
  want["deberta.embeddings.position_ids"] = {{1, 16}, true};
  weight(want, "deberta.encoder.rel_embeddings", {16, 64});
  layer_norm(want, "deberta.encoder.LayerNorm", 64);
  weight(want, "deberta.encoder.conv.conv", {64, 64, 3});  // Conv1d(64, 64, 3), biased
  want["deberta.encoder.conv.conv.bias"] = {{64}};
  layer_norm(want, "deberta.encoder.conv.LayerNorm", 64);
  deberta_v2_layers(want, 2, 64, 128);
  for (const char* layer : {"0", "1"}) {
    const std::string at = std::string("deberta.encoder.layer.") + layer + ".attention.self.";
    linear(want, at + "pos_key_proj", 64, 64);
    linear(want, at + "pos_query_proj", 64, 64);
  }
  linear(want, "cls.predictions.transform.dense", 32, 64);
  layer_norm(want, "cls.predictions.transform.LayerNorm", 32);
  want["cls.predictions.bias"] = {{100}};
  const trace::ModelDescription model = trace::parse_model_config(config);
  CHECK(check_exact(inventory, want) == trace::count_parameters(model).total);
}

TEST_CASE("DeBERTa v1 options: talking heads, a learned absolute table, classifier heads",
          "[checkpoint][names][encoder]") {
  const std::string config = R"({"model_type": "deberta",
    "architectures": ["DebertaForSequenceClassification"], "vocab_size": 100,
    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "max_position_embeddings": 16, "relative_attention": true,
    "max_relative_positions": 8, "pos_att_type": "c2p|p2c", "talking_head": true,
    "id2label": {"0": "a", "1": "b"}, "torch_dtype": "float32"})";
  const Inventory inventory = text_inventory(config);
  Wanted want;
  weight(want, "deberta.embeddings.word_embeddings", {100, 64});
  weight(want, "deberta.embeddings.position_embeddings", {16, 64});
  layer_norm(want, "deberta.embeddings.LayerNorm", 64);
  want["deberta.embeddings.position_ids"] = {{1, 16}, true};
  weight(want, "deberta.encoder.rel_embeddings", {16, 64});
  for (const char* layer : {"0", "1"}) {
    const std::string at = std::string("deberta.encoder.layer.") + layer + ".";
    weight(want, at + "attention.self.in_proj", {192, 64});
    want[at + "attention.self.q_bias"] = {{64}};
    want[at + "attention.self.v_bias"] = {{64}};
    weight(want, at + "attention.self.pos_proj", {64, 64});
    linear(want, at + "attention.self.pos_q_proj", 64, 64);
    weight(want, at + "attention.self.head_logits_proj", {4, 4});
    weight(want, at + "attention.self.head_weights_proj", {4, 4});
    linear(want, at + "attention.output.dense", 64, 64);
    layer_norm(want, at + "attention.output.LayerNorm", 64);
    linear(want, at + "intermediate.dense", 128, 64);
    linear(want, at + "output.dense", 64, 128);
    layer_norm(want, at + "output.LayerNorm", 64);
  }
  linear(want, "pooler.dense", 64, 64);
  linear(want, "classifier", 2, 64);
  const trace::ModelDescription model = trace::parse_model_config(config);
  CHECK(check_exact(inventory, want) == trace::count_parameters(model).total);
}

TEST_CASE("ModernBERT (ModernBERT-base): model.layers.N.attn.Wqkv, mlp.Wi, head, decoder.bias",
          "[checkpoint][names][encoder]") {
  // V 50368, h 768, 22 layers, I 1152. The header holds 149,655,232 F32 elements: 149,014,272
  // in model.* (134 tensors), the rest in head.dense, head.norm and decoder.bias; decoder.weight
  // (the tied tok_embeddings) is absent here, stored by other uploads (ettin): a buffer.
  const Inventory inventory = fixture_inventory("answerdotai--ModernBERT-base.reconstructed.json");
  Wanted want = modernbert_body(50368, 22, 768, 1152);
  CHECK(want.size() == 134);
  modernbert_head(want, 768);
  want["decoder.bias"] = {{50368}};
  want["decoder.weight"] = {{50368, 768}, true};
  CHECK(stored_tensors(want) == 137);
  CHECK(check_exact(inventory, want) == 149'655'232);
  CHECK(parameters_under(want, "model.") == 149'014'272);
}

TEST_CASE("ModernBERT large MLM and the classifiers built on ModernBERT",
          "[checkpoint][names][encoder]") {
  // answerdotai/ModernBERT-large: h 1024, 28 layers, I 2624; 395,881,664.
  const Inventory large = fixture_inventory("answerdotai--ModernBERT-large.reconstructed.json");
  Wanted large_want = modernbert_body(50368, 28, 1024, 2624);
  modernbert_head(large_want, 1024);
  large_want["decoder.bias"] = {{50368}};
  large_want["decoder.weight"] = {{50368, 1024}, true};
  CHECK(check_exact(large, large_want) == 395'881'664);

  // MoritzLaurer/ModernBERT-large-zeroshot-v2.0: 2 labels, the classifier always biased;
  // 395,833,346.
  const Inventory zeroshot = fixture_inventory("MoritzLaurer--ModernBERT-large-zeroshot-v2.0.json");
  Wanted zeroshot_want = modernbert_body(50368, 28, 1024, 2624);
  modernbert_head(zeroshot_want, 1024);
  linear(zeroshot_want, "classifier", 2, 1024);
  CHECK(check_exact(zeroshot, zeroshot_want) == 395'833'346);

  // Alibaba-NLP/gte-reranker-modernbert-base: one relevance logit; 149,605,633.
  const Inventory reranker =
      fixture_inventory("Alibaba-NLP--gte-reranker-modernbert-base.reconstructed.json");
  Wanted reranker_want = modernbert_body(50368, 22, 768, 1152);
  modernbert_head(reranker_want, 768);
  linear(reranker_want, "classifier", 1, 768);
  CHECK(check_exact(reranker, reranker_want) == 149'605'633);
}

TEST_CASE("Marian (opus-mt-en-de): BART's layer names, sinusoidal tables, final_logits_bias",
          "[checkpoint][names][encoder]") {
  // V 58101, d 512, 6 + 6 layers, ffn 2048, 512 positions; post-LN: no final layer_norm, no
  // layernorm_embedding. 74,410,496 parameters = 73,886,208 + the two frozen 512 x 512 tables.
  const Inventory inventory = fixture_inventory("Helsinki-NLP--opus-mt-en-de.reconstructed.json");
  Wanted want = seq2seq_generation(58101, 6, 512, 2048, 512, false);
  want["final_logits_bias"] = {{1, 58101}, true};
  CHECK(want.size() == 1 + 2 * 2 + 6 * 16 + 6 * 26 + 2);
  const std::int64_t parameters = check_exact(inventory, want);
  CHECK(parameters == 74'410'496);
  CHECK(parameters - 2 * 512 * 512 == 73'886'208);
  // MarianMTModel's _keys_to_ignore_on_save names both tables: a re-saved upload lacks them.
  CHECK(tensor_named(inventory, "model.decoder.embed_positions.weight").droppable);
}

TEST_CASE("Marian with its own decoder table: model.decoder.embed_tokens is a parameter",
          "[checkpoint][names][encoder]") {
  // share_encoder_decoder_embeddings false: MarianModel gives the decoder a table of its own,
  // tied to the lm_head; the encoder's embed_tokens stays model.shared.
  const std::string config = R"({"model_type": "marian", "architectures": ["MarianMTModel"],
    "vocab_size": 100, "decoder_vocab_size": 100, "share_encoder_decoder_embeddings": false,
    "d_model": 16, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 2,
    "decoder_attention_heads": 2, "encoder_ffn_dim": 32, "decoder_ffn_dim": 32,
    "max_position_embeddings": 8, "torch_dtype": "float32"})";
  const Inventory inventory = text_inventory(config);
  Wanted want = seq2seq_generation(100, 1, 16, 32, 8, false);
  want["model.decoder.embed_tokens.weight"] = {{100, 16}};
  want["final_logits_bias"] = {{1, 100}, true};
  check_exact(inventory, want);
}

TEST_CASE("Pegasus (pegasus-large): final layer_norm per stack / the upload lacks the sinusoids",
          "[checkpoint][names][encoder]") {
  // V 96103, d 1024, 16 + 16 layers, ffn 4096, 1024 positions; 570,797,056 parameters, the two
  // 1024 x 1024 sinusoidal tables included (frozen nn.Parameters, as num_parameters() counts).
  // convert_pegasus_tf_to_pytorch.py pops model.{encoder,decoder}.embed_positions.weight before
  // torch.save, so google/pegasus-* hold 568,699,904 parameters: the inventory follows trace's
  // count and marks both tables droppable, so reconciling either kind of upload agrees.
  const Inventory inventory = fixture_inventory("google--pegasus-large.reconstructed.json");
  Wanted want = seq2seq_generation(96103, 16, 1024, 4096, 1024, true);
  want["final_logits_bias"] = {{1, 96103}, true};
  const std::int64_t parameters = check_exact(inventory, want);
  CHECK(parameters == 570'797'056);
  CHECK(parameters - 2 * 1024 * 1024 == 568'699'904);
  for (const char* table :
       {"model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight"}) {
    CHECK_FALSE(tensor_named(inventory, table).buffer);
    CHECK(tensor_named(inventory, table).droppable);
  }
  CHECK_FALSE(tensor_named(inventory, "model.encoder.layers.0.fc1.weight").droppable);
}

TEST_CASE("M2M100 and NLLB: no stored position table, no final_logits_bias",
          "[checkpoint][names][encoder]") {
  // facebook/m2m100_418M: V 128112, d 1024, 12 + 12 layers, ffn 4096; 483,905,536. The
  // sinusoids are a non-persistent buffer (and _keys_to_ignore_on_save): never stored.
  const Inventory m2m = fixture_inventory("facebook--m2m100_418M.reconstructed.json");
  const Wanted m2m_want = seq2seq_generation(128112, 12, 1024, 4096, 0, true);
  CHECK(m2m_want.size() == 1 + 2 * 3 + 12 * 16 + 12 * 26 + 1);
  CHECK(check_exact(m2m, m2m_want) == 483'905'536);

  // facebook/nllb-200-distilled-600M: V 256206; 615,073,792.
  const Inventory nllb = fixture_inventory("facebook--nllb-200-distilled-600M.reconstructed.json");
  const Wanted nllb_want = seq2seq_generation(256206, 12, 1024, 4096, 0, true);
  CHECK(check_exact(nllb, nllb_want) == 615'073'792);
}

TEST_CASE("these inventories hold the parameter count and the storage estimate",
          "[checkpoint][names][encoder]") {
  // The same checkpoint derived twice: the inventory's parameter tensors (buffers left out) must
  // hold count_parameters' total and the storage estimate's elements and bytes.
  for (const char* config :
       {"albert--albert-base-v2.reconstructed.json", "albert--albert-xxlarge-v2.reconstructed.json",
        "microsoft--deberta-v3-base.json", "cross-encoder--nli-deberta-v3-base.reconstructed.json",
        "microsoft--deberta-base.reconstructed.json",
        "answerdotai--ModernBERT-base.reconstructed.json",
        "MoritzLaurer--ModernBERT-large-zeroshot-v2.0.json",
        "Alibaba-NLP--gte-reranker-modernbert-base.reconstructed.json",
        "Helsinki-NLP--opus-mt-en-de.reconstructed.json",
        "google--pegasus-large.reconstructed.json", "facebook--m2m100_418M.reconstructed.json",
        "facebook--nllb-200-distilled-600M.reconstructed.json"}) {
    INFO(config);
    const trace::ModelDescription model = trace::test::fixture(config);
    const trace::ParameterCount params = trace::count_parameters(model);
    const trace::StorageEstimate storage = trace::estimate_storage(model, params);
    const Inventory inventory = trace::checkpoint::build_inventory(model);
    CHECK(inventory.complete);
    std::int64_t logical = 0;
    std::int64_t stored = 0;
    std::int64_t bytes = 0;
    for (const ExpectedTensor& tensor : inventory.tensors) {
      if (tensor.buffer) {
        CHECK(tensor.logical_params == 0);
        continue;
      }
      logical += tensor.logical_params;
      stored += tensor.elements();
      bytes += tensor.bytes();
    }
    CHECK(logical == params.total);
    CHECK(stored == storage.stored_elements);
    CHECK(bytes == storage.bytes);
  }
}
