// A model's metadata from the fixture Hub through the HF cache: the cold run's requests, the
// cache it leaves (whole small files in blobs/, headers in trace/headers/, never a range in
// blobs/), a warm run with zero requests, offline reads, and the NVFP4 export's quant config.
#include "trace/io/hub_fetch.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "catch.hpp"
#include "hub_fixtures.hpp"
#include "trace/error.hpp"
#include "trace/io/hf_cache.hpp"
#include "trace/io/hub_client.hpp"

namespace {

namespace fs = std::filesystem;
using namespace trace;
using namespace trace::test;

RepoId repo_id(const std::string& repo, const std::string& revision = "main") { return {repo, revision}; }

}  // namespace

TEST_CASE("a cold fetch reads config, index and every shard header, and caches them", "[io][hub][fetch]") {
  FixtureHub hub;
  const FixtureRepo repo = llama_8b_repo();
  hub.add_repo(repo);
  const TempDir dir;
  const HubEnvironment env = fixture_env(hub, dir);
  std::vector<HubProgress> progress;
  const HubModelFiles cold = fetch_hub_model(repo_id(repo.id), env, [&](const HubProgress& p) { progress.push_back(p); });
  CHECK(cold.commit == k_fixture_commit);
  CHECK(cold.config_text == repo.files.at("config.json").content);
  CHECK(cold.hf_quant_config_text.empty());
  REQUIRE(cold.checkpoint);
  CHECK(cold.checkpoint->index_file == "model.safetensors.index.json");
  REQUIRE(cold.checkpoint->shards.size() == 4);
  for (const ShardHeaderBytes& shard : cold.checkpoint->shards) {
    CHECK(shard.bytes == repo.files.at(shard.file).content);
  }
  // 1 API call, config.json, the index, 4 header reads (each a Hub 302 and a CDN 206).
  CHECK(cold.requests == 7);
  CHECK(hub.request_count() == 11);
  REQUIRE_FALSE(progress.empty());
  CHECK(progress.back().finished);
  CHECK(progress.back().files_done == 6);
  CHECK(progress.back().files_total == 6);

  const HfRepoCache cache(dir.at("hf-home/hub"), repo.id);
  CHECK(cache.commit_of("main") == k_fixture_commit);
  CHECK(fs::is_symlink(cache.snapshot_path(k_fixture_commit, "config.json")));
  for (const auto& entry : fs::directory_iterator(cache.root() / "blobs")) {
    // Only whole small files: never a shard's header range.
    CHECK(entry.file_size() < 64 * 1024);
    CHECK(entry.path().filename().string().size() == 40);
  }
  CHECK(cache.read_manifest(k_fixture_commit));

  SECTION("a warm run makes no request") {
    hub.clear_log();
    const HubModelFiles warm = fetch_hub_model(repo_id(repo.id), env);
    CHECK(hub.request_count() == 0);
    CHECK(warm.requests == 0);
    CHECK(warm.config_text == cold.config_text);
    REQUIRE(warm.checkpoint);
    CHECK(warm.checkpoint->index_text == cold.checkpoint->index_text);
    REQUIRE(warm.checkpoint->shards.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) CHECK(warm.checkpoint->shards[i].bytes == cold.checkpoint->shards[i].bytes);
  }
  SECTION("the cache alone serves offline reads, by branch or commit") {
    const std::optional<HubModelFiles> offline = read_cached_hub_model(repo_id(repo.id), dir.at("hf-home/hub"), true);
    REQUIRE(offline);
    CHECK(offline->checkpoint->shards.size() == 4);
    CHECK(read_cached_hub_model(repo_id(repo.id, k_fixture_commit), dir.at("hf-home/hub"), true));
    CHECK_FALSE(read_cached_hub_model(repo_id(repo.id, "dev"), dir.at("hf-home/hub"), false));
    CHECK(hub.request_count() == 11);
  }
  SECTION("a lost header makes the next run fetch again") {
    fs::remove(cache.root() / "trace" / "headers" / k_fixture_commit / "model-00002-of-00004.safetensors.json");
    CHECK_FALSE(read_cached_hub_model(repo_id(repo.id), dir.at("hf-home/hub"), true));
    hub.clear_log();
    const HubModelFiles again = fetch_hub_model(repo_id(repo.id), env);
    CHECK(again.checkpoint->shards.size() == 4);
    CHECK(hub.request_count() > 0);
  }
}

