// Finding a config.json: repo id syntax, the HF cache folder from the environment values (never
// the real environment), the cache layout models--org--name/{refs,snapshots}, revisions, the
// bundled catalog as the fallback, and local files and folders.
#include "trace/io/model_source.hpp"

#include <sys/stat.h>

#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "catch.hpp"
#include "trace/text_match.hpp"
#include "temp_dir.hpp"
#include "trace/error.hpp"
#include "trace/model/catalog.hpp"

namespace {

using trace::HubEnvironment;
using trace::LoadedConfig;
using trace::test::TempDir;

constexpr const char* k_commit = "0e9e39f249a16976918f6564b8830bc894c89659";
constexpr const char* k_other_commit = "5f0b02c75b57c5855da9ae460ce51323ea669d8a";

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// Lays out one cached repo the way huggingface_hub does: refs/<branch> holds a commit hash and
// snapshots/<commit>/config.json the file (a symlink into blobs/ in real caches).
void cache_repo(const TempDir& dir, const std::string& hub, const std::string& folder,
                const std::string& commit, const std::string& text,
                const std::optional<std::string>& branch = "main") {
  if (branch) dir.write(hub + "/" + folder + "/refs/" + *branch, commit);
  dir.write(hub + "/" + folder + "/snapshots/" + commit + "/config.json", text);
}

HubEnvironment cache_at(const std::string& hub) {
  HubEnvironment env;
  env.hf_hub_cache = hub;
  return env;
}

std::string error_of(const std::string& spec, const HubEnvironment& env) {
  try {
    trace::load_model_config(spec, env);
  } catch (const trace::ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("parse_repo_id accepts org/name with an optional revision", "[io][repo_id]") {
  const std::optional<trace::RepoId> plain = trace::parse_repo_id("meta-llama/Llama-3.1-8B");
  REQUIRE(plain);
  CHECK(plain->repo == "meta-llama/Llama-3.1-8B");
  CHECK(plain->revision == "main");

  const std::optional<trace::RepoId> pinned = trace::parse_repo_id("org/name@v1.0");
  REQUIRE(pinned);
  CHECK(pinned->repo == "org/name");
  CHECK(pinned->revision == "v1.0");

  const std::optional<trace::RepoId> commit =
      trace::parse_repo_id(std::string("Org_1/name-2.5@") + k_commit);
  REQUIRE(commit);
  CHECK(commit->repo == "Org_1/name-2.5");
  CHECK(commit->revision == k_commit);

  // A bare name is accepted for the bundled catalog ("gpt2").
  const std::optional<trace::RepoId> bare = trace::parse_repo_id("gpt2");
  REQUIRE(bare);
  CHECK(bare->repo == "gpt2");
}

TEST_CASE("parse_repo_id rejects malformed ids and path tricks", "[io][repo_id]") {
  for (const char* spec : {"",
                           "a/b/c",
                           "a/b/c/d",
                           "/name",
                           "org/",
                           "org//name",
                           "../name",
                           "org/..",
                           "./name",
                           "org/.",
                           "..",
                           "bad name!",
                           "org/na me",
                           "org/name@",
                           "@main",
                           "org/name@..",
                           "org/name@../../etc",
                           "org/name@/etc",
                           "org/name:rev",
                           "org\\name"}) {
    INFO("spec: '" << spec << "'");
    CHECK_FALSE(trace::parse_repo_id(spec));
  }
  // Each part is at most 96 characters, as on the Hub.
  CHECK(trace::parse_repo_id("org/" + std::string(96, 'n')));
  CHECK_FALSE(trace::parse_repo_id("org/" + std::string(97, 'n')));
}

TEST_CASE("the hub cache folder follows HF_HUB_CACHE, HF_HOME, HOME", "[io][cache]") {
  HubEnvironment env;
  env.hf_hub_cache = "/cache";
  env.hf_home = "/hf-home";
  env.home = "/home/user";
  CHECK(trace::hub_cache_dir(env) == "/cache");
  env.hf_hub_cache = "";  // set but empty: ignored, as huggingface_hub does
  CHECK(trace::hub_cache_dir(env) == "/hf-home/hub");
  env.hf_hub_cache.reset();
  CHECK(trace::hub_cache_dir(env) == "/hf-home/hub");
  env.hf_home.reset();
  CHECK(trace::hub_cache_dir(env) == "/home/user/.cache/huggingface/hub");
}

TEST_CASE("a cached repo is found through each environment variable", "[io][cache]") {
  const TempDir dir;
  const std::string text = R"({"model_type": "llama", "marker": "cached"})";
  const std::string folder = "models--some-org--some-model";

  SECTION("HF_HUB_CACHE") {
    cache_repo(dir, "hub-cache", folder, k_commit, text);
    HubEnvironment env = cache_at(dir.at("hub-cache"));
    env.hf_home = dir.at("unused-home");
    env.home = dir.at("unused-user");
    const LoadedConfig loaded = trace::load_model_config("some-org/some-model", env);
    CHECK(loaded.text == text);
    CHECK(loaded.model_id == "some-org/some-model");
    CHECK(contains(loaded.source, dir.at("hub-cache")));
    CHECK(contains(loaded.source, k_commit));
  }
  SECTION("HF_HOME/hub") {
    cache_repo(dir, "hf-home/hub", folder, k_commit, text);
    HubEnvironment env;
    env.hf_home = dir.at("hf-home");
    env.home = dir.at("unused-user");
    CHECK(trace::load_model_config("some-org/some-model", env).text == text);
  }
  SECTION("HOME/.cache/huggingface/hub") {
    cache_repo(dir, "user/.cache/huggingface/hub", folder, k_commit, text);
    HubEnvironment env;
    env.home = dir.at("user");
    CHECK(trace::load_model_config("some-org/some-model", env).text == text);
  }
  SECTION("a ref with a trailing newline") {
    cache_repo(dir, "hub", folder, k_commit, text);
    dir.write("hub/" + folder + "/refs/main", std::string(k_commit) + "\n");
    CHECK(trace::load_model_config("some-org/some-model", cache_at(dir.at("hub"))).text == text);
  }
}

TEST_CASE("HF_HUB_CACHE wins over HF_HOME, which wins over HOME", "[io][cache]") {
  const TempDir dir;
  const std::string folder = "models--org--name";
  cache_repo(dir, "hub-cache", folder, k_commit, R"({"from": "HF_HUB_CACHE"})");
  cache_repo(dir, "hf-home/hub", folder, k_commit, R"({"from": "HF_HOME"})");
  cache_repo(dir, "user/.cache/huggingface/hub", folder, k_commit, R"({"from": "HOME"})");
  HubEnvironment env;
  env.hf_hub_cache = dir.at("hub-cache");
  env.hf_home = dir.at("hf-home");
  env.home = dir.at("user");
  CHECK(contains(trace::load_model_config("org/name", env).text, "HF_HUB_CACHE"));
  env.hf_hub_cache.reset();
  CHECK(contains(trace::load_model_config("org/name", env).text, "HF_HOME"));
  env.hf_home.reset();
  CHECK(contains(trace::load_model_config("org/name", env).text, "HOME"));
}

TEST_CASE("revisions: a commit hash names the snapshot, a branch goes through refs",
          "[io][cache]") {
  const TempDir dir;
  const std::string folder = "models--org--name";
  cache_repo(dir, "hub", folder, k_commit, R"({"snapshot": "main"})");
  cache_repo(dir, "hub", folder, k_other_commit, R"({"snapshot": "dev"})", "dev");
  const HubEnvironment env = cache_at(dir.at("hub"));

  CHECK(contains(trace::load_model_config("org/name", env).text, "\"main\""));
  CHECK(contains(trace::load_model_config("org/name@main", env).text, "\"main\""));
  CHECK(contains(trace::load_model_config("org/name@dev", env).text, "\"dev\""));
  CHECK(contains(trace::load_model_config(std::string("org/name@") + k_other_commit, env).text,
                 "\"dev\""));
  CHECK(contains(trace::load_model_config(std::string("org/name@") + k_commit, env).text,
                 "\"main\""));

  // An unknown branch, and a commit without a snapshot, are errors naming where trace looked.
  const std::string branch_error = error_of("org/name@nope", env);
  CHECK(contains(branch_error, "org/name@nope"));
  CHECK(contains(branch_error, dir.at("hub")));
  const std::string missing_commit = "1111111111111111111111111111111111111111";
  dir.write("hub/" + folder + "/refs/stale", missing_commit);
  CHECK(contains(error_of("org/name@stale", env), missing_commit));
}

TEST_CASE("a refs file that does not hold a commit hash is an error, not a path", "[io][cache]") {
  const TempDir dir;
  const std::string folder = "models--org--name";
  // A snapshot outside the repo folder that a crafted ref would reach.
  dir.write("hub/outside/config.json", R"({"escaped": true})");
  const HubEnvironment env = cache_at(dir.at("hub"));
  for (const char* ref : {"../../outside", "", "a/b", ".."}) {
    INFO("refs/main holds '" << ref << "'");
    dir.write("hub/" + folder + "/refs/main", ref);
    const std::string message = error_of("org/name", env);
    CHECK(contains(message, "refs"));
    CHECK_FALSE(contains(message, "(no error)"));
  }
}

TEST_CASE("the HF cache wins over the bundled catalog", "[io][catalog]") {
  const std::string repo = "meta-llama/Llama-3.1-8B";
  REQUIRE(trace::find_catalog_model(repo));
  const TempDir dir;
  const HubEnvironment empty = cache_at(dir.make_dir("empty-hub"));

  const LoadedConfig bundled = trace::load_model_config(repo, empty);
  CHECK(bundled.model_id == repo);
  CHECK(contains(bundled.source, "bundled catalog"));
  CHECK(bundled.text == std::string(trace::find_catalog_model(repo)->config_text));

  const std::string local = R"({"model_type": "llama", "marker": "local copy"})";
  cache_repo(dir, "hub", "models--meta-llama--Llama-3.1-8B", k_commit, local);
  const LoadedConfig cached = trace::load_model_config(repo, cache_at(dir.at("hub")));
  CHECK(cached.text == local);
  CHECK(contains(cached.source, "cache"));

  // The catalog holds main only: another revision is not served from it.
  const std::string error = error_of(repo + "@v2", empty);
  CHECK(contains(error, repo + "@v2"));
  CHECK(contains(error, "bundled catalog"));
}

TEST_CASE("bare names and any letter case reach the catalog", "[io][catalog]") {
  const TempDir dir;
  const HubEnvironment empty = cache_at(dir.make_dir("hub"));
  CHECK(trace::load_model_config("gpt2", empty).model_id == "openai-community/gpt2");
  CHECK(trace::load_model_config("META-LLAMA/llama-3.1-8b", empty).model_id ==
        "meta-llama/Llama-3.1-8B");
}

TEST_CASE("local files and folders are read as given", "[io][local]") {
  const TempDir dir;
  const std::string text = R"({"model_type": "gpt2", "marker": "local"})";
  const std::string file = dir.write("model/config.json", text);
  const std::string other = dir.write("elsewhere/custom-name.json", text);
  const HubEnvironment empty = cache_at(dir.make_dir("hub"));

  const LoadedConfig from_folder = trace::load_model_config(dir.at("model"), empty);
  CHECK(from_folder.text == text);
  CHECK(from_folder.model_id == dir.at("model"));
  CHECK(contains(from_folder.source, "config.json"));

  CHECK(trace::load_model_config(file, empty).text == text);
  CHECK(trace::load_model_config(other, empty).text == text);

  // A folder that looks like a repo id is still a folder: local paths come first.
  dir.write("org/name/config.json", text);
  CHECK(trace::load_model_config(dir.at("org/name"), empty).text == text);

  const std::string no_config = error_of(dir.make_dir("no-config"), empty);
  CHECK(contains(no_config, dir.at("no-config")));
  CHECK(contains(no_config, "config.json"));
  CHECK(contains(error_of(dir.at("missing.json"), empty), dir.at("missing.json")));
  CHECK(contains(error_of("", empty), "no model"));
}

TEST_CASE("read_text_file reads whole files and names the ones it cannot", "[io][local]") {
  const TempDir dir;
  const std::string binary("a\0b\r\nc", 6);
  CHECK(trace::read_text_file(dir.write("bytes.bin", binary)) == binary);
  CHECK(trace::read_text_file(dir.write("empty.json", "")).empty());
  try {
    trace::read_text_file(dir.at("absent.json"));
    FAIL("expected a ConfigError");
  } catch (const trace::ConfigError& error) {
    CHECK(contains(error.what(), dir.at("absent.json")));
  }
  CHECK_THROWS_WITH(trace::read_text_file(dir.path().string()), Catch::Contains("a folder"));
  // A pipe has no size to ask for (`trace validate <(grep ... runs.csv)`): read to its end.
  const std::string fifo = dir.at("rows.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string rows(200'000, 'x');  // more than one 64 KiB block
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << rows; });
  CHECK(trace::read_text_file(fifo) == rows);
  writer.join();
}

TEST_CASE("plain names: letters, digits, '.', '_', '-' within the length", "[io][repo_id]") {
  CHECK(trace::is_plain_name("Llama-3.1_8B", 96));
  CHECK_FALSE(trace::is_plain_name("", 96));
  CHECK_FALSE(trace::is_plain_name(".", 96));
  CHECK_FALSE(trace::is_plain_name("..", 96));
  CHECK_FALSE(trace::is_plain_name("a/b", 96));
  CHECK_FALSE(trace::is_plain_name("a b", 96));
  CHECK(trace::is_plain_name(std::string(96, 'a'), 96));
  CHECK_FALSE(trace::is_plain_name(std::string(97, 'a'), 96));
}
