// RoBERTa / XLM-R / CamemBERT and ELECTRA: heads chosen by `architectures`, the pooler the MLM
// uploads store, embedding_size tables. Every number is a hand derivation from the tensor
// shapes; where a published checkpoint has the same tensor list its Hub total is named beside
// it (tests/data/configs/SOURCES-roberta.md).
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {
std::int64_t total_of(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}
}  // namespace

TEST_CASE("RoBERTa heads follow the architectures key", "[golden][roberta]") {
  nlohmann::json config = nlohmann::json::parse(
      trace::test::config_text("FacebookAI--roberta-base.reconstructed.json"));
  // Body (embeddings 50265 x 768 + 514 x 768 + 1 x 768 + LN, 12 BERT layers) = 124,055,040.
  config["architectures"] = {"RobertaModel"};  // + pooler 768 x 768 + 768
  CHECK(total_of(config) == 124'645'632);
  config["architectures"] = {"RobertaForSequenceClassification"};  // dense + out_proj, no pooler
  config["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}};
  CHECK(total_of(config) == 124'055'040 + 590'592 + 768 * 3 + 3);
  config["architectures"] = {"RobertaForTokenClassification"};
  CHECK(total_of(config) == 124'055'040 + 768 * 3 + 3);
  config["architectures"] = {"RobertaForQuestionAnswering"};
  config.erase("id2label");
  CHECK(total_of(config) == 124'055'040 + 768 * 2 + 2);
}

TEST_CASE("XLM-R: the MLM upload's pooler, XLMRobertaModel and a 1-label classifier",
          "[golden][roberta]") {
  nlohmann::json config = nlohmann::json::parse(
      trace::test::config_text("FacebookAI--xlm-roberta-base.reconstructed.json"));
  // XLMRobertaModel = body 277,453,056 + pooler 590,592; intfloat/multilingual-e5-base (an
  // XLMRobertaModel of these shapes) has Hub total 278,044,162 = this + 514 I64 position_ids.
  config["architectures"] = {"XLMRobertaModel"};
  CHECK(total_of(config) == 278'043'648);
  // BAAI/bge-reranker-base: Hub total 278,044,931 = this + 514 I64 position_ids.
  config["architectures"] = {"XLMRobertaForSequenceClassification"};
  config["id2label"] = {{"0", "LABEL_0"}};
  CHECK(total_of(config) == 278'044'417);
  // Without architectures the published MLM layout (with the stored pooler) is assumed.
  config.erase("architectures");
  config.erase("id2label");
  CHECK(total_of(config) == 278'885'778);
}

TEST_CASE("RoBERTa refuses unknown heads and relative positions", "[golden][roberta]") {
  nlohmann::json config = nlohmann::json::parse(
      trace::test::config_text("FacebookAI--roberta-base.reconstructed.json"));
  config["architectures"] = {"RobertaForFoo"};
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("supported: RobertaModel, RobertaForMaskedLM"));
  config["architectures"] = {"RobertaForMaskedLM"};
  config["position_embedding_type"] = "relative_key";
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("position_embedding_type"));
}

TEST_CASE("ELECTRA: embedding_size tables, projection and generator head", "[golden][electra]") {
  nlohmann::json config = nlohmann::json::parse(
      trace::test::config_text("google--electra-small-generator.reconstructed.json"));
  // ElectraModel: 30522 x 128 + 512 x 128 + 2 x 128 + LN(128) + project 128 -> 256 (33,024) +
  // 12 layers of 789,760 = 13,483,008 (KerasHub's electra_small backbone, which adds one
  // 256 x 256 + 256 pooled dense, publishes 13,548,800 = 13,483,008 + 65,792).
  config["architectures"] = {"ElectraForMaskedLM"};
  CHECK(total_of(config) == 13'546'682);  // + dense 256 -> 128, LayerNorm(128), bias 30522
  config["tie_word_embeddings"] = false;  // an untied generator_lm_head adds 30522 x 128
  CHECK(total_of(config) == 13'546'682 + 30'522 * 128);
  config.erase("tie_word_embeddings");
  config["architectures"] = {"ElectraModel"};
  CHECK(total_of(config) == 13'483'008);
  config.erase("embedding_size");  // ElectraConfig's default is 128: same count, noted
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(model).total == 13'483'008);
  config["architectures"] = {"ElectraForMultipleChoice"};
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("supported: ElectraModel"));
}

