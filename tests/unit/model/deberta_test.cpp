// DeBERTa v1 / v2 / v3: heads chosen by `architectures`, sizes against published backbone
// counts, options that add tensors, refusals. Every number is hand-derived in
// tests/data/configs/SOURCES-deberta.md and, where noted, published.
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
std::int64_t deberta_total(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}
}  // namespace

TEST_CASE("DeBERTa-v3 heads follow the architectures key", "[golden][deberta]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("microsoft--deberta-v3-base.json"));
  // No architectures key: backbone + lm_predictions.lm_head + mask_predictions.
  const trace::ModelDescription pretraining = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(pretraining).total == 185'144'677);
  // The unused absolute table the upload also stores: 512 x 768; with it, the safetensors'
  // 185,537,893 elements.
  REQUIRE(pretraining.stored_extras.size() == 1);
  CHECK(pretraining.stored_extras[0].elements_each == 512 * 768);
  CHECK(185'144'677 + pretraining.stored_extras[0].elements_each == 185'537'893);
  // DebertaV2Model: 183,831,552 (KerasHub deberta_v3_base_en, TF DebertaV2MainLayer summary);
  // 85,450,752 without the word embeddings (the model card's "86M backbone").
  config["architectures"] = {"DebertaV2Model"};
  const trace::ParameterCount bare =
      trace::count_parameters(trace::parse_model_config(config.dump()));
  CHECK(bare.total == 183'831'552);
  CHECK(bare.active_without_embedding == 85'450'752);
  // MLM: + dense 768x768+768, LayerNorm 2x768, bias 128,100 (decoder tied).
  config["architectures"] = {"DebertaV2ForMaskedLM"};
  CHECK(deberta_total(config) == 183'831'552 + 590'592 + 1'536 + 128'100);
  // Two-label classifier: pooler 590,592 + 768x2+2 = 184,423,682 (published for
  // protectai/deberta-v3-base-prompt-injection-v2).
  config["architectures"] = {"DebertaV2ForSequenceClassification"};
  config["id2label"] = {{"0", "SAFE"}, {"1", "INJECTION"}};
  CHECK(deberta_total(config) == 184'423'682);
  config["architectures"] = {"DebertaV2ForMultipleChoice"};
  CHECK(deberta_total(config) == 183'831'552 + 590'592 + 769);
  config["architectures"] = {"DebertaV2ForTokenClassification"};
  CHECK(deberta_total(config) == 183'831'552 + 768 * 2 + 2);
  config["architectures"] = {"DebertaV2ForQuestionAnswering"};
  CHECK(deberta_total(config) == 183'831'552 + 768 * 2 + 2);
}

TEST_CASE("DeBERTa-v3 sizes match the published backbone counts", "[golden][deberta]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("microsoft--deberta-v3-base.json"));
  config["architectures"] = {"DebertaV2Model"};
  nlohmann::json xsmall = config;  // KerasHub deberta_v3_extra_small_en: 70,682,112
  xsmall["hidden_size"] = 384;
  xsmall["intermediate_size"] = 1536;
  xsmall["num_attention_heads"] = 6;
  CHECK(deberta_total(xsmall) == 70'682'112);
  nlohmann::json small = config;  // deberta_v3_small_en: 141,304,320
  small["num_hidden_layers"] = 6;
  CHECK(deberta_total(small) == 141'304'320);
  nlohmann::json large = config;  // deberta_v3_large_en: 434,012,160
  large["hidden_size"] = 1024;
  large["intermediate_size"] = 4096;
  large["num_attention_heads"] = 16;
  large["num_hidden_layers"] = 24;
  CHECK(deberta_total(large) == 434'012'160);
  // Two-label classifier on large: 435,063,810 (published PARAMETER_COUNTS 'deberta-v3-large').
  large["architectures"] = {"DebertaV2ForSequenceClassification"};
  large["num_labels"] = 2;
  CHECK(deberta_total(large) == 435'063'810);
}

TEST_CASE("DeBERTa-v2 options add exactly their tensors", "[deberta]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("microsoft--deberta-v3-base.json"));
  config["architectures"] = {"DebertaV2Model"};
  // Unshared position projections: pos_key_proj and pos_query_proj, 768x768+768 each, x12.
  nlohmann::json unshared = config;
  unshared["share_att_key"] = false;
  CHECK(deberta_total(unshared) == 183'831'552 + 12 * 2 * 590'592);
  unshared["pos_att_type"] = "c2p";
  CHECK(deberta_total(unshared) == 183'831'552 + 12 * 590'592);
  // Without buckets the table has 2 x max_position_embeddings rows: +512 x 768.
  nlohmann::json unbucketed = config;
  unbucketed.erase("position_buckets");
  CHECK(deberta_total(unbucketed) == 183'831'552 + 512 * 768);
  // conv_kernel_size 3: Conv1d 768x768x3 + 768, and its LayerNorm 2 x 768.
  nlohmann::json conv = config;
  conv["conv_kernel_size"] = 3;
  CHECK(deberta_total(conv) == 183'831'552 + 768 * 768 * 3 + 768 + 1'536);
  // A list-valued pos_att_type (as transformers saves it) counts the same as the string.
  nlohmann::json listed = config;
  listed["pos_att_type"] = {"p2c", "c2p"};
  CHECK(deberta_total(listed) == 183'831'552);
}

TEST_CASE("DeBERTa refuses unknown heads and position terms", "[deberta]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("microsoft--deberta-v3-base.json"));
  config["architectures"] = {"DebertaV2ForCausalLM"};
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Contains("DebertaV2ForSequenceClassification"));
  config["architectures"] = {"DebertaV2Model"};
  config["pos_att_type"] = "c2p|x2y";
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()), Catch::Contains("pos_att_type"));
}

TEST_CASE("DeBERTa v1 counts match the published AutoModel counts", "[golden][deberta]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("microsoft--deberta-base.reconstructed.json"));
  CHECK(deberta_total(config) == 139'244'121);  // AutoModelForMaskedLM('microsoft/deberta-base')
  config["architectures"] = {"DebertaModel"};
  CHECK(deberta_total(config) == 138'601'728);  // AutoModel('microsoft/deberta-base')
  config["hidden_size"] = 1024;
  config["intermediate_size"] = 4096;
  config["num_attention_heads"] = 16;
  config["num_hidden_layers"] = 24;
  CHECK(deberta_total(config) == 405'163'008);  // AutoModel('microsoft/deberta-large')
}

TEST_CASE("DeBERTa keeps its attention scores whatever --attention says", "[deberta]") {
  const std::string path = trace::test::config_path("microsoft--deberta-v3-base.json");
  const auto activations = [&](const char* attention) {
    const trace::test::CliResult result =
        trace::test::run_cli_offline({path, "--mode", "full", "--seq-len", "512", "--attention",
                                      attention, "--dtype", "bf16", "--json"});
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out)["estimate"]["breakdown"]["activations"]
        .get<std::int64_t>();
  };
  // transformers' DeBERTa has no SDPA path: sdpa and eager are the same job.
  CHECK(activations("sdpa") == activations("eager"));
  // The scores are there: 12 layers x 12 heads x 512 x 512 values, at least 2 bytes each (the
  // probabilities autograd keeps).
  CHECK(activations("sdpa") > 12LL * 12 * 512 * 512 * 2);
}