TEST_CASE("a single-file checkpoint and an NVFP4 export with hf_quant_config.json", "[io][hub][fetch]") {
  FixtureHub hub;
  hub.add_repo(llama_1b_repo());
  hub.add_repo(nvfp4_repo());
  const TempDir dir;
  const HubEnvironment env = fixture_env(hub, dir);
  const HubModelFiles single = fetch_hub_model(repo_id("fixture-org/Llama-3.2-1B"), env);
  REQUIRE(single.checkpoint);
  CHECK(single.checkpoint->index_file.empty());
  REQUIRE(single.checkpoint->shards.size() == 1);
  CHECK(single.checkpoint->shards[0].file == "model.safetensors");
  const HubModelFiles nvfp4 = fetch_hub_model(repo_id("fixture-org/Llama-3.1-8B-NVFP4"), env);
  CHECK(nvfp4.hf_quant_config_text == k_nvfp4_quant_config);
  REQUIRE(nvfp4.checkpoint);
  CHECK(nvfp4.checkpoint->shards.size() == 2);
  CHECK(std::string(nvfp4.checkpoint->shards[0].header_json()).find("\"F8_E4M3\"") != std::string::npos);
  hub.clear_log();
  CHECK(fetch_hub_model(repo_id("fixture-org/Llama-3.1-8B-NVFP4"), env).hf_quant_config_text == k_nvfp4_quant_config);
  CHECK(hub.request_count() == 0);
}

TEST_CASE("a repo without config.json names the file and the revision", "[io][hub][fetch]") {
  FixtureHub hub;
  FixtureRepo repo = llama_8b_repo("fixture-org/no-config");
  repo.files.erase("config.json");
  hub.add_repo(repo);
  const TempDir dir;
  try {
    fetch_hub_model(repo_id(repo.id), fixture_env(hub, dir));
    FAIL("no error");
  } catch (const HubNotFoundError& error) {
    CHECK(error.missing() == HubNotFoundError::Missing::file);
    CHECK(std::string(error.what()).find("config.json") != std::string::npos);
  }
}

TEST_CASE("measure: a cold and a warm run of the 4-shard Llama-3.1-8B", "[.][measure]") {
  FixtureHub hub;
  hub.add_repo(llama_8b_repo());
  const TempDir dir;
  const HubEnvironment env = fixture_env(hub, dir);
  const auto start = std::chrono::steady_clock::now();
  const HubModelFiles cold = fetch_hub_model(repo_id("fixture-org/Llama-3.1-8B"), env);
  const auto cold_end = std::chrono::steady_clock::now();
  const std::size_t cold_requests = hub.request_count();
  const std::uint64_t cold_bytes = hub.body_bytes_sent();
  hub.clear_log();
  fetch_hub_model(repo_id("fixture-org/Llama-3.1-8B"), env);
  const auto warm_end = std::chrono::steady_clock::now();
  std::uint64_t header_bytes = 0;
  for (const ShardHeaderBytes& shard : cold.checkpoint->shards) header_bytes += shard.bytes.size();
  std::cout << "cold: " << cold.requests << " client requests, " << cold_requests
            << " HTTP requests at the fixture (hub + cdn), " << cold_bytes << " body bytes ("
            << header_bytes << " of them shard headers), "
            << std::chrono::duration<double, std::milli>(cold_end - start).count() << " ms\n"
            << "warm: " << hub.request_count() << " requests, "
            << std::chrono::duration<double, std::milli>(warm_end - cold_end).count() << " ms\n";
}

