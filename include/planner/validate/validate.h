// `planner validate`: predicted vs measured for every row of a measured-runs
// dataset, with per-source and overall error statistics. Rows that cannot be
// evaluated are kept with their reason.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/spec/specs.h"
#include "planner/validate/published_runs.h"

namespace planner {

struct ValidatedRow {
  std::string id, source, model_name;
  std::string skip_reason;  // non-empty: not evaluated, and why
  std::string hardware;     // profile used
  MeasurementScope scope = MeasurementScope::step;
  ParallelConfig config;            // evaluated (chosen knobs filled in)
  std::vector<std::string> chosen;  // knobs chosen by the planner (row left them unknown)
  std::vector<std::string> assumptions;
  std::vector<std::string> warnings;  // e.g. "planner predicts out of memory"
  FlopConvention convention = FlopConvention::none;
  // Step (or layer) time. measured_step_s is the row's own, or implied from its
  // tokens/s per GPU, TFLOP/s or MFU through its FLOP convention (step_implied then says which).
  double predicted_step_s = 0, measured_step_s = 0, step_error = 0;
  std::string step_implied;  // "", "tokens/s", "TFLOP/s" or "MFU"
  std::optional<double> predicted_tflops, measured_tflops, tflops_error;
  std::optional<double> predicted_mfu, measured_mfu, mfu_error;
  double predicted_palm_mfu = 0;  // the planner's own MFU (PaLM), for reference
  [[nodiscard]] bool evaluated() const { return skip_reason.empty(); }
};

struct ErrorStats {
  std::size_t rows = 0;  // evaluated rows
  double median_abs = 0, p90_abs = 0, max_abs = 0;
  double mean_signed = 0;
  std::string worst_id;
};

struct ValidationReport {
  std::vector<ValidatedRow> rows;
  std::vector<std::pair<std::string, ErrorStats>> by_source;  // in order of first appearance
  ErrorStats overall;
  std::size_t skipped = 0;
};

struct ValidateOptions {
  // gpu_type pattern -> hardware profile (name, alias or path), tried before
  // the stock profiles' chip names. Pattern match is case-insensitive and
  // ignores spaces, '-' and '_'.
  std::vector<std::pair<std::string, std::string>> hardware_map;
};

// One hardware_map entry from its text "PATTERN=PROFILE" (both non-empty);
// anything else is InputError("--hardware", ...).
[[nodiscard]] std::pair<std::string, std::string> parse_hardware_mapping(const std::string& text);

// Picks the hardware profile for a row's free-text gpu_type: an explicit
// mapping first, else the stock profile whose chip family (the chip name up
// to and including its first token with a digit, e.g. "H100", "TPU v5e")
// appears in gpu_type; a memory size in both ("80GB") must agree. A stock
// profile of a named cluster (HardwareProfile::clusters) wins when gpu_type
// names the cluster, or when site_text (the row's source and notes) does and
// gpu_type names that profile's chip family. Returns the empty string when
// nothing matches.
[[nodiscard]] std::string match_hardware(const std::string& gpu_type, const std::vector<HardwareProfile>& stock,
                                         const ValidateOptions& opt, const std::string& site_text = "");

// Nearest-rank percentile of |errors| (q in [0, 1]); errors need not be sorted.
[[nodiscard]] ErrorStats error_stats(const std::vector<std::pair<std::string, double>>& id_errors);

[[nodiscard]] ValidationReport validate_runs(const std::vector<RunRow>& rows, const ValidateOptions& opt = {});

}  // namespace planner
