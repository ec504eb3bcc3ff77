#include "trace/model/catalog.hpp"

#include <algorithm>

#include "trace/embedded_data.hpp"
#include "trace/text_match.hpp"

namespace trace {

const std::vector<CatalogEntry>& catalog_entries() {
  static const std::vector<CatalogEntry> entries = [] {
    constexpr std::string_view prefix = "data/models/";
    constexpr std::string_view suffix = ".json";
    std::vector<CatalogEntry> list;
    for (const EmbeddedFile& file : embedded_data_files()) {
      if (file.path.substr(0, prefix.size()) != prefix || file.path.size() <= suffix.size() ||
          file.path.substr(file.path.size() - suffix.size()) != suffix) {
        continue;
      }
      const std::string_view stem =
          file.path.substr(prefix.size(), file.path.size() - prefix.size() - suffix.size());
      const std::size_t separator = stem.find("--");
      if (separator == std::string_view::npos) continue;
      std::string repo_id(stem.substr(0, separator));
      repo_id += '/';
      repo_id += stem.substr(separator + 2);
      list.push_back({repo_id, file.text});
    }
    std::sort(list.begin(), list.end(),
              [](const CatalogEntry& a, const CatalogEntry& b) { return a.repo_id < b.repo_id; });
    return list;
  }();
  return entries;
}

std::optional<CatalogEntry> find_catalog_model(std::string_view repo_id) {
  const std::string wanted = to_lower(repo_id);
  std::optional<CatalogEntry> by_name;
  int name_matches = 0;
  for (const CatalogEntry& entry : catalog_entries()) {
    const std::string id = to_lower(entry.repo_id);
    if (id == wanted) return entry;
    if (id.substr(id.find('/') + 1) == wanted) {
      by_name = entry;
      ++name_matches;
    }
  }
  if (wanted.find('/') == std::string::npos && name_matches == 1) return by_name;
  return std::nullopt;
}

}  // namespace trace
