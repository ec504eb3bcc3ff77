#include "trace/io/hf_cache.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "trace/error.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_manifest_format = "trace.hub-headers/1";
constexpr std::uintmax_t k_max_cached_file_bytes = 128ULL << 20;  // a header's own cap plus room

// A file name part huggingface_hub would write.
bool plain_name(std::string_view part) { return is_plain_name(part, 255); }

bool is_commit_hash(std::string_view text) {
  if (text.size() != 40) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<std::string> read_whole_file(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;  // follows the snapshot symlink
  const std::uintmax_t size = fs::file_size(path, error);
  if (error || size > k_max_cached_file_bytes) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string temp_name(const fs::path& target) {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{}.{}-{}-{:08x}.incomplete", target.filename().string(), getpid(), counter++,
                     random() & 0xffffffffU);
}

}  // namespace

std::string repo_cache_folder(const std::string& repo) {
  std::string folder = "models--";
  for (const char c : repo) {
    if (c == '/') {
      folder += "--";
    } else {
      folder += c;
    }
  }
  return folder;
}

bool safe_repo_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string_view::npos) return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (const char c : part) {
      if (static_cast<unsigned char>(c) < 0x20) return false;
    }
    start = slash + 1;
  }
  return true;
}

void write_file_atomically(const fs::path& target, std::string_view content) {
  std::error_code error;
  fs::create_directories(target.parent_path(), error);
  if (error) {
    throw ConfigError(fmt::format("cannot create {}: {}", target.parent_path().string(), error.message()));
  }
  const fs::path temp = target.parent_path() / temp_name(target);
  {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    file.close();
    if (!file) {
      fs::remove(temp, error);
      throw ConfigError(fmt::format("cannot write {}", temp.string()));
    }
  }
  fs::rename(temp, target, error);
  if (error) {
    fs::remove(temp, error);
    throw ConfigError(fmt::format("cannot move a file into {}", target.string()));
  }
}

HfRepoCache::HfRepoCache(const std::string& hub_cache, const std::string& repo)
    : m_root(fs::path(hub_cache) / repo_cache_folder(repo)) {}

std::optional<std::string> HfRepoCache::commit_of(const std::string& revision) const {
  if (is_commit_hash(revision)) return revision;
  const fs::path ref = m_root / "refs" / revision;
  std::optional<std::string> text = read_whole_file(ref);
  if (!text) return std::nullopt;
  while (!text->empty() && (text->back() == '\n' || text->back() == '\r' || text->back() == ' ')) {
    text->pop_back();
  }
  // The ref names a folder under snapshots/; anything but one plain name (a commit hash) could
  // point outside the repo's folder.
  if (!plain_name(*text)) {
    throw ConfigError(fmt::format(
        "the Hugging Face cache ref {} does not hold a commit hash; delete it and download the "
        "model again",
        ref.string()));
  }
  return text;
}

fs::path HfRepoCache::snapshot_path(const std::string& commit, const std::string& path) const {
  return m_root / "snapshots" / commit / path;
}

std::optional<std::string> HfRepoCache::read_file(const std::string& commit,
                                                  const std::string& path) const {
  if (!safe_repo_path(path) || !safe_repo_path(commit)) return std::nullopt;
  return read_whole_file(snapshot_path(commit, path));
}

fs::path HfRepoCache::no_exist_path(const std::string& commit, const std::string& path) const {
  return m_root / ".no_exist" / commit / path;
}

bool HfRepoCache::known_missing(const std::string& commit, const std::string& path) const {
  if (!safe_repo_path(path) || !is_commit_hash(commit)) return false;
  std::error_code error;
  return fs::is_regular_file(no_exist_path(commit, path), error);
}

void HfRepoCache::mark_missing(const std::string& commit, const std::string& path) const {
  if (!safe_repo_path(path) || !is_commit_hash(commit)) {
    throw ConfigError(fmt::format("refusing to mark '{}' missing: not a safe relative path", path));
  }
  write_file_atomically(no_exist_path(commit, path), "");
}

void HfRepoCache::write_ref(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return;
  write_file_atomically(m_root / "refs" / revision, commit);  // no newline, as huggingface_hub
}

