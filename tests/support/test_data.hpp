#pragma once
// Paths and loaders for the test fixtures (tests may touch files; the core may not).
#include <string>

#include "trace/error.hpp"
#include "trace/io/model_source.hpp"
#include "trace/model/catalog.hpp"
#include "trace/model/model_config.hpp"

namespace trace::test {

/// tests/data, absolute (set by CMake).
inline std::string data_dir() { return TRACE_TEST_DATA_DIR; }
/// tests/data/configs/<name>.
inline std::string config_path(const std::string& name) { return data_dir() + "/configs/" + name; }
/// The text of tests/data/configs/<name>.
inline std::string config_text(const std::string& name) { return read_text_file(config_path(name)); }
/// tests/data/configs/<name>, parsed.
inline ModelDescription fixture(const std::string& name) {
  return parse_model_config(config_text(name));
}
/// The text of a bundled catalog model.
inline std::string catalog_text(const std::string& repo_id) {
  const auto entry = find_catalog_model(repo_id);
  return entry ? std::string(entry->config_text) : std::string();
}

/// The ConfigError message parsing `json_text` raises, or "(no error)".
inline std::string config_error(const std::string& json_text) {
  try {
    (void)parse_model_config(json_text);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace trace::test
