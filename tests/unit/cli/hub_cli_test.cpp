// End to end: `trace org/name --plan` with HF_ENDPOINT at the fixture Hub, through cli::run with
// an injected environment (what main builds from getenv). The plan works from the Hub, a second
// run makes no request, the token never reaches the CDN, each failure gives its message and exit
// code, --offline / HF_HUB_OFFLINE use the cache only, and the progress line shows only on a
// terminal.
#include <string>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "hub_fixtures.hpp"

namespace {

using namespace trace;
using namespace trace::test;

constexpr const char* k_llama_total = "\"total\": 8030261248";

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("trace org/name --plan against the fixture Hub, then from the cache", "[cli][hub]") {
  FixtureHub hub;
  hub.add_repo(llama_8b_repo());
  const TempDir dir;
  HubEnvironment env = fixture_env(hub, dir);
  env.hf_token = k_fixture_token;
  const CliResult cold = run_cli({"fixture-org/Llama-3.1-8B", "--plan", "--json"}, env);
  INFO("stderr: " << cold.err);
  REQUIRE(cold.exit_code == cli::k_exit_ok);
  CHECK(contains(cold.out, k_llama_total));
  CHECK(contains(cold.out, hub.endpoint()));
  CHECK(contains(cold.out, k_fixture_commit));
  CHECK(cold.err.empty());
  CHECK(hub.request_count() == 11);
  for (const LoggedRequest& request : hub.requests()) {
    if (request.port == FixturePort::hub) {
      CHECK(request.has("authorization"));
    } else {
      CHECK_FALSE(request.has("authorization"));
    }
    for (const auto& [name, value] : request.headers) {
      if (request.port == FixturePort::cdn) CHECK_FALSE(contains(value, k_fixture_token));
    }
  }
  CHECK_FALSE(contains(cold.out + cold.err, k_fixture_token));

  hub.clear_log();
  const CliResult warm = run_cli({"fixture-org/Llama-3.1-8B", "--plan", "--json"}, env);
  REQUIRE(warm.exit_code == cli::k_exit_ok);
  CHECK(contains(warm.out, k_llama_total));
  CHECK(contains(warm.out, "Hugging Face cache"));
  CHECK(hub.request_count() == 0);

  SECTION("offline: --offline and HF_HUB_OFFLINE read the cache") {
    CHECK(run_cli({"fixture-org/Llama-3.1-8B", "--offline", "--json"}, env).exit_code == cli::k_exit_ok);
    HubEnvironment offline = env;
    offline.hf_hub_offline = "1";
    CHECK(run_cli({"fixture-org/Llama-3.1-8B", "--json"}, offline).exit_code == cli::k_exit_ok);
    CHECK(hub.request_count() == 0);
  }
}

TEST_CASE("the NVFP4 export plans with its hf_quant_config.json from the Hub", "[cli][hub]") {
  FixtureHub hub;
  hub.add_repo(nvfp4_repo());
  const TempDir dir;
  const CliResult result = run_cli({"fixture-org/Llama-3.1-8B-NVFP4", "--json"}, fixture_env(hub, dir));
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == cli::k_exit_ok);
  CHECK(contains(result.out, "NVFP4"));
  bool quant_fetched = false;
  for (const LoggedRequest& request : hub.requests()) quant_fetched |= contains(request.target, "hf_quant_config.json");
  CHECK(quant_fetched);
}

