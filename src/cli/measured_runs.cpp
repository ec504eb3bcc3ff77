#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "commands.hpp"
#include "trace/cli/run.hpp"
#include "trace/cost/throughput.hpp"
#include "trace/error.hpp"
#include "trace/hardware/gpu_catalog.hpp"
#include "trace/io/model_source.hpp"
#include "trace/model/catalog.hpp"
#include "trace/render/render.hpp"
#include "trace/text_match.hpp"
#include "trace/validate/validation.hpp"

namespace trace::cli {

namespace {

// `trace validate` / `trace throughput`: the --configs folders, default hf-configs/ beside the
// CSV.
std::vector<std::string> config_folders(std::vector<std::string> given, const std::string& csv) {
  if (given.empty())
    given.push_back((std::filesystem::path(csv).parent_path() / "hf-configs").string());
  return given;
}

// The first of `names` (plain file names: no separators, no "..") found in any of `folders`, in
// folder order.
std::optional<std::string> config_in_folders(const std::vector<std::string>& folders,
                                             const std::vector<std::string>& names) {
  for (const std::string& dir : folders) {
    for (const std::string& name : names) {
      if (name.find("..") != std::string::npos || name.find('/') != std::string::npos) continue;
      const std::filesystem::path path = std::filesystem::path(dir) / name;
      std::error_code error;
      if (std::filesystem::is_regular_file(path, error)) return read_text_file(path.string());
    }
  }
  return std::nullopt;
}

// A row's config in the --configs folders (its config_file, its repo id's spellings), else the
// bundled catalog's: what `trace validate` and `trace throughput` both look for first.
std::optional<std::string> folder_or_catalog_config(const std::vector<std::string>& folders,
                                                    const MeasuredRow& row) {
  if (std::optional<std::string> text = config_in_folders(folders, config_file_candidates(row))) {
    return text;
  }
  if (const std::optional<CatalogEntry> entry = find_catalog_model(repo_id_of(row.model_id))) {
    return std::string(entry->config_text);
  }
  return std::nullopt;
}

}  // namespace

int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "Run every row of a measured-runs CSV (the columns of measured.csv) through the "
      "estimator and print the scoreboard (docs/validation.md).",
      "trace validate"};
  std::string csv;
  std::vector<std::string> configs;
  bool json = false;
  bool markdown = false;
  app.add_option("file", csv, "CSV of measured runs ('-': standard input)")->required();
  app.add_option("--configs", configs,
                 "folder of configs (repeatable): a row's config_file, else <org>--<name>.json / "
                 "<org>__<name>.json for its model_id; default: hf-configs/ beside the CSV. The "
                 "bundled catalog is searched last");
  app.add_flag("--json", json, "print the scoreboard as one JSON object");
  app.add_flag("--markdown", markdown, "print the scoreboard and every row as Markdown");
  ScoreTargets targets;
  const auto fraction = CLI::Range(0.0, 1.0e6);
  app.add_option("--min-recall", targets.min_recall,
                 "exit 1 when the did-not-fit recall is below this fraction")
      ->check(fraction);
  app.add_option("--max-false-reject", targets.max_false_reject,
                 "exit 1 when the false \"does not fit\" share is above this fraction")
      ->check(fraction);
  app.add_option("--max-median-error", targets.max_median_error,
                 "exit 1 when the median |relative error| is above this fraction")
      ->check(fraction);
  app.add_option("--max-p90-error", targets.max_p90_error,
                 "exit 1 when the 90th-percentile |relative error| is above this fraction")
      ->check(fraction);
  // The scoreboard's own assumptions, overridable as the plan's are (docs/validation.md,
  // "Sensitivity"): the verdict's headroom, the CUDA context it reserves, and the caching
  // allocator's reserve a max_memory_reserved row is read through.
  ValidationAssumptions assumptions;
  app.add_option("--headroom", assumptions.memory.headroom_fraction,
                 "share of usable card memory the verdict keeps free for fragmentation")
      ->capture_default_str();
  app.add_option_function<std::int64_t>(
         "--cuda-context-mib",
         [&assumptions](std::int64_t mib) { assumptions.memory.cuda_context_bytes = mib * k_mib; },
         "per-process CUDA context the verdict reserves, MiB (default 512)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  app.add_option("--reserved-over-allocated", assumptions.reserved_over_allocated,
                 "what max_memory_reserved reads over the held peak (the caching allocator's "
                 "reserve), for rows measured with it")
      ->check(CLI::Range(1.0, 4.0))
      ->capture_default_str();
  if (parse_command_line(app, args, out, err)) return k_exit_ok;
  validate_assumptions(assumptions.memory);
  const std::vector<MeasuredRow> rows = parse_measured_csv(read_text_file(csv));
  configs = config_folders(configs, csv);
  const ConfigLoader loader = [&](const MeasuredRow& row) -> std::optional<std::string> {
    if (std::optional<std::string> text = folder_or_catalog_config(configs, row)) return text;
    const std::string repo = repo_id_of(row.model_id);
    // A re-upload under another organisation: the same model name in any folder (sorted, so
    // the choice does not depend on the directory order).
    const std::string mirrored = mirrored_model_name(repo);
    if (mirrored.empty()) return std::nullopt;
    for (const std::string& dir : configs) {
      std::vector<std::string> matches;
      std::error_code error;
      for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        const std::string file = entry.path().filename().string();
        const std::string lower = to_lower(file);
        for (const char* separator : {"--", "__"}) {
          for (const char* suffix : {".json", ".reconstructed.json"}) {
            if (lower.ends_with(std::string(separator) + mirrored + suffix))
              matches.push_back(file);
          }
        }
      }
      std::sort(matches.begin(), matches.end());
      if (!matches.empty()) {
        return read_text_file((std::filesystem::path(dir) / matches.front()).string());
      }
    }
    return std::nullopt;
  };
  const Scoreboard board = validate_rows(rows, loader, assumptions);
  if (json) {
    out << render_scoreboard_json(board);
  } else if (markdown) {
    out << render_scoreboard_markdown(board);
  } else {
    out << fmt::format("{} rows, {} planned\n", board.rows, board.planned);
    out << fmt::format(
        "did-not-fit recall      {}/{} ({:.1f}%)\n", board.oom_flagged, board.oom_rows,
        board.oom_rows
            ? 100.0 * static_cast<double>(board.oom_flagged) / static_cast<double>(board.oom_rows)
            : 0.0);
    out << fmt::format(
        "false \"does not fit\"   {}/{} ({:.1f}%)\n", board.fit_rejected, board.fit_rows,
        board.fit_rows
            ? 100.0 * static_cast<double>(board.fit_rejected) / static_cast<double>(board.fit_rows)
            : 0.0);
    out << fmt::format("|error| median {:.1f}%, p90 {:.1f}% over {} rows with a measured peak\n",
                       100 * board.median_abs_rel_error, 100 * board.p90_abs_rel_error,
                       board.error_rows);
    for (const Scoreboard::Task& task : board.tasks) {
      out << fmt::format(
          "  {:<16} rows {:>3}  planned {:>3}  OOM flagged {:>2}/{:<2}  false reject "
          "{:>2}/{:<3}  median {:5.1f}%  p90 {:5.1f}%\n",
          task.task, task.rows, task.planned, task.oom_flagged, task.oom_rows, task.fit_rejected,
          task.fit_rows, 100 * task.median_abs_rel_error, 100 * task.p90_abs_rel_error);
    }
    if (board.boundary_rows > 0) {
      out << fmt::format(
          "longest sequence on a VRAM tier: |error| median {:.1f}% over {} "
          "boundary rows\n",
          100 * board.boundary_median_abs_error, board.boundary_rows);
    }
  }
  const std::vector<std::string> missed = missed_targets(board, targets);
  for (const std::string& line : missed) err << "trace validate: target missed: " << line << "\n";
  return missed.empty() ? k_exit_ok : k_exit_does_not_fit;
}

