// planner: the thin driver. Every subcommand is one row of kSubcommands (its
// name, description and the function that adds its flags, in <name>_cmd.cpp);
// run_cli parses the command line with CLI11 and runs the one given. Exit
// codes: 0 success, 1 bad input or no feasible result, 2 usage error, 3
// internal error (a bug). main() itself is in planner_main.cpp, so the fuzz
// target can call run_cli().
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "parse_errors.h"
#include "planner/io/catalog.h"
#include "planner/spec/input_error.h"

namespace planner::cli {

namespace {

struct Subcommand {
  const char* name;
  const char* description;
  Runner (*add)(CLI::App& cmd);
};

// In the order `planner --help` lists them.
constexpr Subcommand kSubcommands[] = {
    {"list", "list stock models or hardware profiles", add_list_command},
    {"show", "show one model or hardware profile (name, alias or JSON path)", add_show_command},
    {"evaluate", "price one configuration: memory, step time, fits or not", add_evaluate_command},
    {"search", "rank every layout that fits (pins such as --tp 8 fix a knob)", add_search_command},
    {"export", "print the launch flags of one configuration for a framework (--framework megatron, ...)",
     add_export_command},
    {"validate", "compare predictions with measured runs (docs/published_runs.md)", add_validate_command},
    {"regress", "check the cost model's predictions for a suite of cases against a golden file (CI)",
     add_regress_command},
    {"simulate", "simulate one step of the pipeline schedule event by event; timeline files", add_simulate_command},
    {"calibrate", "fit a hardware profile to collective measurements (docs/calibration.md)", add_calibrate_command},
    {"import-hf", "turn a Hugging Face config.json into a planner model file", add_import_hf_command},
};

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"planner: parallelism planner for LLM training (TP x CP x PP x DP, ZeRO, recompute)"};
  app.name("planner");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");
  set_command_line(argc, argv);
  std::vector<std::pair<CLI::App*, Runner>> commands;
  for (const Subcommand& s : kSubcommands) {
    CLI::App* cmd = app.add_subcommand(s.name, s.description);
    commands.emplace_back(cmd, s.add(*cmd));
  }
  add_value_checks(app);

  // Bare `planner`: the help, not an error. A first word that is no
  // subcommand: say which one it resembles.
  if (argc <= 1) {
    std::cout << app.help();
    return 0;
  }
  if (const std::string first = argv[1]; !first.empty() && first[0] != '-') {
    std::vector<std::string> names;
    for (const Subcommand& sc : kSubcommands) names.emplace_back(sc.name);
    if (std::find(names.begin(), names.end(), first) == names.end()) {
      const std::string best = closest_name(first, names);
      std::string all;
      for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
      std::cerr << "planner: error: unknown subcommand '" << first << "'"
                << (best.empty() ? "" : " (did you mean '" + best + "'?)") << "; subcommands: " << all
                << " (planner --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "planner: error: " << parse_error_message(app, e, argc, argv) << "\n";
    return 2;
  }

  try {
    for (const auto& [cmd, run] : commands)
      if (*cmd) return run();
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

}  // namespace planner::cli
