// planner validate: placeholder registration (being written).
#include "commands.h"

namespace planner::cli {

Runner add_validate_command(CLI::App& app) {
  app.add_subcommand("validate", "(not yet implemented)");
  return [] { return 1; };
}

} // namespace planner::cli
