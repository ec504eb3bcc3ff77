// The Hub client against the in-process fixture Hub (127.0.0.1 only): revision pinning, file
// reads, Range reads of shard headers across the CDN redirect, the token kept off the CDN,
// retries (429 with Retry-After, 5xx, slow and truncated responses), errors naming the repo,
// revision or file, and refusals of absurd headers and Range-ignoring servers.
#include "trace/io/hub_client.hpp"

#include <chrono>
#include <string>

#include "catch.hpp"
#include "hub_fixtures.hpp"

namespace {

using namespace trace;
using namespace trace::test;

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

HubConnection fixture_connection(const FixtureHub& hub, std::optional<std::string> token = {}) {
  HubConnection connection;
  connection.endpoint = hub.endpoint();
  connection.token = std::move(token);
  connection.token_source = "HF_TOKEN";
  connection.settings = fast_hub_settings();
  connection.no_proxy = "127.0.0.1";
  return connection;
}

template <class Error, class Call>
std::string message_of(Call&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

std::size_t count_on(const std::vector<LoggedRequest>& log, FixturePort port) {
  std::size_t count = 0;
  for (const LoggedRequest& request : log) count += request.port == port ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE("URLs: revision encoded with no safe characters, file path keeps '/'", "[io][hub]") {
  CHECK(percent_encode("refs/pr/1", false) == "refs%2Fpr%2F1");
  CHECK(percent_encode("dir/my file.json", true) == "dir/my%20file.json");
  CHECK(revision_api_url("http://h", "org/name", "refs/pr/1") ==
        "http://h/api/models/org/name/revision/refs%2Fpr%2F1?expand=sha&expand=siblings");
  CHECK(resolve_url("http://h", "org/name", k_fixture_commit, "a b/config.json") ==
        std::string("http://h/org/name/resolve/") + k_fixture_commit + "/a%20b/config.json");
  CHECK(normalized_etag("W/\"" + std::string(40, 'a') + "\"") == std::string(40, 'a'));
  CHECK(normalized_etag("\"" + std::string(64, 'b') + "\"") == std::string(64, 'b'));
  CHECK(normalized_etag("\"../../etc\"").empty());
  CHECK(normalized_etag("\"ABC\"").empty());
}

TEST_CASE("the endpoint and the token come from the injected environment", "[io][hub]") {
  const TempDir dir;
  HubEnvironment env;
  env.home = dir.path().string();
  CHECK(hub_endpoint(env) == "https://huggingface.co");
  env.hf_endpoint = "http://127.0.0.1:9/";
  CHECK(hub_endpoint(env) == "http://127.0.0.1:9");
  std::string source;
  CHECK_FALSE(hub_token(env, &source));
  dir.write(".cache/huggingface/token", "hf_fromhome\n");
  CHECK(hub_token(env, &source) == "hf_fromhome");
  env.hf_home = dir.at("hf");
  CHECK_FALSE(hub_token(env));
  dir.write("hf/token", "  hf_fromhfhome\r\n");
  CHECK(hub_token(env) == "hf_fromhfhome");
  env.hf_token_path = dir.write("elsewhere/tok", "hf_frompath");
  CHECK(hub_token(env, &source) == "hf_frompath");
  CHECK(source == dir.at("elsewhere/tok"));
  env.hf_token = "\n";  // empty after cleaning: ignored
  CHECK(hub_token(env) == "hf_frompath");
  env.hf_token = "hf_fromenv\n";
  CHECK(hub_token(env, &source) == "hf_fromenv");
  CHECK(source == "HF_TOKEN");
  CHECK(env_flag_set(std::string("1")));
  CHECK(env_flag_set(std::string("true")));
  CHECK(env_flag_set(std::string("On")));
  CHECK_FALSE(env_flag_set(std::string("0")));
  CHECK_FALSE(env_flag_set(std::nullopt));
}

TEST_CASE("a revision resolves to its commit with one API call", "[io][hub]") {
  FixtureHub hub;
  FixtureRepo repo = llama_8b_repo();
  repo.refs["refs/pr/1"] = k_fixture_other_commit;
  hub.add_repo(repo);
  HubClient client(fixture_connection(hub));
  const RevisionInfo main = client.resolve_revision(repo.id, "main");
  CHECK(main.commit == k_fixture_commit);
  CHECK(std::find(main.files.begin(), main.files.end(), "config.json") != main.files.end());
  const RevisionInfo pr = client.resolve_revision(repo.id, "refs/pr/1");
  CHECK(pr.commit == k_fixture_other_commit);
  const std::vector<LoggedRequest> log = hub.requests();
  REQUIRE(log.size() == 2);
  CHECK(contains(log[1].target, "/revision/refs%2Fpr%2F1"));
  CHECK(client.requests() == 2);
}

TEST_CASE("missing repo, revision and file each say which", "[io][hub]") {
  FixtureHub hub;
  hub.add_repo(llama_8b_repo());
  HubClient client(fixture_connection(hub));
  const auto missing = [&](auto call) {
    try {
      call();
    } catch (const HubNotFoundError& error) {
      return std::make_pair(error.missing(), std::string(error.what()));
    }
    FAIL("no HubNotFoundError");
    return std::make_pair(HubNotFoundError::Missing::file, std::string());
  };
  const auto [repo_kind, repo_message] = missing([&] { client.resolve_revision("no-org/no-model", "main"); });
  CHECK(repo_kind == HubNotFoundError::Missing::repository);
  CHECK(contains(repo_message, "no-org/no-model"));
  CHECK(contains(repo_message, "HF_TOKEN"));
  const auto [rev_kind, rev_message] = missing([&] { client.resolve_revision("fixture-org/Llama-3.1-8B", "v9"); });
  CHECK(rev_kind == HubNotFoundError::Missing::revision);
  CHECK(contains(rev_message, "'v9'"));
  const auto [file_kind, file_message] =
      missing([&] { client.download("fixture-org/Llama-3.1-8B", k_fixture_commit, "nope.json"); });
  CHECK(file_kind == HubNotFoundError::Missing::file);
  CHECK(contains(file_message, "nope.json"));
}

TEST_CASE("small files are read whole with their ETag", "[io][hub]") {
  FixtureHub hub;
  const FixtureRepo repo = llama_8b_repo();
  hub.add_repo(repo);
  HubClient client(fixture_connection(hub));
  const HubFile config = client.download(repo.id, k_fixture_commit, "config.json");
  CHECK(config.content == repo.files.at("config.json").content);
  CHECK(config.etag == fake_hash(config.content, 40));
}

TEST_CASE("shard headers: Range reads through the CDN redirect, token only on the Hub", "[io][hub]") {
  FixtureHub hub;
  const FixtureRepo repo = llama_8b_repo();
  hub.add_repo(repo);
  HubClient client(fixture_connection(hub, std::string(k_fixture_token)));
  const std::vector<std::string> shards = {"model-00001-of-00004.safetensors", "model-00002-of-00004.safetensors",
                                           "model-00003-of-00004.safetensors", "model-00004-of-00004.safetensors"};
  std::size_t done = 0;
  const std::vector<ShardHeaderBytes> headers =
      client.read_shard_headers(repo.id, k_fixture_commit, shards, [&](const ShardHeaderBytes&) { ++done; });
  CHECK(done == 4);
  REQUIRE(headers.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const FixtureFile& file = repo.files.at(shards[i]);
    CHECK(headers[i].file == shards[i]);
    CHECK(headers[i].bytes == file.content);  // exactly the 8 + N bytes
    CHECK(headers[i].file_size == file.size);
    CHECK(headers[i].header_json().front() == '{');
  }
  const std::vector<LoggedRequest> log = hub.requests();
  CHECK(count_on(log, FixturePort::hub) == 4);
  CHECK(count_on(log, FixturePort::cdn) == 4);
  for (const LoggedRequest& request : log) {
    CHECK(request.has("range"));
    if (request.port == FixturePort::hub) {
      CHECK(request.headers.at("authorization") == std::string("Bearer ") + k_fixture_token);
    } else {
      INFO("CDN request " << request.target);
      CHECK_FALSE(request.has("authorization"));
      for (const auto& [name, value] : request.headers) CHECK_FALSE(contains(value, k_fixture_token));
    }
  }
  // Headers only: a few KiB per shard, never the multi-GB files.
  CHECK(hub.body_bytes_sent() < 4 * 64 * 1024 + 1);
}

TEST_CASE("a header longer than the first read costs one more read of exactly the rest", "[io][hub]") {
  FixtureHub hub;
  FixtureRepo repo = llama_1b_repo();
  hub.add_repo(repo);
  HubConnection connection = fixture_connection(hub);
  const std::uint64_t header = repo.files.at("model.safetensors").content.size();
  SECTION("probe of 1 KiB") { connection.settings.header_probe_bytes = 1024; }
  SECTION("probe one byte short of the header") { connection.settings.header_probe_bytes = header - 1; }
  SECTION("probe exactly the header") { connection.settings.header_probe_bytes = header; }
  HubClient client(connection);
  const std::vector<ShardHeaderBytes> headers =
      client.read_shard_headers(repo.id, k_fixture_commit, {"model.safetensors"});
  CHECK(headers.at(0).bytes == repo.files.at("model.safetensors").content);
  const std::size_t reads = count_on(hub.requests(), FixturePort::cdn);
  CHECK(reads == (connection.settings.header_probe_bytes >= header ? 1U : 2U));
}

TEST_CASE("a server that ignores Range is cut off after the header", "[io][hub]") {
  FixtureHub hub;
  const FixtureRepo repo = llama_8b_repo();
  hub.add_repo(repo);
  hub.ignore_range(true);
  HubConnection connection = fixture_connection(hub);
  connection.settings.header_probe_bytes = 1024;  // forces a second (also ignored) read
  HubClient client(connection);
  const std::vector<ShardHeaderBytes> headers =
      client.read_shard_headers(repo.id, k_fixture_commit, {"model-00001-of-00004.safetensors"});
  const FixtureFile& file = repo.files.at("model-00001-of-00004.safetensors");
  CHECK(headers.at(0).bytes == file.content);
  CHECK(headers.at(0).file_size == file.size);
  // The file is ~5 GB; the client stopped reading within a few socket buffers.
  CHECK(client.bytes_received() < 16ULL << 20);
}

TEST_CASE("absurd or inconsistent header lengths are refused", "[io][hub]") {
  FixtureHub hub;
  FixtureRepo repo = llama_1b_repo();
  SECTION("over the 100 MB cap") {
    repo.files["model.safetensors"].content = u64_le_bytes(200'000'000) + "{}";
  }
  SECTION("longer than the file") {
    repo.files["model.safetensors"].content = u64_le_bytes(1000) + "{}";
    repo.files["model.safetensors"].size = 100;
  }
  SECTION("not JSON after the prefix") {
    repo.files["model.safetensors"].content = u64_le_bytes(4) + "GGUF";
  }
  hub.add_repo(repo);
  HubClient client(fixture_connection(hub));
  const std::string message = message_of<FetchError>(
      [&] { client.read_shard_headers(repo.id, k_fixture_commit, {"model.safetensors"}); });
  CHECK(contains(message, "model.safetensors"));
  CHECK_FALSE(contains(message, "(no error)"));
}

TEST_CASE("429 with Retry-After and 5xx are retried, a bounded number of times", "[io][hub][retry]") {
  FixtureHub hub;
  hub.add_repo(llama_8b_repo());
  HubClient client(fixture_connection(hub));
  SECTION("429 then success") {
    hub.inject("/api/models/", {Fault::Kind::status, 429, "2", {}}, 2);
    const auto start = std::chrono::steady_clock::now();
    CHECK(client.resolve_revision("fixture-org/Llama-3.1-8B", "main").commit == k_fixture_commit);
    CHECK(hub.request_count() == 3);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(4));  // 2 x 2 units
  }
  SECTION("a Retry-After beyond the cap fails at once") {
    hub.inject("/api/models/", {Fault::Kind::status, 429, "3600", {}}, 1);
    CHECK(contains(message_of<FetchError>([&] { client.resolve_revision("fixture-org/Llama-3.1-8B", "main"); }),
                   "3600"));
    CHECK(hub.request_count() == 1);
  }
  SECTION("Retry-After as an HTTP date waits until then, by the response's Date") {
    // 07:28:05 - 07:28:00 = 5 s = 5 units.
    Fault fault{Fault::Kind::status, 429, "Wed, 21 Oct 2015 07:28:05 GMT", {}};
    fault.date = "Wed, 21 Oct 2015 07:28:00 GMT";
    hub.inject("/api/models/", fault, 1);
    const auto start = std::chrono::steady_clock::now();
    CHECK(client.resolve_revision("fixture-org/Llama-3.1-8B", "main").commit == k_fixture_commit);
    CHECK(hub.request_count() == 2);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(5));
  }
  SECTION("an HTTP date an hour past the response's Date fails at once, naming 3600 s") {
    Fault fault{Fault::Kind::status, 429, "Wed, 21 Oct 2015 08:28:00 GMT", {}};
    fault.date = "Wed, 21 Oct 2015 07:28:00 GMT";
    hub.inject("/api/models/", fault, 1);
    CHECK(contains(message_of<FetchError>([&] { client.resolve_revision("fixture-org/Llama-3.1-8B", "main"); }),
                   "3600 s"));
    CHECK(hub.request_count() == 1);
  }
  SECTION("an HTTP date already past retries at once") {
    hub.inject("/api/models/", {Fault::Kind::status, 429, "Sun, 06 Nov 1994 08:49:37 GMT", {}}, 1);
    CHECK(client.resolve_revision("fixture-org/Llama-3.1-8B", "main").commit == k_fixture_commit);
    CHECK(hub.request_count() == 2);
  }
  SECTION("500 then success") {
    hub.inject("config.json", {Fault::Kind::status, 500, {}, {}}, 2);
    CHECK_FALSE(client.download("fixture-org/Llama-3.1-8B", k_fixture_commit, "config.json").content.empty());
    CHECK(hub.request_count() == 3);
  }
  SECTION("503 forever gives up after max_attempts") {
    hub.inject("config.json", {Fault::Kind::status, 503, {}, {}}, 100);
    const std::string message = message_of<FetchError>(
        [&] { client.download("fixture-org/Llama-3.1-8B", k_fixture_commit, "config.json"); });
    CHECK(contains(message, "503"));
    CHECK(contains(message, "config.json"));
    CHECK(hub.request_count() == static_cast<std::size_t>(fast_hub_settings().max_attempts));
  }
  SECTION("429 forever names the rate limit") {
    hub.inject("/api/models/", {Fault::Kind::status, 429, "0", {}}, 100);
    CHECK(contains(message_of<FetchError>([&] { client.resolve_revision("fixture-org/Llama-3.1-8B", "main"); }),
                   "rate-limiting"));
  }
  SECTION("404 is not retried") {
    CHECK_THROWS_AS(client.download("fixture-org/Llama-3.1-8B", k_fixture_commit, "nope.json"), HubNotFoundError);
    CHECK(hub.request_count() == 1);
  }
}

TEST_CASE("slow and truncated responses are retried, then reported", "[io][hub][retry]") {
  FixtureHub hub;
  const FixtureRepo repo = llama_8b_repo();
  hub.add_repo(repo);
  HubConnection connection = fixture_connection(hub);
  connection.settings.request_timeout = std::chrono::milliseconds(150);
  HubClient client(connection);
  SECTION("one slow answer") {
    hub.inject("config.json", {Fault::Kind::slow, 0, {}, std::chrono::milliseconds(600)}, 1);
    CHECK(client.download(repo.id, k_fixture_commit, "config.json").content == repo.files.at("config.json").content);
    CHECK(hub.request_count() == 2);
  }
  SECTION("always slow") {
    hub.inject("config.json", {Fault::Kind::slow, 0, {}, std::chrono::milliseconds(400)}, 100);
    CHECK(contains(message_of<FetchError>([&] { client.download(repo.id, k_fixture_commit, "config.json"); }),
                   "in time"));
  }
  SECTION("one truncated body") {
    hub.inject("config.json", {Fault::Kind::truncate, 0, {}, {}}, 1);
    CHECK(client.download(repo.id, k_fixture_commit, "config.json").content == repo.files.at("config.json").content);
  }
  SECTION("always truncated") {
    hub.inject("config.json", {Fault::Kind::truncate, 0, {}, {}}, 100);
    CHECK(contains(message_of<FetchError>([&] { client.download(repo.id, k_fixture_commit, "config.json"); }),
                   "cut short"));
  }
  SECTION("a truncated shard range on the CDN") {
    hub.inject("/cdn/", {Fault::Kind::truncate, 0, {}, {}}, 1);
    CHECK(client.read_shard_headers(repo.id, k_fixture_commit, {"model-00002-of-00004.safetensors"})
              .at(0)
              .bytes == repo.files.at("model-00002-of-00004.safetensors").content);
  }
}

TEST_CASE("gated repos: no token, a token without access, a granted token", "[io][hub][auth]") {
  FixtureHub hub;
  FixtureRepo repo = llama_8b_repo("fixture-org/gated");
  repo.gated = true;
  repo.granted_token = k_fixture_token;
  hub.add_repo(repo);
  {
    HubClient client(fixture_connection(hub));
    CHECK(client.resolve_revision(repo.id, "main").commit == k_fixture_commit);  // metadata is public
    const std::string message =
        message_of<HubAccessError>([&] { client.download(repo.id, k_fixture_commit, "config.json"); });
    CHECK(contains(message, "gated"));
    CHECK(contains(message, "licence"));
    CHECK(contains(message, "HF_TOKEN"));
  }
  {
    HubClient client(fixture_connection(hub, std::string("hf_notgranted")));
    const std::string message =
        message_of<HubAccessError>([&] { client.download(repo.id, k_fixture_commit, "config.json"); });
    CHECK(contains(message, "not been granted"));
    CHECK_FALSE(contains(message, "hf_notgranted"));  // never the token itself
  }
  HubClient client(fixture_connection(hub, std::string(k_fixture_token)));
  CHECK_FALSE(client.download(repo.id, k_fixture_commit, "config.json").content.empty());
}

TEST_CASE("a Hub that cannot be reached fails fast as unreachable", "[io][hub]") {
  int port = 0;
  {
    FixtureHub closed;  // its port is free again once it is gone
    port = closed.hub_port();
  }
  HubConnection connection;
  connection.endpoint = "http://127.0.0.1:" + std::to_string(port);
  connection.settings = fast_hub_settings();
  connection.no_proxy = "127.0.0.1";
  HubClient client(connection);
  const auto start = std::chrono::steady_clock::now();
  const std::string message =
      message_of<HubUnreachableError>([&] { client.resolve_revision("org/name", "main"); });
  CHECK(contains(message, "cannot reach the Hub"));
  CHECK(contains(message, "HF_HUB_OFFLINE"));
  CHECK(client.requests() == static_cast<std::uint64_t>(connection.settings.max_connect_attempts));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
}

TEST_CASE("parallel header reads keep the order and use at most max_connections", "[io][hub]") {
  FixtureHub hub;
  const FixtureRepo repo = llama_8b_repo("fixture-org/many-shards", 12);
  hub.add_repo(repo);
  HubConnection connection = fixture_connection(hub);
  connection.settings.max_connections = 3;
  HubClient client(connection);
  std::vector<std::string> shards;
  for (const auto& [name, file] : repo.files) {
    if (file.lfs) shards.push_back(name);
  }
  REQUIRE(shards.size() >= 8);  // the split is by size: about 12
  const std::vector<ShardHeaderBytes> headers = client.read_shard_headers(repo.id, k_fixture_commit, shards);
  for (std::size_t i = 0; i < shards.size(); ++i) CHECK(headers[i].file == shards[i]);
  CHECK(client.requests() == shards.size());
  CHECK(hub.peak_cdn_connections() <= 3);
  CHECK(hub.peak_cdn_connections() >= 1);
}
