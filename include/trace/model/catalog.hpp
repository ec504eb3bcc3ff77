#pragma once
/// The bundled catalog: real models' config.json files under data/models/, compiled into the
/// binary so `trace <repo id>` works offline. File names are "<org>--<name>.json".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trace {

struct CatalogEntry {
  std::string repo_id;  ///< "meta-llama/Llama-3.1-8B"
  std::string_view config_text;
};

/// Every bundled model, sorted by repo id.
const std::vector<CatalogEntry>& catalog_entries();
/// Case-insensitive lookup by repo id, or by the bare name when exactly one entry has it
/// ("gpt2" -> "openai-community/gpt2").
std::optional<CatalogEntry> find_catalog_model(std::string_view repo_id);

}  // namespace trace
