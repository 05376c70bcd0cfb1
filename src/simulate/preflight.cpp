// Checks before a simulation (preflight.h).
#include "planner/simulate/preflight.h"

#include <fmt/format.h>

#include "planner/model/labels.h"
#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"

namespace planner {

Schedule simulated_schedule(const ParallelConfig& pc, std::optional<Schedule> requested) {
  if (requested && pc.pp == 1)  // as evaluate's --schedule (config_flags.cpp)
    throw InputError("--schedule", fmt::format("{} schedules a pipeline, but the layout has PP 1 (its micro-batches "
                                               "run forward and backward in turn); give --pp or leave --schedule out",
                                               to_string(*requested)));
  const Schedule s = requested.value_or(default_sim_schedule(pc));
  if (s == Schedule::interleaved && pc.virtual_stages < 2)
    throw InputError("--schedule", "interleaved needs --vpp 2 or more (virtual stages per GPU)");
  if (s != Schedule::interleaved && pc.virtual_stages > 1)
    throw InputError("--schedule", fmt::format("{} runs one chunk per stage; --vpp {} needs --schedule interleaved",
                                               to_string(s), pc.virtual_stages));
  return s;
}

ParallelConfig closed_form_config(ParallelConfig pc, Schedule s) {
  pc.schedule = s == Schedule::zb_h1 ? Schedule::one_f_one_b : s;
  return pc;
}

void require_runnable(const Evaluation& ev) {
  const ReasonSet structural = ReasonSet{ev.reasons}.without(Reason::out_of_memory);
  if (structural.bits) throw InputError("simulate", fmt::format("this layout cannot run: {}", structural));
}

}  // namespace planner
