#include "trace/io/model_source.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "trace/error.hpp"
#include "trace/model/catalog.hpp"

namespace trace {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t k_max_config_bytes = 64ULL << 20;

bool valid_repo_part(std::string_view part) {
  if (part.empty() || part.size() > 96 || part == "." || part == "..") return false;
  for (const char c : part) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> read_ref(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  std::string text = read_text_file(path.string());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  // The ref names a folder under snapshots/; anything but one plain name (a commit hash) could
  // point outside the repo's folder.
  if (!valid_repo_part(text)) {
    throw ConfigError(fmt::format(
        "the Hugging Face cache ref {} does not hold a commit hash; delete it and download the "
        "model again",
        path.string()));
  }
  return text;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) throw ConfigError(fmt::format("cannot read {}: {}", path, error.message()));
  if (size > k_max_config_bytes) {
    throw ConfigError(fmt::format("{} is {} bytes; a config.json over 64 MiB is refused", path, size));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ConfigError(fmt::format("cannot open {}", path));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
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

LoadedConfig load_model_config(std::string_view spec, const HubEnvironment& env) {
  if (spec.empty()) throw ConfigError("no model given; pass a config.json, a folder or a repo id");
  const fs::path path{std::string(spec)};
  std::error_code error;
  if (fs::is_directory(path, error)) {
    const fs::path config = path / "config.json";
    if (!fs::is_regular_file(config, error)) {
      throw ConfigError(fmt::format("folder {} has no config.json", path.string()));
    }
    return {std::string(spec), config.string(), read_text_file(config.string()),
            sibling_quant_config(config)};
  }
  if (fs::is_regular_file(path, error)) {
    // Only a file named config.json sits in a checkpoint folder whose siblings describe it.
    return {std::string(spec), path.string(), read_text_file(path.string()),
            path.filename() == "config.json" ? sibling_quant_config(path) : std::string()};
  }

  const std::optional<RepoId> repo = parse_repo_id(spec);
  if (!repo) {
    throw ConfigError(fmt::format(
        "'{}' is neither an existing file or folder nor a Hugging Face repo id (org/name)", spec));
  }
  std::vector<std::string> looked;
  if (repo->repo.find('/') != std::string::npos) {
    const std::size_t slash = repo->repo.find('/');
    const std::string folder =
        repo->repo.substr(0, slash) + "--" + repo->repo.substr(slash + 1);
    const fs::path root = fs::path(hub_cache_dir(env)) / ("models--" + folder);
    std::string commit = repo->revision;
    if (const std::optional<std::string> ref = read_ref(root / "refs" / repo->revision)) {
      commit = *ref;
    }
    const fs::path config = root / "snapshots" / commit / "config.json";
    if (fs::is_regular_file(config, error)) {
      return {std::string(spec), fmt::format("Hugging Face cache ({})", config.string()),
              read_text_file(config.string()), sibling_quant_config(config)};
    }
    looked.push_back(fmt::format("the Hugging Face cache ({})", config.string()));
  }
  if (repo->revision == "main") {
    if (const std::optional<CatalogEntry> entry = find_catalog_model(repo->repo)) {
      return {entry->repo_id, "bundled catalog (data/models)", std::string(entry->config_text), {}};
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
  throw ConfigError(fmt::format(
      "model '{}' not found; looked in {}. Download it (huggingface-cli download {} "
      "config.json) or pass a path to its config.json",
      spec, places, repo->repo));
}

}  // namespace trace
