#include "trace/io/model_source.hpp"

#include <array>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>

#include "trace/error.hpp"
#include "trace/text_match.hpp"
#include "trace/io/hub_client.hpp"
#include "trace/io/hf_cache.hpp"
#include "trace/io/hub_fetch.hpp"
#include "trace/model/catalog.hpp"

namespace trace {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t k_max_config_bytes = 64ULL << 20;

// An org or name of a repo id (the Hub allows up to 96 characters).
bool valid_repo_part(std::string_view part) { return is_plain_name(part, 96); }

}  // namespace

std::string read_text_file(const std::string& path) {
  const auto too_large = [&](std::uintmax_t size) {
    return ConfigError(fmt::format("{} is {} bytes; a file over 64 MiB is refused", path, size));
  };
  if (path != "-") {
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (error) throw ConfigError(fmt::format("cannot read {}: {}", path, error.message()));
    if (fs::is_directory(status)) throw ConfigError(fmt::format("cannot read {}: a folder", path));
    if (fs::is_regular_file(status)) {
      const std::uintmax_t size = fs::file_size(path, error);
      if (error) throw ConfigError(fmt::format("cannot read {}: {}", path, error.message()));
      if (size > k_max_config_bytes) throw too_large(size);
    }
  }
  // A pipe, a device or standard input ("-") has no size to ask for: read in blocks and stop
  // past the limit.
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw ConfigError(fmt::format("cannot open {}", path));
    in = &file;
  }
  std::string text;
  std::array<char, 1 << 16> block{};
  while (*in) {
    in->read(block.data(), static_cast<std::streamsize>(block.size()));
    text.append(block.data(), static_cast<std::size_t>(in->gcount()));
    if (text.size() > k_max_config_bytes) throw too_large(text.size());
  }
  if (in->bad()) throw ConfigError(fmt::format("cannot read {}", path));
  return text;
}

void write_text_file(const std::string& path, std::string_view text) {
  const std::string temp = path + ".trace-tmp";
  {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    if (!file) throw ConfigError(fmt::format("cannot write {}", path));
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!file.flush()) throw ConfigError(fmt::format("cannot write {}", path));
  }
  std::error_code error;
  fs::rename(temp, path, error);
  if (error) {
    fs::remove(temp, error);
    throw ConfigError(fmt::format("cannot write {}: {}", path, error.message()));
  }
}

