// `planner regress`'s report over a RegressReport (validate/regress.h).
#pragma once

#include <string>

#include "planner/validate/regress.h"

namespace planner {

// The differences as a table plus the summary line
// "regress: N cases, M metrics, K differ".
[[nodiscard]] std::string render_regress(const RegressReport& r);

// After `--update`: the golden file written and what rewriting it changed,
// given the report of the old golden file against the new predictions.
[[nodiscard]] std::string render_update(const RegressReport& r, const std::string& golden_path);

}  // namespace planner
