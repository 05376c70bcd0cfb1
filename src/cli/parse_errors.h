// What the command line parser (CLI11) refuses, said the planner's way: one
// line naming the flag, the value as given and what was expected, for every
// subcommand and the subcommands under them (calibrate fit). Private to cli/.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace planner::cli {

// Adds to every option of `app` and its subcommands, at any depth, the check
// of its value against its type before CLI11 converts it: an empty value is
// refused for every type; an integer must be decimal and within 64 bits
// (CLI11 would cap 99999999999999999999, and read 010 as octal); a number
// must be finite. Flags (no value) are left alone.
void add_value_checks(CLI::App& app);

// The values integer option `o` takes, as the words after "expected" ("1 to
// 16777216 GPUs"): what a value beyond 64 bits is told ("--gpus: expected 1
// to 16777216 GPUs, got 99999999999999999999"), as CLI11 cannot read it for
// the option's own checks, which see every value within 64 bits. Other
// integer options are told "expected a smaller integer". Returns `o`.
CLI::Option* integer_range(CLI::Option* o, const std::string& expected);

// The one-line message (without "planner: error: ") for a parse error of
// `app` on argv: an unknown flag of the subcommand argv names (did you
// mean), a flag given twice, a value of the wrong type, a required flag or
// subcommand missing, a value outside a flag's set.
[[nodiscard]] std::string parse_error_message(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

}  // namespace planner::cli
