#pragma once
/// Files from data/ compiled into the binary (see cmake/EmbedData.cmake), so the executable
/// works from any folder and offline.
#include <span>
#include <string_view>

namespace trace {

struct EmbeddedFile {
  std::string_view path;  ///< relative to the repository root, e.g. "data/gpus.json"
  std::string_view text;
};

/// Every bundled data file: data/gpus.json and data/models/*.json.
std::span<const EmbeddedFile> embedded_data_files();

}  // namespace trace
