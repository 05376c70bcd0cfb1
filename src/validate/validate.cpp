// Predicted vs measured over a dataset of measured runs. Each row is mapped
// (published_runs.cpp), matched to a hardware profile, evaluated at its stated
// layout (unknown knobs: the planner's best choice via the search), and
// compared on step time, and on TFLOP/s and MFU in the row's own FLOP
// convention. Statistics use |relative error| of step time, the one metric
// every row has (measured, or implied from TFLOP/s or MFU by the convention).
#include "planner/validate/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/model/labels.h"
#include "planner/search/search.h"
#include "planner/spec/input_error.h"

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

// "80GB", "HBM3 80 GB", "95/96GB" (the last figure of a slash list: torchtitan's "H100 SXM 95/96GB").
std::optional<int> memory_gb(const std::string& s) {
  static const std::regex gb(R"((?:^|[\s\-_(/])([0-9]+)\s?GB)", std::regex::icase);
  std::smatch m;
  if (std::regex_search(s, m, gb)) return std::stoi(m[1].str());
  return std::nullopt;
}

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The measured step time: the row's own, or implied from its tokens/s per
// GPU, TFLOP/s or MFU through its FLOP convention (`out.step_implied` says
// which); nullopt when none can be.
std::optional<double> measured_step(const MeasuredRun& run, double flops, double peak, ValidatedRow& out) {
  const TrainingSpec& ts = run.training;
  const double gpus = double(ts.num_gpus);
  if (run.step_time_s) return *run.step_time_s;
  if (run.tokens_per_sec_per_gpu && run.scope == MeasurementScope::step) {
    // Throughput needs no FLOP convention: step = GBS * seq / (tokens/s/GPU * GPUs).
    out.step_implied = "tokens/s";
    return double(ts.global_batch_sequences) * double(ts.seq_len) / (*run.tokens_per_sec_per_gpu * gpus);
  }
  if (run.tflops_per_gpu && flops > 0) {
    out.step_implied = "TFLOP/s";
    return flops / (*run.tflops_per_gpu * 1e12 * gpus);
  }
  if (run.mfu && flops > 0 && peak > 0) {
    out.step_implied = "MFU";
    return flops / (*run.mfu * peak * gpus);
  }
  return std::nullopt;
}

// Why the row's figures cannot be a measurement of this chip, or "". A rate
// above the chip's peak is impossible. So is a measured time at which the
// model's FLOPs (Megatron's count, which leaves out recomputation and the
// masked half of causal attention, so no kernel runs fewer) would run above
// the peak; at layer scope that utilisation is the predicted step's, scaled
// by the predicted over the measured layer time. Below 1% of the peak is a
// time or rate in the wrong unit (milliseconds for seconds, a percentage
// for a fraction): the published runs' lie between 10% and 66%.
std::string implausible(const MeasuredRun& run, const HardwareProfile& hw, double flops, double predicted_mfu,
                        const ValidatedRow& out) {
  const double peak = hw.peak_flops_per_s[std::size_t(run.training.dtype)];
  const std::string_view dtype = to_string(run.training.dtype);
  if (!std::isfinite(flops)) return "the FLOP count per step of the row's convention is not a finite number";
  if (run.mfu && *run.mfu > 1)
    return fmt::format("mfu: expected a fraction of the chip's peak, at most 1, got {}", *run.mfu);
  if (run.tflops_per_gpu && *run.tflops_per_gpu * 1e12 > peak)
    return fmt::format("tflops_per_gpu: {} is above the chip's peak, {:.0f} TFLOP/s ({} {})", *run.tflops_per_gpu,
                       peak / 1e12, hw.name, dtype);
  const std::string what =
      out.step_implied.empty() ? "step_time_s" : "the step time implied from its " + out.step_implied;
  if (!(out.measured_step_s > 0) || !std::isfinite(out.measured_step_s))
    return fmt::format("{}: expected a finite positive time, got {:.3g} s", what, out.measured_step_s);
  const double mfu = predicted_mfu * out.predicted_step_s / out.measured_step_s;
  if (mfu > 1)
    return fmt::format(
        "{}: {:.3g} s would run the model's FLOPs at {:.3g}% of the chip's peak ({} {}): faster "
        "than the chip",
        what, out.measured_step_s, 100 * mfu, hw.name, dtype);
  if (mfu > 0 && mfu < 0.01)
    return fmt::format(
        "{}: {:.3g} s runs the model's FLOPs at {:.2g}% of the chip's peak ({} {}), below 1%: a "
        "time or rate in the wrong unit?",
        what, out.measured_step_s, 100 * mfu, hw.name, dtype);
  return "";
}

