// The subcommands, one file each (<name>_cmd.cpp), registered from one table
// in main.cpp (kSubcommands). Each add_*_command adds its flags to `cmd`, the
// subcommand main.cpp created, and returns what run_cli calls when that
// subcommand was given: it calls one library entry point, prints what the
// views render and returns the exit code (0 success, 1 bad input, no
// feasible result or a failed check); it may throw InputError.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace planner::cli {

using Runner = std::function<int()>;

Runner add_list_command(CLI::App& cmd);       // list_cmd.cpp
Runner add_show_command(CLI::App& cmd);       // show_cmd.cpp
Runner add_evaluate_command(CLI::App& cmd);   // evaluate_cmd.cpp
Runner add_search_command(CLI::App& cmd);     // search_cmd.cpp
Runner add_export_command(CLI::App& cmd);     // export_cmd.cpp
Runner add_validate_command(CLI::App& cmd);   // validate_cmd.cpp
Runner add_regress_command(CLI::App& cmd);    // regress_cmd.cpp
Runner add_simulate_command(CLI::App& cmd);   // simulate_cmd.cpp
Runner add_calibrate_command(CLI::App& cmd);  // calibrate_cmd.cpp
Runner add_import_hf_command(CLI::App& cmd);  // import_hf_cmd.cpp

// The whole CLI: parse argv, run the subcommand, print; returns the exit code
// (main.cpp). Never throws: bad input is a one-line error on stderr.
int run_cli(int argc, char** argv);

// The command line as typed (run_cli records it; outputs that must be
// reproducible, such as trace metadata, quote it).
void set_command_line(int argc, const char* const* argv);
[[nodiscard]] const std::string& command_line();

}  // namespace planner::cli
