// Predicted vs measured over a dataset of measured runs. Each row is mapped
// (published_runs.cpp), matched to a hardware profile, evaluated at its stated
// layout (unknown knobs: the planner's best choice via the search), and
// compared on step time, and on TFLOP/s and MFU in the row's own FLOP
// convention. Statistics use |relative error| of step time, the one metric
// every row has (measured, or implied from TFLOP/s or MFU by the convention).
#include "planner/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/catalog.h"
#include "planner/input_error.h"
#include "planner/json_io.h"
#include "planner/search.h"

namespace planner {

namespace {

std::string squash(const std::string& s) {  // upper case, no spaces, '-' or '_'
  std::string out;
  for (unsigned char c : s)
    if (c != ' ' && c != '-' && c != '_') out.push_back(char(std::toupper(c)));
  return out;
}

// "H100 SXM5 80GB" -> "H100"; "TPU v5e" -> "TPU v5e": tokens up to the first with a digit.
std::string chip_family(const std::string& chip_name) {
  std::string family;
  std::size_t pos = 0;
  while (pos < chip_name.size()) {
    const std::size_t end = std::min(chip_name.find(' ', pos), chip_name.size());
    const std::string tok = chip_name.substr(pos, end - pos);
    family += (family.empty() ? "" : " ") + tok;
    if (std::any_of(tok.begin(), tok.end(), [](unsigned char c) { return std::isdigit(c); })) break;
    pos = end + 1;
  }
  return family;
}

std::optional<int> memory_gb(const std::string& s) {
  static const std::regex gb(R"((?:^|[\s\-_(])([0-9]+)\s?GB)", std::regex::icase);
  std::smatch m;
  if (std::regex_search(s, m, gb)) return std::stoi(m[1].str());
  return std::nullopt;
}

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string layout_text(const ParallelConfig& c) {
  std::string s = fmt::format("tp{} cp{} pp{} dp{} mbs{}", c.tp, c.cp, c.pp, c.dp, c.micro_batch_size);
  if (c.virtual_stages > 1) s += fmt::format(" v{}", c.virtual_stages);
  if (c.sequence_parallel) s += " sp";
  if (c.recompute != Recompute::none) s += c.recompute == Recompute::full ? " rc-full" : " rc-sel";
  if (c.zero_stage) s += fmt::format(" z{}", c.zero_stage);
  return s;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string reasons_text(const Evaluation& ev) {
  std::vector<std::string> r;
  for (Reason x : ev.reason_list()) r.push_back(describe(x));
  return join(r, "; ");
}

ValidatedRow evaluate_row(const MeasuredRun& run, const HardwareProfile& hw) {
  ValidatedRow out;
  out.id = run.id, out.source = run.source, out.model_name = run.model_name;
  out.hardware = hw.name;
  out.scope = run.scope;
  out.chosen = run.chosen;
  out.assumptions = run.assumptions;
  out.convention = run.convention;
  const TrainingSpec& ts = run.training;
  const SearchPins& p = run.pins;

  ParallelConfig pc;
  pc.tp = *p.tp, pc.cp = *p.cp, pc.pp = *p.pp, pc.dp = *p.dp;
  pc.micro_batch_size = p.micro_batch_size.value_or(1);
  pc.virtual_stages = p.virtual_stages.value_or(1);
  pc.recompute = p.recompute.value_or(Recompute::none);
  pc.zero_stage = p.zero_stage.value_or(0);
  pc.sequence_parallel = p.sequence_parallel.value_or(pc.tp > 1);
  Evaluation ev;
  if (run.chosen.empty()) {
    ev = evaluate(run.model, hw, normalized(pc), ts);
  } else {
    SearchSpec spec;
    spec.training = ts;
    spec.pins = p;
    spec.top_k = 1;
    const SearchResult sr = search(run.model, hw, spec);
    if (!sr.top.empty()) {
      ev = sr.top.front();
    } else {
      ev = evaluate(run.model, hw, normalized(pc), ts);
      out.warnings.push_back("no choice of the unknown knobs fits; evaluated with the defaults");
    }
  }
  out.config = ev.config;
  const std::uint32_t oom = 1u << unsigned(Reason::out_of_memory);
  if ((ev.reasons & ~oom) != 0) {
    out.skip_reason = fmt::format("layout {} is not valid for the planner: {}", layout_text(ev.config), reasons_text(ev));
    return out;
  }
  if (ev.has(Reason::out_of_memory) && run.scope == MeasurementScope::step)
    out.warnings.push_back(fmt::format("planner predicts out of memory ({:.1f} of {:.1f} GiB)",
                                       ev.memory.total_bytes / (1u << 30), ev.memory.capacity_bytes / (1u << 30)));
  out.predicted_palm_mfu = ev.time.mfu;
  out.predicted_step_s =
      run.scope == MeasurementScope::layer ? ev.time.layer_fwd_s + ev.time.layer_bwd_s : ev.time.step_s;
  if (!(out.predicted_step_s > 0) || !std::isfinite(out.predicted_step_s)) {
    out.skip_reason = "the planner's predicted time is not a positive number";
    return out;
  }

  const double gpus = double(ts.num_gpus);
  const double peak = hw.peak_flops_per_s[std::size_t(ts.dtype)];
  const double flops = convention_flops_per_step(run.convention, run.model, ts.seq_len, ts.global_batch_sequences,
                                                 run.stated_flops_per_sequence);
  if (run.step_time_s) {
    out.measured_step_s = *run.step_time_s;
  } else if (run.tflops_per_gpu && flops > 0) {
    out.measured_step_s = flops / (*run.tflops_per_gpu * 1e12 * gpus);
    out.step_implied = "TFLOP/s";
  } else if (run.mfu && flops > 0 && peak > 0) {
    out.measured_step_s = flops / (*run.mfu * peak * gpus);
    out.step_implied = "MFU";
  }
  if (!(out.measured_step_s > 0)) {
    out.skip_reason = "no measured step time, and none can be implied from the reported figures";
    return out;
  }
  out.step_error = (out.predicted_step_s - out.measured_step_s) / out.measured_step_s;
  // A row reporting both a time and a rate must agree with its own convention.
  if (run.step_time_s && flops > 0 && run.scope == MeasurementScope::step) {
    if (run.tflops_per_gpu) {
      const double implied = flops / (*run.step_time_s * gpus) / 1e12;
      if (std::abs(implied / *run.tflops_per_gpu - 1) > 0.03)
        out.warnings.push_back(fmt::format("reported {:.0f} TFLOP/s, but its step time and FLOP convention ({}) give {:.0f}",
                                           *run.tflops_per_gpu, to_string(run.convention), implied));
    }
    if (run.mfu && peak > 0) {
      const double implied = flops / (*run.step_time_s * gpus * peak);
      if (std::abs(implied / *run.mfu - 1) > 0.03)
        out.warnings.push_back(fmt::format("reported MFU {:.1f}%, but its step time and FLOP convention ({}) give {:.1f}%",
                                           100 * *run.mfu, to_string(run.convention), 100 * implied));
    }
  }
  if (flops > 0 && run.scope == MeasurementScope::step) {
    if (run.tflops_per_gpu) {
      out.measured_tflops = *run.tflops_per_gpu;
      out.predicted_tflops = flops / (out.predicted_step_s * gpus) / 1e12;
      out.tflops_error = (*out.predicted_tflops - *out.measured_tflops) / *out.measured_tflops;
    }
    if (run.mfu && peak > 0) {
      out.measured_mfu = *run.mfu;
      out.predicted_mfu = flops / (out.predicted_step_s * gpus * peak);
      out.mfu_error = (*out.predicted_mfu - *out.measured_mfu) / *out.measured_mfu;
    }
  }
  return out;
}

}  // namespace

std::string match_hardware(const std::string& gpu_type, const std::vector<HardwareProfile>& stock,
                           const ValidateOptions& opt) {
  const std::string g = squash(gpu_type);
  for (const auto& [pattern, profile] : opt.hardware_map)
    if (!pattern.empty() && g.find(squash(pattern)) != std::string::npos) return profile;
  const auto row_gb = memory_gb(gpu_type);
  for (const auto& hw : stock) {
    const std::string family = squash(chip_family(hw.chip_name));
    if (family.empty() || g.find(family) == std::string::npos) continue;
    const auto hw_gb = memory_gb(hw.chip_name);
    if (row_gb && hw_gb && *row_gb != *hw_gb) continue;
    return hw.name;
  }
  return "";
}

ErrorStats error_stats(const std::vector<std::pair<std::string, double>>& id_errors) {
  ErrorStats s;
  s.rows = id_errors.size();
  if (s.rows == 0) return s;
  std::vector<double> a;
  double sum = 0;
  for (const auto& [id, e] : id_errors) {
    a.push_back(std::abs(e));
    sum += e;
    if (std::abs(e) >= s.max_abs) s.max_abs = std::abs(e), s.worst_id = id;
  }
  std::sort(a.begin(), a.end());
  s.median_abs = median_of_sorted(a);
  // Nearest rank: the smallest value with at least 90% of the rows at or below it.
  const std::size_t rank = std::size_t(std::ceil(0.9 * double(a.size())));
  s.p90_abs = a[std::max<std::size_t>(rank, 1) - 1];
  s.mean_signed = sum / double(s.rows);
  return s;
}

ValidationReport validate_runs(const std::vector<RunRow>& rows, const ValidateOptions& opt) {
  ValidationReport rep;
  const std::vector<HardwareProfile> stock = list_hardware();
  std::map<std::string, HardwareProfile> profiles;  // by name or path as given
  auto profile = [&](const std::string& name) -> const HardwareProfile& {
    auto it = profiles.find(name);
    if (it == profiles.end()) it = profiles.emplace(name, find_hardware(name)).first;
    return it->second;
  };
  // Validate the user's mapping up front: a bad --hardware value is their error, not a row's.
  for (const auto& [pattern, name] : opt.hardware_map) (void)profile(name);

  std::vector<std::string> source_order;
  std::map<std::string, std::vector<std::pair<std::string, double>>> by_source;
  std::vector<std::pair<std::string, double>> all;
  for (const RunRow& row : rows) {
    ValidatedRow v;
    if (!row.run) {
      v.id = row.id, v.source = row.source, v.model_name = row.model_name;
      v.skip_reason = row.skip_reason;
    } else {
      std::string hw_name = row.run->hardware.value_or(match_hardware(row.run->gpu_type, stock, opt));
      if (hw_name.empty()) {
        v.id = row.id, v.source = row.source, v.model_name = row.model_name;
        v.skip_reason = fmt::format("no hardware profile matches gpu_type '{}' (map one with --hardware PATTERN=PROFILE)",
                                    row.run->gpu_type);
      } else {
        try {
          v = evaluate_row(*row.run, profile(hw_name));
        } catch (const InputError& e) {  // a row naming an unknown profile
          v.id = row.id, v.source = row.source, v.model_name = row.model_name;
          v.skip_reason = e.what();
        }
      }
    }
    const std::string label = source_label(v.source);
    if (std::find(source_order.begin(), source_order.end(), label) == source_order.end()) source_order.push_back(label);
    if (v.evaluated()) {
      by_source[label].emplace_back(v.id, v.step_error);
      all.emplace_back(v.id, v.step_error);
    } else {
      ++rep.skipped;
    }
    rep.rows.push_back(std::move(v));
  }
  for (const auto& label : source_order) {
    ErrorStats s = error_stats(by_source[label]);
    rep.by_source.emplace_back(label, s);
  }
  rep.overall = error_stats(all);
  return rep;
}

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

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows}, {"median_abs_error", s.median_abs}, {"p90_abs_error", s.p90_abs},
          {"max_abs_error", s.max_abs}, {"worst", s.worst_id}, {"mean_signed_error", s.mean_signed}};
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
    nlohmann::json j = {{"id", r.id},
                        {"source", r.source},
                        {"model", r.model_name},
                        {"hardware", r.hardware},
                        {"scope", r.scope == MeasurementScope::layer ? "layer" : "step"},
                        {"layout", layout_text(r.config)},
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
    s += fmt::format("{},{},{},{},{},{},{},{:.6g},{:.6g},{},{:.6f},{},{},{},{},{},\n", csv_field(r.id),
                     csv_field(source_label(r.source)), csv_field(r.model_name), r.hardware,
                     r.scope == MeasurementScope::layer ? "layer" : "step", layout_text(r.config),
                     csv_field(join(r.chosen, "; ")), r.predicted_step_s, r.measured_step_s, r.step_implied,
                     r.step_error, o(r.predicted_tflops), o(r.measured_tflops), o(r.predicted_mfu), o(r.measured_mfu),
                     csv_field(join(r.warnings, "; ")));
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
    const std::string mfu = r.measured_mfu
                                ? fmt::format("{:.1f}/{:.1f}", 100 * *r.measured_mfu, 100 * *r.predicted_mfu)
                                : std::string("-");
    std::string model = r.model_name.size() > 22 ? r.model_name.substr(0, 21) + "~" : r.model_name;
    s += fmt::format("{:<6} {:<22} {:<14} {:<34} {:>9} {:>9} {:>7}  {:>13} {:>7}  {:>11} {:>7}  {}\n", r.id, model,
                     r.hardware, layout_text(r.config), step_text(r.measured_step_s), step_text(r.predicted_step_s),
                     pct(r.step_error), tf, pct(r.tflops_error), mfu, pct(r.mfu_error), marks(r));
  }
  s += "times in seconds (per step; per layer fwd+bwd for 'l' rows). marks: c = knobs the row leaves unknown were chosen "
       "by the planner, i = measured time implied from the row's TFLOP/s or MFU in its FLOP convention, w = warning "
       "below, l = one-layer measurement\n";

  std::string notes;
  for (const auto& r : rep.rows)
    if (r.evaluated() && (!r.chosen.empty() || !r.warnings.empty())) {
      notes += fmt::format("  {}:", r.id);
      if (!r.chosen.empty()) notes += fmt::format(" planner chose {};", join(r.chosen, ", "));
      for (const auto& w : r.warnings) notes += fmt::format(" {};", w);
      notes.back() = '\n';
    }
  if (!notes.empty()) s += "\nrow notes\n" + notes;

  // Inferred settings, grouped (each applies to the rows listed).
  std::vector<std::pair<std::string, std::vector<std::string>>> assumed;
  for (const auto& r : rep.rows)
    for (const auto& a : r.assumptions) {
      auto it = std::find_if(assumed.begin(), assumed.end(), [&](const auto& x) { return x.first == a; });
      if (it == assumed.end()) assumed.push_back({a, {r.id}});
      else it->second.push_back(r.id);
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
  s += fmt::format("\nstep-time |error| by source\n{:<40} {:>5} {:>8} {:>8} {:>8} {:<7} {:>8}\n", "source", "rows", "median",
                   "p90", "max", "(row)", "bias");
  auto line = [](const std::string& label, const ErrorStats& st) {
    if (st.rows == 0) return fmt::format("{:<40} {:>5} {:>8} {:>8} {:>8}\n", label, 0, "-", "-", "-");
    return fmt::format("{:<40} {:>5} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:<7} {:>+7.1f}%\n", label, st.rows, 100 * st.median_abs,
                       100 * st.p90_abs, 100 * st.max_abs, st.worst_id, 100 * st.mean_signed);
  };
  for (const auto& [label, st] : rep.by_source) s += line(label, st);
  s += line("overall", rep.overall);
  return s;
}

}  // namespace

std::string render_validation(const ValidationReport& r, Format f) {
  switch (f) {
    case Format::json: return render_json(r);
    case Format::csv: return render_csv(r);
    case Format::table: return render_table(r);
  }
  return render_table(r);
}

}  // namespace planner