// Warnings where a row reporting both a time and a rate disagrees with itself
// (in its own FLOP convention), by more than 3%.
void self_consistency_warnings(const MeasuredRun& run, double flops, double peak, ValidatedRow& out) {
  const TrainingSpec& ts = run.training;
  const double gpus = double(ts.num_gpus);
  const double tokens = double(ts.global_batch_sequences) * double(ts.seq_len);
  if (run.step_time_s && run.tokens_per_sec_per_gpu && run.scope == MeasurementScope::step) {
    const double implied = tokens / (*run.step_time_s * gpus);
    if (std::abs(implied / *run.tokens_per_sec_per_gpu - 1) > 0.03)
      out.warnings.push_back(fmt::format("reported {:.0f} tokens/s per GPU, but its step time gives {:.0f}",
                                         *run.tokens_per_sec_per_gpu, implied));
  }
  if (run.step_time_s && flops > 0 && run.scope == MeasurementScope::step) {
    if (run.tflops_per_gpu) {
      const double implied = flops / (*run.step_time_s * gpus) / 1e12;
      if (std::abs(implied / *run.tflops_per_gpu - 1) > 0.03)
        out.warnings.push_back(
            fmt::format("reported {:.0f} TFLOP/s, but its step time and FLOP convention ({}) give {:.0f}",
                        *run.tflops_per_gpu, to_string(run.convention), implied));
    }
    if (run.mfu && peak > 0) {
      const double implied = flops / (*run.step_time_s * gpus * peak);
      if (std::abs(implied / *run.mfu - 1) > 0.03)
        out.warnings.push_back(
            fmt::format("reported MFU {:.1f}%, but its step time and FLOP convention ({}) give {:.1f}%", 100 * *run.mfu,
                        to_string(run.convention), 100 * implied));
    }
  }
}

// The measured step time, the errors against the prediction in `out`, and
// warnings where the row disagrees with itself; or the reason the row's
// figures are not a measurement.
void compare_with_measured(const MeasuredRun& run, const HardwareProfile& hw, double predicted_mfu, ValidatedRow& out) {
  const TrainingSpec& ts = run.training;
  const double gpus = double(ts.num_gpus);
  const double peak = hw.peak_flops_per_s[std::size_t(ts.dtype)];
  const double flops = convention_flops_per_step(run.convention, run.model, ts.seq_len, ts.global_batch_sequences,
                                                 run.stated_flops_per_sequence);
  const std::optional<double> measured = measured_step(run, flops, peak, out);
  if (!measured) {
    out.skip_reason = "no measured step time, and none can be implied from the reported figures";
    return;
  }
  out.measured_step_s = *measured;
  if (std::string why = implausible(run, hw, flops, predicted_mfu, out); !why.empty()) {
    out.skip_reason = std::move(why);
    return;
  }
  out.step_error = (out.predicted_step_s - out.measured_step_s) / out.measured_step_s;
  self_consistency_warnings(run, flops, peak, out);
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
  SearchPins p = run.pins;
  if (run.shard_per_domain) {
    // One hybrid shard group per scale-up domain (a node, a TPU slice): the
    // DP x CP ranks a domain holds, TP innermost, where the run spans more
    // than one and there is no pipeline (stages would split the domain).
    const ParallelConfig given = pinned_config(p);
    const std::int64_t domain = hw.tiers.empty() ? 0 : hw.tiers[0].size;
    const std::int64_t shard = given.tp > 0 && domain % given.tp == 0 ? domain / given.tp : 0;
    if (given.pp == 1 && shard >= 2 && shard < given.dp * given.cp && (given.dp * given.cp) % shard == 0 &&
        shard % given.cp == 0) {
      p.zero_shard = shard;
      out.assumptions.push_back(
          fmt::format("hybrid sharding: ZeRO within each scale-up domain of {} {}s, replicated "
                      "across them (--zero-shard {})",
                      domain, device_word(hw), shard));
    }
  }

  const ParallelConfig pc = pinned_config(p);  // a row always states tp, cp, pp and dp
  // Several pipeline flushes per step (MeasuredRun::pipeline_passes): one
  // pass priced over its share of the global batch.
  const std::int64_t passes = std::max<std::int64_t>(1, run.pipeline_passes);
  TrainingSpec pass = ts;
  pass.global_batch_sequences /= passes;
  Evaluation ev;
  if (run.chosen.empty()) {
    ev = evaluate(run.model, hw, normalized(pc), pass);
  } else {
    SearchSpec spec;
    spec.training = pass;
    spec.pins = p;
    spec.top_k = 1;
    const SearchResult sr = search(run.model, hw, spec);
    if (!sr.top.empty()) {
      ev = sr.top.front();
    } else {
      ev = evaluate(run.model, hw, normalized(pc), pass);
      out.warnings.push_back("no choice of the unknown knobs fits; evaluated with the defaults");
    }
  }
  out.config = ev.config;
  const std::uint32_t oom = 1u << unsigned(Reason::out_of_memory);
  if ((ev.reasons & ~oom) != 0) {
    out.skip_reason = fmt::format("layout {:c} is not valid for the planner: {}", ev.config, ReasonSet{ev.reasons});
    return out;
  }
  if (ev.has(Reason::out_of_memory) && run.scope == MeasurementScope::step)
    out.warnings.push_back(fmt::format("planner predicts out of memory ({:.1f} of {:.1f} GiB)",
                                       ev.memory.total_bytes / (1u << 30), ev.memory.capacity_bytes / (1u << 30)));
  // The step's FLOPs over its time: a pass's utilisation, less the optimizer
  // steps the passes do not repeat.
  const double predicted_mfu = passes > 1 && run.scope == MeasurementScope::step
                                   ? ev.time.mfu * double(passes) * ev.time.step_s /
                                         (double(passes) * ev.time.step_s - double(passes - 1) * ev.time.optimizer_s)
                                   : ev.time.mfu;
  out.predicted_palm_mfu = predicted_mfu;
  // Each pass a whole step but the optimizer's, which runs once.
  out.predicted_step_s = run.scope == MeasurementScope::layer
                             ? ev.time.layer_fwd_s + ev.time.layer_bwd_s
                             : double(passes) * ev.time.step_s - double(passes - 1) * ev.time.optimizer_s;
  if (!(out.predicted_step_s > 0) || !std::isfinite(out.predicted_step_s)) {
    out.skip_reason = "the planner's predicted time is not a positive number";
    return out;
  }

  compare_with_measured(run, hw, predicted_mfu, out);
  return out;
}

