// Bad input through the real command line, in-process. The contract for every case: exit code 2,
// nothing on stdout, and exactly one line on stderr that starts with "trace: error: " and names
// the problem (the key, the flag or the path). The scale cases at the end must instead succeed
// with sane integers: no wrapped negatives, no NaN or infinity.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "temp_dir.hpp"

namespace {

using trace::test::CliResult;
using trace::test::run_cli;
using trace::test::run_cli_offline;
using trace::test::TempDir;

// A small, valid llama config every case starts from.
nlohmann::json llama_config() {
  return {{"model_type", "llama"},      {"vocab_size", 32000},
          {"hidden_size", 4096},        {"num_hidden_layers", 32},
          {"num_attention_heads", 32},  {"num_key_value_heads", 8},
          {"intermediate_size", 11008}, {"max_position_embeddings", 4096},
          {"torch_dtype", "bfloat16"}};
}

// An environment whose HF cache is an empty folder, so no test reads the real ~/.cache.
trace::HubEnvironment empty_cache(const TempDir& dir) {
  trace::HubEnvironment env;
  env.hf_hub_cache = dir.make_dir("hub");
  return env;
}

std::string quoted(const std::string& key) {
  return "'" + key + "'";
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The bad-input contract; every needle must appear in the one stderr line.
void check_bad_input(const CliResult& result, const std::vector<std::string>& needles) {
  INFO("stderr: " << result.err);
  INFO("stdout: " << result.out);
  CHECK(result.exit_code == trace::cli::k_exit_bad_input);
  CHECK(result.out.empty());
  CHECK(trace::test::line_count(result.err) == 1);
  CHECK(result.err.rfind("trace: error: ", 0) == 0);
  CHECK((!result.err.empty() && result.err.back() == '\n'));
  for (const std::string& needle : needles) {
    INFO("expected in stderr: " << needle);
    CHECK(contains(result.err, needle));
  }
}

// Writes `text` as config.json in a fresh folder and runs `trace <file> args...`.
CliResult run_text(const std::string& text, const std::vector<std::string>& args = {}) {
  const TempDir dir;
  std::vector<std::string> argv{dir.write("config.json", text)};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_cli(argv, empty_cache(dir));
}

CliResult run_config(const nlohmann::json& config, const std::vector<std::string>& args = {}) {
  return run_text(config.dump(), args);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Time and cost (docs/cost.md) are real-valued: hours, dollars, tokens per second, FLOPs.
bool in_cost_section(const std::string& path) {
  return path.rfind(".training.", 0) == 0 || path.rfind(".serving.", 0) == 0;
}

// Every number in a plan is a non-negative integer, except the one fraction the workload
// echoes back and the cost sections' real numbers; nulls appear only where the contract allows
// "none" (min_cards; a serving card without a best point or a price).
void check_sane_numbers(const nlohmann::json& value, const std::string& path) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      check_sane_numbers(it.value(), path + "." + it.key());
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      check_sane_numbers(value[i], path + "[" + std::to_string(i) + "]");
    }
  } else if (value.is_null()) {
    INFO(path);
    const bool allowed = ends_with(path, ".min_cards") ||
                         (in_cost_section(path) &&
                          (ends_with(path, ".best") || ends_with(path, ".usd_per_million_tokens") ||
                           ends_with(path, ".usd") || ends_with(path, ".price_usd_per_hour")));
    CHECK(allowed);
  } else if (value.is_number_float()) {
    INFO(path);
    CHECK((path == ".workload.headroom_fraction" || in_cost_section(path)));
    CHECK(std::isfinite(value.get<double>()));
    CHECK(value.get<double>() >= 0.0);
  } else if (value.is_number_integer() && !value.is_number_unsigned()) {
    INFO(path << " = " << value.dump());
    CHECK(value.get<std::int64_t>() >= 0);
  }
}

nlohmann::json run_json_plan(const CliResult& result) {
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == trace::cli::k_exit_ok);
  CHECK(result.err.empty());
  return nlohmann::json::parse(result.out);
}

}  // namespace

