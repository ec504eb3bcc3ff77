#pragma once
/// One repo's folder in the Hugging Face cache, read and written in the layout huggingface_hub
/// uses (hub-docs local-cache.md), so both tools share it:
///
///   <hub cache>/models--{org}--{name}/
///     refs/{revision}                 the commit a branch or tag pointed to (no newline)
///     blobs/{etag}                    a whole file, named by its git-sha1 or sha256 ETag
///     snapshots/{commit}/{path}       a relative symlink to ../../blobs/{etag} (a plain file
///                                     when the server sent no usable ETag)
///     .no_exist/{commit}/{path}       an empty file: {path} does not exist at {commit} (so
///                                     nobody asks again; huggingface_hub's own marker)
///     trace/headers/{commit}/         trace's own: never read by huggingface_hub
///       {shard}.json                  a shard's safetensors header JSON, verbatim (N bytes)
///       manifest.json                 written last: the files present and each shard's size
///
/// Every write goes to a temp file in the target's folder and is renamed into place. Partial
/// reads (header ranges) never go to blobs/.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/io/checkpoint_headers.hpp"

namespace trace {

/// What trace fetched at one commit (trace/headers/{commit}/manifest.json).
struct HeaderManifest {
  std::string commit;
  bool has_quant_config = false;  ///< hf_quant_config.json exists at the commit
  std::string index_file;         ///< the safetensors index, or empty
  struct Shard {
    std::string file;
    std::uint64_t size = 0;
    std::uint64_t header_bytes = 0;
  };
  std::vector<Shard> shards;
};

class HfRepoCache {
 public:
  /// `hub_cache` is the hub folder (hub_cache_dir); `repo` is "org/name".
  HfRepoCache(const std::string& hub_cache, const std::string& repo);

  const std::filesystem::path& root() const { return m_root; }

  /// The commit of `revision`: a 40-hex commit as is, else refs/{revision}. nullopt when
  /// neither. Throws ConfigError when the ref holds anything but a plain name.
  std::optional<std::string> commit_of(const std::string& revision) const;

  /// snapshots/{commit}/{path}, or nullopt when absent.
  std::optional<std::string> read_file(const std::string& commit, const std::string& path) const;
  std::filesystem::path snapshot_path(const std::string& commit, const std::string& path) const;

  /// .no_exist/{commit}/{path}: the marker that the file is known to be absent at the commit.
  std::filesystem::path no_exist_path(const std::string& commit, const std::string& path) const;
  /// True when the marker exists (a commit's files never change, so it never goes stale).
  bool known_missing(const std::string& commit, const std::string& path) const;
  /// Writes the empty marker. Throws ConfigError when the commit or path is not safe or the
  /// write fails.
  void mark_missing(const std::string& commit, const std::string& path) const;

  /// refs/{revision} := commit (skipped when revision is the commit itself).
  void write_ref(const std::string& revision, const std::string& commit) const;

  /// blobs/{etag} and the snapshot symlink to it; a plain snapshot file when `etag` is empty.
  void write_file(const std::string& commit, const std::string& path, std::string_view content,
                  const std::string& etag) const;

  /// The header manifest, or nullopt when absent or unreadable.
  std::optional<HeaderManifest> read_manifest(const std::string& commit) const;
  void write_manifest(const HeaderManifest& manifest) const;

  /// A shard's cached header (the 8-byte prefix rebuilt), or nullopt when absent or not the
  /// length the manifest records.
  std::optional<ShardHeaderBytes> read_header(const std::string& commit,
                                              const HeaderManifest::Shard& shard) const;
  void write_header(const std::string& commit, const ShardHeaderBytes& shard) const;

 private:
  std::filesystem::path headers_dir(const std::string& commit) const;
  std::filesystem::path m_root;
};

/// "models--org--name" for "org/name".
std::string repo_cache_folder(const std::string& repo);

/// True when a path from a server (a weight-map value, a sibling name) is safe to join under a
/// folder: relative, no "..", no empty or "." segments, no backslash.
bool safe_repo_path(std::string_view path);

/// Writes `content` to `target` through a temp file in the same folder and a rename, creating the
/// folders. Throws ConfigError when it cannot.
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

}  // namespace trace