// The first --hardware mapping whose pattern the gpu_type contains (ignoring
// case, spaces, '-' and '_'), or nullopt.
std::optional<std::size_t> mapping_for(const std::string& gpu_type, const ValidateOptions& opt) {
  const std::string g = squash(gpu_type);
  for (std::size_t i = 0; i < opt.hardware_map.size(); ++i)
    if (const std::string p = squash(opt.hardware_map[i].first); !p.empty() && g.find(p) != std::string::npos) return i;
  return std::nullopt;
}

// A --hardware mapping that no row takes cannot apply: an error, not a no-op
// (a typo in its pattern would leave the rows it meant on the stock profiles).
// Rows that name their own profile (`hardware`) do not take one.
void check_mappings_apply(const std::vector<RunRow>& rows, const ValidateOptions& opt) {
  std::vector<bool> taken(opt.hardware_map.size());
  for (const RunRow& row : rows)
    if (row.run && !row.run->hardware)
      if (const auto i = mapping_for(row.run->gpu_type, opt)) taken[*i] = true;
  for (std::size_t i = 0; i < taken.size(); ++i) {
    if (taken[i]) continue;
    // Named, not structured bindings: clang before 16 cannot capture those in a lambda.
    const std::string& pattern = opt.hardware_map[i].first;
    const std::string& profile = opt.hardware_map[i].second;
    const std::string squashed = squash(pattern);
    const bool shadowed = std::any_of(rows.begin(), rows.end(), [&](const RunRow& row) {
      return row.run && !row.run->hardware && squash(row.run->gpu_type).find(squashed) != std::string::npos;
    });
    throw InputError("--hardware",
                     shadowed
                         ? fmt::format("{}={} applies to no row: every row whose gpu_type contains '{}' is mapped by "
                                       "an earlier --hardware",
                                       pattern, profile, pattern)
                         : fmt::format("{}={} applies to no row: no gpu_type contains '{}' (ignoring case, spaces, "
                                       "'-' and '_'; rows naming their own hardware do not count)",
                                       pattern, profile, pattern));
  }
}

}  // namespace