TEST_CASE("malformed JSON is reported as such", "[cli][bad_input]") {
  const std::string valid = llama_config().dump();
  SECTION("truncated") {
    check_bad_input(run_text(valid.substr(0, valid.size() / 2)), {"not valid JSON"});
  }
  SECTION("trailing garbage") {
    check_bad_input(run_text(valid + " xyz"), {"not valid JSON"});
  }
  SECTION("two objects") {
    check_bad_input(run_text(valid + valid), {"not valid JSON"});
  }
  SECTION("empty file") {
    check_bad_input(run_text(""), {"not valid JSON"});
  }
  SECTION("whitespace only") {
    check_bad_input(run_text(" \n\t\n"), {"not valid JSON"});
  }
  SECTION("a number beyond double range") {
    check_bad_input(run_text(R"({"model_type": "llama", "hidden_size": 1e400})"),
                    {"not valid JSON"});
  }
  SECTION("binary noise") {
    check_bad_input(run_text(std::string("\0\x01\xff{", 4)), {"JSON"});
  }
}

TEST_CASE("a config that is not a JSON object is refused", "[cli][bad_input]") {
  SECTION("array") {
    check_bad_input(run_text("[1, 2, 3]"), {"JSON object", "array"});
  }
  SECTION("string") {
    check_bad_input(run_text(R"("llama")"), {"JSON object", "string"});
  }
  SECTION("number") {
    check_bad_input(run_text("4096"), {"JSON object", "number"});
  }
  SECTION("null") {
    check_bad_input(run_text("null"), {"JSON object"});
  }
}

TEST_CASE("model_type must be present, a string and supported", "[cli][bad_input]") {
  nlohmann::json config = llama_config();
  SECTION("missing") {
    config.erase("model_type");
    check_bad_input(run_config(config), {"'model_type'"});
  }
  SECTION("not a string") {
    config["model_type"] = 7;
    check_bad_input(run_config(config), {"'model_type'"});
  }
  SECTION("unknown: the message lists the supported types") {
    config["model_type"] = "mamba9";
    check_bad_input(run_config(config), {"'mamba9'", "llama", "gpt2", "t5"});
  }
}

TEST_CASE("user text quoted in a message cannot break it over lines", "[cli][bad_input]") {
  nlohmann::json config = llama_config();
  SECTION("a model_type with a newline") {
    config["model_type"] = "lla\nma\r";
    check_bad_input(run_config(config), {"'lla\\nma\\r'", "not supported"});
  }
  SECTION("a path with a newline") {
    const TempDir dir;
    const std::string missing = dir.at("no\nsuch.json");
    check_bad_input(run_cli({missing}, empty_cache(dir)), {"no\\nsuch.json"});
  }
  SECTION("other control characters become '?'") {
    config["model_type"] = std::string("a\x01\x1b[31mb");
    check_bad_input(run_config(config), {"'a??[31mb'"});
  }
}

TEST_CASE("each required llama key, when missing or null, is named", "[cli][bad_input]") {
  for (const char* key : {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                          "intermediate_size"}) {
    INFO(key);
    nlohmann::json config = llama_config();
    config.erase(key);
    check_bad_input(run_config(config), {quoted(key), "missing"});
    config[key] = nullptr;  // null counts as missing, as in transformers
    check_bad_input(run_config(config), {quoted(key), "missing"});
  }
}

TEST_CASE("zero and negative sizes name the key and its range", "[cli][bad_input]") {
  const std::vector<std::pair<std::string, std::int64_t>> cases{
      {"hidden_size", 0},         {"hidden_size", -4096},
      {"num_hidden_layers", 0},   {"num_hidden_layers", -1},
      {"vocab_size", 0},          {"num_attention_heads", 0},
      {"num_key_value_heads", 0}, {"intermediate_size", -11008}};
  for (const auto& [key, value] : cases) {
    INFO(key << " = " << value);
    nlohmann::json config = llama_config();
    config[key] = value;
    check_bad_input(run_config(config), {quoted(key), "out of range"});
  }
}

