#include "trace/io/hub_fetch.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

#include "trace/error.hpp"
#include "trace/io/hf_cache.hpp"
#include "trace/io/hub_client.hpp"

namespace trace {

namespace {

constexpr const char* k_config_file = "config.json";
constexpr const char* k_quant_config_file = "hf_quant_config.json";
constexpr const char* k_index_file = "model.safetensors.index.json";
constexpr const char* k_single_file = "model.safetensors";

std::optional<HubModelFiles> read_cached_at(const HfRepoCache& cache, const std::string& commit,
                                            bool require_headers) {
  HubModelFiles files;
  files.commit = commit;
  files.config_path = cache.snapshot_path(commit, k_config_file).string();
  std::optional<std::string> config = cache.read_file(commit, k_config_file);
  if (!config) return std::nullopt;
  files.config_text = std::move(*config);
  const std::optional<HeaderManifest> manifest = cache.read_manifest(commit);
  if (!manifest) {
    if (require_headers) return std::nullopt;
    files.hf_quant_config_text = cache.read_file(commit, k_quant_config_file).value_or("");
    return files;
  }
  if (manifest->has_quant_config) {
    std::optional<std::string> quant = cache.read_file(commit, k_quant_config_file);
    if (!quant) return std::nullopt;
    files.hf_quant_config_text = std::move(*quant);
  }
  CheckpointHeaders checkpoint;
  if (!manifest->index_file.empty()) {
    std::optional<std::string> index = cache.read_file(commit, manifest->index_file);
    if (!index) return std::nullopt;
    checkpoint.index_file = manifest->index_file;
    checkpoint.index_text = std::move(*index);
  }
  for (const HeaderManifest::Shard& shard : manifest->shards) {
    std::optional<ShardHeaderBytes> header = cache.read_header(commit, shard);
    if (!header) return std::nullopt;
    checkpoint.shards.push_back(std::move(*header));
  }
  if (!checkpoint.shards.empty() || !checkpoint.index_file.empty()) {
    files.checkpoint = std::move(checkpoint);
  }
  return files;
}

// The shard files an index names, sorted, each checked to be a safe relative path.
std::vector<std::string> shards_of_index(const std::string& repo, const std::string& text) {
  const nlohmann::json index = nlohmann::json::parse(text, nullptr, false);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    throw FetchError(fmt::format("{} of {} is malformed: no \"weight_map\" object", k_index_file, repo));
  }
  std::set<std::string> shards;
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    if (!file.is_string() || !safe_repo_path(file.get<std::string>())) {
      throw FetchError(fmt::format("{} of {} maps '{}' to a bad file name", k_index_file, repo, tensor));
    }
    shards.insert(file.get<std::string>());
  }
  return {shards.begin(), shards.end()};
}

// Cache writes are best effort: a read-only cache still gives a plan.
template <class Write>
void try_cache(Write&& write) {
  try {
    write();
  } catch (const Error&) {
  } catch (const std::filesystem::filesystem_error&) {
  }
}

}  // namespace

std::optional<HubModelFiles> read_cached_hub_model(const RepoId& repo, const std::string& hub_cache,
                                                   bool require_headers) {
  const HfRepoCache cache(hub_cache, repo.repo);
  const std::string commit = cache.commit_of(repo.revision).value_or(repo.revision);
  return read_cached_at(cache, commit, require_headers);
}

HubModelFiles fetch_hub_model(const RepoId& repo, const HubEnvironment& env,
                              const std::function<void(const HubProgress&)>& progress) {
  const HfRepoCache cache(hub_cache_dir(env), repo.repo);
  if (const std::optional<std::string> commit = cache.commit_of(repo.revision)) {
    if (std::optional<HubModelFiles> cached = read_cached_at(cache, *commit, true)) return *cached;
  }
  HubClient client(hub_connection(env));
  HubProgress state;
  state.repo = repo.repo;
  const auto report = [&](std::size_t done) {
    state.files_done += done;
    state.bytes = client.bytes_received();
    if (progress) progress(state);
  };

  const RevisionInfo info = client.resolve_revision(repo.repo, repo.revision);
  try_cache([&] { cache.write_ref(repo.revision, info.commit); });
  if (std::optional<HubModelFiles> cached = read_cached_at(cache, info.commit, true)) {
    cached->requests = client.requests();
    cached->bytes = client.bytes_received();
    return *cached;
  }
  const auto listed = [&](const char* file) {
    return info.files.empty() ||
           std::find(info.files.begin(), info.files.end(), file) != info.files.end();
  };
  if (!info.files.empty() && !listed(k_config_file)) {
    throw HubNotFoundError(HubNotFoundError::Missing::file,
                           fmt::format("{} has no config.json at revision '{}' (commit {})",
                                       repo.repo, repo.revision, info.commit));
  }
  // An optional file is asked for only when the listing names it (or there is no listing) and no
  // earlier run recorded it missing at this commit; a file found missing is recorded, as
  // huggingface_hub does, in .no_exist/{commit}/.
  std::vector<std::string> small_files = {k_config_file};
  for (const char* optional : {k_quant_config_file, k_index_file}) {
    if (cache.known_missing(info.commit, optional)) continue;
    if (listed(optional)) {
      small_files.emplace_back(optional);
    } else {
      try_cache([&] { cache.mark_missing(info.commit, optional); });
    }
  }
  state.files_total = small_files.size();

  HubModelFiles files;
  files.commit = info.commit;
  files.config_path = cache.snapshot_path(info.commit, k_config_file).string();
  HeaderManifest manifest;
  manifest.commit = info.commit;
  std::string index_text;
  for (const std::string& name : small_files) {
    std::optional<std::string> content = cache.read_file(info.commit, name);
    if (!content) {
      try {
        HubFile file = client.download(repo.repo, info.commit, name);
        try_cache([&] { cache.write_file(info.commit, name, file.content, file.etag); });
        content = std::move(file.content);
      } catch (const HubNotFoundError& error) {
        // An optional file the listing did not give (no siblings in the answer) is just absent.
        if (name == k_config_file || !info.files.empty()) throw;
        try_cache([&] { cache.mark_missing(info.commit, name); });
      }
    }
    report(1);
    if (!content) continue;
    if (name == k_config_file) files.config_text = std::move(*content);
    if (name == k_quant_config_file) {
      files.hf_quant_config_text = std::move(*content);
      manifest.has_quant_config = true;
    }
    if (name == k_index_file) {
      index_text = std::move(*content);
      manifest.index_file = k_index_file;
    }
  }

  std::vector<std::string> shards;
  if (!index_text.empty()) {
    shards = shards_of_index(repo.repo, index_text);
  } else if (!info.files.empty() && listed(k_single_file)) {
    shards = {k_single_file};
  }
  state.files_total += shards.size();
  if (!shards.empty()) {
    CheckpointHeaders checkpoint;
    checkpoint.index_file = manifest.index_file;
    checkpoint.index_text = index_text;
    checkpoint.shards = client.read_shard_headers(
        repo.repo, info.commit, shards, [&](const ShardHeaderBytes& shard) {
          try_cache([&] { cache.write_header(info.commit, shard); });
          report(1);
        });
    for (const ShardHeaderBytes& shard : checkpoint.shards) {
      manifest.shards.push_back({shard.file, shard.file_size, shard.bytes.size() - 8});
    }
    files.checkpoint = std::move(checkpoint);
  }
  try_cache([&] { cache.write_manifest(manifest); });
  files.requests = client.requests();
  files.bytes = client.bytes_received();
  state.finished = true;
  report(0);
  return files;
}

}  // namespace trace
