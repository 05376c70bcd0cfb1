// What `planner simulate` prints: the simulated step against the closed form
// term by term, with the reasons they differ, and per-stage statistics.
#pragma once

#include <string>

#include "planner/model/evaluate.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/simulate.h"
#include "planner/views/report.h"

namespace planner {

// Table or JSON (CSV: one row per stage).
[[nodiscard]] std::string render_simulation(const SimResult& r, const SimComparison& cmp, const Evaluation& ev,
                                            const PipelineProblem& pr, const RunContext& ctx, Format f);

}  // namespace planner
