// Regression of the cost model's predictions: a suite of named configurations
// (tests/regress/suite.json) is priced with evaluate(), each result flattened
// into named metrics, and compared with a blessed golden file
// (tests/regress/golden.json). Sits after evaluate(); the CLI's `regress` renders
// the differences. docs/regress.md describes the files and how to re-bless.
//
// Tolerances (a metric matches when |now - golden| <= max(atol, rtol * |golden|)):
//   seconds and ratios (*_s, tokens_per_s, mfu, hfu, bubble_fraction,
//     micro_batches_in_flight):           rtol 1e-6, atol 1e-12
//   bytes and FLOPs (*_bytes, *_flops_per_step): rtol 1e-9, atol 1
//   counts and feasibility (micro_batches, peak_stage, layers_on_peak_stage,
//     layout_*, feasible, reasons):       exact
// `rtol_override` (--rtol) replaces the relative tolerance of the first two
// classes; the absolute floors stay and counts stay exact.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "planner/spec/specs.h"

namespace planner {

inline constexpr int kRegressSchemaVersion = 1;

// One configuration of the suite, with its model and hardware resolved.
struct RegressCase {
  std::string name;
  ModelSpec model;
  HardwareProfile hardware;
  ParallelConfig config;
  TrainingSpec training;
};

struct RegressSuite {
  std::vector<RegressCase> cases;  // in file order; names unique
};

// Metric name -> value, in a fixed order (regress_metric_names()).
using Metrics = std::vector<std::pair<std::string, double>>;

struct CaseMetrics {
  std::string name;
  Metrics metrics;
};

// Predictions of a whole suite, or the contents of a golden file.
struct RegressResults {
  std::vector<CaseMetrics> cases;
};

enum class MetricClass { time, amount, exact };

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

struct RegressOptions {
  std::optional<double> rtol_override;  // --rtol
};

// One metric that differs, or is present on one side only (nullopt).
struct MetricDiff {
  std::string case_name;
  std::string metric;
  std::optional<double> golden, now;
  // (now - golden) / |golden| * 100; nullopt when either side is missing or not finite, or golden is 0.
  [[nodiscard]] std::optional<double> change_pct() const;
};

struct RegressReport {
  std::size_t cases = 0;                         // cases in the suite
  std::size_t metrics = 0;                       // metrics compared (suite side)
  std::vector<std::string> missing_from_golden;  // suite cases the golden file lacks (suite order)
  std::vector<std::string> missing_from_suite;   // golden cases no longer in the suite (by name)
  std::vector<MetricDiff> differences;           // suite order, then metric order
  [[nodiscard]] bool passed() const {
    return missing_from_golden.empty() && missing_from_suite.empty() && differences.empty();
  }
};

// Default file locations: <data_dir()>/tests/regress/{suite,golden}.json.
[[nodiscard]] std::string default_suite_path();
[[nodiscard]] std::string default_golden_path();

// Parses a suite strictly (unknown keys, wrong types, unknown models or hardware,
// duplicate names are one InputError naming the file, the case and the field).
// Models and hardware are looked up in `catalog_dir`.
[[nodiscard]] RegressSuite suite_from_json(const nlohmann::json& j, const std::string& origin,
                                           const std::string& catalog_dir);
[[nodiscard]] RegressSuite load_suite(const std::string& path, const std::string& catalog_dir);

// Every metric name, in output order, and the tolerance class of each.
[[nodiscard]] const std::vector<std::string>& regress_metric_names();
[[nodiscard]] MetricClass metric_class(const std::string& metric);
[[nodiscard]] Tolerance tolerance_for(const std::string& metric, const RegressOptions& opt);

// Prices every case (pure: evaluate() per case).
[[nodiscard]] RegressResults predict(const RegressSuite& suite);

// Golden file <-> results. The JSON keeps suite and metric order.
[[nodiscard]] RegressResults golden_from_json(const nlohmann::json& j, const std::string& origin);
[[nodiscard]] RegressResults load_golden(const std::string& path);
[[nodiscard]] std::string render_golden(const RegressResults& r);

// Compares predictions with the golden results (pure).
[[nodiscard]] RegressReport compare(const RegressResults& golden, const RegressResults& now,
                                    const RegressOptions& opt = {});

}  // namespace planner
