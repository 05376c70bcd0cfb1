// A fixture for tests/check_layers.sh: a model header that includes a view,
// which the layer rules forbid (the layer_includes_catch test expects the
// script to fail on this tree). Never compiled.
#pragma once
#include "planner/views/report.h"
