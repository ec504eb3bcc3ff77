#pragma once
/// Finds a model's config.json: a file, a folder holding one, or a Hugging Face repo id looked up
/// in the local HF cache and then in the bundled catalog. The only file-system reads of a plan.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trace {

/// The environment values the lookup honours, read once by the CLI.
struct HubEnvironment {
  std::optional<std::string> hf_hub_cache;  ///< HF_HUB_CACHE
  std::optional<std::string> hf_home;       ///< HF_HOME
  std::optional<std::string> home;          ///< HOME
};

struct RepoId {
  std::string repo;      ///< "org/name"
  std::string revision;  ///< "main" unless "@rev" was given
};

struct LoadedConfig {
  std::string model_id;  ///< the repo id or the path as given
  std::string source;    ///< human description of where the text came from
  std::string text;
  std::string hf_quant_config_text;  ///< hf_quant_config.json beside config.json, or empty
};

/// Parses "org/name" or "org/name@revision"; nullopt when `spec` is not of that form.
std::optional<RepoId> parse_repo_id(std::string_view spec);

/// The hub cache folder: HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
std::string hub_cache_dir(const HubEnvironment& env);

/// Loads the config text. Throws ConfigError (exit 2) naming every place it looked.
LoadedConfig load_model_config(std::string_view spec, const HubEnvironment& env);

/// Reads a whole text file (at most 64 MiB). Throws ConfigError when it cannot.
std::string read_text_file(const std::string& path);

}  // namespace trace
