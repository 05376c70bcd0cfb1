// planner export --framework X: price one configuration (the flags of
// `evaluate`) with the framework's defaults and print what to launch it with
// (framework/launch_flags.h): Megatron-LM arguments, Megatron-Bridge
// overrides, a torchtitan TOML fragment, a DeepSpeed JSON or MaxText
// overrides. A layout the framework cannot express, or one that does not
// fit, is an error saying why.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "config_flags.h"
#include "planner/framework/launch_flags.h"
#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/labels.h"
#include "planner/spec/input_error.h"
#include "planner/spec/names.h"

namespace planner::cli {

namespace {

struct ExportFlags {
  CommonFlags common;
  ConfigFlags config;
  LaunchOptions launch;
};

int run(const ExportFlags& f) {
  if (f.common.format != "table")
    throw InputError("--format", "export prints the framework's own format (flags, TOML, JSON); leave --format out");
  if (f.common.html) throw InputError("--html", "export writes no page; use planner evaluate --html");
  const ModelSpec model = find_model(f.common.model);
  const HardwareProfile hw = find_hardware(f.common.hardware);
  const Framework fw = *framework_from(f.launch);
  TrainingSpec ts = training_from(f.common, model);
  apply_framework(f.common, fw, ts, hw);
  apply_recompute_modules(f.config, model, ts);
  check_dtype(ts, hw);
  {
    SearchPins expert_pins = pins_from(f.config, false, "export");
    check_expert_flags(expert_pins, model);
  }
  check_selective_ac(f.common, ts, pins_from(f.config, false, "export"), false);
  const ParallelConfig flagged = config_from(f.config, ts, "export");
  check_a2a_applies(f.common, flagged);
  check_recompute_overlap(flagged, ts);
  check_data_parallel_flags(f.common, f.config, model, flagged);
  const ParallelConfig pc = framework_config(fw, model, ts, flagged, f.config);
  const Evaluation ev = evaluate(model, hw, pc, ts);
  if (!ev.feasible())
    throw InputError("export", fmt::format("{} does not run: {} (planner evaluate shows the numbers)",
                                           config_label(ev.config, 'c'), ReasonSet{ev.reasons}));
  const LaunchFlags flags = launch_flags(fw, model, hw, ts, ev, RuleContext{f.config.reshard_after_forward.has_value()});
  std::cout << flags.text;
  if (!flags.note.empty()) std::cerr << "planner: note: " << flags.note << "\n";
  return 0;
}

}  // namespace

Runner add_export_command(CLI::App& cmd) {
  auto f = std::make_shared<ExportFlags>();
  add_common(&cmd, f->common, true);
  add_config(&cmd, f->config, false);
  cmd.add_option("--schedule", f->config.schedule, "1f1b or gpipe (interleaved when --vpp > 1)")
      ->check(CLI::IsMember(name_list(kClosedFormSchedules)));
  add_framework_flag(&cmd, f->launch, true);
  return [f] { return run(*f); };
}

}  // namespace planner::cli