TEST_CASE("absurd sizes are refused before any arithmetic", "[cli][bad_input]") {
  nlohmann::json config = llama_config();
  SECTION("10^15 layers") {
    config["num_hidden_layers"] = 1'000'000'000'000'000LL;
    check_bad_input(run_config(config), {"'num_hidden_layers'", "out of range"});
  }
  SECTION("hidden size 10^12") {
    config["hidden_size"] = 1'000'000'000'000LL;
    check_bad_input(run_config(config), {"'hidden_size'", "out of range"});
  }
  SECTION("vocabulary 1e30 written as a float") {
    config["vocab_size"] = 1e30;
    check_bad_input(run_config(config), {"'vocab_size'", "out of range"});
  }
  SECTION("the largest unsigned 64-bit integer") {
    config["num_hidden_layers"] = UINT64_MAX;
    check_bad_input(run_config(config), {"'num_hidden_layers'", "out of range"});
  }
  SECTION("the most negative 64-bit integer") {
    config["hidden_size"] = INT64_MIN;
    check_bad_input(run_config(config), {"'hidden_size'", "out of range"});
  }
  SECTION("integers beyond 64 bits (parsed as floats)") {
    check_bad_input(run_text(R"({"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096,
                     "num_hidden_layers": 123456789012345678901234567890,
                     "num_attention_heads": 32, "intermediate_size": 11008})"),
                    {"'num_hidden_layers'", "out of range"});
  }
  SECTION("every size at its limit: the products overflow, and that is an error too") {
    config["hidden_size"] = 1 << 24;
    config["intermediate_size"] = 1 << 24;
    config["num_hidden_layers"] = 100'000;
    config["vocab_size"] = 1 << 28;
    config["num_attention_heads"] = 1 << 16;
    config["num_key_value_heads"] = 1 << 16;
    check_bad_input(run_config(config), {"too large"});
  }
}

TEST_CASE("sizes must be integers of the JSON number type", "[cli][bad_input]") {
  nlohmann::json config = llama_config();
  SECTION("a fractional float") {
    config["hidden_size"] = 4096.5;
    check_bad_input(run_config(config), {"'hidden_size'", "integer", "4096.5"});
  }
  SECTION("a string") {
    config["hidden_size"] = "4096";
    check_bad_input(run_config(config), {"'hidden_size'", "integer", "string"});
  }
  SECTION("a boolean") {
    config["hidden_size"] = true;
    check_bad_input(run_config(config), {"'hidden_size'", "integer", "boolean"});
  }
  SECTION("an array") {
    config["num_hidden_layers"] = nlohmann::json::array({32});
    check_bad_input(run_config(config), {"'num_hidden_layers'", "integer"});
  }
  SECTION("an object") {
    config["vocab_size"] = {{"size", 32000}};
    check_bad_input(run_config(config), {"'vocab_size'", "integer"});
  }
  SECTION("a boolean flag that is not a boolean") {
    config["tie_word_embeddings"] = "yes";
    check_bad_input(run_config(config), {"'tie_word_embeddings'"});
  }
}

TEST_CASE("an exactly integral float such as 4096.0 is accepted", "[cli][bad_input]") {
  nlohmann::json config = llama_config();
  config["hidden_size"] = 4096.0;
  const nlohmann::json as_float = run_json_plan(run_config(config, {"--json"}));
  config["hidden_size"] = 4096;
  const nlohmann::json as_int = run_json_plan(run_config(config, {"--json"}));
  CHECK(as_float["parameters"]["total"] == as_int["parameters"]["total"]);
}

TEST_CASE("contradictory aliases are both named", "[cli][bad_input]") {
  const nlohmann::json gpt2 = {{"model_type", "gpt2"}, {"vocab_size", 50257}, {"n_embd", 768},
                               {"hidden_size", 1024},  {"n_layer", 12},       {"n_head", 12},
                               {"n_positions", 1024}};
  check_bad_input(run_config(gpt2), {"'n_embd'", "'hidden_size'", "768", "1024", "contradict"});
  // The same aliases agreeing are fine.
  nlohmann::json agreeing = gpt2;
  agreeing["hidden_size"] = 768;
  CHECK(run_config(agreeing).exit_code == trace::cli::k_exit_ok);
}

