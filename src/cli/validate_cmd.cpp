// planner validate --runs FILE [--format table|json|csv] [--hardware PATTERN=PROFILE]...
// Predicted vs measured for every row of a measured-runs dataset
// (docs/published_runs.md); exit 0 when the report was produced, 1 on bad
// input. With --max-median-error the exit code also checks the overall median
// |step-time error| (the ctest fidelity bound).
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "config_flags.h"
#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"
#include "planner/validate/validate.h"
#include "planner/views/validation_report.h"

namespace planner::cli {

namespace {

struct ValidateFlags {
  std::string runs;
  std::string format = "table";
  std::vector<std::string> hardware;
  std::optional<double> max_median, max_p90, max_error;  // unset: no bound
};

// A bound is a fraction of the measured time: finite and non-negative (NaN
// would compare false and pass every row; as `calibrate check --max-error`).
void check_bound(const char* flag, const std::optional<double>& bound) {
  if (bound && !(std::isfinite(*bound) && *bound >= 0))
    throw InputError(flag, fmt::format("expected a non-negative fraction, got {}", *bound));
}

}  // namespace

Runner add_validate_command(CLI::App& cmd) {
  auto flags = std::make_shared<ValidateFlags>();
  cmd.add_option("--runs", flags->runs, "dataset of measured runs (JSON list, format of published_runs.json)")
      ->required()
      ->type_name("FILE");
  cmd.add_option("--format", flags->format, "table, json or csv")->check(CLI::IsMember(name_list<Format>()));
  cmd.add_option("--hardware", flags->hardware,
                 "PATTERN=PROFILE: rows whose gpu_type contains PATTERN use PROFILE (name, alias or JSON path); "
                 "repeatable, tried before the stock profiles");
  cmd.add_option("--max-median-error", flags->max_median,
                 "fail (exit 1) when the overall median |step error| exceeds this fraction");
  cmd.add_option("--max-p90-error", flags->max_p90,
                 "fail (exit 1) when the overall p90 |step error| exceeds this fraction");
  cmd.add_option("--max-error", flags->max_error,
                 "fail (exit 1) when any evaluated row's |step error| exceeds this fraction");
  return [flags] {
    check_bound("--max-median-error", flags->max_median);
    check_bound("--max-p90-error", flags->max_p90);
    check_bound("--max-error", flags->max_error);
    ValidateOptions opt;
    for (const auto& m : flags->hardware) opt.hardware_map.push_back(parse_hardware_mapping(m));
    const auto rows = read_published_runs(read_json_file(flags->runs), flags->runs);
    const ValidationReport rep = validate_runs(rows, opt);
    const Format f = parse_format(flags->format);
    std::cout << render_validation(rep, f);
    int rc = 0;
    auto check = [&](const std::optional<double>& bound, double value, const std::string& what) {
      if (bound && !(value <= *bound)) {
        std::cerr << fmt::format("planner: validate: {} |step error| {:.1f}% exceeds the bound {:.1f}%\n", what,
                                 100 * value, 100 * *bound);
        rc = 1;
      }
    };
    check(flags->max_median, rep.overall.median_abs, "overall median");
    check(flags->max_p90, rep.overall.p90_abs, "overall p90");
    check(flags->max_error, rep.overall.max_abs, fmt::format("worst row ({})", rep.overall.worst_id));
    if (rep.overall.rows == 0 && (flags->max_median || flags->max_p90 || flags->max_error)) {
      std::cerr << "planner: validate: no row could be evaluated\n";
      rc = 1;
    }
    return rc;
  };
}

}  // namespace planner::cli