std::optional<RepoId> parse_repo_id(std::string_view spec) {
  RepoId id;
  id.revision = "main";
  const std::size_t at = spec.find('@');
  if (at != std::string_view::npos) {
    id.revision = std::string(spec.substr(at + 1));
    spec = spec.substr(0, at);
    if (id.revision.empty() || id.revision.find('/') == 0 || id.revision.find("..") != std::string::npos) {
      return std::nullopt;
    }
  }
  const std::size_t slash = spec.find('/');
  if (slash == std::string_view::npos) {
    if (!valid_repo_part(spec)) return std::nullopt;
    id.repo = std::string(spec);  // a bare name ("gpt2"): catalog only
    return id;
  }
  if (spec.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  if (!valid_repo_part(spec.substr(0, slash)) || !valid_repo_part(spec.substr(slash + 1))) {
    return std::nullopt;
  }
  id.repo = std::string(spec);
  return id;
}

std::string hub_cache_dir(const HubEnvironment& env) {
  if (env.hf_hub_cache && !env.hf_hub_cache->empty()) return *env.hf_hub_cache;
  if (env.hf_home && !env.hf_home->empty()) return (fs::path(*env.hf_home) / "hub").string();
  const std::string home = env.home.value_or("");
  return (fs::path(home.empty() ? "." : home) / ".cache" / "huggingface" / "hub").string();
}

namespace {

// ModelOpt exports describe their quantization in hf_quant_config.json beside config.json.
std::string sibling_quant_config(const fs::path& config) {
  std::error_code error;
  const fs::path quant = config.parent_path() / "hf_quant_config.json";
  return fs::is_regular_file(quant, error) ? read_text_file(quant.string()) : std::string();
}

}  // namespace

bool env_flag_set(const std::optional<std::string>& value) {
  if (!value) return false;
  std::string upper = *value;
  for (char& c : upper) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  return upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE";
}

namespace {

LoadedConfig from_hub_files(std::string_view spec, HubModelFiles files, const std::string& origin) {
  LoadedConfig loaded;
  loaded.model_id = std::string(spec);
  loaded.source = fmt::format("{} ({})", origin, files.config_path);
  loaded.text = std::move(files.config_text);
  loaded.hf_quant_config_text = std::move(files.hf_quant_config_text);
  loaded.commit = std::move(files.commit);
  loaded.checkpoint = std::move(files.checkpoint);
  return loaded;
}

std::string from_hub_origin(const HubModelFiles& files, const std::string& endpoint) {
  return files.requests == 0 ? std::string("Hugging Face cache")
                             : fmt::format("{} at commit {}", endpoint, files.commit);
}

}  // namespace

LoadedConfig load_model_config(std::string_view spec, const HubEnvironment& env) {
  return load_model_config(spec, env, ModelLookupOptions{});
}

LoadedConfig load_model_config(std::string_view spec, const HubEnvironment& env,
                               const ModelLookupOptions& options) {
  if (spec.empty()) throw ConfigError("no model given; pass a config.json, a folder or a repo id");
  if (spec == "-") {  // a config.json piped in (curl ... | trace - --plan)
    LoadedConfig loaded;
    loaded.model_id = "stdin";
    loaded.source = "standard input";
    loaded.text = read_text_file("-");
    return loaded;
  }
  const fs::path path{std::string(spec)};
  std::error_code error;
  if (fs::is_directory(path, error)) {
    const fs::path config = path / "config.json";
    if (!fs::is_regular_file(config, error)) {
      throw ConfigError(fmt::format("folder {} has no config.json", path.string()));
    }
    LoadedConfig loaded;
    loaded.model_id = std::string(spec);
    loaded.source = config.string();
    loaded.text = read_text_file(config.string());
    loaded.hf_quant_config_text = sibling_quant_config(config);
    return loaded;
  }
  if (fs::is_regular_file(path, error)) {
    // Only a file named config.json sits in a checkpoint folder whose siblings describe it.
    LoadedConfig loaded;
    loaded.model_id = std::string(spec);
    loaded.source = path.string();
    loaded.text = read_text_file(path.string());
    if (path.filename() == "config.json") loaded.hf_quant_config_text = sibling_quant_config(path);
    return loaded;
  }

  const std::optional<RepoId> repo = parse_repo_id(spec);
  if (!repo) {
    throw ConfigError(fmt::format(
        "'{}' is neither an existing file or folder nor a Hugging Face repo id (org/name)", spec));
  }
  const bool has_org = repo->repo.find('/') != std::string::npos;
  const bool offline = options.offline || env_flag_set(env.hf_hub_offline);
  const bool network = env.network && !offline && has_org;
  const bool endpoint_set = env.hf_endpoint && !env.hf_endpoint->empty();
  const std::string endpoint = hub_endpoint(env);
  // HF_ENDPOINT or --hub: the Hub (through the cache) before the bundled catalog.
  if (network && (options.hub_first || endpoint_set)) {
    HubModelFiles files = fetch_hub_model(*repo, env, options.progress);
    const std::string origin = from_hub_origin(files, endpoint);
    return from_hub_files(spec, std::move(files), origin);
  }
  std::vector<std::string> looked;
  if (has_org) {
    const std::string hub = hub_cache_dir(env);
    if (std::optional<HubModelFiles> cached = read_cached_hub_model(*repo, hub, false)) {
      return from_hub_files(spec, std::move(*cached), "Hugging Face cache");
    }
    const HfRepoCache cache(hub, repo->repo);
    const std::string commit = cache.commit_of(repo->revision).value_or(repo->revision);
    looked.push_back(fmt::format("the Hugging Face cache ({})",
                                 cache.snapshot_path(commit, "config.json").string()));
  }
  if (repo->revision == "main") {
    if (const std::optional<CatalogEntry> entry = find_catalog_model(repo->repo)) {
      LoadedConfig loaded;
      loaded.model_id = entry->repo_id;
      loaded.source = "bundled catalog (data/models)";
      loaded.text = std::string(entry->config_text);
      return loaded;
    }
  }
  std::string bundled;
  for (const CatalogEntry& entry : catalog_entries()) {
    bundled += (bundled.empty() ? "" : ", ") + entry.repo_id;
  }
  looked.push_back(fmt::format("the bundled catalog ({})", bundled));
  if (path.has_parent_path() || spec.find(".json") != std::string_view::npos) {
    looked.insert(looked.begin(), fmt::format("a local path '{}' (does not exist)", spec));
  }
  std::string places;
  for (std::size_t i = 0; i < looked.size(); ++i) {
    places += (i ? "; " : "") + looked[i];
  }
  if (network) {
    try {
      HubModelFiles files = fetch_hub_model(*repo, env, options.progress);
      const std::string origin = from_hub_origin(files, endpoint);
      return from_hub_files(spec, std::move(files), origin);
    } catch (const HubUnreachableError& unreachable) {
      // Not in the cache, not bundled, and no network: a network failure (exit 3).
      throw HubUnreachableError(fmt::format("model '{}' is not in {}, and {}", spec, places,
                                            unreachable.what()));
    } catch (const HubNotFoundError& missing) {
      throw HubNotFoundError(missing.missing(),
                             fmt::format("model '{}' not found: not in {}; and on the Hub, {}",
                                         spec, places, missing.what()));
    }
  }
  throw ConfigError(fmt::format(
      "model '{}' not found; looked in {}{}. Download it (huggingface-cli download {} "
      "config.json) or pass a path to its config.json",
      spec, places,
      offline ? " (offline: HF_HUB_OFFLINE or --offline, the Hub was not asked)" : "", repo->repo));
}

}  // namespace trace
