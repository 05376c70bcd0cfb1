// What `planner simulate` settles before it simulates: which schedule a
// configuration runs, the configuration the closed form prices for it, and
// whether the layout can run at all. Sits between the flags and
// pipeline_problem() (simulate.h).
#pragma once

#include <optional>

#include "planner/model/evaluate.h"
#include "planner/spec/specs.h"

namespace planner {

// `requested`, or by default the configuration's own schedule
// (default_sim_schedule: interleaved when v > 1). Interleaving needs v >= 2
// and the other schedules run one chunk per stage: a mismatch is
// InputError("--schedule", ...).
[[nodiscard]] Schedule simulated_schedule(const ParallelConfig& pc, std::optional<Schedule> requested);

// `pc` with the schedule the closed form prices for `s` (ZB-H1 as 1F1B), to
// evaluate() and compare with the simulation.
[[nodiscard]] ParallelConfig closed_form_config(ParallelConfig pc, Schedule s);

// A layout with any reason but out of memory (which is simulated anyway) is
// InputError("simulate", "this layout cannot run: <reasons>").
void require_runnable(const Evaluation& ev);

}  // namespace planner