TEST_CASE("attention head counts must divide", "[cli][bad_input]") {
  nlohmann::json config = llama_config();
  SECTION("query heads not a multiple of key/value heads") {
    config["num_key_value_heads"] = 5;
    check_bad_input(run_config(config), {"'num_attention_heads'", "num_key_value_heads"});
  }
  SECTION("more key/value heads than query heads") {
    config["num_key_value_heads"] = 64;
    check_bad_input(run_config(config), {"'num_attention_heads'", "num_key_value_heads"});
  }
  SECTION("hidden size not divisible by heads, no head_dim") {
    config["hidden_size"] = 4100;
    check_bad_input(run_config(config), {"'num_attention_heads'", "head_dim", "4100"});
  }
  SECTION("with an explicit head_dim the same hidden size is fine") {
    config["hidden_size"] = 4100;
    config["head_dim"] = 128;
    CHECK(run_config(config).exit_code == trace::cli::k_exit_ok);
  }
}

TEST_CASE("layer_types must list one known type per layer", "[cli][bad_input]") {
  nlohmann::json config = llama_config();
  config["sliding_window"] = 4096;
  SECTION("too short") {
    config["layer_types"] = std::vector<std::string>(3, "full_attention");
    check_bad_input(run_config(config), {"'layer_types'", "32 entries"});
  }
  SECTION("too long") {
    config["layer_types"] = std::vector<std::string>(33, "full_attention");
    check_bad_input(run_config(config), {"'layer_types'", "32 entries"});
  }
  SECTION("not a list") {
    config["layer_types"] = "full_attention";
    check_bad_input(run_config(config), {"'layer_types'"});
  }
  SECTION("an unknown entry") {
    std::vector<std::string> types(32, "full_attention");
    types[7] = "linear_attention";
    config["layer_types"] = types;
    check_bad_input(run_config(config), {"'layer_types'", "entry 7", "linear_attention"});
  }
  SECTION("a non-string entry") {
    nlohmann::json types = std::vector<std::string>(32, "full_attention");
    types[0] = 1;
    config["layer_types"] = types;
    check_bad_input(run_config(config), {"'layer_types'", "entry 0"});
  }
  SECTION("sliding layers without a window") {
    config.erase("sliding_window");
    config["layer_types"] = std::vector<std::string>(32, "sliding_attention");
    check_bad_input(run_config(config), {"'sliding_window'"});
  }
}

TEST_CASE("a gemma3 wrapper needs its nested configs", "[cli][bad_input]") {
  const nlohmann::json vision = {{"hidden_size", 1152},       {"num_hidden_layers", 27},
                                 {"intermediate_size", 4304}, {"num_attention_heads", 16},
                                 {"patch_size", 14},          {"image_size", 896}};
  nlohmann::json config = {{"model_type", "gemma3"},
                           {"architectures", {"Gemma3ForConditionalGeneration"}}};
  SECTION("no text_config") {
    config["vision_config"] = vision;
    check_bad_input(run_config(config), {"'text_config'", "missing"});
  }
  SECTION("text_config not an object") {
    config["text_config"] = 5;
    config["vision_config"] = vision;
    check_bad_input(run_config(config), {"'text_config'", "object"});
  }
  SECTION("a key missing inside text_config carries its path") {
    config["text_config"] = nlohmann::json::object();
    config["vision_config"] = vision;
    check_bad_input(run_config(config), {"'text_config.hidden_size'", "missing"});
  }
  SECTION("no vision_config: the message does not call it the language model") {
    config["text_config"] = {
        {"hidden_size", 1152}, {"num_hidden_layers", 2}, {"intermediate_size", 6912}};
    const CliResult result = run_config(config);
    check_bad_input(result, {"'vision_config'", "missing"});
    CHECK_FALSE(contains(result.err, "language model"));
  }
}

