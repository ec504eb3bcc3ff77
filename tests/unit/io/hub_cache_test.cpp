// The Hugging Face cache layout trace writes: blobs named by ETag with relative snapshot
// symlinks, refs without a newline (nested for refs/pr/N), atomic writes, and trace's own header
// cache with its manifest.
#include "trace/io/hf_cache.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "catch.hpp"
#include "hub_fixtures.hpp"
#include "trace/error.hpp"

namespace {

namespace fs = std::filesystem;
using namespace trace;
using trace::test::k_fixture_commit;
using trace::test::TempDir;

std::string slurp(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::size_t files_under(const fs::path& dir) {
  std::size_t count = 0;
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(dir, error)) count += entry.is_regular_file() ? 1U : 0U;
  return count;
}

}  // namespace

TEST_CASE("the repo folder, refs and safe paths follow huggingface_hub", "[io][hub][cache]") {
  CHECK(repo_cache_folder("meta-llama/Llama-3.1-8B") == "models--meta-llama--Llama-3.1-8B");
  CHECK(safe_repo_path("config.json"));
  CHECK(safe_repo_path("sub/model-00001-of-00002.safetensors"));
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\\b", "a/"}) {
    INFO(bad);
    CHECK_FALSE(safe_repo_path(bad));
  }
  const TempDir dir;
  const HfRepoCache cache(dir.at("hub"), "org/name");
  cache.write_ref("main", k_fixture_commit);
  cache.write_ref("refs/pr/1", k_fixture_commit);
  cache.write_ref(k_fixture_commit, k_fixture_commit);  // a commit needs no ref
  CHECK(slurp(cache.root() / "refs" / "main") == k_fixture_commit);  // no newline
  CHECK(slurp(cache.root() / "refs" / "refs" / "pr" / "1") == k_fixture_commit);
  CHECK_FALSE(fs::exists(cache.root() / "refs" / k_fixture_commit));
  CHECK(cache.commit_of("main") == k_fixture_commit);
  CHECK(cache.commit_of("refs/pr/1") == k_fixture_commit);
  CHECK(cache.commit_of(k_fixture_commit) == k_fixture_commit);
  CHECK_FALSE(cache.commit_of("dev"));
  dir.write("hub/models--org--name/refs/evil", "../../x");
  CHECK_THROWS_AS(cache.commit_of("evil"), ConfigError);
}

TEST_CASE("files land in blobs/ with a relative snapshot symlink, written atomically", "[io][hub][cache]") {
  const TempDir dir;
  const HfRepoCache cache(dir.at("hub"), "org/name");
  const std::string etag(40, 'c');
  cache.write_file(k_fixture_commit, "config.json", "{\"a\": 1}", etag);
  cache.write_file(k_fixture_commit, "sub/dir/extra.json", "{}", std::string(64, 'd'));
  const fs::path link = cache.snapshot_path(k_fixture_commit, "config.json");
  REQUIRE(fs::is_symlink(link));
  CHECK(fs::read_symlink(link) == fs::path("../../blobs") / etag);
  CHECK(fs::read_symlink(cache.snapshot_path(k_fixture_commit, "sub/dir/extra.json")) ==
        fs::path("../../../../blobs") / std::string(64, 'd'));
  CHECK(cache.read_file(k_fixture_commit, "config.json") == "{\"a\": 1}");
  CHECK(cache.read_file(k_fixture_commit, "sub/dir/extra.json") == "{}");
  CHECK(slurp(cache.root() / "blobs" / etag) == "{\"a\": 1}");
  // Without a usable ETag the snapshot holds a plain file and blobs/ gets nothing.
  cache.write_file(k_fixture_commit, "plain.json", "[]", "");
  CHECK_FALSE(fs::is_symlink(cache.snapshot_path(k_fixture_commit, "plain.json")));
  CHECK(cache.read_file(k_fixture_commit, "plain.json") == "[]");
  CHECK(files_under(cache.root() / "blobs") == 2);
  // Rewriting replaces in place and leaves no temp files behind.
  cache.write_file(k_fixture_commit, "config.json", "{\"a\": 1}", etag);
  for (const auto& entry : fs::recursive_directory_iterator(cache.root())) {
    CHECK(entry.path().string().find(".incomplete") == std::string::npos);
  }
  CHECK_THROWS_AS(cache.write_file(k_fixture_commit, "../escape.json", "{}", ""), ConfigError);
}

TEST_CASE("trace's header cache and manifest round-trip", "[io][hub][cache]") {
  const TempDir dir;
  const HfRepoCache cache(dir.at("hub"), "org/name");
  const std::string json = R"({"__metadata__":{"format":"pt"}})";
  const ShardHeaderBytes shard{"model-00001-of-00002.safetensors", 5'000'000'000ULL, u64_le_bytes(json.size()) + json};
  cache.write_header(k_fixture_commit, shard);
  HeaderManifest manifest;
  manifest.commit = k_fixture_commit;
  manifest.has_quant_config = true;
  manifest.index_file = "model.safetensors.index.json";
  manifest.shards.push_back({shard.file, shard.file_size, json.size()});
  CHECK_FALSE(cache.read_manifest(k_fixture_commit));
  cache.write_manifest(manifest);
  const std::optional<HeaderManifest> read = cache.read_manifest(k_fixture_commit);
  REQUIRE(read);
  CHECK(read->has_quant_config);
  CHECK(read->index_file == manifest.index_file);
  REQUIRE(read->shards.size() == 1);
  CHECK(read->shards[0].size == 5'000'000'000ULL);
  const std::optional<ShardHeaderBytes> header = cache.read_header(k_fixture_commit, read->shards[0]);
  REQUIRE(header);
  CHECK(header->bytes == shard.bytes);
  CHECK(header->file_size == shard.file_size);
  CHECK(slurp(cache.root() / "trace" / "headers" / k_fixture_commit / (shard.file + ".json")) == json);
  // A header of another length than the manifest's is not trusted.
  HeaderManifest::Shard wrong = read->shards[0];
  wrong.header_bytes += 1;
  CHECK_FALSE(cache.read_header(k_fixture_commit, wrong));
  CHECK_FALSE(fs::exists(cache.root() / "blobs"));  // header ranges never go to blobs/
}
