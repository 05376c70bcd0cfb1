// The alpha-beta fit of one (tier, collective): the weighted, robust least
// squares of calibration.cpp's file comment, on observations (bytes, time)
// each with the algorithms NCCL's tuner could pick. Private to calibrate/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "planner/calibrate/calibration.h"
#include "planner/model/collectives.h"

namespace planner::calibrate_detail {

// One algorithm's latency steps and bandwidth factor for a group of p ranks
// wholly inside `tier` (collectives.cpp with k = p, D = 1 or k = 1, D = p).
struct Term {
  double steps = 0, factor = 0;
  Algorithm algorithm = Algorithm::ring;
};

[[nodiscard]] std::vector<Term> candidate_terms(std::size_t tier, Collective c, std::int64_t p);

struct Obs {
  double n = 0, t = 0;
  std::vector<Term> terms;
};

struct Params {
  double l0 = 0, l1 = 0, beta = 0;  // base latency, per-step latency, 1 / bandwidth
  [[nodiscard]] double predict(const Term& term, double n) const {
    return l0 + term.steps * l1 + term.factor * n * beta;
  }
};

struct EngineResult {
  Params params;
  bool growth = false, bandwidth = true;
  int iterations = 0;
  std::size_t downweighted = 0;
};

// The IRLS loop of calibration.cpp's file comment. `base` supplies the latency
// split for single-step-count data and the bandwidth when the data cannot show one.
// keep_latency: base.l0 and base.l1 stay, only the bandwidth is fitted (sizes
// that cannot show latency, issue 14).
[[nodiscard]] EngineResult fit_engine(const std::vector<Obs>& obs, const Params& base, const FitOptions& opt,
                                      bool keep_latency = false);

// Median of v (0 when empty).
[[nodiscard]] double median_of(std::vector<double> v);

}  // namespace planner::calibrate_detail
