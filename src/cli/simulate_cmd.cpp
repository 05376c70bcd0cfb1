// planner simulate: the evaluate flags plus --schedule, run the pipeline
// schedule as a discrete-event simulation (simulate.h), print the summary and
// its comparison with the closed form, and optionally write a Chrome trace
// (--trace), an SVG timeline (--svg), a text timeline (--ascii) and a page
// (--html).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "config_flags.h"
#include "planner/io/atomic_write.h"
#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/preflight.h"
#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"
#include "planner/spec/names.h"
#include "planner/views/simulate_report.h"
#include "planner/views/timeline.h"

namespace planner::cli {

namespace {

struct SimulateFlags {
  CommonFlags common;
  ConfigFlags config;
  std::string schedule;  // empty: the configuration's own (interleaved when --vpp > 1, else 1f1b)
  std::string trace, svg;
  bool ascii = false;
};

// The page, the trace and the SVG as one: all written or none (a bad --svg
// directory leaves no trace behind).
void write_outputs(const SimulateFlags& f, const SimResult& r, const TimelineLabels& labels, const std::string& page) {
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> notes;
  if (f.common.html) {
    files.emplace_back(*f.common.html, page);
    notes.push_back(fmt::format("planner: wrote {} ({:.0f} KiB)\n", *f.common.html, double(page.size()) / 1024.0));
  }
  if (!f.trace.empty()) {
    files.emplace_back(f.trace, render_chrome_trace(r, labels));
    notes.push_back(fmt::format("planner: wrote {} ({} events; open in https://ui.perfetto.dev or chrome://tracing)\n",
                                f.trace, r.events.size()));
  }
  if (!f.svg.empty()) {
    files.emplace_back(f.svg, render_svg_timeline(r, labels));
    notes.push_back(fmt::format("planner: wrote {}\n", f.svg));
  }
  write_files_atomically(files);
  for (const std::string& n : notes) std::cerr << n;
}

int run(const SimulateFlags& f) {
  // The text timeline follows the table; after a JSON or CSV document it
  // would make stdout neither.
  if (f.ascii && parse_format(f.common.format) != Format::table)
    throw InputError("--ascii",
                     fmt::format("prints a text timeline after the table, not with --format {} (stdout "
                                 "holds one {} document); --svg or --trace writes a timeline file",
                                 f.common.format, parse_format(f.common.format) == Format::json ? "JSON" : "CSV"));
  const ModelSpec model = find_model(f.common.model);
  const HardwareProfile hw = find_hardware(f.common.hardware);
  TrainingSpec ts = training_from(f.common, model);
  // No --framework here: the flags that need one (--torch-compile) are
  // refused as evaluate refuses them without it.
  apply_framework(f.common, std::nullopt, ts, hw);
  apply_recompute_modules(f.config, model, ts);
  check_dtype(ts, hw);
  {
    SearchPins expert_pins = pins_from(f.config, false, "simulate");
    check_expert_flags(expert_pins, model);
  }
  check_selective_ac(f.common, ts, pins_from(f.config, false, "simulate"), false);
  ParallelConfig pc = config_from(f.config, ts, "simulate");
  check_a2a_applies(f.common, pc);
  check_recompute_overlap(pc, ts);
  check_data_parallel_flags(f.common, f.config, model, pc);
  const std::optional<Schedule> requested =
      f.schedule.empty() ? std::nullopt : parse_name<Schedule>(f.schedule);  // checked by CLI::IsMember
  const Schedule schedule = simulated_schedule(pc, requested);
  pc = closed_form_config(pc, schedule);
  check_html_path(f.common, {{"--svg", f.svg}, {"--trace", f.trace}});
  Explain ex;  // the page shows the formulas
  const Evaluation ev = evaluate(model, hw, pc, ts, f.common.html ? &ex : nullptr);
  require_runnable(ev);
  const Format format = parse_format(f.common.format);
  if (ev.has(Reason::out_of_memory))
    std::cerr << fmt::format(
        "planner: warning: this layout does not fit in memory ({:.1f} GiB of {:.1f} GiB per GPU); "
        "simulated anyway\n",
        ev.memory.total_bytes / double(1ull << 30), ev.memory.capacity_bytes / double(1ull << 30));
  const PipelineProblem pr = pipeline_problem(model, hw, pc, ts, ev, schedule);
  const SimResult r = simulate(pr);
  const SimComparison cmp = compare_with_closed_form(ev, pr, r);
  const RunContext ctx{model, hw, ts};
  // Render everything first, so a bad flag (--ascii on a large case) leaves no file behind.
  const std::string ascii =
      f.ascii ? render_ascii_timeline(r, pr.stages, pr.chunks_per_stage, pr.micro_batches) : std::string();
  const std::string page =
      f.common.html ? render_simulation_html(r, cmp, ev, pr, ex, ctx, html_page_info()) : std::string();
  write_outputs(f, r, timeline_labels(ctx, ev, pr, command_line()), page);
  std::cout << render_simulation(r, cmp, ev, pr, ctx, format);
  if (f.ascii) std::cout << "\n" << ascii;
  return 0;
}

}  // namespace

Runner add_simulate_command(CLI::App& cmd) {
  auto f = std::make_shared<SimulateFlags>();
  add_common(&cmd, f->common, true);
  add_config(&cmd, f->config, false);
  cmd.add_option("--schedule", f->schedule,
                 "gpipe, 1f1b, interleaved or zb-h1 (default: interleaved when --vpp > 1, else 1f1b)")
      ->check(CLI::IsMember(name_list<Schedule>()));
  cmd.add_option("--trace", f->trace, "write a Chrome trace (JSON; Perfetto, chrome://tracing)")->type_name("FILE");
  cmd.add_option("--svg", f->svg, "write an SVG timeline picture")->type_name("FILE");
  cmd.add_flag("--ascii", f->ascii, "print a text timeline after the table (small cases: p <= 16, m*v <= 64)");
  return [f] { return run(*f); };
}

}  // namespace planner::cli
