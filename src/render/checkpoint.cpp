// The reconciliation as JSON (merged into the plan's `checkpoint` object) and as a terminal
// section. Integers throughout; a delta is found minus trace.
#include "trace/render/checkpoint.hpp"

#include <fmt/format.h>

#include <string>

#include "trace/render/render.hpp"

namespace trace {

namespace {

nlohmann::json totals_json(const checkpoint::Totals& totals) {
  return {{"tensors", totals.tensors},
          {"stored_elements", totals.stored_elements},
          {"bytes", totals.bytes}};
}

std::string signed_count(std::int64_t value) {
  return value > 0 ? "+" + group_digits(value) : group_digits(value);
}

// "+12.5%" of the expected value; "" when there is nothing to compare against.
std::string percent(std::int64_t delta, std::int64_t expected) {
  if (delta == 0 || expected == 0) return "";
  return fmt::format(" ({:+.2f}%)", 100.0 * static_cast<double>(delta) / static_cast<double>(expected));
}

}  // namespace

nlohmann::json checkpoint_json(const checkpoint::Reconciliation& r) {
  nlohmann::json by_dtype = nlohmann::json::object();
  for (const checkpoint::DtypeTotals& row : r.summary.by_dtype) {
    by_dtype[row.dtype] = {{"tensors", row.tensors}, {"elements", row.elements}, {"bytes", row.bytes}};
  }
  nlohmann::json components = nlohmann::json::array();
  for (const checkpoint::ComponentAgreement& row : r.components) {
    components.push_back({{"component", row.component},
                          {"expected", totals_json(row.expected)},
                          {"found", totals_json(row.found)},
                          {"agrees", row.agrees()}});
  }
  nlohmann::json mismatched = nlohmann::json::array();
  for (const checkpoint::TensorMismatch& row : r.mismatches) {
    mismatched.push_back({{"name", row.name}, {"expected", row.expected}, {"found", row.found}});
  }
  return {
      {"source", r.source},
      {"shards", r.summary.shards},
      {"tensors", r.found.tensors},
      {"stored_elements", r.found.stored_elements},
      {"bytes", r.found.bytes},
      {"scalar_tensors", r.summary.scalar_tensors},
      {"elements_without_scalars", r.summary.elements_without_scalars},
      {"by_dtype", by_dtype},
      {"logical_params", r.logical_params},
      {"trace_params", r.trace_params},
      {"delta_params", r.delta_params},
      {"unstored_params", r.unstored_params},
      {"expected", totals_json(r.expected)},
      {"delta",
       {{"tensors", r.found.tensors - r.expected.tensors},
        {"stored_elements", r.found.stored_elements - r.expected.stored_elements},
        {"bytes", r.found.bytes - r.expected.bytes}}},
      {"inventory", {{"complete", r.inventory_complete}, {"naming", r.naming}, {"gaps", r.gaps}}},
      {"components", components},
      {"unmatched",
       {{"only_in_checkpoint",
         {{"count", r.only_in_checkpoint_count}, {"names", r.only_in_checkpoint}}},
        {"only_in_trace", {{"count", r.only_in_trace_count}, {"names", r.only_in_trace}}},
        {"mismatched", {{"count", r.mismatch_count}, {"tensors", mismatched}}}}},
      {"explanations", r.explanations},
      {"agrees", r.agrees()},
  };
}

std::string render_checkpoint_text(const checkpoint::Reconciliation& r) {
  std::string out = fmt::format("CHECKPOINT (headers of {} shard(s){})\n", r.summary.shards,
                                r.source.empty() ? "" : ": " + r.source);
  out += fmt::format("  {:<18}{:>22}{:>22}{:>26}\n", "", "trace", "checkpoint", "delta");
  const auto row = [&](const char* label, std::int64_t expected, std::int64_t found,
                       std::int64_t delta, const char* zero = "0") {
    out += fmt::format(
        "  {:<18}{:>22}{:>22}{:>26}\n", label, group_digits(expected), group_digits(found),
        delta == 0 ? std::string(zero) : signed_count(delta) + percent(delta, expected));
  };
  // trace's count may hold tables this upload leaves out (a note names them): delta_params is
  // against what the upload should hold.
  row("parameters", r.trace_params, r.logical_params, r.delta_params,
      r.unstored_params > 0 ? "0 (tables not stored)" : "0");
  const checkpoint::Totals& e = r.expected;
  const checkpoint::Totals& f = r.found;
  row("stored elements", e.stored_elements, f.stored_elements,
      f.stored_elements - e.stored_elements);
  row("bytes", e.bytes, f.bytes, f.bytes - e.bytes);
  row("tensors", e.tensors, f.tensors, f.tensors - e.tensors);
  for (const std::string& line : r.explanations) out += "  note: " + line + "\n";
  if (!r.inventory_complete) {
    out += fmt::format("  inventory partial ({}): totals and components only\n",
                       r.gaps.empty() ? r.naming : r.gaps.front());
  }
  for (const checkpoint::ComponentAgreement& c : r.components) {
    if (c.agrees()) continue;
    out += fmt::format("  {:<12} tensors {} vs {}, elements {} vs {}\n", c.component,
                       group_digits(c.expected.tensors), group_digits(c.found.tensors),
                       group_digits(c.expected.stored_elements), group_digits(c.found.stored_elements));
  }
  const auto names = [&](const char* label, std::int64_t count, const std::vector<std::string>& list) {
    if (count == 0) return;
    out += fmt::format("  {} ({}): {}{}\n", label, group_digits(count), fmt::join(list, ", "),
                       count > static_cast<std::int64_t>(list.size()) ? ", ..." : "");
  };
  names("only in the checkpoint", r.only_in_checkpoint_count, r.only_in_checkpoint);
  names("only in trace", r.only_in_trace_count, r.only_in_trace);
  for (const checkpoint::TensorMismatch& m : r.mismatches) {
    out += fmt::format("  differs: {}: trace {}, checkpoint {}\n", m.name, m.expected, m.found);
  }
  if (r.agrees()) out += "  agrees: every tensor, shape, dtype and total\n";
  return out;
}

}  // namespace trace
