// Reference check: every row of the shared params.csv whose model_type trace supports must give
// exactly the published logical parameter count (or the accepted alternative). Run by .ci/run
// where ../shared exists:  trace_reference_check ../shared/reference
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "trace/csv.hpp"
#include "trace/error.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/io/model_source.hpp"
#include "trace/model/model_config.hpp"

namespace {

bool is_supported(const std::string& model_type) {
  for (const trace::ArchitectureInfo& info : trace::supported_architectures()) {
    if (info.model_type == model_type) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : "../shared/reference";
  std::vector<std::vector<std::string>> records;
  try {
    records = trace::parse_csv(trace::read_text_file(root + "/params.csv"));
  } catch (const trace::Error& error) {
    std::cerr << "reference check: " << error.what() << "\n";
    return 2;
  }
  if (records.empty()) {
    std::cerr << "reference check: " << root << "/params.csv is empty\n";
    return 2;
  }
  const std::vector<std::string>& header = records.front();
  const auto column = [&](const char* name) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    std::cerr << "reference check: params.csv has no column " << name << "\n";
    std::exit(2);
  };
  const std::size_t file_col = column("file");
  const std::size_t type_col = column("model_type");
  const std::size_t logical_col = column("logical_params");
  const std::size_t alt_col = column("alt_params");
  const std::size_t id_col = column("model_id");
  const std::size_t kind_col = column("kind");
  const std::size_t notes_col = column("notes");
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const std::vector<std::string>& row = records[r];
    if (row.size() < header.size()) continue;
    // "llama4/llama4_text": the outer type is what config.json says.
    const std::string model_type = row[type_col].substr(0, row[type_col].find('/'));
    if (!is_supported(model_type)) {
      ++skipped;
      std::cout << fmt::format("skip  {:<55} model_type {} is outside this release\n", row[id_col],
                               model_type);
      continue;
    }
    const std::int64_t expected = std::stoll(row[logical_col]);
    const std::int64_t alternative = row[alt_col].empty() ? expected : std::stoll(row[alt_col]);
    try {
      const std::string path = root + "/hf-configs/" + row[file_col];
      const std::string text = trace::read_text_file(path);
      // A ModelOpt export's hf_quant_config.json, saved beside as <stem>.hf_quant_config.json.
      const std::string stem = path.substr(0, path.size() - std::string(".json").size());
      std::string quant;
      if (std::filesystem::exists(stem + ".hf_quant_config.json")) {
        quant = trace::read_text_file(stem + ".hf_quant_config.json");
      }
      const trace::ModelDescription model = trace::parse_model_config(text, quant);
      const trace::ParameterCount count = trace::count_parameters(model);
      // Rows whose notes pin the checkpoint ("stored: 24,147 tensors, 19,339,781,632 bytes").
      static const std::regex stored_rx(R"(stored: ([0-9,]+) tensors, ([0-9,]+) bytes)");
      std::smatch stored;
      if (std::regex_search(row[notes_col], stored, stored_rx)) {
        const auto number = [](std::string digits) {
          digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
          return std::stoll(digits);
        };
        const trace::StorageEstimate storage = trace::estimate_storage(model, count);
        const bool same = storage.tensors == number(stored[1]) && storage.bytes == number(stored[2]);
        (same ? passed : failed) += 1;
        std::cout << fmt::format("{}  {:<55} storage {} tensors, {} bytes (row: {} / {})\n",
                                 same ? "ok   " : "FAIL ", row[id_col] + " [stored]",
                                 storage.tensors, storage.bytes, stored[1].str(), stored[2].str());
      }
      const std::int64_t total = count.total;
      // trace counts router correction-bias buffers; the row may use either convention.
      const std::int64_t unbuffered = count.total - count.router_bias_buffers;
      const double relative =
          std::abs(static_cast<double>(total - expected)) / static_cast<double>(expected);
      if (total == expected || total == alternative) {
        ++passed;
        std::cout << fmt::format("ok    {:<55} {}\n", row[id_col], total);
      } else if (count.router_bias_buffers > 0 &&
                 (unbuffered == expected || unbuffered == alternative)) {
        ++passed;
        std::cout << fmt::format(
            "ok    {:<55} {} ({} without the {} router-bias buffer elements, as the row counts)\n",
            row[id_col], total, unbuffered, count.router_bias_buffers);
      } else if (row[kind_col] == "approx" && relative <= 0.02) {
        // kind=approx: the row holds a rounded marketing figure, no exact count exists; accept
        // 2% and print the difference so a reader sees it.
        ++passed;
        std::cout << fmt::format("ok~   {:<55} {} vs published ~{} ({:+.2f}%, row is approx)\n",
                                 row[id_col], total, expected, 100.0 * relative);
      } else {
        ++failed;
        std::cout << fmt::format("FAIL  {:<55} got {} expected {} (delta {:+})\n", row[id_col],
                                 total, expected, total - expected);
      }
    } catch (const trace::Error& error) {
      ++failed;
      std::cout << fmt::format("FAIL  {:<55} {}\n", row[id_col], error.what());
    }
  }
  std::cout << fmt::format("\nreference check: {} rows of supported model types, {} skipped\n",
                           passed + failed, skipped);
  std::cout << fmt::format("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