void HfRepoCache::write_file(const std::string& commit, const std::string& path,
                             std::string_view content, const std::string& etag) const {
  if (!safe_repo_path(path) || !is_commit_hash(commit)) {
    throw ConfigError(fmt::format("refusing to cache '{}': not a safe relative path", path));
  }
  const fs::path link = snapshot_path(commit, path);
  if (etag.empty()) {
    write_file_atomically(link, content);
    return;
  }
  const fs::path blob = m_root / "blobs" / etag;
  write_file_atomically(blob, content);
  // ../../blobs/{etag} from snapshots/{commit}/, one more ../ per folder in `path`.
  fs::path target = fs::path("..") / "..";
  for (auto depth = std::count(path.begin(), path.end(), '/'); depth > 0; --depth) {
    target /= "..";
  }
  target = target / "blobs" / etag;
  std::error_code error;
  fs::create_directories(link.parent_path(), error);
  const fs::path temp = link.parent_path() / temp_name(link);
  fs::create_symlink(target, temp, error);
  if (!error) fs::rename(temp, link, error);
  if (error) {  // no symlinks here: a plain copy, as huggingface_hub does on such systems
    fs::remove(temp, error);
    write_file_atomically(link, content);
  }
}

fs::path HfRepoCache::headers_dir(const std::string& commit) const {
  return m_root / "trace" / "headers" / commit;
}

std::optional<HeaderManifest> HfRepoCache::read_manifest(const std::string& commit) const {
  if (!is_commit_hash(commit)) return std::nullopt;
  const std::optional<std::string> text = read_whole_file(headers_dir(commit) / "manifest.json");
  if (!text) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
  try {
    if (!json.is_object() || json.value("format", "") != k_manifest_format ||
        json.at("commit").get<std::string>() != commit) {
      return std::nullopt;
    }
    HeaderManifest manifest;
    manifest.commit = commit;
    manifest.has_quant_config = json.at("hf_quant_config").get<bool>();
    manifest.index_file = json.at("index").get<std::string>();
    for (const nlohmann::json& shard : json.at("shards")) {
      manifest.shards.push_back({shard.at("file").get<std::string>(),
                                 shard.at("size").get<std::uint64_t>(),
                                 shard.at("header_bytes").get<std::uint64_t>()});
      if (!safe_repo_path(manifest.shards.back().file)) return std::nullopt;
    }
    if (!manifest.index_file.empty() && !safe_repo_path(manifest.index_file)) return std::nullopt;
    return manifest;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void HfRepoCache::write_manifest(const HeaderManifest& manifest) const {
  nlohmann::json shards = nlohmann::json::array();
  for (const HeaderManifest::Shard& shard : manifest.shards) {
    shards.push_back({{"file", shard.file}, {"size", shard.size}, {"header_bytes", shard.header_bytes}});
  }
  const nlohmann::json json = {{"format", k_manifest_format},
                               {"commit", manifest.commit},
                               {"hf_quant_config", manifest.has_quant_config},
                               {"index", manifest.index_file},
                               {"shards", shards}};
  write_file_atomically(headers_dir(manifest.commit) / "manifest.json", json.dump(1) + "\n");
}

std::optional<ShardHeaderBytes> HfRepoCache::read_header(const std::string& commit,
                                                         const HeaderManifest::Shard& shard) const {
  if (!safe_repo_path(shard.file)) return std::nullopt;
  const std::optional<std::string> text = read_whole_file(headers_dir(commit) / (shard.file + ".json"));
  if (!text || text->size() != shard.header_bytes) return std::nullopt;
  return ShardHeaderBytes{shard.file, shard.size, u64_le_bytes(shard.header_bytes) + *text};
}

void HfRepoCache::write_header(const std::string& commit, const ShardHeaderBytes& shard) const {
  if (!safe_repo_path(shard.file) || !is_commit_hash(commit)) {
    throw ConfigError(fmt::format("refusing to cache the header of '{}'", shard.file));
  }
  write_file_atomically(headers_dir(commit) / (shard.file + ".json"), shard.header_json());
}

}  // namespace trace
