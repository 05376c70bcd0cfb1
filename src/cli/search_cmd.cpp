// planner search [--simulate-top K]: rank every layout that fits
// (search_and_simulate, simulate/simulate_top.h) and print the report
// (views/search_report.h), with --html also a page (views/html_report.h);
// exit 1 when no layout fits.
#include <cstddef>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "config_flags.h"
#include "planner/io/catalog.h"
#include "planner/simulate/simulate_top.h"
#include "planner/spec/input_error.h"
#include "planner/views/search_report.h"
#include "progress.h"

namespace planner::cli {

namespace {

struct SearchFlags {
  CommonFlags common;
  ConfigFlags config;
  std::int64_t top = 10;  // signed, so that -1 is read as -1 and refused
  std::int64_t simulate_top = 0;
};

int run(const SearchFlags& f) {
  const ModelSpec model = find_model(f.common.model);
  const HardwareProfile hw = find_hardware(f.common.hardware);
  SearchSpec spec;
  spec.training = training_from(f.common, model);
  check_dtype(spec.training, hw);
  check_expert_flags(f.config, model);
  spec.pins = pins_from(f.config);
  if (spec.pins.ep && *spec.pins.ep == 1) {
    ParallelConfig ep1;
    check_a2a_applies(f.common, ep1);
  }
  check_tp_overlap(spec.training, spec.pins);
  check_html_path(f.common);
  spec.collect_points = f.common.html.has_value();
  if (f.top < 1 || f.top > 10000) throw InputError("--top", fmt::format("expected 1 to 10000, got {}", f.top));
  if (f.simulate_top < 0 || f.simulate_top > 10000)
    throw InputError("--simulate-top", fmt::format("expected 0 to 10000, got {}", f.simulate_top));
  ProgressLine progress(std::cerr, ProgressLine::stderr_is_terminal(), "searched");
  spec.progress = [&progress](const SearchProgress& p) {
    progress.update(p.considered, p.total);
    if (p.considered >= p.total) progress.finish();  // the search is done; simulations may follow
  };
  const SearchReport rep = search_and_simulate(model, hw, spec, f.top, f.simulate_top, f.common.html.has_value());
  progress.finish();
  const RunContext ctx{model, hw, spec.training};
  // The page first: a page that cannot be written fails the command before it prints.
  if (f.common.html) write_html(*f.common.html, render_search_html(rep, ctx, html_page_info()));
  std::cout << render_search_report(rep, ctx, parse_format(f.common.format));
  if (rep.search.top.empty()) {
    std::cerr << fmt::format("planner: error: no layout of {} GPUs fits {} on {} (rejection reasons above)\n",
                             spec.training.num_gpus, model.name, hw.name);
    return 1;
  }
  return 0;
}

}  // namespace

Runner add_search_command(CLI::App& cmd) {
  auto f = std::make_shared<SearchFlags>();
  add_common(&cmd, f->common, true);
  add_config(&cmd, f->config);
  cmd.add_option("--top,-k", f->top, "how many results to print (default 10)");
  cmd.add_option("--simulate-top", f->simulate_top,
                 "re-rank the first K results by simulated step time (planner simulate) and show both");
  return [f] { return run(*f); };
}

}  // namespace planner::cli
