// MPNet: BERT's layer shapes, a 514-row position table holding 512 tokens, one relative
// attention bias table at the encoder level, heads by `architectures`, and sentence-transformers'
// uploads that name MPNetForMaskedLM while storing MPNetModel. Every number is a hand derivation
// from the tensor shapes; where a published checkpoint has the same tensor list its Hub total is
// named beside it (tests/data/configs/SOURCES-mpnet.md).
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

const char* const k_base = "microsoft--mpnet-base.reconstructed.json";
const char* const k_all = "sentence-transformers--all-mpnet-base-v2.reconstructed.json";

nlohmann::json fixture_json(const char* name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

std::int64_t total_of(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}

}  // namespace

// V 30527, H 768, I 3072, 514 position rows, 12 layers of 12 heads, 32 buckets.
// Body (every class holds it) = 108,895,872:
//   word_embeddings 30527 x 768 = 23,444,736; position_embeddings 514 x 768 = 394,752;
//   embeddings.LayerNorm 1,536; 12 layers x 7,087,872 = 85,054,464, a layer being
//   q/k/v/o 4 x (768 x 768 + 768) = 2,362,368 + intermediate 3072 x 768 + 3072 = 2,362,368 +
//   output 768 x 3072 + 768 = 2,360,064 + two LayerNorms 3,072;
//   encoder.relative_attention_bias 32 x 12 = 384.

