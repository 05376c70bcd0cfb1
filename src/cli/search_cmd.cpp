// planner search [--simulate-top K]: rank every layout that fits
// (search_and_simulate, simulate/simulate_top.h) and print the report
// (views/search_report.h), with --html also a page (views/html_report.h);
// exit 1 when no layout fits.
#include <cstddef>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "config_flags.h"
#include "parse_errors.h"
#include "planner/framework/launch_flags.h"
#include "planner/io/catalog.h"
#include "planner/model/labels.h"
#include "planner/search/nearest_fit.h"
#include "planner/simulate/simulate_top.h"
#include "planner/spec/input_error.h"
#include "planner/views/search_report.h"
#include "progress.h"

namespace planner::cli {

namespace {

struct SearchFlags {
  CommonFlags common;
  ConfigFlags config;
  LaunchOptions launch;
  std::optional<std::string> export_to;  // --export FRAMEWORK: the top pick's launch flags
  std::int64_t top = 10;  // signed, so that -1 is read as -1 and refused
  std::int64_t simulate_top = 0;
};

constexpr std::int64_t kMaxTop = 10000;  // --top and --simulate-top

int run(const SearchFlags& f) {
  const ModelSpec model = find_model(f.common.model);
  const HardwareProfile hw = find_hardware(f.common.hardware);
  LaunchOptions launch = f.launch;
  if (f.export_to) {
    if (launch.framework && *launch.framework != *f.export_to)
      throw InputError("--export", fmt::format("writes {} flags, but --framework is {}: search for the framework you "
                                               "launch with (or leave --framework out)",
                                               *f.export_to, *launch.framework));
    launch.framework = f.export_to;
    if (parse_format(f.common.format) == Format::csv)
      throw InputError("--export", "prints the launch flags with --format table or json, not csv");
  }
  const std::optional<Framework> fw = framework_from(launch);
  const std::optional<TrainingBudget> budget = budget_from(launch);
  // Before the search: no layout of the model could be run (or written).
  if (fw)
    if (const std::string why = moe_export_problem(*fw, model); !why.empty())
      throw InputError(f.export_to ? "--export" : "--framework", why);
  SearchSpec spec;
  spec.training = training_from(f.common, model);
  apply_framework(f.common, fw, spec.training, hw);
  apply_recompute_modules(f.config, model, spec.training);
  spec.framework = fw;
  check_dtype(spec.training, hw);
  spec.pins = pins_from(f.config);
  check_expert_flags(spec.pins, model);
  check_zero_shard(spec.pins, spec.training.num_gpus);
  if (spec.pins.ep.single() && *spec.pins.ep == 1) {
    ParallelConfig ep1;
    check_a2a_applies(f.common, ep1);
  }
  if (f.common.overlap_a2a) spec.pins.overlap_a2a = *f.common.overlap_a2a;
  if (spec.pins.recompute.single()) {
    ParallelConfig rc;
    rc.recompute = *spec.pins.recompute;
    check_recompute_overlap(rc, spec.training);
  }
  check_tp_overlap(spec.training, spec.pins);
  if (spec.training.overlap_p2p && spec.pins.pp && spec.pins.pp.values() == std::vector<std::int64_t>{1})
    throw InputError("--overlap-p2p", "overlaps pipeline send/recv, but --pp is 1");
  check_selective_ac(f.common, spec.training, spec.pins, true);
  // The flag describes DeepSpeed's ZeRO-3 under full recomputation: the
  // search keeps to the layouts it applies to (as --recompute-modules keeps
  // to selective recomputation), unless pins say otherwise (then refused).
  if (spec.training.zero3_recompute_regather) {
    if (!spec.pins.zero_stage) spec.pins.zero_stage = 3;
    if (!spec.pins.recompute) spec.pins.recompute = Recompute::full;
    if (!spec.pins.reshard_after_forward) spec.pins.reshard_after_forward = true;
  }
  check_zero3_regather(spec.training, spec.pins);
  check_html_path(f.common);
  spec.collect_points = f.common.html.has_value();
  if (f.top < 1 || f.top > kMaxTop) throw InputError("--top", fmt::format("expected 1 to {}, got {}", kMaxTop, f.top));
  if (f.simulate_top < 0 || f.simulate_top > kMaxTop)
    throw InputError("--simulate-top", fmt::format("expected 0 to {}, got {}", kMaxTop, f.simulate_top));
  ProgressLine progress(std::cerr, ProgressLine::stderr_is_terminal(), "searched");
  spec.progress = [&progress](const SearchProgress& p) {
    progress.update(p.considered, p.total);
    if (p.considered >= p.total) progress.finish();  // the search is done; simulations may follow
  };
  SearchReport rep = search_and_simulate(model, hw, spec, f.top, f.simulate_top, f.common.html.has_value());
  progress.finish();
  if (rep.search.top.empty()) rep.would_fit = nearest_fits(model, hw, spec);
  RunContext ctx{model, hw, spec.training, budget ? &*budget : nullptr, fw ? &framework_info(*fw) : nullptr};
  std::optional<LaunchFlags> flags;
  if (f.export_to && !rep.search.top.empty()) {
    try {
      flags = launch_flags(*fw, model, hw, spec.training, rep.search.top.front(),
                           RuleContext{spec.pins.reshard_after_forward.has_value()});
    } catch (const InputError&) {
      std::cout << render_search_report(rep, ctx, parse_format(f.common.format));  // the ranking, then why not
      throw;
    }
  }
  ctx.launch = flags ? &*flags : nullptr;
  // The page first: a page that cannot be written fails the command before it
  // prints. None when nothing fits: the command fails, and leaves no file.
  if (f.common.html && !rep.search.top.empty())
    write_html(*f.common.html, render_search_html(rep, ctx, html_page_info()));
  std::cout << render_search_report(rep, ctx, parse_format(f.common.format));
  if (flags && !flags->note.empty() && parse_format(f.common.format) == Format::table)
    std::cerr << "planner: note: " << flags->note << "\n";
  if (rep.search.top.empty()) {
    std::cerr << fmt::format("planner: error: no layout of {} {}s fits {} on {} (rejection reasons{} above){}\n",
                             spec.training.num_gpus, device_word(hw), model.name, hw.name,
                             rep.would_fit.empty() ? "" : " and what would fit",
                             f.common.html ? fmt::format("; {} not written", *f.common.html) : "");
    return 1;
  }
  return 0;
}

}  // namespace

Runner add_search_command(CLI::App& cmd) {
  auto f = std::make_shared<SearchFlags>();
  add_common(&cmd, f->common, true);
  add_config(&cmd, f->config, true);
  integer_range(cmd.add_option("--top,-k", f->top, "how many results to print (default 10)"),
                fmt::format("1 to {}", kMaxTop));
  integer_range(cmd.add_option("--simulate-top", f->simulate_top,
                               "re-rank the first K results by simulated step time (planner simulate) and show both"),
                fmt::format("0 to {}", kMaxTop));
  add_framework_flag(&cmd, f->launch, false);
  add_budget_flags(&cmd, f->launch);
  cmd.add_option("--export", f->export_to,
                 "print the top pick's launch flags for this framework (implies --framework): megatron, nemo, "
                 "torchtitan, deepspeed or maxtext")
      ->check(CLI::IsMember(name_list<Framework>()));
  return [f] { return run(*f); };
}

}  // namespace planner::cli