TEST_CASE("DeBERTa's training keeps each relative term's gather index, once per layer",
          "[deberta][memory]") {
  // Each of c2p and p2c saves clamp(relative_pos +/- att_span), [1, s, s] int64, per layer,
  // shared by the batch: at s = 512, 512 x 512 x 8 = 2,097,152 bytes a term and layer.
  const trace::test::TempDir dir;
  const auto activations = [&](const char* terms, const char* batch, const char* checkpointing) {
    nlohmann::json config =
        nlohmann::json::parse(trace::test::config_text("microsoft--deberta-v3-base.json"));
    config["pos_att_type"] = terms;
    const trace::test::CliResult result = trace::test::run_cli_offline(
        {dir.write(std::string(terms) == "c2p" ? "one.json" : "two.json", config.dump()), "--mode",
         "full", "--seq-len", "512", "--batch", batch, "--grad-checkpointing", checkpointing,
         "--json"});
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out)["estimate"]["breakdown"]["activations"]
        .get<std::int64_t>();
  };
  // Without checkpointing all 12 layers keep theirs; the second term adds 12 x 2,097,152.
  CHECK(activations("p2c|c2p", "1", "none") - activations("c2p", "1", "none") == 12 * 2'097'152);
  // The index is not per sequence: the same difference at batch 8.
  CHECK(activations("p2c|c2p", "8", "none") - activations("c2p", "8", "none") == 12 * 2'097'152);
  // Full checkpointing keeps the recomputed layer's only.
  CHECK(activations("p2c|c2p", "1", "full") - activations("c2p", "1", "full") == 2'097'152);
}
