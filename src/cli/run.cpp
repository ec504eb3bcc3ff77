#include "trace/cli/run.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "trace/error.hpp"
#include "trace/hardware/gpu_catalog.hpp"
#include "trace/io/model_source.hpp"
#include "trace/model/catalog.hpp"
#include "trace/model/model_config.hpp"
#include "trace/render/plots.hpp"
#include "trace/render/render.hpp"
#include "trace/report/report.hpp"
#include "trace/version.hpp"

namespace trace::cli {

namespace {

/// An error message as one line: messages quote user input (paths, model_type strings), which
/// may hold newlines or other control characters.
std::string one_line(std::string_view message) {
  std::string line;
  line.reserve(message.size());
  for (const char c : message) {
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
      line += '?';
    } else {
      line += c;
    }
  }
  return line;
}

}  // namespace

int plan_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                 const HubEnvironment& env) {
  CLI::App app{"trace: what a model costs in memory, before you rent a GPU.\n"
               "Reads config.json only (never weights). Exit codes: 0 ok, 1 does not fit "
               "(trace check), 2 bad input, 3 network failure.\n"
               "Other commands: `trace gpus` (the GPU table), `trace models` (bundled catalog), "
               "`trace check MODEL --gpu ID [--mode serve|lora|full]`.",
               "trace"};
  app.set_version_flag("--version", std::string(k_version));
  PlanOptions options;
  add_plan_options(app, options, false);
  app.add_flag("--plan", options.plan, "print the plan (the default action)");
  app.add_option("--mode", options.plan_mode, "print only this mode's memory and fit")
      ->check(CLI::IsMember({"all", "serve", "lora", "qlora", "full"}))
      ->capture_default_str();
  app.add_flag("--graph", options.graph, "also print the full layer graph with shapes");
  app.add_flag("--json", options.json, "print one JSON object (schema trace.plan/1)");
  app.add_option("--format", options.format, "output format")
      ->check(CLI::IsMember({"table", "json", "markdown"}))
      ->capture_default_str();
  if (parse_command_line(app, args, out, err)) return k_exit_ok;
  if (app.get_option("model")->count() == 0) options.model = k_default_model;
  const GpuCatalog gpus = load_catalog(options);
  Report report = build_report(options, env, gpus, err);
  if (options.plan_mode != "all") report.only_mode = options.plan_mode;
  RenderOptions render_options;
  if (options.json || options.format == "json") {
    render_options.format = OutputFormat::json;
  } else if (options.format == "markdown") {
    render_options.format = OutputFormat::markdown;
  }
  if (!options.plot.empty()) write_text_file(options.plot, plot_svg(report));
  out << render(report, render_options);
  return k_exit_ok;
}

