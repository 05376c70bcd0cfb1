// The simulated step against the closed form, term by term, with the reasons
// they differ: what `planner simulate` reports after simulate() (simulate.h);
// views/simulate_report.h renders it.
#pragma once

#include <string>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/simulate/simulate.h"

namespace planner {

// One row of the comparison: the closed form prices the heaviest stage; the
// simulation reports the stage that finishes last. Both sum to the step.
struct ComparisonTerm {
  std::string name;
  double closed_form_s = 0;
  double simulated_s = 0;
};

struct SimComparison {
  std::vector<ComparisonTerm> terms;  // compute, TP/CP, pipeline, DP/ZeRO, optimizer (sum = step)
  double closed_form_step_s = 0;
  double simulated_step_s = 0;
  double formula_bubble_fraction = 0;     // (p-1)/(v*m + p-1): the ideal-pipeline formula
  std::vector<std::string> explanations;  // why they differ, largest first; empty when within 0.1%
  [[nodiscard]] double relative_difference() const {
    return closed_form_step_s > 0 ? simulated_step_s / closed_form_step_s - 1.0 : 0.0;
  }
};

// `r` is simulate(pr) and `pr` is pipeline_problem(..., ev, ...).
[[nodiscard]] SimComparison compare_with_closed_form(const Evaluation& ev, const PipelineProblem& pr,
                                                     const SimResult& r);

}  // namespace planner
