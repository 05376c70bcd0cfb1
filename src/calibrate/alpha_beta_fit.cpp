// The alpha-beta fit engine: weighted least squares (Eigen) with an active
// set for non-negative parameters, Huber then Tukey reweighting (Huber 1964;
// Beaton & Tukey 1974; Holland & Welsch 1977), and each point's algorithm
// re-chosen as NCCL's tuner would (src/graph/tuning.cc). See calibration.cpp.
#include "calibrate/alpha_beta_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include <Eigen/Dense>

#include "planner/spec/input_error.h"

namespace planner::calibrate_detail {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {

double log2_ceil(std::int64_t x) { return x <= 1 ? 0.0 : std::ceil(std::log2(double(x))); }

// Weighted least squares over the free columns; fixed ones are moved to the
// right-hand side. Columns: base latency, per-step latency, 1/bandwidth of the
// link, 1/bandwidth of a p2p channel (each point's term uses one of the two
// bandwidth columns). Columns are scaled to unit norm first: 1, steps and
// bytes differ by up to 1e10.
std::optional<Eigen::VectorXd> wls(const std::vector<Obs>& obs, const std::vector<std::size_t>& alg,
                                   const std::vector<double>& huber, const std::array<bool, 4>& free,
                                   const Params& fixed, bool intercept_only) {
  const std::size_t m = obs.size();
  std::vector<int> cols;
  for (int c = 0; c < 4; ++c)
    if (free[std::size_t(c)]) cols.push_back(c);
  if (cols.empty() || m < cols.size()) return std::nullopt;
  Eigen::MatrixXd X(Eigen::Index(m), Eigen::Index(cols.size()));
  Eigen::VectorXd y(static_cast<Eigen::Index>(m));
  for (std::size_t i = 0; i < m; ++i) {
    const Term& term = obs[i].terms[alg[i]];
    const double w = std::sqrt(huber[i]) / obs[i].t;
    const double bw = term.factor * obs[i].n;
    const double x[4] = {1.0, intercept_only ? 0.0 : term.steps, term.per_channel ? 0.0 : bw,
                         term.per_channel ? bw : 0.0};
    double rhs = obs[i].t;
    if (!free[0]) rhs -= fixed.l0;
    if (!free[1] && !intercept_only) rhs -= term.steps * fixed.l1;
    if (!free[2]) rhs -= x[2] * fixed.beta;
    if (!free[3]) rhs -= x[3] * fixed.beta_ch;
    for (std::size_t j = 0; j < cols.size(); ++j) X(Eigen::Index(i), Eigen::Index(j)) = w * x[cols[j]];
    y(Eigen::Index(i)) = w * rhs;
  }
  Eigen::VectorXd scale(static_cast<Eigen::Index>(cols.size()));
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    scale(j) = X.col(j).norm();
    if (!(scale(j) > 0)) return std::nullopt;
    X.col(j) /= scale(j);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(X);
  if (qr.rank() < X.cols()) return std::nullopt;
  Eigen::VectorXd sol = qr.solve(y);
  Eigen::VectorXd full = Eigen::VectorXd::Constant(4, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t j = 0; j < cols.size(); ++j) full(cols[j]) = sol(Eigen::Index(j)) / scale(Eigen::Index(j));
  return full;
}

// Whether some point priced by the link's (or, with per_channel, the p2p
// channels') bandwidth term is not latency-bound under `p`: its bandwidth
// term at least 1/kRegimeRatio of its latency term. Where none is (8-64 B
// sweeps, or noise on any latency-only sweep) the data determine no bandwidth
// and 1 / beta comes out arbitrarily large (1e15 was written); the base's
// stays instead (docs/calibration.md, Method step 5).
bool shows_bandwidth(const std::vector<Obs>& obs, const std::vector<std::size_t>& alg, const Params& p,
                     bool per_channel) {
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const Term& term = obs[i].terms[alg[i]];
    if (term.per_channel != per_channel) continue;
    const double latency = p.l0 + term.steps * p.l1;
    const double bandwidth = term.factor * obs[i].n * (per_channel ? p.beta_ch : p.beta);
    if (bandwidth * kRegimeRatio >= latency) return true;
  }
  return false;
}

// One round of the active set: free parameters that come out negative are
// fixed (latency at 0, bandwidth at the base's), as is a bandwidth no point
// shows (shows_bandwidth), and the rest refitted; a
// singular system drops the bandwidth columns first (only tiny sizes), then the
// growth. A bandwidth column no point uses (no point paced by its p2p channels,
// or none by the link) is not fitted and keeps the base's. Throws when nothing
// can be solved.
Params solve_active_set(const std::vector<Obs>& obs, const std::vector<std::size_t>& alg,
                        const std::vector<double>& weights, bool growth, const Params& base, bool keep_latency,
                        std::array<bool, 4>& free) {
  bool link_used = false, channel_used = false;
  for (std::size_t i = 0; i < obs.size(); ++i) (obs[i].terms[alg[i]].per_channel ? channel_used : link_used) = true;
  // keep_latency: the base's latency stays, only the bandwidth is fitted.
  free = {!keep_latency, growth && !keep_latency, link_used, channel_used};
  const Params fixed = keep_latency ? base : Params{0, 0, base.beta, base.beta_ch};
  if (keep_latency) growth = true;  // the fixed per-step term is subtracted per point
  Params next;
  bool solved = false;
  for (int round = 0; round < 8 && !solved; ++round) {
    const auto sol = wls(obs, alg, weights, free, fixed, !growth);
    if (!sol) {
      if (free[3])
        free[3] = false;
      else if (free[2])
        free[2] = false;
      else if (free[1])
        free[1] = false;
      else
        break;
      continue;
    }
    next.l0 = free[0] ? (*sol)(0) : fixed.l0;
    next.l1 = free[1] ? (*sol)(1) : fixed.l1;
    next.beta = free[2] ? (*sol)(2) : fixed.beta;
    next.beta_ch = free[3] ? (*sol)(3) : fixed.beta_ch;
    solved = true;
    if (free[2] && !(next.beta > 0 && shows_bandwidth(obs, alg, next, false)))
      free[2] = false, solved = false;
    else if (free[3] && !(next.beta_ch > 0 && shows_bandwidth(obs, alg, next, true)))
      free[3] = false, solved = false;
    else if (free[1] && next.l1 < 0)
      free[1] = false, solved = false;
    else if (free[0] && next.l0 < 0)
      free[0] = false, solved = false;
  }
  if (!solved && keep_latency) return base;
  if (!solved)
    throw InputError("calibrate fit",
                     "the measurements do not determine a latency and a bandwidth (too few distinct sizes)");
  return next;
}

// Re-chooses each point's algorithm under `p` (the cheaper, as the tuner does;
// of bounds, the slowest) and returns the relative residuals; `same` says
// whether no choice changed.
std::vector<double> rechoose_algorithms(const std::vector<Obs>& obs, const Params& p, std::vector<std::size_t>& alg,
                                        bool& same) {
  same = true;
  std::vector<double> r(obs.size());
  for (std::size_t i = 0; i < obs.size(); ++i) {
    std::size_t best = 0;
    for (std::size_t a = 1; a < obs[i].terms.size(); ++a) {
      const double t = p.predict(obs[i].terms[a], obs[i].n), t_best = p.predict(obs[i].terms[best], obs[i].n);
      if (obs[i].slowest ? t > t_best : t < t_best) best = a;
    }
    same = same && best == alg[i];
    alg[i] = best;
    r[i] = (p.predict(obs[i].terms[best], obs[i].n) - obs[i].t) / obs[i].t;
  }
  return r;
}

// Robust weights from the residuals, scaled by their MAD: Huber's, or
// Tukey's biweight in the second phase. Returns how many points lost weight.
std::size_t reweight(const std::vector<double>& r, bool bisquare, const FitOptions& opt, std::vector<double>& w) {
  const std::size_t m = r.size();
  const double med = median_of(r);
  std::vector<double> dev(m);
  for (std::size_t i = 0; i < m; ++i) dev[i] = std::abs(r[i] - med);
  const double sigma = std::max(1.4826 * median_of(dev), 1e-6);
  std::size_t downweighted = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double u = std::abs(r[i]) / sigma;
    if (bisquare) {
      const double v = u / opt.bisquare_c;
      w[i] = v < 1.0 ? (1.0 - v * v) * (1.0 - v * v) : 0.0;
      downweighted += v >= 1.0;
    } else {
      w[i] = u <= opt.huber_k ? 1.0 : opt.huber_k / u;
      downweighted += w[i] < 1.0;
    }
  }
  return downweighted;
}

}  // namespace

