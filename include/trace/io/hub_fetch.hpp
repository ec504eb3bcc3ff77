#pragma once
/// A model's metadata from the Hub, through the Hugging Face cache: config.json,
/// hf_quant_config.json when the repo has one, the safetensors index, and every shard's header.
/// A run whose files and headers are all cached makes no request at all. docs/hub.md gives the
/// request plan.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "trace/io/checkpoint_headers.hpp"
#include "trace/io/model_source.hpp"

namespace trace {

struct HubModelFiles {
  std::string commit;
  std::string config_text;
  std::string hf_quant_config_text;             ///< empty when the repo has none
  std::optional<CheckpointHeaders> checkpoint;  ///< nullopt when the headers are not known
  std::string config_path;                      ///< config.json in the cache (may not exist if the cache is read-only)
  std::uint64_t requests = 0;                   ///< HTTP requests made (0: served from the cache)
  std::uint64_t bytes = 0;                      ///< response bytes received
};

/// The model from the cache alone at `revision` (refs/{revision}, or the commit itself).
/// With `require_headers`, only a complete fetch by trace counts (config, optional files and
/// every header); without it, config.json is enough (a huggingface-cli download). nullopt on a
/// miss.
std::optional<HubModelFiles> read_cached_hub_model(const RepoId& repo, const std::string& hub_cache,
                                                   bool require_headers);

/// The model from the cache when complete, else from the Hub (writing the cache). Throws
/// HubNotFoundError (exit 2), HubAccessError / HubUnreachableError / FetchError (exit 3).
HubModelFiles fetch_hub_model(const RepoId& repo, const HubEnvironment& env,
                              const std::function<void(const HubProgress&)>& progress = {});

}  // namespace trace
