// BART-style encoder-decoders (bart, mbart, marian, pegasus, m2m_100): heads chosen by
// `architectures`, the final_logits_bias buffer, positions, Marian's separate vocabularies and
// the refusals. Every expected number is hand-derived from the tensor shapes of transformers'
// modeling_{bart,mbart,marian,pegasus,m2m_100}.py (tests/data/configs/SOURCES-bart.md), never
// from trace's output.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

nlohmann::json fixture_json(const char* name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

std::int64_t total(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}

constexpr const char* k_cnn = "facebook--bart-large-cnn.reconstructed.json";
constexpr const char* k_opus = "Helsinki-NLP--opus-mt-en-de.reconstructed.json";
constexpr const char* k_mbart = "facebook--mbart-large-50-many-to-many-mmt.reconstructed.json";
constexpr const char* k_m2m = "facebook--m2m100_418M.reconstructed.json";

// bart-large-cnn: vocab 50264, d 1024, 12 + 12 layers, ffn 4096, 1024 (+2) positions.
constexpr std::int64_t k_cnn_total = 406'290'432;

}  // namespace

TEST_CASE("BART heads follow the architectures key", "[golden][bart]") {
  nlohmann::json config = fixture_json(k_cnn);
  // The tied lm_head adds nothing; BartModel holds the same tensors less the buffer.
  CHECK(total(config) == k_cnn_total);
  config["architectures"] = {"BartModel"};
  CHECK(total(config) == k_cnn_total);
  // classification_head.dense 1024 x 1024 + 1024, out_proj 1024 x 3 + 3 (id2label has 3 entries).
  config["architectures"] = {"BartForSequenceClassification"};
  config["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}};
  CHECK(total(config) == k_cnn_total + 1024 * 1024 + 1024 + 1024 * 3 + 3);
  // qa_outputs 1024 -> 2.
  config["architectures"] = {"BartForQuestionAnswering"};
  CHECK(total(config) == k_cnn_total + 1024 * 2 + 2);
  // An untied lm_head stores its own 50264 x 1024 matrix.
  config["architectures"] = {"BartForConditionalGeneration"};
  config["tie_word_embeddings"] = false;
  CHECK(total(config) == k_cnn_total + 50'264LL * 1024);
}

TEST_CASE("BART refuses heads it does not know and classifiers without labels", "[bart]") {
  nlohmann::json config = fixture_json(k_cnn);
  config["architectures"] = {"BartForCausalLM"};
  CHECK_THROWS_AS(trace::parse_model_config(config.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("BartForCausalLM") &&
                        Catch::Matchers::Contains("BartForSequenceClassification"));
  config["architectures"] = {"BartForSequenceClassification"};
  config.erase("id2label");
  config.erase("_num_labels");
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("id2label"));
  nlohmann::json missing = fixture_json(k_cnn);
  missing.erase("max_position_embeddings");
  CHECK_THROWS_WITH(trace::parse_model_config(missing.dump()),
                    Catch::Matchers::Contains("max_position_embeddings"));
}

TEST_CASE("BART positions are a hard limit of max_position_embeddings tokens", "[bart]") {
  const trace::ModelDescription bart = trace::parse_model_config(fixture_json(k_cnn).dump());
  CHECK(bart.position == trace::PositionKind::learned);
  CHECK(bart.learned_positions == 1026);  // 1024 + the two reserved rows, per stack
  CHECK(bart.max_position_embeddings == 1024);
  // Both stacks' tables: 2 x 1026 x 1024.
  CHECK(trace::component_count(trace::count_parameters(bart), "position_embedding") ==
        2 * 1026 * 1024);
  // final_logits_bias [1, 50264]: stored, not counted.
  REQUIRE(bart.stored_extras.size() == 1);
  CHECK(bart.stored_extras[0].name == "final_logits_bias");
  CHECK(bart.stored_extras[0].elements_each == 50'264);

  // M2M100: sinusoids in a non-persistent buffer, no final_logits_bias.
  const trace::ModelDescription m2m = trace::parse_model_config(fixture_json(k_m2m).dump());
  CHECK(m2m.position == trace::PositionKind::none);
  CHECK(m2m.learned_positions == 0);
  CHECK(m2m.stored_extras.empty());
}

TEST_CASE("mBART adds a final layer_norm per stack to BART's tensors", "[bart][mbart]") {
  nlohmann::json config = fixture_json(k_mbart);
  const std::int64_t mbart = total(config);
  config["model_type"] = "bart";
  config["architectures"] = {"BartForConditionalGeneration"};
  // Two LayerNorms of 1024 (weight + bias): model.encoder.layer_norm, model.decoder.layer_norm.
  CHECK(mbart - total(config) == 2 * 2 * 1024);
}

TEST_CASE("Marian's sinusoidal tables are counted, and separate vocabularies cost a table",
          "[bart][marian]") {
  nlohmann::json config = fixture_json(k_opus);
  // 74,410,496 = 73,886,208 trainable + two frozen 512 x 512 sinusoidal tables.
  CHECK(total(config) == 73'886'208 + 2 * 512 * 512);
  // Not shared: the encoder and the decoder each hold a 58101 x 512 table; the head is tied to
  // the decoder's.
  config["share_encoder_decoder_embeddings"] = false;
  CHECK(total(config) == 74'410'496 + 58'101LL * 512);
  // A decoder vocabulary of another size does not load in transformers: refused.
  config["decoder_vocab_size"] = 60'000;
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("decoder_vocab_size"));
}

TEST_CASE("Marian's and Pegasus's sinusoidal tables train nothing in a full fine-tune",
          "[bart][memory]") {
  // pegasus-large: 570,797,056 parameters, of which the two 1,024 x 1,024 sinusoidal tables
  // (requires_grad False) are 2,097,152: pure bf16 keeps 2 bytes of gradient for each of the
  // 568,699,904 others (held between steps: --keep-grads), and AdamW two 2-byte states.
  const std::string path = trace::test::config_path("google--pegasus-large.reconstructed.json");
  const trace::test::CliResult result =
      trace::test::run_cli_offline({path, "--mode", "full", "--precision", "bf16", "--seq-len",
                                    "512", "--keep-grads", "--json"});
  REQUIRE(result.exit_code == 0);
  const nlohmann::json out = nlohmann::json::parse(result.out);
  CHECK(out["parameters"]["total"] == 570'797'056);
  CHECK(out["parameters"]["frozen"] == 2 * 1'024 * 1'024);
  CHECK(out["estimate"]["breakdown"]["gradients"] == 568'699'904LL * 2);
  CHECK(out["estimate"]["breakdown"]["optimizer"] == 568'699'904LL * 2 * 2);
  CHECK(out["estimate"]["breakdown"]["weights"] == 570'797'056LL * 2);
  // The plan's positions line says what the table holds.
  const trace::test::CliResult plan = trace::test::run_cli_offline({path});
  CHECK(plan.out.find("fixed sinusoidal table (1024 positions, frozen)") != std::string::npos);
}
