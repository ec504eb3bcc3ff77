#pragma once
// Fixture repos for the Hub tests (real configs from the bundled catalog, synthetic shards with
// those models' real tensor inventories) and an environment pointing trace at a FixtureHub with
// tiny retry delays.
#include <chrono>
#include <string>

#include "fixture_hub.hpp"
#include "synthetic_safetensors.hpp"
#include "temp_dir.hpp"
#include "trace/io/model_source.hpp"
#include "trace/model/catalog.hpp"

namespace trace::test {

inline constexpr const char* k_fixture_commit = "1f8b0c5e2a7d4e6f9a0b1c2d3e4f5a6b7c8d9e0f";
inline constexpr const char* k_fixture_other_commit = "aa11bb22cc33dd44ee55ff6677889900aabbccdd";
inline constexpr const char* k_fixture_token = "hf_fixtureSECRETtoken123";

/// Production behaviour with millisecond delays: retries stay, waiting goes.
inline HubNetworkSettings fast_hub_settings() {
  HubNetworkSettings settings;
  settings.connect_timeout = std::chrono::milliseconds(1000);
  settings.request_timeout = std::chrono::milliseconds(3000);
  settings.backoff_initial = std::chrono::milliseconds(1);
  settings.backoff_max = std::chrono::milliseconds(4);
  settings.retry_after_unit = std::chrono::milliseconds(1);
  settings.retry_after_max = std::chrono::milliseconds(1000);
  return settings;
}

/// HF_ENDPOINT at the fixture, every cache and token path inside `dir`, no token.
inline HubEnvironment fixture_env(const FixtureHub& hub, const TempDir& dir) {
  HubEnvironment env;
  env.hf_endpoint = hub.endpoint();
  env.hf_hub_cache = dir.at("hf-home/hub");
  env.hf_home = dir.at("hf-home");
  env.home = dir.path().string();
  env.network = true;
  env.network_settings = fast_hub_settings();
  return env;
}

inline std::string catalog_config(const std::string& repo) {
  return std::string(find_catalog_model(repo).value().config_text);
}

inline LlamaShape llama_8b_shape() { return {}; }

inline LlamaShape llama_1b_shape() {
  LlamaShape shape;
  shape.hidden = 2048;
  shape.intermediate = 8192;
  shape.layers = 16;
  shape.kv_heads = 8;
  shape.tied_embeddings = true;
  return shape;
}

/// meta-llama/Llama-3.1-8B's config and inventory in `shards` shards (the real repo has 4).
inline FixtureRepo llama_8b_repo(const std::string& id = "fixture-org/Llama-3.1-8B", int shards = 4) {
  FixtureRepo repo;
  repo.id = id;
  repo.commit = k_fixture_commit;
  add_text_file(repo, "config.json", catalog_config("meta-llama/Llama-3.1-8B"));
  add_text_file(repo, "generation_config.json", "{}");
  add_text_file(repo, "README.md", "# fixture\n");
  add_checkpoint(repo, llama_tensors(llama_8b_shape()), shards);
  return repo;
}

/// meta-llama/Llama-3.2-1B: one model.safetensors, tied embeddings.
inline FixtureRepo llama_1b_repo(const std::string& id = "fixture-org/Llama-3.2-1B") {
  FixtureRepo repo;
  repo.id = id;
  repo.commit = k_fixture_commit;
  add_text_file(repo, "config.json", catalog_config("meta-llama/Llama-3.2-1B"));
  add_checkpoint(repo, llama_tensors(llama_1b_shape()), 1);
  return repo;
}

inline constexpr const char* k_nvfp4_quant_config = R"({
  "producer": {"name": "modelopt", "version": "0.23.0"},
  "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16,
                   "exclude_modules": ["lm_head"]}
})";

/// An NVFP4 (ModelOpt) export of Llama-3.1-8B, as nvidia's *-FP4 repos ship it.
inline FixtureRepo nvfp4_repo(const std::string& id = "fixture-org/Llama-3.1-8B-NVFP4") {
  FixtureRepo repo;
  repo.id = id;
  repo.commit = k_fixture_commit;
  add_text_file(repo, "config.json", catalog_config("meta-llama/Llama-3.1-8B"));
  add_text_file(repo, "hf_quant_config.json", k_nvfp4_quant_config);
  add_checkpoint(repo, llama_nvfp4_tensors(llama_8b_shape()), 2);
  return repo;
}

}  // namespace trace::test
