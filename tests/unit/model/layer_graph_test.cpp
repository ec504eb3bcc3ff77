// The layer graph: real node types, shapes at the chosen sequence length, and counts that sum to
// the parameter total (bloaty's invariant: children sum to their parent).
#include <algorithm>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/layer_graph.hpp"
#include "trace/model/model_config.hpp"

namespace {

bool has_op(const trace::LayerGraph& graph, const std::string& op) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(),
                     [&](const trace::GraphNode& node) { return node.op == op; });
}

bool has_name(const trace::LayerGraph& graph, const std::string& name) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(),
                     [&](const trace::GraphNode& node) { return node.name == name; });
}

}  // namespace

TEST_CASE("graph nodes sum to the parameter total for every fixture", "[graph][invariant]") {
  for (const char* repo : {"meta-llama/Llama-3.1-8B", "google/gemma-2-9b", "gpt2",
                           "microsoft/Phi-3.5-mini-instruct", "Qwen/Qwen3-8B"}) {
    INFO(repo);
    const trace::ModelDescription model =
        trace::parse_model_config(trace::test::catalog_text(repo));
    const trace::LayerGraph graph = trace::build_layer_graph(model, 2048);
    std::int64_t sum = 0;
    for (const trace::GraphNode& node : graph.nodes) sum += node.params;
    CHECK(sum == trace::count_parameters(model).total);
  }
  for (const char* fixture : {"google-t5--t5-small.json", "google-bert--bert-base-uncased.json",
                              "google--gemma-3-4b-it.reconstructed.json",
                              "facebook--opt-350m.json", "tiiuae--falcon-40b.json"}) {
    INFO(fixture);
    const trace::ModelDescription model =
        trace::parse_model_config(trace::test::config_text(fixture));
    const trace::LayerGraph graph = trace::build_layer_graph(model, 512);
    std::int64_t sum = 0;
    for (const trace::GraphNode& node : graph.nodes) sum += node.params;
    CHECK(sum == trace::count_parameters(model).total);
  }
}

TEST_CASE("a RoPE model has no position-embedding node / GPT-2 has a learned one", "[graph]") {
  const trace::LayerGraph llama = trace::build_layer_graph(
      trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B")), 2048);
  CHECK_FALSE(has_name(llama, "embed_positions"));
  CHECK(has_op(llama, "RMSNorm"));
  CHECK_FALSE(has_op(llama, "LayerNorm"));
  CHECK(has_op(llama, "MLP(SwiGLU)"));

  const trace::LayerGraph gpt2 =
      trace::build_layer_graph(trace::parse_model_config(trace::test::catalog_text("gpt2")), 1024);
  CHECK(has_name(gpt2, "embed_positions"));
  CHECK(has_op(gpt2, "LayerNorm"));
  CHECK_FALSE(has_op(gpt2, "RMSNorm"));
}

TEST_CASE("shapes follow the sequence length / Llama-3.1-8B has 32 attention nodes", "[graph]") {
  const trace::ModelDescription model =
      trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B"));
  const trace::LayerGraph graph = trace::build_layer_graph(model, 777, 3);
  const std::int64_t attention = std::count_if(
      graph.nodes.begin(), graph.nodes.end(),
      [](const trace::GraphNode& node) { return node.op == "Attention"; });
  CHECK(attention == 32);
  CHECK(graph.nodes.front().output_shape == std::vector<std::int64_t>{3, 777, 4096});
  CHECK(graph.nodes.back().name == "lm_head");
  CHECK(graph.nodes.back().output_shape == std::vector<std::int64_t>{3, 777, 128256});
  CHECK(graph.nodes.back().params == 128'256LL * 4'096);
}

TEST_CASE("per-layer layer types: Gemma 2 alternates local and global", "[graph]") {
  const trace::ModelDescription model =
      trace::parse_model_config(trace::test::catalog_text("google/gemma-2-9b"));
  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  REQUIRE(blocks.size() == 42);
  CHECK(blocks[0].attention.sliding_window == 4096);
  CHECK(blocks[1].attention.sliding_window == 0);
  CHECK(blocks[40].attention.sliding_window == 4096);
  CHECK(blocks[41].attention.sliding_window == 0);
  CHECK(blocks[0].norms.size() == 4);
}

TEST_CASE("Gemma 3: five local layers to one global", "[graph]") {
  const trace::ModelDescription model =
      trace::parse_model_config(trace::test::config_text("google--gemma-3-1b-it.reconstructed.json"));
  const std::vector<trace::Block>& blocks = model.stacks.front().blocks;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    INFO(i);
    CHECK((blocks[i].attention.sliding_window == 0) == ((i + 1) % 6 == 0));
  }
}
