// The renderers' layout, pinned by golden files in tests/golden/.
#include "catch.hpp"
#include "golden.hpp"
#include "test_data.hpp"
#include "trace/render/render.hpp"

namespace {

trace::Report report_for(const std::string& text, const std::string& id, bool graph) {
  trace::ReportRequest request;
  request.model_id = id;
  request.source = "test fixture";
  request.include_graph = graph;
  return trace::make_report(text, request, trace::builtin_gpu_catalog());
}

}  // namespace

TEST_CASE("golden: Llama-3.1-8B table and JSON", "[golden][render]") {
  const trace::Report report =
      report_for(trace::test::catalog_text("meta-llama/Llama-3.1-8B"), "meta-llama/Llama-3.1-8B",
                 false);
  trace::test::check_golden("llama-3.1-8b.table.txt", trace::render_table(report));
  trace::test::check_golden("llama-3.1-8b.json", trace::render_json(report));
}

TEST_CASE("golden: GPT-2 Markdown", "[golden][render]") {
  const trace::Report report =
      report_for(trace::test::catalog_text("gpt2"), "openai-community/gpt2", false);
  trace::test::check_golden("gpt2.md", trace::render_markdown(report));
}

TEST_CASE("golden: t5-small graph", "[golden][render]") {
  const trace::Report report =
      report_for(trace::test::config_text("google-t5--t5-small.json"), "google-t5/t5-small", true);
  trace::test::check_golden("t5-small.graph.txt", trace::render_table(report));
}

TEST_CASE("formatting helpers", "[render]") {
  CHECK(trace::group_digits(8'030'261'248) == "8,030,261,248");
  CHECK(trace::group_digits(0) == "0");
  CHECK(trace::group_digits(-1234) == "-1,234");
  CHECK(trace::short_count(124'439'808) == "124.4M");
  CHECK(trace::short_count(8'030'261'248) == "8.03B");
  CHECK(trace::format_bytes(512LL << 20) == "512.0 MiB");
  CHECK(trace::format_bytes(3LL << 30) == "3.00 GiB");
}

TEST_CASE("a VLM's report says its vision tower's activations are not estimated", "[render]") {
  const auto mentions_tower = [](const trace::Report& report) {
    for (const trace::ReportNote& note : report.notes) {
      if (note.text.find("vision tower's activations are not estimated") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  CHECK(mentions_tower(report_for(trace::test::config_text("Qwen--Qwen-VL-Chat.reconstructed.json"),
                                  "Qwen/Qwen-VL-Chat", false)));
  CHECK_FALSE(mentions_tower(report_for(trace::test::catalog_text("meta-llama/Llama-3.1-8B"),
                                        "meta-llama/Llama-3.1-8B", false)));
}
