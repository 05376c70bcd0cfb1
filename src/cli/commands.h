// Subcommands that live in their own files. Each add_*_command registers its
// subcommand and flags on `app` and returns the function main() calls when
// that subcommand was given; the function returns the exit code (0 success,
// 1 bad input or a failed check) and may throw InputError.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace planner::cli {

using Runner = std::function<int()>;

Runner add_validate_command(CLI::App& app);   // validate_cmd.cpp
Runner add_regress_command(CLI::App& app);    // regress_cmd.cpp
Runner add_calibrate_command(CLI::App& app);  // calibrate_cmd.cpp
Runner add_simulate_command(CLI::App& app);   // simulate_cmd.cpp

// The whole CLI: parse argv, run the subcommand, print; returns the exit code
// (main.cpp). Never throws: bad input is a one-line error on stderr.
int run_cli(int argc, char** argv);

// The command line as typed (main records it; outputs that must be
// reproducible, such as trace metadata, quote it).
void set_command_line(int argc, const char* const* argv);
[[nodiscard]] const std::string& command_line();

}  // namespace planner::cli
