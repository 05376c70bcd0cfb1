// planner evaluate: price one configuration (model/evaluate.h) and print it,
// with --explain every formula it applied; --html also writes a page with its
// breakdowns, simulated timeline and formulas.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "config_flags.h"
#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/simulate/simulate_top.h"
#include "planner/spec/names.h"
#include "planner/spec/input_error.h"
#include "planner/views/report.h"

namespace planner::cli {

namespace {

struct EvaluateFlags {
  CommonFlags common;
  ConfigFlags config;
  LaunchOptions launch;
  bool explain = false;
};

int run(const EvaluateFlags& f) {
  const ModelSpec model = find_model(f.common.model);
  const HardwareProfile hw = find_hardware(f.common.hardware);
  const std::optional<Framework> fw = framework_from(f.launch);
  const std::optional<TrainingBudget> budget = budget_from(f.launch);
  TrainingSpec ts = training_from(f.common, model);
  apply_framework(f.common, fw, ts, hw);
  apply_recompute_modules(f.config, model, ts);
  check_dtype(ts, hw);
  {
    SearchPins expert_pins = pins_from(f.config, false, "evaluate");
    check_expert_flags(expert_pins, model);
  }
  check_selective_ac(f.common, ts, pins_from(f.config, false, "evaluate"), false);
  ParallelConfig pc = config_from(f.config, ts);
  check_a2a_applies(f.common, pc);
  check_recompute_overlap(pc, ts);
  check_data_parallel_flags(f.common, f.config, model, pc);
  if (fw) pc = framework_config(*fw, model, ts, pc, f.config);
  const Format format = parse_format(f.common.format);
  if (f.explain && format == Format::csv)
    throw InputError("--explain", "prints the formulas with --format table or json, not csv");
  check_html_path(f.common);
  Explain ex;
  const Evaluation ev = evaluate(model, hw, pc, ts, f.explain || f.common.html ? &ex : nullptr);
  const RunContext ctx{model, hw, ts, budget ? &*budget : nullptr, fw ? &framework_info(*fw) : nullptr};
  // A layout that does not fit exits 1, and a failing command leaves no file:
  // the page is written for a layout that fits only.
  if (f.common.html && ev.feasible()) {
    // The page shows the layout's timeline too, when it can run.
    const std::optional<SimulatedStep> step = simulate_own_schedule(model, hw, ts, ev);
    write_html(*f.common.html, render_evaluation_html(ev, ex, step ? &*step : nullptr, ctx, html_page_info()));
  }
  std::cout << render_evaluation(ev, ctx, format, f.explain ? &ex : nullptr);
  if (f.common.html && !ev.feasible())
    std::cerr << fmt::format("planner: error: the layout does not fit (reasons above); {} not written\n",
                             *f.common.html);
  return ev.feasible() ? 0 : 1;
}

}  // namespace

Runner add_evaluate_command(CLI::App& cmd) {
  auto f = std::make_shared<EvaluateFlags>();
  add_common(&cmd, f->common, true);
  add_config(&cmd, f->config, false);
  cmd.add_option("--schedule", f->config.schedule, "1f1b or gpipe (interleaved when --vpp > 1)")
      ->check(CLI::IsMember(name_list(kClosedFormSchedules)));
  cmd.add_flag("--explain", f->explain, "print every formula with its inputs and output");
  add_framework_flag(&cmd, f->launch, false);
  add_budget_flags(&cmd, f->launch);
  return [f] { return run(*f); };
}

}  // namespace planner::cli
