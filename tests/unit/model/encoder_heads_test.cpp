// What the plan says of an encoder's word table, by the head its architectures key names: an MLM
// decoder tied to it (BERT, RoBERTa, MPNet, DeBERTa), an untied one (tie_word_embeddings false:
// counted), or no vocabulary head at all (a bare *Model, a classifier), where the table only
// feeds the input. Counts are hand derivations from modeling_bert.py's tensors.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

std::string vocabulary_line(const std::string& fixture_or_repo) {
  const std::string path = fixture_or_repo.find('/') != std::string::npos
                               ? fixture_or_repo
                               : trace::test::config_path(fixture_or_repo);
  const trace::test::CliResult result = trace::test::run_cli_offline({path});
  REQUIRE(result.exit_code == 0);
  const std::size_t at = result.out.find("  vocabulary");
  REQUIRE(at != std::string::npos);
  return result.out.substr(at, result.out.find('\n', at) - at);
}

}  // namespace

TEST_CASE("the plan says whether the word table feeds an MLM head or only the input",
          "[render][encoder]") {
  // BertForMaskedLM: cls.predictions' decoder is the word table.
  CHECK(vocabulary_line("google-bert--bert-base-uncased.json").find("tied to the head") !=
        std::string::npos);
  // RobertaForMaskedLM, MPNetForMaskedLM: lm_head.decoder is the word table.
  CHECK(vocabulary_line("FacebookAI--roberta-base.reconstructed.json").find("tied to the head") !=
        std::string::npos);
  CHECK(vocabulary_line("microsoft--mpnet-base.reconstructed.json").find("tied to the head") !=
        std::string::npos);
  // MPNetModel (all-mpnet-base-v2) and BertModel (all-MiniLM-L6-v2): no vocabulary head.
  CHECK(vocabulary_line("sentence-transformers--all-mpnet-base-v2.reconstructed.json")
            .find("30527, input only (no LM head)") != std::string::npos);
  CHECK(vocabulary_line("sentence-transformers/all-MiniLM-L6-v2")
            .find("30522, input only (no LM head)") != std::string::npos);
  // A decoder-only model keeps its own wording.
  CHECK(vocabulary_line("meta-llama/Llama-3.1-8B").find("128256, embeddings untied") !=
        std::string::npos);
}

TEST_CASE("BERT's MLM decoder is counted when tie_word_embeddings is false", "[golden][bert]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("google-bert--bert-base-uncased.json"));
  const auto total = [&] {
    return trace::count_parameters(trace::parse_model_config(config.dump())).total;
  };
  // bert-base-uncased with Google's pre-training heads (pooler, cls.predictions,
  // cls.seq_relationship): 110,106,428 (docs/parameters.md). Untied, cls.predictions.decoder
  // adds its own 30,522 x 768 matrix (its bias stays cls.predictions.bias).
  CHECK(total() == 110'106'428);
  config["tie_word_embeddings"] = false;
  CHECK(total() == 110'106'428 + 30'522 * 768);
}
