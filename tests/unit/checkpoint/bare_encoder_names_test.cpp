// Checkpoint names of MPNet and of bare base-model uploads (the config names BertModel or
// MPNetModel, as sentence-transformers saves them): save_pretrained writes a bare *Model's
// tensors without the wrapper prefix ("bert.", "mpnet.") a task class adds. The expected lists
// are written by hand from transformers' modeling_mpnet.py and modeling_bert.py
// (tests/data/configs/SOURCES-mpnet.md) and checked against the Hub's safetensors totals.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "tensor_lists.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/model/model_config.hpp"

namespace {

using namespace trace::test::tensors;

// MPNetLayer: attention.attn.{q,k,v,o}, attention.LayerNorm, intermediate.dense, output.dense,
// output.LayerNorm.
const EncoderLayerNames k_mpnet_layer{
    {"attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o"},
    "attention.LayerNorm",
    "intermediate.dense",
    "output.dense",
    "output.LayerNorm"};

// MPNetModel's body under `root` ("mpnet." or "" for a bare upload): embeddings without a
// token-type table, the encoder's relative bias [32 buckets, heads], the layers, and the
// position_ids buffer uploads of transformers < 4.31 hold.
Wanted mpnet_body(const std::string& root, std::int64_t vocab, int layers, std::int64_t h,
                  std::int64_t ffn, std::int64_t positions, std::int64_t heads) {
  Wanted want;
  want[root + "embeddings.word_embeddings.weight"] = {{vocab, h}};
  want[root + "embeddings.position_embeddings.weight"] = {{positions, h}};
  layer_norm(want, root + "embeddings.LayerNorm", h);
  want[root + "embeddings.position_ids"] = {{1, positions}, true};
  want[root + "encoder.relative_attention_bias.weight"] = {{32, heads}};
  encoder_layers(want, root + "encoder.layer.", layers, h, ffn, k_mpnet_layer);
  return want;
}

Inventory config_inventory(const std::string& json) {
  return trace::checkpoint::build_inventory(trace::parse_model_config(json));
}

}  // namespace

TEST_CASE("MPNet (mpnet-base, MPNetForMaskedLM): mpnet.* body, relative bias, lm_head",
          "[checkpoint][names][encoder]") {
  // V 30527, H 768, I 3072, 514 positions, 12 layers of 12 heads. Body 108,895,872 (SOURCES-
  // mpnet.md) + lm_head.dense 590,592 + layer_norm 1,536 + bias 30,527 = 109,518,527.
  const Inventory inventory = fixture_inventory("microsoft--mpnet-base.reconstructed.json");
  Wanted want = mpnet_body("mpnet.", 30527, 12, 768, 3072, 514, 12);
  linear(want, "lm_head.dense", 768, 768);
  layer_norm(want, "lm_head.layer_norm", 768);
  want["lm_head.bias"] = {{30527}};
  CHECK(want.size() == 5 + 1 + 12 * 16 + 5);  // embeddings (buffer included), bias, layers, head
  CHECK(check_exact(inventory, want) == 109'518'527);
  CHECK(inventory.naming.find("MPNet") != std::string::npos);
}

TEST_CASE("all-mpnet-base-v2: a bare MPNetModel, no mpnet. prefix, its pooler at top level",
          "[checkpoint][names][encoder]") {
  // Stored as MPNetModel although the config names MPNetForMaskedLM (SOURCES-mpnet.md): body
  // 108,895,872 + pooler.dense 590,592 = 109,486,464; with the 514 I64 position_ids the Hub's
  // safetensors total, 109,486,978.
  const Inventory inventory =
      fixture_inventory("sentence-transformers--all-mpnet-base-v2.reconstructed.json");
  Wanted want = mpnet_body("", 30527, 12, 768, 3072, 514, 12);
  linear(want, "pooler.dense", 768, 768);
  const std::int64_t parameters = check_exact(inventory, want);
  CHECK(parameters == 109'486'464);
  CHECK(parameters + 514 == 109'486'978);
  CHECK(inventory.layer_prefix == "encoder.layer.");
}

