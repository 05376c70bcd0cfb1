// Search results re-ranked by simulation (simulate_top.h).
#include "planner/simulate/simulate_top.h"

#include <algorithm>

#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"

namespace planner {

std::vector<SimulatedRank> simulate_top(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts,
                                        const std::vector<Evaluation>& top, std::size_t k) {
  std::vector<SimulatedRank> out;
  for (std::size_t i = 0; i < top.size() && i < k; ++i) {
    const Evaluation& ev = top[i];
    try {
      const PipelineProblem pr = pipeline_problem(model, hw, ev.config, ts, ev, default_sim_schedule(ev.config));
      const SimResult r = simulate(pr);
      out.push_back({i + 1, ev, r.step_s, r.critical_wait_fraction(), {}});
    } catch (const InputError& e) {
      out.push_back({i + 1, ev, 0.0, 0.0, e.message()});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const SimulatedRank& a, const SimulatedRank& b) {
    if (a.not_simulated.empty() != b.not_simulated.empty()) return a.not_simulated.empty();
    return a.simulated_step_s < b.simulated_step_s;
  });
  return out;
}

std::optional<SimulatedStep> simulate_own_schedule(const ModelSpec& model, const HardwareProfile& hw,
                                                   const TrainingSpec& ts, const Evaluation& ev) {
  if (ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) return std::nullopt;
  try {
    PipelineProblem pr = pipeline_problem(model, hw, ev.config, ts, ev, default_sim_schedule(ev.config));
    SimResult r = simulate(pr);
    return SimulatedStep{std::move(pr), std::move(r)};
  } catch (const InputError&) {
    return std::nullopt;
  }
}

SearchReport search_and_simulate(const ModelSpec& model, const HardwareProfile& hw, SearchSpec spec, std::size_t top,
                                 std::size_t simulate_k, bool keep_top_step) {
  spec.top_k = std::max(top, simulate_k);
  SearchReport rep;
  rep.search = search(model, hw, spec);
  if (simulate_k > 0) rep.simulated = simulate_top(model, hw, spec.training, rep.search.top, simulate_k);
  if (keep_top_step && rep.simulated && !rep.simulated->empty() && rep.simulated->front().not_simulated.empty())
    rep.top_step = simulate_own_schedule(model, hw, spec.training, rep.simulated->front().evaluation);
  if (rep.search.top.size() > top) rep.search.top.resize(top);
  return rep;
}

}  // namespace planner