TEST_CASE("Hub failures: message and exit code", "[cli][hub]") {
  FixtureHub hub;
  FixtureRepo gated = llama_8b_repo("fixture-org/gated");
  gated.gated = true;
  gated.granted_token = k_fixture_token;
  hub.add_repo(gated);
  hub.add_repo(llama_8b_repo());
  const TempDir dir;
  const HubEnvironment env = fixture_env(hub, dir);
  const auto check = [&](const std::vector<std::string>& args, int code, const std::vector<std::string>& needles,
                         const HubEnvironment& with = {}) {
    const CliResult result = run_cli(args, with.network ? with : env);
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == code);
    CHECK(result.out.empty());
    for (const std::string& needle : needles) CHECK(contains(result.err, needle));
  };
  SECTION("gated without a token") {
    check({"fixture-org/gated"}, cli::k_exit_network, {"gated", "licence", "HF_TOKEN"});
  }
  SECTION("gated with a granted token works") {
    HubEnvironment with_token = env;
    with_token.hf_token = k_fixture_token;
    CHECK(run_cli({"fixture-org/gated", "--json"}, with_token).exit_code == cli::k_exit_ok);
  }
  SECTION("a missing repo") { check({"fixture-org/nope"}, cli::k_exit_bad_input, {"fixture-org/nope", "not found"}); }
  SECTION("a missing revision") {
    check({"fixture-org/Llama-3.1-8B@v404"}, cli::k_exit_bad_input, {"'v404'", "not found"});
  }
  SECTION("5xx on every try") {
    hub.inject("/api/models/", {Fault::Kind::status, 502, {}, {}}, 100);
    check({"fixture-org/Llama-3.1-8B"}, cli::k_exit_network, {"502", "try again later"});
  }
  SECTION("rate-limited on every try") {
    hub.inject("/api/models/", {Fault::Kind::status, 429, "1", {}}, 100);
    check({"fixture-org/Llama-3.1-8B"}, cli::k_exit_network, {"429", "rate"});
  }
  SECTION("truncated shard reads on every try") {
    hub.inject("/cdn/", {Fault::Kind::truncate, 0, {}, {}}, 1000);
    check({"fixture-org/Llama-3.1-8B"}, cli::k_exit_network, {"cut short"});
  }
  SECTION("a malformed API answer") {
    hub.inject("/api/models/", {Fault::Kind::garbage, 0, {}, {}}, 1);
    check({"fixture-org/Llama-3.1-8B"}, cli::k_exit_network, {"malformed", "sha"});
  }
  SECTION("a shard that is not safetensors") {
    hub.inject("/cdn/", {Fault::Kind::garbage, 0, {}, {}}, 1);
    check({"fixture-org/Llama-3.1-8B"}, cli::k_exit_network, {"safetensors"});
  }
  SECTION("the Hub is down") {
    HubEnvironment down = env;
    {
      FixtureHub gone;
      down.hf_endpoint = gone.endpoint();
    }
    check({"fixture-org/Llama-3.1-8B"}, cli::k_exit_network, {"cannot reach the Hub"}, down);
  }
  SECTION("--offline with nothing cached") {
    check({"fixture-org/Llama-3.1-8B", "--offline"}, cli::k_exit_bad_input, {"offline", "not found"});
    CHECK(hub.request_count() == 0);
  }
}

TEST_CASE("the progress line: on a terminal only, not with --json or --quiet", "[cli][hub]") {
  FixtureHub hub;
  hub.add_repo(llama_8b_repo());
  const TempDir dir;
  HubEnvironment env = fixture_env(hub, dir);
  env.stderr_is_terminal = true;
  SECTION("a terminal") {
    const CliResult result = run_cli({"fixture-org/Llama-3.1-8B"}, env);
    REQUIRE(result.exit_code == cli::k_exit_ok);
    CHECK(contains(result.err, "fetching fixture-org/Llama-3.1-8B: 6/6 files"));
    CHECK(result.err.back() == '\n');
  }
  SECTION("--quiet") { CHECK(run_cli({"fixture-org/Llama-3.1-8B", "--quiet"}, env).err.empty()); }
  SECTION("--json") { CHECK(run_cli({"fixture-org/Llama-3.1-8B", "--json"}, env).err.empty()); }
  SECTION("piped") {
    env.stderr_is_terminal = false;
    CHECK(run_cli({"fixture-org/Llama-3.1-8B"}, env).err.empty());
  }
}

TEST_CASE("without HF_ENDPOINT or --hub a bundled model never asks the Hub", "[cli][hub]") {
  FixtureHub hub;
  FixtureRepo repo = llama_8b_repo("meta-llama/Llama-3.1-8B");
  hub.add_repo(repo);
  const TempDir dir;
  HubEnvironment env = fixture_env(hub, dir);
  const std::string endpoint = *env.hf_endpoint;
  env.hf_endpoint.reset();
  const CliResult bundled = run_cli({"meta-llama/Llama-3.1-8B", "--json"}, env);
  CHECK(bundled.exit_code == cli::k_exit_ok);
  CHECK(contains(bundled.out, "bundled catalog"));
  CHECK(hub.request_count() == 0);
  // HF_ENDPOINT set (and --hub) put the Hub first, even for a bundled model.
  env.hf_endpoint = endpoint;
  const CliResult fetched = run_cli({"meta-llama/Llama-3.1-8B", "--hub", "--json"}, env);
  CHECK(fetched.exit_code == cli::k_exit_ok);
  CHECK(contains(fetched.out, k_fixture_commit));
  CHECK(hub.request_count() > 0);
}
