// DistilBERT and ALBERT: heads chosen by `architectures`, ALBERT's shared
// layers, refusals. Every number is hand-derived from the tensor shapes of
// transformers' modeling_distilbert.py / modeling_albert.py
// (tests/data/configs/SOURCES-distilbert-albert.md); none comes from trace.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

std::int64_t total_of(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}

nlohmann::json fixture(const char* name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

}  // namespace

TEST_CASE("DistilBERT heads follow the architectures key", "[families][distilbert]") {
  nlohmann::json config = fixture("distilbert--distilbert-base-uncased.json");
  // The released checkpoint: DistilBertModel 66,362,880 (KerasHub's exact
  // backbone count) + vocab_transform 590,592 + vocab_layer_norm 1,536 +
  // vocab_projector.bias 30,522.
  CHECK(total_of(config) == 66'985'530);
  config["architectures"] = {"DistilBertModel"};
  CHECK(total_of(config) == 66'362'880);
  // distilbert-base-uncased-distilled-squad's Hub total: qa_outputs 768 x 2
  // + 2.
  config["architectures"] = {"DistilBertForQuestionAnswering"};
  CHECK(total_of(config) == 66'364'418);
  // pre_classifier 768 x 768 + 768, classifier 768 x 1 + 1.
  config["architectures"] = {"DistilBertForMultipleChoice"};
  CHECK(total_of(config) == 66'362'880 + 590'592 + 769);
  // A 9-label NER head: classifier 768 x 9 + 9, no pre_classifier.
  config["architectures"] = {"DistilBertForTokenClassification"};
  config["id2label"] = nlohmann::json::object();
  for (int i = 0; i < 9; ++i) config["id2label"][std::to_string(i)] = "L" + std::to_string(i);
  CHECK(total_of(config) == 66'362'880 + 768 * 9 + 9);
}

TEST_CASE("DistilBERT: the sinusoidal position table is stored / untied projector",
          "[families][distilbert]") {
  nlohmann::json config = fixture("distilbert--distilbert-base-uncased.json");
  config["sinusoidal_pos_embds"] = true;  // frozen, but an nn.Embedding weight: still 512 x 768
  CHECK(total_of(config) == 66'985'530);
  config["tie_word_embeddings"] = false;  // vocab_projector.weight 30,522 x 768 of its own
  CHECK(total_of(config) == 66'985'530 + 30'522LL * 768);
}

TEST_CASE("DistilBERT's sinusoidal position table trains nothing", "[families][distilbert]") {
  // sinusoidal_pos_embds: requires_grad False on the 512 x 768 table, so a full fine-tune in
  // pure bf16 holds 2 bytes of gradient for 66,985,530 - 393,216 = 66,592,314 parameters.
  nlohmann::json config = fixture("distilbert--distilbert-base-uncased.json");
  const auto gradients = [&]() {
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    const trace::ParameterCount params = trace::count_parameters(model);
    trace::Job job;
    job.mode = trace::JobMode::full;
    job.precision = trace::Precision::bf16_pure;
    job.seq_len = 128;
    return trace::estimate_job(model, params, job).breakdown.gradients;
  };
  CHECK(gradients() == 66'985'530LL * 2);
  config["sinusoidal_pos_embds"] = true;
  CHECK(gradients() == 66'592'314LL * 2);
}

TEST_CASE("DistilBERT refusals name the key", "[families][distilbert][errors]") {
  nlohmann::json config = fixture("distilbert--distilbert-base-uncased.json");
  nlohmann::json qa = config;
  qa["architectures"] = {"DistilBertForQuestionAnswering"};
  qa["num_labels"] = 3;
  CHECK_THROWS_AS(trace::parse_model_config(qa.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(qa.dump()), Catch::Matchers::Contains("num_labels"));
  nlohmann::json unknown = config;
  unknown["architectures"] = {"DistilBertForCausalLM"};
  CHECK_THROWS_WITH(trace::parse_model_config(unknown.dump()),
                    Catch::Matchers::Contains("DistilBertForMaskedLM"));
  for (const char* key : {"dim", "n_layers", "n_heads", "hidden_dim", "max_position_embeddings"}) {
    nlohmann::json missing = config;
    missing.erase(key);
    CHECK_THROWS_AS(trace::parse_model_config(missing.dump()), trace::ConfigError);
  }
}

TEST_CASE("ALBERT: one stored layer run num_hidden_layers times", "[families][albert]") {
  const nlohmann::json config = fixture("albert--albert-base-v2.reconstructed.json");
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  REQUIRE(model.stacks.size() == 1);
  const auto& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 12);
  CHECK_FALSE(blocks.front().shared_weights);
  for (std::size_t i = 1; i < blocks.size(); ++i) CHECK(blocks[i].shared_weights);
  // Embeddings 30,000 x 128 + 512 x 128 + 2 x 128 + LayerNorm 256 = 3,906,048;
  // mapping_in 128 x 768 + 768 = 99,072; one layer 7,087,872; pooler 590,592:
  // AlbertModel 11,683,584 (KerasHub's albert_base_en_uncased). The MLM head
  // adds 98,432 + 256 + 30,000.
  CHECK(trace::count_parameters(model).total == 11'812'272);
  // The Hub's 11,842,272 also holds the duplicate predictions.decoder.bias: a
  // stored extra.
  bool decoder_bias = false;
  for (const trace::StoredExtra& extra : model.stored_extras) {
    if (extra.name == "predictions.decoder.bias") decoder_bias = extra.elements_each == 30'000;
  }
  CHECK(decoder_bias);
}

TEST_CASE("ALBERT groups and inner layers", "[families][albert]") {
  nlohmann::json config = fixture("albert--albert-base-v2.reconstructed.json");
  config["architectures"] = {"AlbertModel"};
  CHECK(total_of(config) == 11'683'584);
  // 2 groups x 2 inner layers: 4 stored layers, 12 runs x 2 = 24 blocks, 4
  // owning weights.
  config["num_hidden_groups"] = 2;
  config["inner_group_num"] = 2;
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  const auto& blocks = model.stacks.front().blocks;
  CHECK(blocks.size() == 24);
  int owners = 0;
  for (const trace::Block& block : blocks) owners += block.shared_weights ? 0 : 1;
  CHECK(owners == 4);
  CHECK(trace::count_parameters(model).total == 11'683'584 + 3 * 7'087'872);
}

TEST_CASE("ALBERT heads follow the architectures key", "[families][albert]") {
  nlohmann::json config = fixture("albert--albert-base-v2.reconstructed.json");
  config["architectures"] = {"AlbertForPreTraining"};  // + sop_classifier 768 x 2 + 2
  CHECK(total_of(config) == 11'812'272 + 1'538);
  config["architectures"] = {"AlbertForSequenceClassification"};
  config["num_labels"] = 3;  // pooler kept, classifier 768 x 3 + 3
  CHECK(total_of(config) == 11'683'584 + 2'307);
  config["architectures"] = {"AlbertForTokenClassification"};  // no pooler
  CHECK(total_of(config) == 11'683'584 - 590'592 + 2'307);
  config["num_labels"] = 2;
  config["architectures"] = {"AlbertForQuestionAnswering"};  // no pooler, qa_outputs 768 x 2 + 2
  CHECK(total_of(config) == 11'683'584 - 590'592 + 1'538);
  config["architectures"] = {"AlbertForMaskedLM"};
  config["tie_word_embeddings"] = false;  // predictions.decoder.weight 30,000 x 128 of its own
  CHECK(total_of(config) == 11'812'272 + 3'840'000);
}

TEST_CASE("ALBERT refusals name the key", "[families][albert][errors]") {
  const nlohmann::json config = fixture("albert--albert-base-v2.reconstructed.json");
  nlohmann::json uneven = config;
  uneven["num_hidden_groups"] = 5;  // 12 layers do not split into 5 groups
  CHECK_THROWS_AS(trace::parse_model_config(uneven.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(uneven.dump()),
                    Catch::Matchers::Contains("num_hidden_groups"));
  nlohmann::json relative = config;
  relative["position_embedding_type"] = "relative_key";
  CHECK_THROWS_WITH(trace::parse_model_config(relative.dump()),
                    Catch::Matchers::Contains("position_embedding_type"));
  nlohmann::json unknown = config;
  unknown["architectures"] = {"AlbertForCausalLM"};
  CHECK_THROWS_WITH(trace::parse_model_config(unknown.dump()),
                    Catch::Matchers::Contains("AlbertForMaskedLM"));
  for (const char* key : {"embedding_size", "hidden_size", "num_hidden_layers", "intermediate_size",
                          "num_attention_heads"}) {
    nlohmann::json missing = config;
    missing.erase(key);
    CHECK_THROWS_AS(trace::parse_model_config(missing.dump()), trace::ConfigError);
  }
}