TEST_CASE("MPNet's task heads name their modules as the classes build them",
          "[checkpoint][names][encoder]") {
  const std::string sizes = R"("model_type": "mpnet", "vocab_size": 100, "hidden_size": 16,
    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
    "max_position_embeddings": 10, "torch_dtype": "float32")";
  SECTION("sequence classification: classifier.dense + out_proj, no pooler") {
    const Inventory inventory = config_inventory(
        R"({"architectures": ["MPNetForSequenceClassification"], "num_labels": 3, )" + sizes + "}");
    Wanted want = mpnet_body("mpnet.", 100, 1, 16, 32, 10, 2);
    linear(want, "classifier.dense", 16, 16);
    linear(want, "classifier.out_proj", 3, 16);
    // 1,600 + 160 + 32 + 64 + layer 4 x 272 + 32 + 544 + 528 + 32 = 2,224; heads 272 + 51.
    CHECK(check_exact(inventory, want) == 1'600 + 160 + 32 + 64 + 2'224 + 272 + 51);
  }
  SECTION("multiple choice: mpnet.pooler and a one-output classifier") {
    const Inventory inventory =
        config_inventory(R"({"architectures": ["MPNetForMultipleChoice"], )" + sizes + "}");
    Wanted want = mpnet_body("mpnet.", 100, 1, 16, 32, 10, 2);
    linear(want, "mpnet.pooler.dense", 16, 16);
    linear(want, "classifier", 1, 16);
    CHECK(check_exact(inventory, want) == 1'600 + 160 + 32 + 64 + 2'224 + 272 + 17);
  }
}

TEST_CASE("a bare BertModel (all-MiniLM-L6-v2): no bert. prefix, weight/bias LayerNorms",
          "[checkpoint][names][encoder]") {
  // sentence-transformers/all-MiniLM-L6-v2's published hyperparameters: BertModel, V 30522,
  // H 384, 6 layers of 12 heads, I 1536, 512 positions, 2 token types. Embeddings 11,720,448 +
  // 196,608 + 768 + LayerNorm 768 = 11,918,592; a layer 4 x 147,840 + 768 + 591,360 + 590,208 +
  // 768 = 1,774,464, x 6 = 10,646,784; pooler 147,840. 22,713,216 parameters; the upload also
  // holds the 512 I64 position_ids (saved by transformers 4.x before 4.31).
  const Inventory inventory = config_inventory(R"({"architectures": ["BertModel"],
    "model_type": "bert", "vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6,
    "num_attention_heads": 12, "intermediate_size": 1536, "max_position_embeddings": 512,
    "type_vocab_size": 2, "torch_dtype": "float32"})");
  Wanted want = bert_body("", 30522, 6, 384, 1536, 512, 2);
  linear(want, "pooler.dense", 384, 384);
  CHECK(check_exact(inventory, want) == 22'713'216);
}

TEST_CASE("BERT fine-tunes saved by transformers spell LayerNorms weight/bias under bert.",
          "[checkpoint][names][encoder]") {
  // BertForSequenceClassification: bert.* with the pooler, classifier at top level; only
  // Google's pre-training conversions keep TF's gamma/beta.
  const Inventory inventory = config_inventory(R"({"architectures":
    ["BertForSequenceClassification"], "num_labels": 5, "model_type": "bert", "vocab_size": 100,
    "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
    "max_position_embeddings": 8, "type_vocab_size": 2, "torch_dtype": "float32"})");
  Wanted want = bert_body("bert.", 100, 1, 16, 32, 8, 2);
  linear(want, "bert.pooler.dense", 16, 16);
  linear(want, "classifier", 5, 16);
  // 1,600 + 128 + 32 + 32; layer 4 x 272 + 32 + 544 + 528 + 32 = 2,224; pooler 272; 85.
  CHECK(check_exact(inventory, want) == 1'792 + 2'224 + 272 + 85);
}

TEST_CASE("every encoder family's bare *Model drops its wrapper prefix, heads it lacks aside",
          "[checkpoint][names][encoder]") {
  // model_type, the bare class, the wrapper its task classes add, a fixture of that family.
  struct Case {
    const char* fixture;
    const char* bare;
    const char* prefix;
  };
  const Case cases[] = {
      {"FacebookAI--roberta-base.reconstructed.json", "RobertaModel", "roberta."},
      {"FacebookAI--xlm-roberta-base.reconstructed.json", "XLMRobertaModel", "roberta."},
      {"microsoft--deberta-v3-base.json", "DebertaV2Model", "deberta."},
      {"answerdotai--ModernBERT-base.reconstructed.json", "ModernBertModel", "model."},
      {"distilbert--distilbert-base-uncased.json", "DistilBertModel", "distilbert."},
      {"google--electra-base-discriminator.reconstructed.json", "ElectraModel", "electra."},
  };
  for (const Case& c : cases) {
    INFO(c.fixture);
    nlohmann::json config = nlohmann::json::parse(trace::test::config_text(c.fixture));
    config["architectures"] = {c.bare};
    const Inventory bare = config_inventory(config.dump());
    CHECK(bare.complete);
    REQUIRE_FALSE(bare.tensors.empty());
    for (const ExpectedTensor& tensor : bare.tensors) {
      INFO(tensor.name);
      CHECK_FALSE(tensor.name.starts_with(c.prefix));
    }
    CHECK(tensor_named(bare, std::string(c.bare) == "ModernBertModel"
                                 ? "embeddings.tok_embeddings.weight"
                                 : "embeddings.word_embeddings.weight")
              .logical_params > 0);
  }
}