TEST_CASE("a missing optional file leaves a .no_exist marker and is not asked for again",
          "[io][hub][fetch][no_exist]") {
  FixtureHub hub;
  FixtureRepo repo = llama_8b_repo("fixture-org/unlisted");
  repo.list_siblings = false;  // so the optional files are asked for, and 404
  hub.add_repo(repo);
  const TempDir dir;
  const HubEnvironment env = fixture_env(hub, dir);
  const HubModelFiles cold = fetch_hub_model(repo_id(repo.id), env);
  CHECK(cold.hf_quant_config_text.empty());
  REQUIRE(cold.checkpoint);
  // 1 API call, config.json, hf_quant_config.json (404), the index, 4 header reads.
  CHECK(cold.requests == 8);
  const HfRepoCache cache(dir.at("hf-home/hub"), repo.id);
  // huggingface_hub's layout: models--org--name/.no_exist/<commit>/<filename>, empty.
  const fs::path marker = fs::path(dir.at("hf-home/hub")) / "models--fixture-org--unlisted" /
                          ".no_exist" / k_fixture_commit / "hf_quant_config.json";
  REQUIRE(fs::is_regular_file(marker));
  CHECK(fs::file_size(marker) == 0);
  CHECK(cache.known_missing(k_fixture_commit, "hf_quant_config.json"));
  CHECK_FALSE(cache.known_missing(k_fixture_commit, "model.safetensors.index.json"));

  SECTION("a warm run makes no request") {
    hub.clear_log();
    const HubModelFiles warm = fetch_hub_model(repo_id(repo.id), env);
    CHECK(hub.request_count() == 0);
    CHECK(warm.requests == 0);
    CHECK(warm.hf_quant_config_text.empty());
  }
  SECTION("without trace's manifest, a refetch still skips the file the marker names") {
    fs::remove(cache.root() / "trace" / "headers" / k_fixture_commit / "manifest.json");
    hub.clear_log();
    const HubModelFiles again = fetch_hub_model(repo_id(repo.id), env);
    REQUIRE(again.checkpoint);
    CHECK(again.checkpoint->shards.size() == 4);
    for (const LoggedRequest& request : hub.requests()) {
      CHECK(request.target.find("hf_quant_config.json") == std::string::npos);
    }
    // The API call and 4 header reads; config.json and the index come from the snapshot.
    CHECK(again.requests == 5);
  }
}

TEST_CASE("files the listing lacks are marked missing without a request", "[io][hub][fetch][no_exist]") {
  FixtureHub hub;
  hub.add_repo(llama_1b_repo());
  const TempDir dir;
  const HubModelFiles single = fetch_hub_model(repo_id("fixture-org/Llama-3.2-1B"), fixture_env(hub, dir));
  REQUIRE(single.checkpoint);
  const HfRepoCache cache(dir.at("hf-home/hub"), "fixture-org/Llama-3.2-1B");
  // A single-file checkpoint: no index and no quant config at the commit.
  CHECK(cache.known_missing(k_fixture_commit, "model.safetensors.index.json"));
  CHECK(cache.known_missing(k_fixture_commit, "hf_quant_config.json"));
  CHECK_FALSE(cache.known_missing(k_fixture_commit, "config.json"));
  for (const LoggedRequest& request : hub.requests()) {
    CHECK(request.target.find("model.safetensors.index.json") == std::string::npos);
  }
  // Unsafe names are never markers.
  CHECK_FALSE(cache.known_missing(k_fixture_commit, "../config.json"));
  CHECK_THROWS_AS(cache.mark_missing(k_fixture_commit, "../x"), ConfigError);
  CHECK_THROWS_AS(cache.mark_missing("main", "x.json"), ConfigError);
}
