// `planner search --simulate-top K`: the search, and its first K results
// simulated (each with its own schedule) and re-ranked by simulated step. The
// one dependency of simulate/ on search/ (search never includes simulate/);
// views/search_report.h renders the SearchReport.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/search/nearest_fit.h"
#include "planner/search/search.h"
#include "planner/simulate/simulate.h"
#include "planner/spec/specs.h"

namespace planner {

struct SimulatedRank {
  std::size_t closed_form_rank = 0;  // 1-based position in the search result
  Evaluation evaluation;
  double simulated_step_s = 0;
  double simulated_bubble_fraction = 0;
  std::string not_simulated;  // non-empty: why this one could not be simulated (ranked last)
};

// The first `k` of `top`, simulated, sorted by simulated step (stable; those
// that could not be simulated last, in search order).
[[nodiscard]] std::vector<SimulatedRank> simulate_top(const ModelSpec& model, const HardwareProfile& hw,
                                                      const TrainingSpec& ts, const std::vector<Evaluation>& top,
                                                      std::size_t k);

// One layout's simulated step and the problem it ran, for a timeline.
struct SimulatedStep {
  PipelineProblem problem;
  SimResult result;
};

// `ev` simulated with its own schedule (default_sim_schedule); nothing when
// it cannot run (a reason other than out of memory, or a problem the
// simulator refuses).
[[nodiscard]] std::optional<SimulatedStep> simulate_own_schedule(const ModelSpec& model, const HardwareProfile& hw,
                                                                 const TrainingSpec& ts, const Evaluation& ev);

struct SearchReport {
  SearchResult search;                                  // its top: the first `top` results
  std::optional<std::vector<SimulatedRank>> simulated;  // set when simulate_k > 0
  std::optional<SimulatedStep> top_step;                // the first of `simulated`, when asked for (--html)
  std::vector<FitSuggestion> would_fit;                 // when nothing fits: nearest_fits (search/nearest_fit.h)
};

// Searches for the first max(top, simulate_k) results (spec.top_k is
// replaced), simulates the first simulate_k of them when simulate_k > 0, and
// keeps the first `top` in the search result. With keep_top_step, the first
// of the re-ranking is simulated once more and kept whole (its events), for
// a timeline.
[[nodiscard]] SearchReport search_and_simulate(const ModelSpec& model, const HardwareProfile& hw, SearchSpec spec,
                                               std::size_t top, std::size_t simulate_k, bool keep_top_step = false);

}  // namespace planner