int gpus_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"List the GPU table: usable memory, bandwidth, dense peaks, interconnect, price.",
               "trace gpus"};
  std::string table;
  bool json = false;
  app.add_option("--gpu-table", table, "GPU table JSON replacing data/gpus.json");
  app.add_flag("--json", json, "print JSON");
  if (parse_command_line(app, args, out, err)) return k_exit_ok;
  const GpuCatalog catalog =
      table.empty() ? builtin_gpu_catalog() : parse_gpu_catalog(read_text_file(table), table);
  const auto tflops = [](const GpuSpec& gpu, ComputeDtype dtype) -> std::optional<double> {
    const std::optional<double> peak = peak_flops_per_s(gpu, dtype);
    if (!peak) return std::nullopt;
    return *peak / 1e12;
  };
  if (json) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const GpuSpec& gpu : catalog.gpus) {
      nlohmann::ordered_json peaks = nlohmann::ordered_json::object();
      for (const ComputeDtype dtype : {ComputeDtype::fp32, ComputeDtype::tf32, ComputeDtype::bf16,
                                       ComputeDtype::fp16, ComputeDtype::fp8, ComputeDtype::int8,
                                       ComputeDtype::nvfp4, ComputeDtype::mxfp4}) {
        const std::optional<double> peak = tflops(gpu, dtype);
        peaks[std::string(compute_dtype_name(dtype))] =
            peak ? nlohmann::ordered_json(*peak) : nlohmann::ordered_json(nullptr);
      }
      rows.push_back({{"id", gpu.id},
                      {"name", gpu.name},
                      {"memory_bytes", gpu.memory_bytes_usable},
                      {"memory_bytes_marketed", gpu.memory_bytes_marketed},
                      {"memory_bandwidth_bytes_per_s", gpu.memory_bandwidth_bytes_per_s},
                      {"peak_tflops", peaks},
                      {"interconnect_bytes_per_s", gpu.interconnect_bytes_per_s},
                      {"price_usd_per_hour", gpu.price_usd_per_hour
                                                 ? nlohmann::ordered_json(*gpu.price_usd_per_hour)
                                                 : nlohmann::ordered_json(nullptr)},
                      {"price_date", gpu.price_date}});
    }
    out << rows.dump(1) << "\n";
    return k_exit_ok;
  }
  const auto cell = [](std::optional<double> value) {
    return value ? fmt::format("{:.0f}", *value) : std::string("-");
  };
  out << fmt::format("  {:<16} {:>10} {:>10} {:>6} {:>6} {:>6} {:>6} {:>9} {:>7}  {}\n", "id",
                     "usable", "HBM", "bf16", "fp8", "fp4", "link", "$/GPU-h", "as of", "name");
  out << fmt::format("  {:<16} {:>10} {:>10} {:>6} {:>6} {:>6} {:>6} {:>9} {:>7}\n", "", "",
                     "TB/s", "TFLOPS", "TFLOPS", "TFLOPS", "GB/s", "", "");
  for (const GpuSpec& gpu : catalog.gpus) {
    const std::optional<double> half =
        gpu.bf16_tflops ? tflops(gpu, ComputeDtype::bf16) : std::nullopt;
    std::optional<double> fp4 = tflops(gpu, ComputeDtype::nvfp4);
    if (!fp4) fp4 = tflops(gpu, ComputeDtype::mxfp4);
    out << fmt::format(
        "  {:<16} {:>10} {:>10.2f} {:>6} {:>6} {:>6} {:>6} {:>9} {:>7}  {}\n", gpu.id,
        format_bytes(gpu.memory_bytes_usable),
        static_cast<double>(gpu.memory_bandwidth_bytes_per_s) / 1e12, cell(half),
        cell(tflops(gpu, ComputeDtype::fp8)), cell(fp4),
        gpu.interconnect_bytes_per_s > 0
            ? fmt::format("{:.0f}", static_cast<double>(gpu.interconnect_bytes_per_s) / 1e9)
            : "-",
        gpu.price_usd_per_hour ? fmt::format("{:.2f}", *gpu.price_usd_per_hour) : "-",
        gpu.price_usd_per_hour ? gpu.price_date.substr(0, 7) : "", gpu.name);
  }
  out << fmt::format(
      "\n{} cards; dense peaks (- : no native support); table as of {} (data/gpus.json, "
      "docs/gpus.md)\n",
      catalog.gpus.size(), catalog.as_of);
  return k_exit_ok;
}

int models_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"List the bundled catalog and the supported model types.", "trace models"};
  if (parse_command_line(app, args, out, err)) return k_exit_ok;
  for (const CatalogEntry& entry : catalog_entries()) out << entry.repo_id << "\n";
  out << "\nSupported model types:\n";
  for (const ArchitectureInfo& info : supported_architectures()) {
    out << fmt::format("  {:<14} {}\n", info.model_type, info.family);
  }
  return k_exit_ok;
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const HubEnvironment& env) {
  try {
    if (args.size() >= 2) {
      const std::vector<std::string> rest(args.begin() + 1, args.end());
      if (args[1] == "gpus") return gpus_command(rest, out, err);
      if (args[1] == "models") return models_command(rest, out, err);
      if (args[1] == "check") return check_command(rest, out, err, env);
      if (args[1] == "validate") return validate_command(rest, out, err);
      if (args[1] == "throughput") return throughput_command(rest, out, err);
    }
    return plan_command(args, out, err, env);
  } catch (const FetchError& error) {
    err << "trace: error: " << one_line(error.what()) << "\n";
    return k_exit_network;
  } catch (const Error& error) {
    err << "trace: error: " << one_line(error.what()) << "\n";
    return k_exit_bad_input;
  }
}

}  // namespace trace::cli
