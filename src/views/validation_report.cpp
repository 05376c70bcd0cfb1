// `planner validate`'s report: the ValidationReport as a table, JSON or CSV.
#include "planner/views/validation_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/model/labels.h"

namespace planner {

namespace {

std::string join_text(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

namespace {

std::string pct(std::optional<double> e) { return e ? fmt::format("{:+.1f}%", 100 * *e) : "-"; }

std::string marks(const ValidatedRow& r) {
  std::string m;
  if (!r.chosen.empty()) m += 'c';
  if (!r.step_implied.empty()) m += 'i';
  if (!r.warnings.empty()) m += 'w';
  if (r.scope == MeasurementScope::layer) m += 'l';
  return m;
}

std::string step_text(double s) { return s >= 1 ? fmt::format("{:.2f}", s) : fmt::format("{:.4f}", s); }

// No rows: null statistics (the table prints "-"), not errors of 0.
nlohmann::json stats_json(const ErrorStats& s) {
  auto stat = [&](double v) { return s.rows > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"rows", s.rows},
          {"median_abs_error", stat(s.median_abs)},
          {"p90_abs_error", stat(s.p90_abs)},
          {"max_abs_error", stat(s.max_abs)},
          {"worst", s.rows > 0 ? nlohmann::json(s.worst_id) : nlohmann::json(nullptr)},
          {"mean_signed_error", stat(s.mean_signed)}};
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string render_json(const ValidationReport& rep) {
  nlohmann::json rows = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& r : rep.rows) {
    if (!r.evaluated()) {
      skipped.push_back({{"id", r.id}, {"source", r.source}, {"model", r.model_name}, {"reason", r.skip_reason}});
      continue;
    }
    nlohmann::json j = {
        {"id", r.id},
        {"source", r.source},
        {"model", r.model_name},
        {"hardware", r.hardware},
        {"scope", r.scope == MeasurementScope::layer ? "layer" : "step"},
        {"layout", fmt::format("{:c}", r.config)},
        {"chosen_by_planner", r.chosen},
        {"assumptions", r.assumptions},
        {"warnings", r.warnings},
        {"flop_convention", to_string(r.convention)},
        {"predicted_step_s", r.predicted_step_s},
        {"measured_step_s", r.measured_step_s},
        {"measured_step_implied_from", r.step_implied.empty() ? nullptr : nlohmann::json(r.step_implied)},
        {"step_error", r.step_error},
        {"predicted_palm_mfu", r.predicted_palm_mfu}};
    auto opt = [&](const char* k, std::optional<double> v) { j[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    opt("predicted_tflops_per_gpu", r.predicted_tflops);
    opt("measured_tflops_per_gpu", r.measured_tflops);
    opt("tflops_error", r.tflops_error);
    opt("predicted_mfu", r.predicted_mfu);
    opt("measured_mfu", r.measured_mfu);
    opt("mfu_error", r.mfu_error);
    rows.push_back(std::move(j));
  }
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& [label, s] : rep.by_source) {
    nlohmann::json j = stats_json(s);
    j["source"] = label;
    sources.push_back(std::move(j));
  }
  nlohmann::json out = {{"schema_version", 1},
                        {"rows", rows},
                        {"not_evaluated", skipped},
                        {"summary", {{"by_source", sources}, {"overall", stats_json(rep.overall)}}}};
  return out.dump(2) + "\n";
}

std::string render_csv(const ValidationReport& rep) {
  std::string s =
      "id,source,model,hardware,scope,layout,chosen,predicted_step_s,measured_step_s,step_implied_from,step_error,"
      "predicted_tflops_per_gpu,measured_tflops_per_gpu,predicted_mfu,measured_mfu,warnings,not_evaluated_reason\n";
  auto o = [](std::optional<double> v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
  for (const auto& r : rep.rows) {
    if (!r.evaluated()) {
      s += fmt::format("{},{},{},,,,,,,,,,,,,,{}\n", csv_field(r.id), csv_field(source_label(r.source)),
                       csv_field(r.model_name), csv_field(r.skip_reason));
      continue;
    }
    s += fmt::format("{},{},{},{},{},{:c},{},{:.6g},{:.6g},{},{:.6f},{},{},{},{},{},\n", csv_field(r.id),
                     csv_field(source_label(r.source)), csv_field(r.model_name), r.hardware,
                     r.scope == MeasurementScope::layer ? "layer" : "step", r.config,
                     csv_field(join_text(r.chosen, "; ")), r.predicted_step_s, r.measured_step_s, r.step_implied,
                     r.step_error, o(r.predicted_tflops), o(r.measured_tflops), o(r.predicted_mfu), o(r.measured_mfu),
                     csv_field(join_text(r.warnings, "; ")));
  }
  return s;
}

std::string render_table(const ValidationReport& rep) {
  std::string s = fmt::format("{:<6} {:<22} {:<14} {:<34} {:>9} {:>9} {:>7}  {:>13} {:>7}  {:>11} {:>7}  {}\n", "id",
                              "model", "hardware", "layout", "measured", "predicted", "error", "TFLOP/s m/p", "error",
                              "MFU m/p", "error", "marks");
  for (const auto& r : rep.rows) {
    if (!r.evaluated()) continue;
    const std::string tf =
        r.measured_tflops ? fmt::format("{:.0f}/{:.0f}", *r.measured_tflops, *r.predicted_tflops) : std::string("-");
    const std::string mfu =
        r.measured_mfu ? fmt::format("{:.1f}/{:.1f}", 100 * *r.measured_mfu, 100 * *r.predicted_mfu) : std::string("-");
    std::string model = r.model_name.size() > 22 ? r.model_name.substr(0, 21) + "~" : r.model_name;
    s += fmt::format("{:<6} {:<22} {:<14} {:<34} {:>9} {:>9} {:>7}  {:>13} {:>7}  {:>11} {:>7}  {}\n", r.id, model,
                     r.hardware, fmt::format("{:c}", r.config), step_text(r.measured_step_s),
                     step_text(r.predicted_step_s), pct(r.step_error), tf, pct(r.tflops_error), mfu, pct(r.mfu_error),
                     marks(r));
  }
  s += "times in seconds (per step; per layer fwd+bwd for 'l' rows). marks: c = knobs the row leaves unknown were "
       "chosen by the planner, i = measured time implied from the row's tokens/s per GPU, or its TFLOP/s or MFU in "
       "its FLOP convention, w = warning below, l = one-layer measurement\n";

  std::string notes;
  for (const auto& r : rep.rows)
    if (r.evaluated() && (!r.chosen.empty() || !r.warnings.empty())) {
      notes += fmt::format("  {}:", r.id);
      if (!r.chosen.empty()) notes += fmt::format(" planner chose {};", join_text(r.chosen, ", "));
      for (const auto& w : r.warnings) notes += fmt::format(" {};", w);
      notes.back() = '\n';
    }
  if (!notes.empty()) s += "\nrow notes\n" + notes;

  // Inferred settings, grouped (each applies to the rows listed).
  std::vector<std::pair<std::string, std::vector<std::string>>> assumed;
  for (const auto& r : rep.rows)
    for (const auto& a : r.assumptions) {
      auto it = std::find_if(assumed.begin(), assumed.end(), [&](const auto& x) { return x.first == a; });
      if (it == assumed.end())
        assumed.push_back({a, {r.id}});
      else
        it->second.push_back(r.id);
    }
  if (!assumed.empty()) {
    s += "\ninferred settings (docs/published_runs.md)\n";
    for (const auto& [a, ids] : assumed)
      s += fmt::format("  {} ({} row{}: {}{})\n", a, ids.size(), ids.size() == 1 ? "" : "s", ids.front(),
                       ids.size() > 1 ? " .. " + ids.back() : "");
  }
  if (rep.skipped) {
    s += fmt::format("\nnot evaluated ({} row{})\n", rep.skipped, rep.skipped == 1 ? "" : "s");
    for (const auto& r : rep.rows)
      if (!r.evaluated()) s += fmt::format("  {:<6} {}\n", r.id, r.skip_reason);
  }
  s += fmt::format("\nstep-time |error| by source\n{:<40} {:>5} {:>8} {:>8} {:>8} {:<7} {:>8}\n", "source", "rows",
                   "median", "p90", "max", "(row)", "bias");
  auto line = [](const std::string& label, const ErrorStats& st) {
    if (st.rows == 0) return fmt::format("{:<40} {:>5} {:>8} {:>8} {:>8}\n", label, 0, "-", "-", "-");
    return fmt::format("{:<40} {:>5} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:<7} {:>+7.1f}%\n", label, st.rows,
                       100 * st.median_abs, 100 * st.p90_abs, 100 * st.max_abs, st.worst_id, 100 * st.mean_signed);
  };
  for (const auto& [label, st] : rep.by_source) s += line(label, st);
  s += line("overall", rep.overall);
  return s;
}

}  // namespace

std::string render_validation(const ValidationReport& r, Format f) {
  switch (f) {
    case Format::json:
      return render_json(r);
    case Format::csv:
      return render_csv(r);
    case Format::table:
      return render_table(r);
  }
  return render_table(r);
}

}  // namespace planner