TEST_CASE("ELECTRA discriminator heads / the unused stored projection is not counted",
          "[golden][electra]") {
  nlohmann::json config = nlohmann::json::parse(
      trace::test::config_text("google--electra-base-discriminator.reconstructed.json"));
  // ElectraModel base = 108,891,648 (KerasHub electra_base_discriminator: 109,482,240 with its
  // 768 x 768 + 768 pooled dense).
  config["architectures"] = {"ElectraForSequenceClassification"};
  config["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}};
  CHECK(total_of(config) == 108'891'648 + 590'592 + 768 * 3 + 3);
  config["architectures"] = {"ElectraForPreTraining"};
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(model).total == 109'483'009);
  REQUIRE(model.stored_extras.size() == 2);  // electra.embeddings_project weight + bias
  CHECK(model.stored_extras[0].elements_each + model.stored_extras[1].elements_each == 590'592);
}

namespace {

// The full fine-tune's logits term for roberta-base under `architecture` (512 x 4 tokens).
std::int64_t roberta_logits(const char* architecture, int labels) {
  nlohmann::json config = nlohmann::json::parse(
      trace::test::config_text("FacebookAI--roberta-base.reconstructed.json"));
  config["architectures"] = {architecture};
  config["num_labels"] = labels;
  const trace::test::TempDir dir;
  const trace::test::CliResult result =
      trace::test::run_cli_offline({dir.write("config.json", config.dump()), "--mode", "full",
                                    "--seq-len", "512", "--batch", "4", "--json"});
  REQUIRE(result.exit_code == 0);
  return nlohmann::json::parse(result.out)["estimate"]["breakdown"]["logits"].get<std::int64_t>();
}

}  // namespace

TEST_CASE("an encoder's training logits follow its head", "[roberta][memory]") {
  const std::int64_t masked_lm = roberta_logits("RobertaForMaskedLM", 2);
  // The MLM head scores the 50,265-token vocabulary at every position.
  CHECK(masked_lm > 0);
  // A sequence classifier scores the pooled first token only: no per-token logits.
  CHECK(roberta_logits("RobertaForSequenceClassification", 3) == 0);
  CHECK(roberta_logits("RobertaModel", 2) == 0);
  // Token classification: 9 labels per token instead of the vocabulary; QA: 2 (start, end).
  CHECK(roberta_logits("RobertaForTokenClassification", 9) * 50'265 == masked_lm * 9);
  CHECK(roberta_logits("RobertaForQuestionAnswering", 2) * 50'265 == masked_lm * 2);
}

TEST_CASE("RoBERTa's 514 position rows hold 512 tokens", "[roberta][positions]") {
  // Positions are numbered from pad_token_id + 1 = 2, so rows 0 and 1 are never a token's.
  const trace::ModelDescription model = trace::parse_model_config(
      trace::test::config_text("FacebookAI--roberta-base.reconstructed.json"));
  CHECK(model.learned_positions == 514);
  CHECK(model.max_position_embeddings == 512);
  const std::string path = trace::test::config_path("FacebookAI--roberta-base.reconstructed.json");
  CHECK(trace::test::run_cli_offline({path, "--seq-len", "512", "--json"}).exit_code == 0);
  const trace::test::CliResult past = trace::test::run_cli_offline({path, "--seq-len", "513"});
  CHECK(past.exit_code == 2);
  CHECK(past.err.find("512 learned positions") != std::string::npos);
}