std::vector<Term> candidate_terms(std::size_t tier, Collective c, std::int64_t p) {
  const double pd = double(p);
  switch (c) {
    case Collective::all_reduce: {
      std::vector<Term> t{{2.0 * (pd - 1.0), 2.0 * (pd - 1.0) / pd, Algorithm::ring}};
      if (tier == 1) t.push_back({2.0 * log2_ceil(p), 2.0, Algorithm::tree});
      return t;
    }
    case Collective::all_gather:
    case Collective::reduce_scatter:
      return {{pd - 1.0, (pd - 1.0) / pd, Algorithm::ring}};
    case Collective::all_to_all:
      return {{pd - 1.0, (pd - 1.0) / pd, Algorithm::direct}};
    case Collective::send_recv:
      return {{1.0, 1.0, Algorithm::direct}};
  }
  return {};
}

EngineResult fit_engine(const std::vector<Obs>& obs, const Params& base, const FitOptions& opt, bool keep_latency) {
  EngineResult out;
  const std::size_t m = obs.size();
  std::vector<std::size_t> alg(m, 0);
  std::vector<double> weights(m, 1.0);
  Params cur = base;
  // Bounds start as the base prices them (algorithms start at the first).
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t a = 1; obs[i].slowest && a < obs[i].terms.size(); ++a)
      if (base.predict(obs[i].terms[a], obs[i].n) > base.predict(obs[i].terms[alg[i]], obs[i].n)) alg[i] = a;
  bool bisquare = false;  // second phase: Tukey's biweight from the Huber solution
  for (int iter = 1; iter <= opt.max_iterations; ++iter) {
    out.iterations = iter;
    std::set<double> steps;
    for (std::size_t i = 0; i < m; ++i) steps.insert(obs[i].terms[alg[i]].steps);
    const bool growth = steps.size() >= 2;
    std::array<bool, 4> free{};
    Params next = solve_active_set(obs, alg, weights, growth, base, keep_latency, free);
    out.bandwidth = free[2];
    out.channel_bandwidth = free[3];
    out.growth = growth && free[1] && free[0];
    if (!growth && !keep_latency) {
      // One step count s: only l0 + s*l1 is seen. Split it as the base does.
      const double s = *steps.begin();
      const double a = next.l0;
      const double a_base = base.l0 + s * base.l1;
      if (a_base > 0)
        next.l0 = a * base.l0 / a_base, next.l1 = a * base.l1 / a_base;
      else
        next.l1 = 0;
    }
    bool same = true;
    const std::vector<double> r = rechoose_algorithms(obs, next, alg, same);
    out.downweighted = reweight(r, bisquare, opt, weights);
    auto rel = [](double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); };
    const bool converged = same && iter > 1 && rel(next.l0, cur.l0) < 1e-10 && rel(next.l1, cur.l1) < 1e-10 &&
                           rel(next.beta, cur.beta) < 1e-10 && rel(next.beta_ch, cur.beta_ch) < 1e-10;
    cur = next;
    if (converged) {
      if (bisquare || !opt.redescending) break;
      bisquare = true;
    }
  }
  out.params = cur;
  return out;
}

}  // namespace planner::calibrate_detail
