// ModernBERT: heads chosen by `architectures`, the layer-0 Identity attn_norm, bias switches, and
// the local / global window pattern. Every expected number is a hand derivation from the tensor
// shapes of transformers' modeling_modernbert.py (tests/data/configs/SOURCES-modernbert.md); the
// encoder-only total 149,014,272 is also the published count of the 134 `model.*` tensors of
// ModernBERT-base and of ModernBertModel checkpoints of the same shape.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

nlohmann::json modernbert_base() {
  return nlohmann::json::parse(
      trace::test::config_text("answerdotai--ModernBERT-base.reconstructed.json"));
}

std::int64_t total(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}

// ModernBERT-base, encoder only: tok_embeddings 50,368 x 768 = 38,682,624, embeddings.norm 768,
// 22 layers x (Wqkv 1,769,472 + Wo 589,824 + Wi 1,769,472 + mlp.Wo 884,736 + 2 x 768) - 768
// (layer 0 has no attn_norm) = 110,330,112, final_norm 768.
constexpr std::int64_t k_base_encoder = 149'014'272;
// ModernBertPredictionHead: dense 768 x 768 (classifier_bias false) + norm 768.
constexpr std::int64_t k_base_head = 589'824 + 768;

}  // namespace

TEST_CASE("ModernBERT heads follow the architectures key", "[golden][modernbert]") {
  nlohmann::json config = modernbert_base();
  // ForMaskedLM: head + decoder bias (50,368); the decoder weight is tied.
  CHECK(total(config) == k_base_encoder + k_base_head + 50'368);
  // ModernBertModel: the 134 model.* tensors alone.
  config["architectures"] = {"ModernBertModel"};
  CHECK(total(config) == k_base_encoder);
  // Token classification, 2 labels: head + classifier 768 x 2 + 2 (always biased).
  config["architectures"] = {"ModernBertForTokenClassification"};
  config["id2label"] = {{"0", "O"}, {"1", "B"}};
  CHECK(total(config) == k_base_encoder + k_base_head + 1'538);
  // num_labels wins over id2label, as in PretrainedConfig.
  config["architectures"] = {"ModernBertForSequenceClassification"};
  config["num_labels"] = 3;
  CHECK(total(config) == k_base_encoder + k_base_head + 2'307);
  // Multiple choice: one logit per choice, whatever the labels.
  config["architectures"] = {"ModernBertForMultipleChoice"};
  CHECK(total(config) == k_base_encoder + k_base_head + 769);
  // Question answering without labels: the PretrainedConfig default of 2 (start, end).
  config.erase("num_labels");
  config.erase("id2label");
  config["architectures"] = {"ModernBertForQuestionAnswering"};
  CHECK(total(config) == k_base_encoder + k_base_head + 1'538);
}

TEST_CASE("ModernBERT refuses a head it does not know", "[modernbert]") {
  nlohmann::json config = modernbert_base();
  config["architectures"] = {"ModernBertForCausalLM"};
  CHECK_THROWS_AS(trace::parse_model_config(config.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(config.dump()),
                    Catch::Matchers::Contains("ModernBertForMaskedLM"));
}

TEST_CASE("ModernBERT layer 0 holds no attn_norm", "[modernbert]") {
  const trace::ModelDescription model = trace::parse_model_config(modernbert_base().dump());
  REQUIRE(model.stacks.size() == 1);
  const trace::Stack& stack = model.stacks.front();
  REQUIRE(stack.blocks.size() == 22);
  CHECK_FALSE(stack.causal);
  CHECK(stack.blocks[0].norms.size() == 1);
  CHECK(stack.blocks[0].norms[0].name == "mlp_norm");
  CHECK(stack.blocks[1].norms.size() == 2);
  CHECK(stack.blocks[1].norms[0].name == "attn_norm");
}

TEST_CASE("ModernBERT bias switches add exactly their vectors", "[modernbert]") {
  nlohmann::json config = modernbert_base();
  const std::int64_t plain = total(config);
  // norm_bias: 46 LayerNorms of 768 (embeddings, 21 attn_norm, 22 mlp_norm, final, head.norm).
  config["norm_bias"] = true;
  CHECK(total(config) - plain == 46 * 768);
  config["norm_bias"] = false;
  // attention_bias: Wqkv 3 x 768 + Wo 768; mlp_bias: Wi 2 x 1,152 + mlp.Wo 768; 22 layers.
  config["attention_bias"] = true;
  config["mlp_bias"] = true;
  CHECK(total(config) - plain == 22 * (4 * 768 + 2 * 1'152 + 768));
  config["attention_bias"] = false;
  config["mlp_bias"] = false;
  // classifier_bias biases head.dense; decoder_bias false drops the 50,368 decoder bias.
  config["classifier_bias"] = true;
  config["decoder_bias"] = false;
  CHECK(total(config) - plain == 768 - 50'368);
  // An untied decoder stores its own 50,368 x 768 weight.
  config["classifier_bias"] = false;
  config["decoder_bias"] = true;
  config["tie_word_embeddings"] = false;
  CHECK(total(config) - plain == 50'368LL * 768);
}

TEST_CASE("ModernBERT local layers see local_attention / 2 tokens on either side", "[modernbert]") {
  nlohmann::json config = modernbert_base();
  {
    // global_attn_every_n_layers 3: layers 0, 3, 6, ... are global; the rest see 64 + 1 + 64.
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    const auto& blocks = model.stacks.front().blocks;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      INFO(i);
      CHECK(blocks[i].attention.sliding_window == (i % 3 == 0 ? 0 : 129));
    }
  }
  {
    // An odd span rounds down as transformers' local_attention // 2 does: 63 + 1 + 63.
    config["local_attention"] = 127;
    config["global_attn_every_n_layers"] = 2;
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    CHECK(model.stacks.front().blocks[0].attention.sliding_window == 0);
    CHECK(model.stacks.front().blocks[1].attention.sliding_window == 127);
    CHECK(model.stacks.front().blocks[2].attention.sliding_window == 0);
  }
  {
    // layer_types, when present, decides which layers slide.
    config["layer_types"] = nlohmann::json::array();
    for (int i = 0; i < 22; ++i) {
      config["layer_types"].push_back(i == 5 ? "sliding_attention" : "full_attention");
    }
    const trace::ModelDescription model = trace::parse_model_config(config.dump());
    CHECK(model.stacks.front().blocks[1].attention.sliding_window == 0);
    CHECK(model.stacks.front().blocks[5].attention.sliding_window == 127);
  }
}

TEST_CASE("ModernBERT heads must divide the hidden size", "[modernbert]") {
  nlohmann::json config = modernbert_base();
  config["num_attention_heads"] = 7;
  CHECK_THROWS_AS(trace::parse_model_config(config.dump()), trace::ConfigError);
}
