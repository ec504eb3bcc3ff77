// Encoder namings (roberta, xlm-roberta, camembert, distilbert, electra, bart, mbart): the
// inventory must list exactly the tensors the published model.safetensors hold, no more and no
// fewer. The expected lists are written by hand from the modules of transformers'
// modeling_{roberta,distilbert,electra,bart,mbart}.py and from what each upload is known to store
// (tests/data/configs/SOURCES-roberta.md, SOURCES-distilbert-albert.md, SOURCES-bart.md):
// roberta-base stores the I64 position_ids buffer and no pooler, xlm-roberta-* and camembert-base
// store a pooler, no upload stores the tied MLM decoder weight, LayerNorms are weight/bias.
// Parameter elements are checked against the Hub's safetensors totals where one is published.
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

namespace {

using namespace trace::test::tensors;

// RobertaEmbeddings and RobertaLayer x L under roberta.*, with the position_ids buffer some
// uploads hold.
Wanted roberta_body(std::int64_t vocab, int layers, std::int64_t h, std::int64_t ffn,
                    std::int64_t positions, std::int64_t types) {
  return bert_body("roberta.", vocab, layers, h, ffn, positions, types);
}

// RobertaLMHead as stored: dense, layer_norm and bias (decoder.weight tied, decoder.bias = bias).
void roberta_mlm_head(Wanted& want, std::int64_t vocab, std::int64_t h) {
  linear(want, "lm_head.dense", h, h);
  layer_norm(want, "lm_head.layer_norm", h);
  want["lm_head.bias"] = {{vocab}};
}

// DistilBertModel: embeddings (no token types) and TransformerBlock x L under distilbert.*.
Wanted distilbert_body(std::int64_t vocab, int layers, std::int64_t d, std::int64_t ffn,
                       std::int64_t positions) {
  Wanted want;
  want["distilbert.embeddings.word_embeddings.weight"] = {{vocab, d}};
  want["distilbert.embeddings.position_embeddings.weight"] = {{positions, d}};
  layer_norm(want, "distilbert.embeddings.LayerNorm", d);
  for (int i = 0; i < layers; ++i) {
    const std::string at = "distilbert.transformer.layer." + std::to_string(i) + ".";
    linear(want, at + "attention.q_lin", d, d);
    linear(want, at + "attention.k_lin", d, d);
    linear(want, at + "attention.v_lin", d, d);
    linear(want, at + "attention.out_lin", d, d);
    layer_norm(want, at + "sa_layer_norm", d);
    linear(want, at + "ffn.lin1", ffn, d);
    linear(want, at + "ffn.lin2", d, ffn);
    layer_norm(want, at + "output_layer_norm", d);
  }
  return want;
}

// ElectraEmbeddings (embedding_size e wide) and ElectraLayer x L under electra.*.
Wanted electra_body(std::int64_t vocab, int layers, std::int64_t e, std::int64_t h,
                    std::int64_t ffn, std::int64_t positions, std::int64_t types) {
  Wanted want;
  want["electra.embeddings.word_embeddings.weight"] = {{vocab, e}};
  want["electra.embeddings.position_embeddings.weight"] = {{positions, e}};
  want["electra.embeddings.token_type_embeddings.weight"] = {{types, e}};
  layer_norm(want, "electra.embeddings.LayerNorm", e);
  bert_layers(want, "electra.encoder.layer.", layers, h, ffn);
  return want;
}

// BartEncoderLayer / BartDecoderLayer x L under model.{encoder,decoder}.layers (mBART's are the
// same modules): 16 and 26 tensors.
void bart_layers(Wanted& want, const std::string& stack, int layers, std::int64_t d,
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

// BartModel / MBartModel under model.*: the shared table, per stack the learned positions
// (max_position_embeddings + 2 rows), layernorm_embedding, layers and (mBART) a final layer_norm;
// the copies of model.shared older uploads keep as each stack's embed_tokens are buffers.
Wanted bart_body(std::int64_t vocab, int layers, std::int64_t d, std::int64_t ffn,
                 std::int64_t positions, bool final_norms) {
  Wanted want;
  want["model.shared.weight"] = {{vocab, d}};
  for (const std::string stack : {"encoder", "decoder"}) {
    want["model." + stack + ".embed_positions.weight"] = {{positions + 2, d}};
    want["model." + stack + ".embed_tokens.weight"] = {{vocab, d}, true};
    layer_norm(want, "model." + stack + ".layernorm_embedding", d);
    if (final_norms) layer_norm(want, "model." + stack + ".layer_norm", d);
    bart_layers(want, stack, layers, d, ffn);
  }
  return want;
}

}  // namespace

TEST_CASE("RoBERTa (roberta-base): roberta.* body, top-level lm_head, position_ids, no pooler",
          "[checkpoint][names][encoder]") {
  // V 50265, H 768, 12 layers, I 3072, 514 positions, 1 token type. Hub: { F32: 124697433,
  // I64: 514 }: the parameters, and roberta.embeddings.position_ids [1, 514].
  const Inventory inventory = fixture_inventory("FacebookAI--roberta-base.reconstructed.json");
  Wanted want = roberta_body(50265, 12, 768, 3072, 514, 1);
  roberta_mlm_head(want, 50265, 768);
  CHECK(want.size() == 5 + 1 + 12 * 16 + 5);
  CHECK(check_exact(inventory, want) == 124'697'433);
  CHECK(tensor_named(inventory, "roberta.embeddings.position_ids").dtype == "I64");
}

TEST_CASE("RoBERTa (roberta-large): 24 layers of 1024", "[checkpoint][names][encoder]") {
  // Hub: { F32: 355412057, I64: 514 }.
  const Inventory inventory = fixture_inventory("FacebookAI--roberta-large.reconstructed.json");
  Wanted want = roberta_body(50265, 24, 1024, 4096, 514, 1);
  roberta_mlm_head(want, 50265, 1024);
  CHECK(check_exact(inventory, want) == 355'412'057);
}

TEST_CASE("XLM-RoBERTa: roberta.* names, the MLM upload's pooler beside lm_head",
          "[checkpoint][names][encoder]") {
  // FacebookAI/xlm-roberta-base: V 250002; Hub safetensors total 278,885,778 (no I64 buffer in
  // this upload: position_ids stays an optional buffer).
  const Inventory base = fixture_inventory("FacebookAI--xlm-roberta-base.reconstructed.json");
  Wanted want = roberta_body(250002, 12, 768, 3072, 514, 1);
  roberta_mlm_head(want, 250002, 768);
  linear(want, "roberta.pooler.dense", 768, 768);
  CHECK(check_exact(base, want) == 278'885'778);

  // xlm-roberta-large: Hub total 561,192,082.
  const Inventory large = fixture_inventory("FacebookAI--xlm-roberta-large.reconstructed.json");
  Wanted large_want = roberta_body(250002, 24, 1024, 4096, 514, 1);
  roberta_mlm_head(large_want, 250002, 1024);
  linear(large_want, "roberta.pooler.dense", 1024, 1024);
  CHECK(check_exact(large, large_want) == 561'192'082);
}

TEST_CASE("CamemBERT: roberta.* names / MLM upload with pooler, NER upload with classifier",
          "[checkpoint][names][encoder]") {
  // almanach/camembert-base: V 32005; lm_head and roberta.pooler.dense stored (the
  // sequence-classification load warning lists both as unused); 111,246,085 by hand.
  const Inventory mlm = fixture_inventory("almanach--camembert-base.reconstructed.json");
  Wanted want = roberta_body(32005, 12, 768, 3072, 514, 1);
  roberta_mlm_head(want, 32005, 768);
  linear(want, "roberta.pooler.dense", 768, 768);
  CHECK(check_exact(mlm, want) == 111'246'085);

  // Jean-Baptiste/camembert-ner: CamembertForTokenClassification over 5 labels, no pooler, no
  // lm_head. Hub: { F32: 110035205, I64: 514 }.
  const Inventory ner = fixture_inventory("Jean-Baptiste--camembert-ner.reconstructed.json");
  Wanted ner_want = roberta_body(32005, 12, 768, 3072, 514, 1);
  linear(ner_want, "classifier", 5, 768);
  CHECK(check_exact(ner, ner_want) == 110'035'205);
}

TEST_CASE("DistilBERT (base-uncased): distilbert.transformer.layer.N, q_lin..out_lin, MLM head",
          "[checkpoint][names][encoder]") {
  // V 30522, D 768, 6 layers, hidden_dim 3072, 512 positions. Hub: { F32: 66985530 }, no I64
  // tensor; vocab_projector.weight is the tied word embedding and not stored.
  const Inventory inventory = fixture_inventory("distilbert--distilbert-base-uncased.json");
  Wanted want = distilbert_body(30522, 6, 768, 3072, 512);
  linear(want, "vocab_transform", 768, 768);
  layer_norm(want, "vocab_layer_norm", 768);
  want["vocab_projector.bias"] = {{30522}};
  CHECK(want.size() == 4 + 6 * 16 + 5);
  CHECK(check_exact(inventory, want) == 66'985'530);
}

TEST_CASE("DistilBERT: multilingual MLM and the SST-2 classifier", "[checkpoint][names][encoder]") {
  // distilbert-base-multilingual-cased: V 119547, Hub { F32: 135445755 }.
  const Inventory multi =
      fixture_inventory("distilbert--distilbert-base-multilingual-cased.reconstructed.json");
  Wanted want = distilbert_body(119547, 6, 768, 3072, 512);
  linear(want, "vocab_transform", 768, 768);
  layer_norm(want, "vocab_layer_norm", 768);
  want["vocab_projector.bias"] = {{119547}};
  CHECK(check_exact(multi, want) == 135'445'755);

  // distilbert-base-uncased-finetuned-sst-2-english: pre_classifier + classifier over 2 labels,
  // Hub { F32: 66955010 }.
  const Inventory sst2 = fixture_inventory(
      "distilbert--distilbert-base-uncased-finetuned-sst-2-english.reconstructed.json");
  Wanted sst2_want = distilbert_body(30522, 6, 768, 3072, 512);
  linear(sst2_want, "pre_classifier", 768, 768);
  linear(sst2_want, "classifier", 2, 768);
  CHECK(check_exact(sst2, sst2_want) == 66'955'010);
}

TEST_CASE("ELECTRA discriminator: electra.* body, discriminator_predictions, unused projection",
          "[checkpoint][names][encoder]") {
  // google/electra-base-discriminator: E = H = 768, 12 layers, 2 token types; 109,483,009
  // parameters; the upload also stores electra.embeddings_project [768, 768] + [768], which
  // ElectraModel never builds at E == H (transformers #7530): buffers, not parameters.
  const Inventory inventory =
      fixture_inventory("google--electra-base-discriminator.reconstructed.json");
  Wanted want = electra_body(30522, 12, 768, 768, 3072, 512, 2);
  linear(want, "discriminator_predictions.dense", 768, 768);
  linear(want, "discriminator_predictions.dense_prediction", 1, 768);
  want["electra.embeddings_project.weight"] = {{768, 768}, true};
  want["electra.embeddings_project.bias"] = {{768}, true};
  CHECK(check_exact(inventory, want) == 109'483'009);
}

TEST_CASE("ELECTRA generator: embedding_size tables, embeddings_project, generator head",
          "[checkpoint][names][encoder]") {
  // google/electra-small-generator: E 128, H 256, 12 layers, I 1024; embeddings_project maps
  // 128 -> 256; generator_predictions.dense maps 256 -> 128; generator_lm_head.weight is the tied
  // word embedding. 13,546,682 parameters.
  const Inventory inventory =
      fixture_inventory("google--electra-small-generator.reconstructed.json");
  Wanted want = electra_body(30522, 12, 128, 256, 1024, 512, 2);
  linear(want, "electra.embeddings_project", 256, 128);
  linear(want, "generator_predictions.dense", 128, 256);
  layer_norm(want, "generator_predictions.LayerNorm", 128);
  want["generator_lm_head.bias"] = {{30522}};
  CHECK(check_exact(inventory, want) == 13'546'682);
}

TEST_CASE("encoder inventories hold the parameter count and the storage estimate",
          "[checkpoint][names][encoder]") {
  // The same checkpoint derived twice: the inventory's parameter tensors (buffers left out) must
  // hold count_parameters' total and the storage estimate's elements and bytes.
  for (const char* config :
       {"FacebookAI--roberta-base.reconstructed.json",
        "FacebookAI--xlm-roberta-base.reconstructed.json",
        "almanach--camembert-base.reconstructed.json",
        "Jean-Baptiste--camembert-ner.reconstructed.json",
        "distilbert--distilbert-base-uncased.json",
        "distilbert--distilbert-base-uncased-finetuned-sst-2-english.reconstructed.json",
        "google--electra-base-discriminator.reconstructed.json",
        "google--electra-small-generator.reconstructed.json",
        "facebook--bart-large-cnn.reconstructed.json",
        "facebook--bart-large-mnli.reconstructed.json",
        "facebook--mbart-large-50-many-to-many-mmt.reconstructed.json"}) {
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
      if (tensor.buffer) continue;
      logical += tensor.logical_params;
      stored += tensor.elements();
      bytes += tensor.bytes();
    }
    CHECK(logical == params.total);
    CHECK(stored == storage.stored_elements);
    CHECK(bytes == storage.bytes);
  }
}

