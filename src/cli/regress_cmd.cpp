// planner regress: placeholder registration (being written).
#include "commands.h"

namespace planner::cli {

Runner add_regress_command(CLI::App& app) {
  app.add_subcommand("regress", "(not yet implemented)");
  return [] { return 1; };
}

} // namespace planner::cli
