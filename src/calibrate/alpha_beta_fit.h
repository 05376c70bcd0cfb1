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
// per_channel: the bandwidth term is NCCL's p2p channels' (factor 1/channels,
// priced with Params::beta_ch) instead of the link's (send/recv only).
struct Term {
  double steps = 0, factor = 0;
  Algorithm algorithm = Algorithm::ring;
  bool per_channel = false;
};

[[nodiscard]] std::vector<Term> candidate_terms(std::size_t tier, Collective c, std::int64_t p);

// terms: the algorithms NCCL's tuner could pick (the cheapest prices the
// point), or with `slowest` the bounds of one algorithm (the link's and the
// p2p channels' rate: the slowest prices it).
struct Obs {
  double n = 0, t = 0;
  std::vector<Term> terms;
  bool slowest = false;
};

// Regimes of a point by its bandwidth term over its latency term: below
// 1/kRegimeRatio latency-bound, above kRegimeRatio bandwidth-bound, else mixed
// (the fit report's regimes; a bandwidth is only seen outside the first).
inline constexpr double kRegimeRatio = 4.0;

struct Params {
  double l0 = 0, l1 = 0, beta = 0;  // base latency, per-step latency, 1 / bandwidth
  double beta_ch = 0;               // 1 / what one p2p channel moves (send/recv terms with per_channel)
  [[nodiscard]] double predict(const Term& term, double n) const {
    return l0 + term.steps * l1 + term.factor * n * (term.per_channel ? beta_ch : beta);
  }
};

struct EngineResult {
  Params params;
  bool growth = false, bandwidth = true;
  bool channel_bandwidth = false;  // beta_ch fitted (some point is paced by its p2p channels)
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