TEST_CASE("BART generation and classification uploads: model.encoder/decoder.layers.N",
          "[checkpoint][names][encoder]") {
  // facebook/bart-large-cnn (BartForConditionalGeneration): V 50264, d 1024, 12 + 12 layers,
  // ffn 4096, 1024 + 2 positions; 406,290,432 parameters; final_logits_bias [1, V] and the tied
  // lm_head.weight are buffers.
  const Inventory cnn = fixture_inventory("facebook--bart-large-cnn.reconstructed.json");
  Wanted want = bart_body(50264, 12, 1024, 4096, 1024, false);
  want["final_logits_bias"] = {{1, 50264}, true};
  want["lm_head.weight"] = {{50264, 1024}, true};
  CHECK(want.size() == 1 + 2 * (1 + 1 + 2) + 12 * 16 + 12 * 26 + 2);
  CHECK(check_exact(cnn, want) == 406'290'432);

  // facebook/bart-large-mnli (BartForSequenceClassification, 3 labels): 407,344,131; no
  // final_logits_bias, no lm_head.
  const Inventory mnli = fixture_inventory("facebook--bart-large-mnli.reconstructed.json");
  Wanted mnli_want = bart_body(50265, 12, 1024, 4096, 1024, false);
  linear(mnli_want, "classification_head.dense", 1024, 1024);
  linear(mnli_want, "classification_head.out_proj", 3, 1024);
  CHECK(check_exact(mnli, mnli_want) == 407'344'131);
}

