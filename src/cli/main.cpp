// planner: the thin driver. Parses flags with CLI11, calls one library entry
// point per subcommand, prints what the report views render. Exit codes:
// 0 success, 1 bad input or no feasible result, 2 usage error, 3 internal
// error (a bug). main() itself
// is in planner_main.cpp, so the fuzz target can call run_cli().
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "config_flags.h"
#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/model/evaluate.h"
#include "planner/search/search.h"
#include "planner/spec/input_error.h"
#include "planner/views/report.h"
#include "planner/views/simulate_report.h"
#include "progress.h"

using namespace planner;
using namespace planner::cli;

namespace {

int run_evaluate(const CommonFlags& f, const ConfigFlags& c, bool explain) {
  const ModelSpec m = find_model(f.model);
  const HardwareProfile hw = find_hardware(f.hardware);
  const TrainingSpec ts = training_from(f, m);
  const ParallelConfig pc = config_from(c, ts);
  Explain ex;
  const Evaluation ev = evaluate(m, hw, pc, ts, explain ? &ex : nullptr);
  std::cout << render_evaluation(ev, RunContext{m, hw, ts}, parse_format(f.format));
  if (explain && parse_format(f.format) == Format::table) std::cout << render_explain(ex);
  return ev.feasible() ? 0 : 1;
}

int run_search(const CommonFlags& f, const ConfigFlags& c, std::size_t top, std::size_t simulate_k) {
  const ModelSpec m = find_model(f.model);
  const HardwareProfile hw = find_hardware(f.hardware);
  SearchSpec spec;
  spec.training = training_from(f, m);
  spec.pins = pins_from(c);
  if (top < 1 || top > 10000) throw InputError("--top", fmt::format("expected 1 to 10000, got {}", top));
  if (simulate_k > 10000) throw InputError("--simulate-top", fmt::format("expected 0 to 10000, got {}", simulate_k));
  spec.top_k = std::max(top, simulate_k);
  ProgressLine progress(std::cerr, ProgressLine::stderr_is_terminal(), "searched");
  spec.progress = [&progress](const SearchProgress& p) { progress.update(p.considered, p.total); };
  SearchResult r = search(m, hw, spec);
  progress.finish();
  std::vector<SimulatedRank> simulated;
  if (simulate_k > 0) simulated = simulate_top(m, hw, spec.training, r.top, simulate_k);
  if (r.top.size() > top) r.top.resize(top);
  const Format format = parse_format(f.format);
  if (format == Format::json && simulate_k > 0) {
    nlohmann::json j = nlohmann::json::parse(render_search(r, RunContext{m, hw, spec.training}, format));
    j["simulated_ranking"] = nlohmann::json::parse(render_simulated_ranking(simulated, format));
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << render_search(r, RunContext{m, hw, spec.training}, format);
    if (simulate_k > 0) std::cout << (format == Format::csv ? "\n" : "") << render_simulated_ranking(simulated, format);
  }
  if (r.top.empty()) {
    std::cerr << fmt::format("planner: error: no layout of {} GPUs fits {} on {} (rejection reasons above)\n",
                             spec.training.num_gpus, m.name, hw.name);
    return 1;
  }
  return 0;
}

}  // namespace

int planner::cli::run_cli(int argc, char** argv) {
  CLI::App app{"planner: parallelism planner for LLM training (TP x CP x PP x DP, ZeRO, recompute)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  std::string list_what, list_format = "table";
  auto* list = app.add_subcommand("list", "list stock models or hardware profiles");
  list->add_option("what", list_what, "models or hardware")->required()->check(CLI::IsMember({"models", "hardware"}));
  list->add_option("--format", list_format, "table or json")
      ->check(CLI::IsMember(name_list(names_for({Format::table, Format::json}))));

  std::string show_name, show_format = "table";
  auto* show = app.add_subcommand("show", "show one model or hardware profile (name, alias or JSON path)");
  show->add_option("name", show_name, "model or hardware name")->required();
  show->add_option("--format", show_format, "table or json")
      ->check(CLI::IsMember(name_list(names_for({Format::table, Format::json}))));

  CommonFlags ef;
  ConfigFlags ec;
  bool explain = false;
  auto* eval = app.add_subcommand("evaluate", "price one configuration: memory, step time, fits or not");
  add_common(eval, ef, true);
  add_config(eval, ec);
  eval->add_option("--schedule", ec.schedule, "1f1b or gpipe (interleaved when --vpp > 1)")
      ->check(CLI::IsMember(name_list(names_for({Schedule::one_f_one_b, Schedule::gpipe}))));
  eval->add_flag("--explain", explain, "print every formula with its inputs and output");

  CommonFlags sf;
  ConfigFlags sc;
  std::size_t top = 10;
  auto* srch = app.add_subcommand("search", "rank every layout that fits (pins such as --tp 8 fix a knob)");
  add_common(srch, sf, true);
  add_config(srch, sc);
  srch->add_option("--top,-k", top, "how many results to print (default 10)");
  std::size_t simulate_top_k = 0;
  srch->add_option("--simulate-top", simulate_top_k,
                   "re-rank the first K results by simulated step time (planner simulate) and show both");

  const cli::Runner run_validate = cli::add_validate_command(app);
  const cli::Runner run_regress = cli::add_regress_command(app);
  const cli::Runner run_simulate = cli::add_simulate_command(app);
  cli::set_command_line(argc, argv);
  const cli::Runner run_calibrate = cli::add_calibrate_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "planner: error: " << e.what() << "\n";
    return 2;
  }

  try {
    if (*list) {
      const Format f = parse_format(list_format);
      std::cout << (list_what == "models" ? render_model_list(list_models(), f)
                                          : render_hardware_list(list_hardware(), f));
      return 0;
    }
    if (*show) {
      const Format f = parse_format(show_format);
      // A name can be a model or a hardware profile; try models first.
      for (const auto& mdl : list_models())
        if (mdl.name == show_name ||
            std::find(mdl.aliases.begin(), mdl.aliases.end(), show_name) != mdl.aliases.end()) {
          std::cout << render_model(mdl, f);
          return 0;
        }
      for (const auto& hw : list_hardware())
        if (hw.name == show_name || std::find(hw.aliases.begin(), hw.aliases.end(), show_name) != hw.aliases.end()) {
          std::cout << render_hardware(hw, f);
          return 0;
        }
      if (show_name.find(".json") != std::string::npos) {
        const auto j = read_json_file(show_name);
        if (j.is_object() && j.contains("tiers"))
          std::cout << render_hardware(hardware_from_json(j, show_name), f);
        else
          std::cout << render_model(model_from_json(j, show_name), f);
        return 0;
      }
      std::string names;
      for (const auto& mdl : list_models()) names += (names.empty() ? "" : ", ") + mdl.name;
      for (const auto& hw : list_hardware()) names += ", " + hw.name;
      throw InputError("show", fmt::format("unknown model or hardware '{}'; known: {}", show_name, names));
    }
    if (*eval) return run_evaluate(ef, ec, explain);
    if (*srch) return run_search(sf, sc, top, simulate_top_k);
    if (app.got_subcommand("validate")) return run_validate();
    if (app.got_subcommand("regress")) return run_regress();
    if (app.got_subcommand("simulate")) return run_simulate();
    if (app.got_subcommand("calibrate")) return run_calibrate();
  } catch (const InputError& e) {
    std::cerr << "planner: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    // A bug, not bad input: say so instead of terminating (the CLI fuzz target
    // treats this line as a crash).
    std::cerr << "planner: internal error: " << e.what() << " (please report with the command line)\n";
    return 3;
  }
  return 2;
}
