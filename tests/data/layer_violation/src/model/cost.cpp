// A fixture for tests/check_layers.sh: a model source that includes the CLI.
// Never compiled.
#include "cli/commands.h"
#include "planner/model/cost.h"