TEST_CASE("mBART: final layer_norm per stack", "[checkpoint][names][encoder]") {
  // facebook/mbart-large-50-many-to-many-mmt: V 250054, d 1024, 12 + 12 layers; 610,879,488.
  const Inventory inventory =
      fixture_inventory("facebook--mbart-large-50-many-to-many-mmt.reconstructed.json");
  Wanted want = bart_body(250054, 12, 1024, 4096, 1024, true);
  want["final_logits_bias"] = {{1, 250054}, true};
  want["lm_head.weight"] = {{250054, 1024}, true};
  CHECK(check_exact(inventory, want) == 610'879'488);
}

TEST_CASE("BART bare model: model.* names, and a bare upload reconciles without the wrapper",
          "[checkpoint][names][encoder]") {
  // facebook/bart-base (BartModel): V 50265, d 768, 6 + 6 layers, FFN 3072, positions 1026; no
  // head and no final_logits_bias. Which spelling the bare uploads hold is not established:
  // Naming::bare_prefix lets "encoder.layers.0..." reconcile as well as "model.encoder...".
  const Inventory inventory = fixture_inventory("facebook--bart-base.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.bare_prefix == "model.");
  Wanted want = bart_body(50265, 6, 768, 3072, 1024, false);
  CHECK(check_exact(inventory, want) == 139'420'416);
}
