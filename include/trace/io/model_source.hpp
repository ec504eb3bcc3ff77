#pragma once
/// Finds a model's config.json: a file, a folder holding one, or a Hugging Face repo id looked up
/// in the local HF cache, the bundled catalog and the Hub (docs/hub.md gives the order). The only
/// file-system and network reads of a plan.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/io/checkpoint_headers.hpp"
#include "trace/io/hub_settings.hpp"

namespace trace {

/// The environment values the lookup honours, read once by the CLI (the library never calls
/// getenv).
struct HubEnvironment {
  std::optional<std::string> hf_hub_cache;    ///< HF_HUB_CACHE
  std::optional<std::string> hf_home;         ///< HF_HOME
  std::optional<std::string> home;            ///< HOME
  std::optional<std::string> hf_endpoint;     ///< HF_ENDPOINT (default https://huggingface.co)
  std::optional<std::string> hf_token;        ///< HF_TOKEN
  std::optional<std::string> hf_token_path;   ///< HF_TOKEN_PATH (default $HF_HOME/token)
  std::optional<std::string> hf_hub_offline;  ///< HF_HUB_OFFLINE (1, ON, YES, TRUE: cache only)
  std::optional<std::string> no_proxy;        ///< NO_PROXY / no_proxy, added to the loopback hosts
  /// May reach the Hub at all. main sets it; a default-constructed environment (tests, library
  /// users) never touches the network.
  bool network = false;
  /// stderr is a terminal (isatty), read by main: the progress line is drawn only there.
  bool stderr_is_terminal = false;
  /// Timeouts, retries and caps: not read from the environment; tests shrink the delays.
  HubNetworkSettings network_settings;
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
  std::string commit;                ///< the Hub commit, when read from the Hub or its cache
  /// The safetensors headers, when fetched from the Hub (or cached by an earlier fetch).
  std::optional<CheckpointHeaders> checkpoint;
};

/// Where a Hub fetch stands, for the progress line.
struct HubProgress {
  std::string repo;
  std::size_t files_done = 0;
  std::size_t files_total = 0;
  std::uint64_t bytes = 0;  ///< response bytes received so far
  bool finished = false;
};

/// How a repo id is looked up (the CLI's --offline, --hub and progress line).
struct ModelLookupOptions {
  bool offline = false;    ///< --offline: the cache and the catalog only (as HF_HUB_OFFLINE=1)
  bool hub_first = false;  ///< --hub: the Hub (through the cache) before the catalog
  std::function<void(const HubProgress&)> progress;  ///< called after each file; may be empty
};

/// Parses "org/name" or "org/name@revision"; nullopt when `spec` is not of that form.
std::optional<RepoId> parse_repo_id(std::string_view spec);

/// The hub cache folder: HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
std::string hub_cache_dir(const HubEnvironment& env);

/// Loads the config text. Throws ConfigError (exit 2) naming every place it looked, FetchError
/// (exit 3) when the Hub could not be reached or failed.
LoadedConfig load_model_config(std::string_view spec, const HubEnvironment& env);
LoadedConfig load_model_config(std::string_view spec, const HubEnvironment& env,
                               const ModelLookupOptions& options);

/// True for the values huggingface_hub reads as true: 1, ON, YES, TRUE (any case).
bool env_flag_set(const std::optional<std::string>& value);

/// Reads a whole text file (at most 64 MiB): a regular file, a pipe or device, or standard input
/// for "-". Throws ConfigError when it cannot.
std::string read_text_file(const std::string& path);
/// Writes `text` to `path` (a temp file renamed into place). Throws ConfigError when it cannot.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace trace
