// build/planner: the CLI's entry point (everything else is in main.cpp).
#include "commands.h"

int main(int argc, char** argv) { return planner::cli::run_cli(argc, argv); }
