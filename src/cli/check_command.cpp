#include <fmt/format.h>

#include <ostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "trace/cli/run.hpp"
#include "trace/error.hpp"
#include "trace/estimate/job.hpp"
#include "trace/hardware/gpu_catalog.hpp"
#include "trace/render/render.hpp"
#include "trace/report/report.hpp"

namespace trace::cli {

int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                  const HubEnvironment& env) {
  CLI::App app{"Exit 0 when the job fits the card(s), 1 when it does not: a CI gate.",
               "trace check"};
  PlanOptions options;
  add_plan_options(app, options, true);
  app.add_option("--mode", options.check_mode, "what must fit")
      ->check(CLI::IsMember({"serve", "lora", "qlora", "full"}))
      ->capture_default_str();
  app.add_option("--cards", options.check_cards, "cards available (the same as --gpus)");
  app.add_flag("--json", options.json, "print the verdict as one JSON object");
  if (parse_command_line(app, args, out, err)) return k_exit_ok;
  if (options.gpus.size() != 1) throw ConfigError("trace check needs exactly one --gpu ID");
  if (options.check_cards != -1 && (options.check_cards < 1 || options.check_cards > k_max_cards)) {
    throw ConfigError(fmt::format("--cards must lie in 1..{}", k_max_cards));
  }
  options.plan_mode = options.check_mode;
  options.include_cost = false;
  const GpuCatalog gpus = load_catalog(options);
  Report report = build_report(options, env, gpus, err);
  report.only_mode = options.check_mode;
  const JobVerdict& verdict = *report.job;
  const Job& job = verdict.job;
  if (options.json) {
    out << render_check_json(report);
  } else {
    std::string line =
        fmt::format("{}: {} {} on {}x {}: {} needed per GPU, {} usable ({} after {:.0f}% headroom)",
                    verdict.fits ? "fits" : "does not fit", report.model_id,
                    // a quantized serving layout is part of what was checked
                    report.assumptions.serve_quantization && options.check_mode == "serve"
                        ? "serve " + report.assumptions.serve_quantization->name
                    // so is a preference job's pairs and reference
                    : job.preference != Preference::none
                        ? fmt::format("{} ({})", options.check_mode, describe_preference(job))
                    : job.rl ? fmt::format("{} ({})", options.check_mode, describe_rl(job))
                             : options.check_mode,
                    job.gpus, verdict.gpu, format_bytes(verdict.peak_bytes()),
                    format_bytes(verdict.usable_bytes), format_bytes(verdict.budget_bytes),
                    100.0 * report.assumptions.headroom_fraction);
    // what fits in memory but will not start, on the same line
    if (!verdict.refusal.empty()) line += "; " + verdict.refusal;
    out << line << "\n";
    // The verdict stays one line on stdout; what the estimate assumed or leaves out for this
    // job (a vision tower's activations, a context past the trained positions) goes to stderr,
    // where a CI log shows it beside the line.
    for (const std::string& note : job_notes(report)) err << "note: " << note << "\n";
  }
  return verdict.fits ? k_exit_ok : k_exit_does_not_fit;
}

}  // namespace trace::cli