int throughput_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "Set every row of a measured-throughput CSV (the columns of throughput.csv) beside "
      "trace's roofline bound: measured / bound per row and per kind (docs/cost.md). Exit 1 when a "
      "row is measured above its bound.",
      "trace throughput"};
  std::string csv;
  std::vector<std::string> configs;
  bool json = false;
  bool markdown = false;
  app.add_option("file", csv, "CSV of measured throughput runs ('-': standard input)")->required();
  app.add_option("--configs", configs,
                 "folder of configs (repeatable): <org>--<name>.json / <org>__<name>.json (and "
                 ".reconstructed.json) for a row's model; default: hf-configs/ beside the CSV. The "
                 "bundled catalog is searched last");
  app.add_flag("--json", json, "print every row and the summary as one JSON object");
  app.add_flag("--markdown", markdown, "print the summary and every row as Markdown");
  if (parse_command_line(app, args, out, err)) return k_exit_ok;
  const std::vector<ThroughputRow> rows = parse_throughput_csv(read_text_file(csv));
  configs = config_folders(configs, csv);
  const ThroughputConfigLoader loader = [&](const std::string& repo) -> std::optional<std::string> {
    MeasuredRow lookup;  // config_file_candidates' spellings of a repo id
    lookup.model_id = repo;
    return folder_or_catalog_config(configs, lookup);
  };
  const ThroughputComparison comparison = compare_throughput(rows, loader, builtin_gpu_catalog());
  if (json) {
    out << render_throughput_json(comparison);
  } else if (markdown) {
    out << render_throughput_markdown(comparison);
  } else {
    out << render_throughput_table(comparison);
  }
  if (comparison.above_bound > 0) {
    // A measurement above an upper bound is a bug in the bound or in a row's reading: CI fails.
    err << fmt::format("trace throughput: {} row(s) measured above the bound\n",
                       comparison.above_bound);
    return k_exit_does_not_fit;
  }
  return k_exit_ok;
}

}  // namespace trace::cli