std::string match_hardware(const std::string& gpu_type, const std::vector<HardwareProfile>& stock,
                           const ValidateOptions& opt, const std::string& site_text) {
  const std::string g = squash(gpu_type);
  if (const auto i = mapping_for(gpu_type, opt)) return opt.hardware_map[*i].second;
  // A named cluster with a stock profile of its own (HardwareProfile::clusters:
  // "A100-SXM4-80GB (Jean Zay gpu_p5)" is not a DGX A100), named in gpu_type,
  // or in the row's source or notes ("BLOOM ... trained on Jean Zay",
  // gpu_type "A100 80GB") for a chip of the profile's family.
  for (const auto& hw : stock)
    for (const std::string& cluster : hw.clusters)
      if (!cluster.empty() && g.find(squash(cluster)) != std::string::npos) return hw.name;
  const std::string site = squash(site_text);
  const auto row_gb = memory_gb(gpu_type);
  for (const auto& hw : stock) {
    const std::string family = squash(chip_family(hw.chip_name));
    const auto hw_gb = memory_gb(hw.chip_name);
    if (family.empty() || g.find(family) == std::string::npos || (row_gb && hw_gb && *row_gb != *hw_gb)) continue;
    for (const std::string& cluster : hw.clusters)
      if (!cluster.empty() && site.find(squash(cluster)) != std::string::npos) return hw.name;
  }
  // The longest family named wins ("GB200" is not a "B200"); among profiles of
  // one family, one whose other words ("PCIe", "NVL", "SXM5") the row also names,
  // a word matching its letters alone too ("SXM" for "SXM5"); when several do,
  // the one the row names first ("H100 SXM 96GB ... between SXM and NVL" is an SXM part).
  std::string best;
  std::size_t best_family = 0;
  bool best_form = false;
  std::size_t best_pos = std::string::npos;
  for (const auto& hw : stock) {
    const std::string family = squash(chip_family(hw.chip_name));
    if (family.empty() || g.find(family) == std::string::npos) continue;
    const auto hw_gb = memory_gb(hw.chip_name);
    if (row_gb && hw_gb && *row_gb != *hw_gb) continue;
    std::size_t form_pos = std::string::npos;
    for (std::size_t pos = 0; pos < hw.chip_name.size();) {
      const std::size_t end = std::min(hw.chip_name.find(' ', pos), hw.chip_name.size());
      const std::string tok = squash(hw.chip_name.substr(pos, end - pos));
      pos = end + 1;
      if (tok.size() < 3 || tok == family || memory_gb(tok)) continue;
      std::string stem = tok;
      while (!stem.empty() && std::isdigit(static_cast<unsigned char>(stem.back()))) stem.pop_back();
      for (const std::string& word : {tok, stem})
        if (word.size() >= 3) form_pos = std::min(form_pos, g.find(word));
    }
    const bool form = form_pos != std::string::npos;
    const bool better = family.size() != best_family ? family.size() > best_family
                        : form != best_form           ? form
                                                      : form && form_pos < best_pos;
    if (best.empty() || better) best = hw.name, best_family = family.size(), best_form = form, best_pos = form_pos;
  }
  return best;
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

std::pair<std::string, std::string> parse_hardware_mapping(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InputError("--hardware", fmt::format("expected PATTERN=PROFILE, got '{}'", text));
  return {text.substr(0, eq), text.substr(eq + 1)};
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
  check_mappings_apply(rows, opt);

  std::vector<std::string> source_order;
  std::map<std::string, std::vector<std::pair<std::string, double>>> by_source;
  std::vector<std::pair<std::string, double>> all;
  for (const RunRow& row : rows) {
    ValidatedRow v;
    if (!row.run) {
      v.id = row.id, v.source = row.source, v.model_name = row.model_name;
      v.skip_reason = row.skip_reason;
    } else {
      std::string hw_name =
          row.run->hardware.value_or(match_hardware(row.run->gpu_type, stock, opt, row.run->site_text));
      if (hw_name.empty()) {
        v.id = row.id, v.source = row.source, v.model_name = row.model_name;
        v.skip_reason = fmt::format(
            "no hardware profile matches gpu_type '{}' (map one with --hardware PATTERN=PROFILE)", row.run->gpu_type);
      } else {
        try {
          v = evaluate_row(*row.run, profile(hw_name));
        } catch (const InputError& e) {  // a row naming an unknown profile
          v.id = row.id, v.source = row.source, v.model_name = row.model_name;
          v.skip_reason = fmt::format("hardware '{}': {}", row.run->gpu_type, e.message());
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

}  // namespace planner