TEST_CASE("bad workload and output flags name the flag", "[cli][bad_input]") {
  const std::string model = "meta-llama/Llama-3.1-8B";  // bundled: no files involved
  const TempDir dir;
  const trace::HubEnvironment env = empty_cache(dir);
  const auto bad = [&](std::vector<std::string> args, const std::vector<std::string>& needles) {
    INFO("args after the model: " << [&] {
      std::string joined;
      for (const std::string& arg : args) joined += arg + " ";
      return joined;
    }());
    args.insert(args.begin(), model);
    check_bad_input(run_cli(args, env), needles);
  };
  bad({"--seq-len", "0"}, {"--seq-len"});
  bad({"--seq-len", "-5"}, {"--seq-len"});
  bad({"--seq-len", "abc"}, {"--seq-len"});
  bad({"--batch", "0"}, {"--batch"});
  bad({"--batch", "1.5"}, {"--batch"});
  bad({"--context", "0"}, {"--context"});
  bad({"--context", "99999999999"}, {"--context"});
  bad({"--concurrency", "0"}, {"--concurrency"});
  bad({"--lora-rank", "0"}, {"--lora-rank"});
  bad({"--headroom", "2"}, {"--headroom"});
  bad({"--headroom", "-0.1"}, {"--headroom"});
  bad({"--headroom", "nan"}, {"--headroom"});
  bad({"--cuda-context-mib", "-1"}, {"--cuda-context-mib"});
  bad({"--kv-dtype", "fp7"}, {"--kv-dtype", "fp7", "bf16"});
  bad({"--dtype", "int3"}, {"--dtype", "int3", "int4"});
  bad({"--ssm-dtype", "fp7"}, {"--ssm-dtype", "fp7"});
  bad({"--gpu", "h1000"}, {"h1000", "did you mean"});
  bad({"--format", "xml"}, {"--format", "xml"});
  bad({"--no-such-flag"}, {"--no-such-flag"});
  bad({"extra-positional"}, {"extra-positional"});
  bad({"--mla-cache", "compressed"}, {"--mla-cache", "compressed"});
  bad({"--mode", "full", "--grad-accum", "0"}, {"--grad-accum"});
  bad({"--mode", "full", "--ep", "0"}, {"--ep", "1..4096"});
  bad({"--mode", "full", "--ep", "8x"}, {"--ep", "8x"});
  // autocast casts fp32 weights: bf16 ones (the default) or a quantized checkpoint are refused
  bad({"--mode", "serve", "--autocast"}, {"--autocast", "--dtype fp32"});
  bad({"--mode", "serve", "--dtype", "fp8", "--autocast"}, {"--autocast", "--dtype fp32"});
  bad({"--max-num-seqs", "-1"}, {"--max-num-seqs"});
  bad({"--tp-comm-mib", "-5"}, {"--tp-comm-mib"});
  bad({"--cuda-graph-mib", "-1"}, {"--cuda-graph-mib"});
  // a text-only model has no vision tower to freeze, whatever the mode
  bad({"--freeze-vision"}, {"--freeze-vision", "no vision tower"});
  bad({"--mode", "full", "--freeze-vision"}, {"--freeze-vision", "no vision tower"});
  // 32 query heads do not split over 3 ranks, whatever the mode; serving over --gpus 6 means
  // tensor parallelism over 6
  bad({"--mode", "full", "--gpus", "3", "--tp", "3"}, {"--tp 3", "32 attention heads", "1, 2, 4"});
  bad({"--mode", "serve", "--gpus", "6"}, {"--tp 6", "not divisible by 6"});
}

