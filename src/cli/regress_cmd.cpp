// planner regress: prices the regression suite and compares it with the golden
// file (or, with --update, rewrites the golden file). Logic in src/validate/regress.cpp.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "planner/io/atomic_write.h"
#include "planner/io/catalog.h"
#include "planner/spec/input_error.h"
#include "planner/validate/regress.h"
#include "planner/views/regress_report.h"

namespace planner::cli {

namespace {

struct RegressFlags {
  std::string suite;   // empty: default_suite_path()
  std::string golden;  // empty: default_golden_path()
  bool update = false;
  std::optional<double> rtol;
};

// A golden file holds finite predictions (JSON has no NaN or infinity, and
// load_golden refuses null): a non-finite one is a cost-model bug to fix, not
// to bless.
void refuse_non_finite(const RegressResults& now, const std::string& suite_path) {
  for (const CaseMetrics& c : now.cases)
    for (const auto& [metric, value] : c.metrics)
      if (!std::isfinite(value))
        throw InputError(suite_path, fmt::format("case {}: its {} is not a finite number; the golden file is not "
                                                 "rewritten",
                                                 c.name, metric));
}

int run_regress(const RegressFlags& f) {
  if (f.rtol && !(std::isfinite(*f.rtol) && *f.rtol >= 0))
    throw InputError("--rtol", fmt::format("expected a non-negative number, got {}", *f.rtol));
  // Standard output carries the report, and the golden file is read before
  // --update rewrites it: "-" is no file name here (as for --svg and --trace).
  if (f.golden == "-")
    throw InputError("--golden", f.update ? "expected a file name; --update does not write the golden file to stdout, "
                                            "which carries the report"
                                          : "expected a file name; the golden file is not read from stdin");
  // The suite is a file of the data directory's kind (its cases name model
  // and hardware files): "-" stands for no stream here either.
  if (f.suite == "-") throw InputError("--suite", "expected a file name; the suite is not read from stdin");
  // The project's golden file blesses the project's suite: rewriting it from
  // another suite would silently replace every case with its own.
  if (f.update && !f.suite.empty() && f.golden.empty())
    throw InputError("--update", fmt::format("with --suite {}, give --golden FILE: the default golden file holds the "
                                             "project's suite",
                                             f.suite));
  const std::string suite_path = f.suite.empty() ? default_suite_path() : f.suite;
  const std::string golden_path = f.golden.empty() ? default_golden_path() : f.golden;
  RegressOptions opt;
  opt.rtol_override = f.rtol;

  const RegressResults now = predict(load_suite(suite_path, data_dir()));
  if (!f.update) {
    const RegressReport rep = compare(load_golden(golden_path), now, opt);
    std::cout << render_regress(rep);
    return rep.passed() ? 0 : 1;
  }
  // Re-blessing must also repair a golden file that no longer parses (say, a
  // merge conflict), so an unreadable one counts as empty.
  RegressResults old;
  std::error_code ec;
  if (std::filesystem::exists(golden_path, ec)) {
    try {
      old = load_golden(golden_path);
    } catch (const InputError& e) {
      std::cerr << "planner: note: " << e.what() << "; rewriting it\n";
    }
  }
  refuse_non_finite(now, suite_path);
  const RegressReport rep = compare(old, now, opt);
  write_file_atomically(golden_path, render_golden(now));
  std::cout << render_regress(rep) << render_update(rep, golden_path);
  return 0;
}

}  // namespace

Runner add_regress_command(CLI::App& cmd) {
  auto flags = std::make_shared<RegressFlags>();
  cmd.footer(
      "Tolerances: a metric matches when |now - golden| <= max(atol, rtol * |golden|).\n"
      "  seconds and ratios (*_s, tokens_per_s, mfu, hfu, bubble_fraction, micro_batches_in_flight):\n"
      "      rtol 1e-6, atol 1e-12\n"
      "  bytes and FLOPs (*_bytes, *_flops_per_step): rtol 1e-9, atol 1\n"
      "  counts, stage layout and feasibility (micro_batches, peak_stage, layers_on_peak_stage,\n"
      "      layout_*, feasible, reasons): exact\n"
      "--rtol replaces the relative tolerance of the first two classes.\n"
      "Exit code 0 when every metric matches, 1 when any differs or a case is missing on either side.\n"
      "After an intended change: planner regress --update, and paste its table into the commit message.");
  cmd.add_option("--suite", flags->suite, "suite of cases (default tests/regress/suite.json in the data directory)")
      ->type_name("FILE");
  cmd.add_option("--golden", flags->golden,
                 "golden predictions (default tests/regress/golden.json in the data directory)")
      ->type_name("FILE");
  cmd.add_flag("--update", flags->update,
               "rewrite the golden file from the current predictions and report what changed");
  cmd.add_option("--rtol", flags->rtol, "relative tolerance for every time, ratio, byte and FLOP metric");
  return [flags] { return run_regress(*flags); };
}

}  // namespace planner::cli