TEST_CASE("microsoft/mpnet-base: body + MLM head, relative bias counted once", "[golden][mpnet]") {
  const trace::ModelDescription model = trace::test::fixture(k_base);
  const trace::ParameterCount count = trace::count_parameters(model);
  // lm_head.dense 590,592 + lm_head.layer_norm 1,536 + lm_head.bias 30,527 = 622,655; the
  // decoder weight is the word embedding.
  CHECK(count.total == 109'518'527);
  // 12 x 2,362,368 q/k/v/o + the one 384-element bias table (not one per layer).
  CHECK(trace::component_count(count, "attention") == 12 * 2'362'368 + 384);
  CHECK(trace::component_count(count, "mlp") == 12 * 4'722'432);
  CHECK(trace::component_count(count, "embedding") == 23'444'736);  // no token-type table
  CHECK(trace::component_count(count, "position_embedding") == 394'752);
  // embeddings.LayerNorm 1,536 + 12 x 3,072 + lm_head.layer_norm 1,536.
  CHECK(trace::component_count(count, "norm") == 39'936);
  CHECK(trace::component_count(count, "head") == 590'592 + 30'527);
  CHECK(model.token_types == 0);
  CHECK(model.eager_attention_only);         // hand-written attention: no SDPA / flash path
  CHECK(model.head_logits_per_token == -1);  // the MLM head scores the vocabulary
  REQUIRE(model.stored_extras.size() == 1);  // the I64 position_ids buffer, never counted
  CHECK(model.stored_extras[0].name == "mpnet.embeddings.position_ids");
  CHECK(model.stored_extras[0].elements_each == 514);
}

TEST_CASE("all-mpnet-base-v2 names MPNetForMaskedLM but stores MPNetModel", "[golden][mpnet]") {
  // Hub safetensors total 109,486,978 = body 108,895,872 + pooler 590,592 + the 514 I64
  // position_ids; paraphrase-mpnet-base-v2 (config MPNetModel) trains 109,486,464.
  const trace::ModelDescription model = trace::test::fixture(k_all);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == 109'486'464);
  CHECK(trace::component_count(count, "head") == 590'592);  // pooler.dense, no lm_head
  CHECK(trace::component_count(count, "norm") == 38'400);   // no lm_head.layer_norm
  CHECK(model.head_logits_per_token == 0);
  REQUIRE(model.stored_extras.size() == 1);
  CHECK(model.stored_extras[0].name == "embeddings.position_ids");  // a bare MPNetModel's name
  bool noted = false;
  for (const std::string& note : model.notes) {
    noted = noted || note.find("32063 more parameters") != std::string::npos;
  }
  CHECK(noted);  // the MLM alternative, 2 x 768 + 30,527, is stated
  // Only the `_name_or_path` of a config re-saved from microsoft/mpnet-base selects that layout.
  nlohmann::json config = fixture_json(k_all);
  config.erase("_name_or_path");
  CHECK(total_of(config) == 109'518'527);
  config["_name_or_path"] = 7;  // bookkeeping of another type is not an error
  CHECK(total_of(config) == 109'518'527);
}

TEST_CASE("MPNet heads follow the architectures key", "[golden][mpnet]") {
  nlohmann::json config = fixture_json(k_base);
  const std::int64_t body = 108'895'872;
  config["architectures"] = {"MPNetModel"};  // + pooler 768 x 768 + 768
  CHECK(total_of(config) == body + 590'592);
  config["architectures"] = {"MPNetForSequenceClassification"};  // dense + out_proj, no pooler
  config["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}};
  CHECK(total_of(config) == body + 590'592 + 768 * 3 + 3);
  config["architectures"] = {"MPNetForTokenClassification"};
  config["num_labels"] = 9;
  CHECK(total_of(config) == body + 768 * 9 + 9);
  config["architectures"] = {"MPNetForQuestionAnswering"};
  config.erase("id2label");
  config.erase("num_labels");
  CHECK(total_of(config) == body + 768 * 2 + 2);
  config["architectures"] = {"MPNetForMultipleChoice"};  // pooler + classifier (768 -> 1)
  CHECK(total_of(config) == body + 590'592 + 769);
  config["architectures"] = {"MPNetForMaskedLM"};
  config["tie_word_embeddings"] = false;  // an untied decoder adds 30,527 x 768
  CHECK(total_of(config) == 109'518'527 + 23'444'736);
  config.erase("tie_word_embeddings");
  config.erase("architectures");  // none named: microsoft/mpnet-base's MPNetForMaskedLM
  CHECK(total_of(config) == 109'518'527);
}

TEST_CASE("MPNet's heads set the training logits per token", "[mpnet][memory]") {
  nlohmann::json config = fixture_json(k_base);
  config["architectures"] = {"MPNetForTokenClassification"};
  config["num_labels"] = 9;
  CHECK(trace::parse_model_config(config.dump()).head_logits_per_token == 9);
  config["architectures"] = {"MPNetForQuestionAnswering"};
  CHECK(trace::parse_model_config(config.dump()).head_logits_per_token == 2);
  config["architectures"] = {"MPNetForSequenceClassification"};
  CHECK(trace::parse_model_config(config.dump()).head_logits_per_token == 0);
}

TEST_CASE("MPNet's bias table follows relative_attention_num_buckets", "[mpnet]") {
  nlohmann::json config = fixture_json(k_base);
  config.erase("relative_attention_num_buckets");  // MPNetConfig's default is 32
  CHECK(total_of(config) == 109'518'527);
  config["relative_attention_num_buckets"] = 64;  // 32 more rows of 12 heads
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(model).total == 109'518'527 + 384);
  bool noted = false;  // transformers still buckets positions into 32
  for (const std::string& note : model.notes) {
    noted = noted || note.find("buckets positions into 32") != std::string::npos;
  }
  CHECK(noted);
}

TEST_CASE("MPNet refuses unknown heads and a table without token rows", "[mpnet]") {
  nlohmann::json config = fixture_json(k_base);
  config["architectures"] = {"MPNetForCausalLM"};
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("MPNetForCausalLM") &&
                        Catch::Matchers::Contains("supported: MPNetModel, MPNetForMaskedLM"));
  config["architectures"] = {"MPNetForMaskedLM"};
  config["max_position_embeddings"] = 2;  // rows 0 and 1 are never a token's
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("max_position_embeddings"));
}

TEST_CASE("MPNet's 514 position rows hold 512 tokens", "[mpnet][positions]") {
  // Positions are numbered from the padding index (1, fixed in MPNetEmbeddings) + 1 = 2.
  const trace::ModelDescription model = trace::test::fixture(k_base);
  CHECK(model.learned_positions == 514);
  CHECK(model.max_position_embeddings == 512);
  nlohmann::json config = fixture_json(k_base);
  config["pad_token_id"] = 0;  // pad_token_id does not move MPNet's padding index
  CHECK(trace::parse_model_config(config.dump()).max_position_embeddings == 512);
  const std::string path = trace::test::config_path(k_base);
  CHECK(trace::test::run_cli_offline({path, "--seq-len", "512", "--json"}).exit_code == 0);
  const trace::test::CliResult past = trace::test::run_cli_offline({path, "--seq-len", "513"});
  CHECK(past.exit_code == 2);
  CHECK(past.err.find("512 learned positions") != std::string::npos);
}