TEST_CASE("usage errors follow the same one-line contract", "[cli][bad_input]") {
  const TempDir dir;
  const trace::HubEnvironment env = empty_cache(dir);
  SECTION("trace check without a model") {
    check_bad_input(run_cli({"check", "--gpu", "h100"}, env), {"model"});
  }
  SECTION("trace check without --gpu") {
    check_bad_input(run_cli({"check", "meta-llama/Llama-3.1-8B"}, env), {"--gpu"});
  }
  SECTION("trace check with an unknown mode") {
    check_bad_input(
        run_cli({"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--mode", "train"}, env),
        {"--mode", "train"});
  }
  SECTION("trace check with zero cards") {
    check_bad_input(
        run_cli({"check", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--cards", "0"}, env),
        {"--cards"});
  }
  SECTION("trace gpus with an unknown flag") {
    check_bad_input(run_cli({"gpus", "--bogus"}, env), {"--bogus"});
  }
  SECTION("a GPU table that does not exist") {
    check_bad_input(run_cli({"meta-llama/Llama-3.1-8B", "--gpu-table", dir.at("none.json")}, env),
                    {dir.at("none.json")});
  }
}

TEST_CASE("paths and repo ids that lead nowhere", "[cli][bad_input]") {
  const TempDir dir;
  const trace::HubEnvironment env = empty_cache(dir);
  SECTION("a folder without config.json") {
    const std::string folder = dir.make_dir("empty-model");
    check_bad_input(run_cli({folder}, env), {folder, "config.json"});
  }
  SECTION("a nonexistent relative path") {
    check_bad_input(run_cli({"./nope/config.json"}, env), {"./nope/config.json"});
  }
  SECTION("a nonexistent absolute path") {
    const std::string missing = dir.at("nope/config.json");
    check_bad_input(run_cli({missing}, env), {missing});
  }
  SECTION("a nonexistent file name") {
    check_bad_input(run_cli({"nope.json"}, env), {"nope.json"});
  }
  SECTION("an unknown repo id names the cache it searched and the bundled catalog") {
    const CliResult result = run_cli({"no-such-org/no-such-model"}, env);
    check_bad_input(result, {"no-such-org/no-such-model", *env.hf_hub_cache,
                             "models--no-such-org--no-such-model", "bundled catalog",
                             "meta-llama/Llama-3.1-8B"});
  }
  SECTION("an unknown revision of a bundled model is not served from the catalog") {
    check_bad_input(run_cli({"meta-llama/Llama-3.1-8B@v9"}, env),
                    {"meta-llama/Llama-3.1-8B@v9", *env.hf_hub_cache});
  }
  SECTION("invalid repo id strings") {
    for (const char* spec : {"a/b/c/d", "bad name!", "org/name@", "org/..", "@main", "org//name"}) {
      INFO(spec);
      check_bad_input(run_cli({spec}, env), {std::string("'") + spec + "'"});
    }
  }
  SECTION("an empty model argument") {
    check_bad_input(run_cli({""}, env), {"model"});
  }
}

TEST_CASE("a 1M-token context succeeds with exact integers", "[cli][scale]") {
  const TempDir dir;
  const nlohmann::json plan = run_json_plan(
      run_cli({"meta-llama/Llama-3.1-8B", "--context", "1048576", "--json"}, empty_cache(dir)));
  check_sane_numbers(plan, "");
  CHECK(plan["workload"]["context"] == 1'048'576);
  // 2 (K, V) x 32 layers x 8 kv heads x 128 dims x 2 bytes (bf16) per token.
  CHECK(plan["memory"]["kv_cache_bytes_per_token"] == 131'072);
  CHECK(plan["memory"]["serve"]["breakdown"]["kv_cache"] == 131'072LL * 1'048'576);
}

TEST_CASE("a 10^14-parameter config succeeds with exact integers", "[cli][scale]") {
  const nlohmann::json config = {{"model_type", "llama"},        {"vocab_size", 1'000'000},
                                 {"hidden_size", 65'536},        {"num_hidden_layers", 4096},
                                 {"num_attention_heads", 512},   {"intermediate_size", 262'144},
                                 {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}};
  const nlohmann::json plan = run_json_plan(run_config(config, {"--json"}));
  check_sane_numbers(plan, "");
  // Per layer: q, k, v, o (4 x 65536^2) + gate, up, down (3 x 65536 x 262144) + 2 RMSNorms.
  const std::int64_t per_layer = 4LL * 65'536 * 65'536 + 3LL * 65'536 * 262'144 + 2LL * 65'536;
  // Untied embedding and head, plus the final RMSNorm.
  const std::int64_t total = 4096 * per_layer + 2LL * 1'000'000 * 65'536 + 65'536;
  CHECK(plan["parameters"]["total"] == total);
  CHECK(plan["parameters"]["active"] == total);
  // Full fine-tuning holds at least 16 bytes per parameter (fp32 master + grads + AdamW).
  CHECK(plan["memory"]["full_finetune"]["bytes"].get<std::int64_t>() >= 16 * total);
  // No card holds it alone.
  for (const nlohmann::json& card : plan["cards"]) {
    CHECK(card["modes"]["serve"]["fits"] == false);
    CHECK(card["modes"]["serve"]["max_batch"] == 0);
  }
}

TEST_CASE("workloads that overflow 64 bits end in a clear error", "[cli][scale]") {
  const nlohmann::json config = {{"model_type", "llama"},      {"vocab_size", 1'000'000},
                                 {"hidden_size", 65'536},      {"num_hidden_layers", 4096},
                                 {"num_attention_heads", 512}, {"intermediate_size", 262'144}};
  check_bad_input(run_config(config, {"--seq-len", "134217728", "--batch", "1048576"}),
                  {"too large"});
  // Each flag within its range, their product past 2^63 bytes: the message names the two.
  check_bad_input(
      run_config(llama_config(), {"--mode", "full", "--seq-len", "134217728", "--batch", "1048576",
                                  "--gpu", "h100-80gb"}),
      {"too large", "1048576 sequence(s) of 134217728 tokens", "lower --batch or --seq-len"});
}

namespace {

// A GPT-2-small-shaped config: a learned table of 1,024 positions.
nlohmann::json gpt2_config() {
  return {
      {"model_type", "gpt2"}, {"vocab_size", 50257}, {"n_embd", 768}, {"n_layer", 12},
      {"n_head", 12},         {"n_positions", 1024}, {"n_ctx", 1024}, {"torch_dtype", "float32"}};
}

bool has_note(const nlohmann::json& plan, const std::string& needle) {
  for (const nlohmann::json& note : plan["notes"]) {
    if (contains(note.get<std::string>(), needle)) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a sequence past a learned position table is refused when asked for",
          "[cli][bad_input][positions]") {
  check_bad_input(run_config(gpt2_config(), {"--seq-len", "4096"}),
                  {"--seq-len 4,096", "1,024 learned positions", "--seq-len 1024 or less"});
  check_bad_input(run_config(gpt2_config(), {"--mode", "serve", "--context", "2k"}),
                  {"--context 2,048", "1,024 learned positions"});
  // `trace check` reads the same flags: a job that cannot run is bad input, not "does not fit".
  check_bad_input(run_cli_offline({"check", "openai-community/gpt2", "--gpu", "t4", "--mode",
                                   "lora", "--seq-len", "1025"}),
                  {"--seq-len 1,025", "1,024 learned positions"});
  // At the table's length it runs.
  const nlohmann::json plan =
      run_json_plan(run_config(gpt2_config(), {"--seq-len", "1024", "--json"}));
  CHECK(plan["workload"]["seq_len"] == 1024);
}

TEST_CASE("trace's own default lengths are cut to a learned position table", "[cli][positions]") {
  // The defaults are 2,048 training tokens and a 4,096-token serving context.
  const nlohmann::json plan = run_json_plan(run_config(gpt2_config(), {"--json"}));
  CHECK(plan["workload"]["seq_len"] == 1024);
  CHECK(plan["workload"]["context"] == 1024);
  CHECK(has_note(plan, "training sequences cut to 1,024 tokens"));
  CHECK(has_note(plan, "serving context cut to 1,024 tokens"));
  // 2 (K, V) x 12 layers x 768 x 2 bytes (bf16 serving) per token, for 1,024 tokens.
  CHECK(plan["memory"]["serve"]["breakdown"]["kv_cache"] == 2LL * 12 * 768 * 2 * 1024);
}

TEST_CASE("past a rotary model's max_position_embeddings only a note is added",
          "[cli][positions]") {
  const nlohmann::json plan =
      run_json_plan(run_config(llama_config(), {"--seq-len", "8k", "--json"}));
  CHECK(plan["workload"]["seq_len"] == 8192);
  CHECK(has_note(plan,
                 "training sequences 8,192 tokens passes the model's "
                 "max_position_embeddings (4,096)"));
}

TEST_CASE("the serving cost's requests share a learned position table", "[cli][positions]") {
  check_bad_input(run_config(gpt2_config(), {"--context-in", "1000", "--context-out", "100"}),
                  {"--context-in 1000 + --context-out 100", "1,024 learned positions"});
  // The defaults (1,024 in + 1,024 out) are halved to fit 1,024 positions.
  const nlohmann::json plan = run_json_plan(run_config(gpt2_config(), {"--json"}));
  CHECK(has_note(plan, "serving requests cut to 512 in + 512 out tokens"));
  CHECK(plan["serving"]["context_in"] == 512);
  CHECK(plan["serving"]["context_out"] == 512);
  const nlohmann::json plan_fits = run_json_plan(
      run_config(gpt2_config(), {"--context-in", "1000", "--context-out", "24", "--json"}));
  CHECK_FALSE(has_note(plan_fits, "serving requests cut"));
}
