// The time and cost contract of `trace MODEL --json` (docs/json.md `training`, `serving`) on the
// bundled Llama-3.1-8B, with the numbers derived by hand:
//   parameters 8,030,261,248; embedding 128,256 x 4,096 = 525,336,576, so the weights a token
//   multiplies are 7,504,924,672: matmul 15,009,849,344 FLOPs per token.
//   attention: 32 layers x 2 x 32 heads x (128 + 128) = 524,288 FLOPs per key.
//   training at 2,048 tokens: 1,024.5 keys on average -> 537,133,056; forward 15,546,982,400;
//   full fine-tune 3 x forward = 46,640,947,200 FLOPs per token.
//   serving bf16: weights 2 x 8,030,261,248 = 16,060,522,496 bytes; KV 131,072 bytes per token.

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "temp_dir.hpp"

namespace {

using trace::test::CliResult;
using trace::test::run_cli;
using trace::test::TempDir;

trace::HubEnvironment empty_cache(const TempDir& dir) {
  trace::HubEnvironment env;
  env.hf_hub_cache = dir.make_dir("hub");
  return env;
}

nlohmann::json plan_json(const std::vector<std::string>& args) {
  const TempDir dir;
  std::vector<std::string> argv{"meta-llama/Llama-3.1-8B", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CliResult result = run_cli(argv, empty_cache(dir));
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  return nlohmann::json::parse(result.out);
}

int exit_code_of(const std::vector<std::string>& args, std::string* err = nullptr) {
  const TempDir dir;
  std::vector<std::string> argv{"meta-llama/Llama-3.1-8B"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CliResult result = run_cli(argv, empty_cache(dir));
  if (err) *err = result.err;
  return result.exit_code;
}

}  // namespace

TEST_CASE("training.runs: FLOPs, hours and dollars of a full fine-tune", "[cli][cost]") {
  const nlohmann::json plan =
      plan_json({"--mode", "full", "--tokens", "1B", "--gpu", "h100", "--price", "2.5"});
  const nlohmann::json& training = plan["training"];
  CHECK(training["mode"] == "full");
  CHECK(training["tokens"] == 1'000'000'000);
  CHECK(training["forward_flops_per_token"]["matmul"].get<double>() == Approx(15'009'849'344.0));
  CHECK(training["forward_flops_per_token"]["attention"].get<double>() == Approx(537'133'056.0));
  CHECK(training["flops_per_token"].get<double>() == Approx(46'640'947'200.0));
  REQUIRE(training["runs"].size() == 1);
  const nlohmann::json& run = training["runs"][0];
  CHECK(run["gpu"] == "h100-80gb");
  CHECK(run["flops"].get<double>() == Approx(4.66409472e19));
  CHECK(run["mfu"].get<double>() == Approx(0.36));  // the documented default (docs/cost.md)
  // A full fine-tune of 8B does not fit one H100: ZeRO-3 over several.
  const std::int64_t gpus = run["gpus"].get<std::int64_t>();
  CHECK(gpus > 1);
  CHECK(run["strategy"] == "ZeRO-3");
  // hours = FLOPs / (GPUs x 989.5e12 x 0.36) / 3,600; cost = hours x GPUs x $2.50.
  const double hours = 4.66409472e19 / (static_cast<double>(gpus) * 989.5e12 * 0.36) / 3600;
  CHECK(run["hours"].get<double>() == Approx(hours));
  CHECK(run["usd"].get<double>() == Approx(hours * static_cast<double>(gpus) * 2.5));
  // The card count is the table's ZeRO-3 count for the same job.
  CHECK(plan["cards"][0]["modes"]["full_finetune"]["min_cards"] == gpus);
}

TEST_CASE("serving.points: the decode bound is bandwidth over bytes per step", "[cli][cost]") {
  const nlohmann::json plan =
      plan_json({"--mode", "serve", "--gpu", "h100", "--gpus", "2", "--context-in", "1000",
                 "--context-out", "1000", "--kv-dtype", "bf16"});
  const nlohmann::json& serving = plan["serving"];
  CHECK(serving["gpu"] == "h100-80gb");
  CHECK(serving["gpus"] == 2);
  REQUIRE(serving["points"].size() >= 2);
  const nlohmann::json& one = serving["points"][0];
  CHECK(one["concurrency"] == 1);
  // Per GPU: half the weights 8,030,261,248 + half the KV at the mean context 1,500 tokens
  // (1,500 x 131,072 / 2 = 98,304,000) = 8,128,565,248 bytes; 3.35 TB/s over that.
  CHECK(one["bytes_per_step_per_gpu"].get<double>() == Approx(8'128'565'248.0));
  CHECK(one["bound_user_tokens_per_s"].get<double>() == Approx(3.35e12 / 8'128'565'248.0));
  CHECK(one["limit"] == "bandwidth");
  // Expected = bound x MBU 0.55 (the documented default) while bandwidth-bound.
  CHECK(one["user_tokens_per_s"].get<double>() == Approx(0.55 * 3.35e12 / 8'128'565'248.0));
  // The best point is the highest total among the points.
  double highest = 0;
  for (const nlohmann::json& point : serving["points"]) {
    highest = std::max(highest, point["total_tokens_per_s"].get<double>());
  }
  REQUIRE(serving["best"].is_object());
  CHECK(serving["best"]["total_tokens_per_s"].get<double>() == Approx(highest));
  // Four cards as two TP-2 replicas: each replica's first point is the one above, so the first
  // point holds 2 users at the same per-user speed and twice the total.
  const nlohmann::json replicated =
      plan_json({"--mode", "serve", "--gpu", "h100", "--gpus", "4", "--tp", "2", "--context-in",
                 "1000", "--context-out", "1000", "--kv-dtype", "bf16"});
  CHECK(replicated["serving"]["replicas"] == 2);
  const nlohmann::json& pair = replicated["serving"]["points"][0];
  CHECK(pair["concurrency"] == 2);
  CHECK(pair["user_tokens_per_s"].get<double>() == Approx(one["user_tokens_per_s"].get<double>()));
  CHECK(pair["total_tokens_per_s"].get<double>() ==
        Approx(2 * one["total_tokens_per_s"].get<double>()));
  CHECK(replicated["serving"]["max_concurrency"] == 2 * serving["max_concurrency"].get<std::int64_t>());
  // A floor no point meets leaves no best point and no price per token.
  const nlohmann::json strict = plan_json({"--mode", "serve", "--gpu", "h100", "--min-user-tps",
                                           "100000"});
  CHECK(strict["serving"]["best"].is_null());
  CHECK(strict["serving"]["usd_per_million_tokens"].is_null());
}

TEST_CASE("cost flags: bad values exit 2 with the flag named", "[cli][cost]") {
  std::string err;
  CHECK(exit_code_of({"--tokens", "5", "--samples", "3"}, &err) == 2);
  CHECK(err.find("--tokens") != std::string::npos);
  CHECK(exit_code_of({"--gpu", "h100", "--price", "abc"}, &err) == 2);
  CHECK(err.find("--price") != std::string::npos);
  CHECK(exit_code_of({"--price", "no-such-card=1"}, &err) == 2);
  CHECK(exit_code_of({"--price", "3"}, &err) == 2);  // no --gpu to apply it to
  CHECK(err.find("--gpu") != std::string::npos);
  CHECK(exit_code_of({"--mfu", "0"}, &err) == 2);
  CHECK(err.find("--mfu") != std::string::npos);
  CHECK(exit_code_of({"--mbu", "1.5"}, &err) == 2);
  CHECK(exit_code_of({"--min-user-tps", "-1"}, &err) == 2);
  CHECK(exit_code_of({"--context-out", "0"}, &err) == 2);
  CHECK(exit_code_of({"--compute-dtype", "fp7"}, &err) == 2);
  CHECK(err.find("--compute-dtype") != std::string::npos);
  CHECK(exit_code_of({"--tokens", "1.2.3B"}, &err) == 2);
  CHECK(exit_code_of({"--tokens", "0.0001k"}, &err) == 2);  // 0.1 of a token
  CHECK(exit_code_of({"--samples", "1000000000000", "--seq-len", "1M", "--epochs", "1000000"},
                     &err) == 2);
}

TEST_CASE("run sizes take decimal suffixes", "[cli][cost]") {
  CHECK(plan_json({"--tokens", "2.5M"})["training"]["tokens"] == 2'500'000);
  CHECK(plan_json({"--samples", "50k", "--epochs", "2"})["training"]["tokens"] ==
        50'000LL * 2'048 * 2);
  CHECK(plan_json({"--tokens", "1T"})["training"]["tokens"] == 1'000'000'000'000LL);
}

TEST_CASE("the default run and a card that cannot run it", "[cli][cost]") {
  const nlohmann::json plan = plan_json({"--gpu", "t4", "--gpu", "h100"});
  const nlohmann::json& training = plan["training"];
  CHECK(training["mode"] == "lora");
  CHECK(training["default_run"] == true);
  CHECK(training["tokens"] == 50'000LL * 2'048 * 10);
  // T4 has no bf16 tensor cores: named, not priced at another dtype.
  REQUIRE(training["cannot"].size() == 1);
  CHECK(training["cannot"][0]["gpu"] == "t4");
  CHECK(training["cannot"][0]["reason"].get<std::string>().find("bf16") != std::string::npos);
  REQUIRE(training["runs"].size() == 1);
  CHECK(training["runs"][0]["gpu"] == "h100-80gb");
  CHECK(training["runs"][0]["compute_dtype"] == "bf16");
}

TEST_CASE("trace throughput exits 1 when a row is measured above its bound", "[cli][cost]") {
  // Llama-3.1-8B (bundled) decoding alone on one H100 in bf16: at most 3.35e12 B/s over 16 GB of
  // weights, about 208 tokens/s. 200 is under the bound (exit 0); 5,000 is far above (exit 1).
  const std::string header =
      "row_id,kind,model_id,gpu,n_gpus,parallelism,weight_dtype,kv_dtype,input_len,output_len,"
      "concurrency,seq_len,tokens_per_s_total,tokens_per_s_per_user,mfu,tflops_per_gpu,"
      "spec_decode,notes\n";
  const auto run_rows = [&](const std::string& measured) {
    const TempDir dir;
    const std::string csv = dir.write(
        "runs.csv", header + "1,serve,meta-llama/Llama-3.1-8B,H100 SXM 80GB,1,TP1,bf16,bf16,128,"
                             "128,1,," + measured + ",,,,n,test\n");
    return run_cli({"throughput", csv, "--configs", dir.make_dir("configs")}, empty_cache(dir));
  };
  const CliResult under = run_rows("200");
  INFO(under.err);
  CHECK(under.exit_code == 0);
  const CliResult above = run_rows("5000");
  CHECK(above.exit_code == 1);
  CHECK(above.err.find("above the bound") != std::string::npos);
}
