// Fitting collective alpha-beta and compute efficiencies to measurements.
//
// Model (the one collective_cost prices, collectives.cpp): a group wholly
// inside tier t (all members on one node -> tier 0; one member per node ->
// tier 1) takes, for collective c over p ranks and n bytes,
//     time = base_latency + steps_c(p) * latency_per_step + factor_c(p) * n / B
// with steps/factor of the algorithm NCCL's tuner would pick (ring, or for
// all-reduce across nodes the double binary tree when cheaper: steps 2*lg p,
// factor 2). For a fixed algorithm that is linear in (base, per_step, 1/B), so
// each (tier, collective) is a weighted least-squares problem (Eigen):
//   - weights 1/time: the relative error counts, so 8 B and 1 GiB points both
//     matter (an absolute fit would ignore every latency-bound point);
//   - iteratively reweighted on the relative residuals, scaled by their MAD:
//     Huber weights to convergence, then Tukey's biweight from there
//     (Huber 1964; Beaton & Tukey 1974; Holland & Welsch 1977), so a few
//     outliers (a preempted iteration, a congested size) lose their pull and
//     gross ones none at all;
//   - each point's algorithm is re-chosen as the cheaper under the current
//     parameters, as the tuner does, until the choice is stable;
//   - base and per-step latency are separated only when the data has at least
//     two step counts (several group sizes, or ring and tree points); with one
//     group size their sum is fitted and split in the base profile's ratio;
//   - parameters stay non-negative (a negative one is fixed at 0 and the rest
//     refitted); sizes too small to show bandwidth keep the base's bandwidth.
#include "planner/calibrate/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"

namespace planner {

using nlohmann::json;

namespace {

constexpr double kRegimeRatio = 4.0;  // bandwidth/latency term ratio that separates regimes

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double log2_ceil(std::int64_t x) { return x <= 1 ? 0.0 : std::ceil(std::log2(double(x))); }

// One algorithm's latency steps and bandwidth factor for a group of p ranks
// wholly inside `tier` (collectives.cpp with k = p, D = 1 or k = 1, D = p).
struct Term {
  double steps = 0, factor = 0;
  Algorithm algorithm = Algorithm::ring;
};

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

// Weighted least squares over the free columns; fixed ones are moved to the
// right-hand side. Columns are scaled to unit norm first: 1, steps and bytes
// differ by up to 1e10.
std::optional<Eigen::VectorXd> wls(const std::vector<Obs>& obs, const std::vector<std::size_t>& alg,
                                   const std::vector<double>& huber, const std::array<bool, 3>& free,
                                   const Params& fixed, bool intercept_only) {
  const std::size_t m = obs.size();
  std::vector<int> cols;
  for (int c = 0; c < 3; ++c)
    if (free[std::size_t(c)]) cols.push_back(c);
  if (cols.empty() || m < cols.size()) return std::nullopt;
  Eigen::MatrixXd X(Eigen::Index(m), Eigen::Index(cols.size()));
  Eigen::VectorXd y(static_cast<Eigen::Index>(m));
  for (std::size_t i = 0; i < m; ++i) {
    const Term& term = obs[i].terms[alg[i]];
    const double w = std::sqrt(huber[i]) / obs[i].t;
    const double x[3] = {1.0, intercept_only ? 0.0 : term.steps, term.factor * obs[i].n};
    double rhs = obs[i].t;
    if (!free[0]) rhs -= fixed.l0;
    if (!free[1] && !intercept_only) rhs -= term.steps * fixed.l1;
    if (!free[2]) rhs -= term.factor * obs[i].n * fixed.beta;
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
  Eigen::VectorXd full = Eigen::VectorXd::Constant(3, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t j = 0; j < cols.size(); ++j) full(cols[j]) = sol(Eigen::Index(j)) / scale(Eigen::Index(j));
  return full;
}

// The IRLS loop of the file comment. `base` supplies the latency split for
// single-step-count data and the bandwidth when the data cannot show one.
EngineResult fit_engine(const std::vector<Obs>& obs, const Params& base, const FitOptions& opt) {
  EngineResult out;
  const std::size_t m = obs.size();
  std::vector<std::size_t> alg(m, 0);
  std::vector<double> huber(m, 1.0);
  Params cur = base;
  bool bisquare = false;  // second phase: Tukey's biweight from the Huber solution
  for (int iter = 1; iter <= opt.max_iterations; ++iter) {
    out.iterations = iter;
    std::set<double> steps;
    for (std::size_t i = 0; i < m; ++i) steps.insert(obs[i].terms[alg[i]].steps);
    const bool growth = steps.size() >= 2;
    // Active set: free parameters that come out negative are fixed (latency
    // at 0, bandwidth at the base's) and the rest refitted.
    std::array<bool, 3> free{true, growth, true};
    Params fixed{0, 0, base.beta};
    Params next;
    bool solved = false;
    for (int round = 0; round < 4 && !solved; ++round) {
      const auto sol = wls(obs, alg, huber, free, fixed, !growth);
      if (!sol) {
        // Singular: drop the bandwidth column first (only tiny sizes), then the growth.
        if (free[2])
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
      solved = true;
      if (free[2] && !(next.beta > 0))
        free[2] = false, solved = false;
      else if (free[1] && next.l1 < 0)
        free[1] = false, solved = false;
      else if (free[0] && next.l0 < 0)
        free[0] = false, solved = false;
    }
    if (!solved)
      throw InputError("calibrate fit",
                       "the measurements do not determine a latency and a bandwidth (too few distinct sizes)");
    out.bandwidth = free[2];
    out.growth = growth && free[1] && free[0];
    if (!growth) {
      // One step count s: only l0 + s*l1 is seen. Split it as the base does.
      const double s = *steps.begin();
      const double a = next.l0;
      const double a_base = base.l0 + s * base.l1;
      if (a_base > 0)
        next.l0 = a * base.l0 / a_base, next.l1 = a * base.l1 / a_base;
      else
        next.l1 = 0;
    }
    // Re-choose each point's algorithm and recompute the Huber weights.
    bool same = true;
    std::vector<double> r(m);
    for (std::size_t i = 0; i < m; ++i) {
      std::size_t best = 0;
      for (std::size_t a = 1; a < obs[i].terms.size(); ++a)
        if (next.predict(obs[i].terms[a], obs[i].n) < next.predict(obs[i].terms[best], obs[i].n)) best = a;
      same = same && best == alg[i];
      alg[i] = best;
      r[i] = (next.predict(obs[i].terms[best], obs[i].n) - obs[i].t) / obs[i].t;
    }
    const double med = median_of(r);
    std::vector<double> dev(m);
    for (std::size_t i = 0; i < m; ++i) dev[i] = std::abs(r[i] - med);
    const double sigma = std::max(1.4826 * median_of(dev), 1e-6);
    out.downweighted = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const double u = std::abs(r[i]) / sigma;
      if (bisquare) {
        const double v = u / opt.bisquare_c;
        huber[i] = v < 1.0 ? (1.0 - v * v) * (1.0 - v * v) : 0.0;
        out.downweighted += v >= 1.0;
      } else {
        huber[i] = u <= opt.huber_k ? 1.0 : opt.huber_k / u;
        out.downweighted += huber[i] < 1.0;
      }
    }
    auto rel = [](double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); };
    const bool converged = same && iter > 1 && rel(next.l0, cur.l0) < 1e-10 && rel(next.l1, cur.l1) < 1e-10 &&
                           rel(next.beta, cur.beta) < 1e-10;
    cur = next;
    if (converged) {
      if (bisquare || !opt.redescending) break;
      bisquare = true;
    }
  }
  out.params = cur;
  return out;
}

// The alpha-beta a profile prices collective c on tier t with: its fit, else
// the generic tier values (base latency: the profile's NCCL baseLat).
Params current_params(const HardwareProfile& hw, std::size_t tier, Collective c) {
  const InterconnectTier& t = hw.tiers[tier];
  const CollectiveFit& f = t.collective_fits[std::size_t(c)];
  const double bw = f.fitted ? f.bandwidth_bytes_per_s : t.bandwidth_achieved_bytes_per_s;
  Params p;
  p.l0 = f.fitted ? f.base_latency_s : hw.collective_base_latency_s;
  p.l1 = f.fitted ? f.latency_per_step_s : t.latency_s;
  const double per_gpu =
      tier == 0 ? bw : bw * double(t.nics_per_node) / double(std::max<std::int64_t>(t.gpus_per_node, 1));
  p.beta = per_gpu > 0 ? 1.0 / per_gpu : 0.0;
  return p;
}

SeriesCheck check_series(const HardwareProfile& hw, const std::string& origin, const MeasuredSeries& s) {
  SeriesCheck out;
  out.origin = origin;
  out.label = describe(s);
  out.collective = s.collective;
  out.tier = group_tier(s);
  const std::size_t tier = out.tier == GroupTier::tier1 ? 1 : 0;
  out.fitted = out.tier != GroupTier::mixed && tier < hw.tiers.size() &&
               hw.tiers[tier].collective_fits[std::size_t(s.collective)].fitted;
  const GroupPlacement g = placement_of(hw, s);
  std::vector<double> errs;
  for (const MeasuredPoint& p : s.points) {
    const CollectiveCost cost = collective_cost(hw, g, s.collective, p.bytes);
    CheckPoint c;
    c.bytes = p.bytes;
    c.measured_s = p.time_s;
    c.predicted_s = cost.total_s();
    c.rel_error = (c.predicted_s - c.measured_s) / c.measured_s;
    c.algorithm = cost.algorithm;
    errs.push_back(std::abs(c.rel_error));
    out.points.push_back(c);
  }
  out.median_abs_error = median_of(errs);
  out.max_abs_error = errs.empty() ? 0 : *std::max_element(errs.begin(), errs.end());
  return out;
}

void fit_compute(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, FitResult& out) {
  HardwareProfile& hw = out.profile;
  ComputeFitReport& rep = out.compute;
  // GEMM: time = (F + half) / (peak * gemm_max) (docs/hardware_profiles.md,
  // wave quantisation not modelled here) = a*F + b, a weighted line in F.
  std::string files;
  for (const auto& m : ms)
    if (!m.set.gemm.empty() || !m.set.hbm.empty()) files += (files.empty() ? "" : ", ") + m.origin;
  for (std::size_t d = 0; d < kNumDTypes; ++d) {
    const char* name = d == 0 ? "bf16" : "fp8";
    std::vector<std::pair<double, double>> pts;  // (flops, time)
    for (const auto& m : ms)
      for (const GemmMeasurement& g : m.set.gemm)
        if (g.dtype == name) pts.emplace_back(2.0 * double(g.m) * double(g.n) * double(g.k), g.time_s);
    if (pts.empty() || !(base.peak_flops_per_s[d] > 0)) continue;
    std::set<double> distinct;
    for (auto& p : pts) distinct.insert(p.first);
    double a = 0, b = 0;
    if (distinct.size() >= 2) {
      Eigen::MatrixXd X(Eigen::Index(pts.size()), 2);
      Eigen::VectorXd y(static_cast<Eigen::Index>(pts.size()));
      for (std::size_t i = 0; i < pts.size(); ++i) {
        const double w = 1.0 / pts[i].second;
        X(Eigen::Index(i), 0) = w * pts[i].first / 1e12;
        X(Eigen::Index(i), 1) = w * 1e-3;
        y(Eigen::Index(i)) = w * pts[i].second;
      }
      const Eigen::VectorXd sol = X.colPivHouseholderQr().solve(y);
      a = sol(0) / 1e12;
      b = sol(1) * 1e-3;
    }
    if (!(a > 0) || b < 0) {
      // One shape (or a negative overhead): keep the base's half-efficiency size.
      double s_f = 0, s_t = 0;
      for (auto& p : pts) s_f += p.first + base.efficiency.gemm_half_flops, s_t += p.second;
      a = s_t / s_f;
      b = a * base.efficiency.gemm_half_flops;
    } else if (d == 0 || !rep.half_flops_fitted) {
      rep.half_flops_fitted = true;
      rep.gemm_half_flops = b / a;
      hw.efficiency.gemm_half_flops = b / a;
    }
    const double eff = std::clamp(1.0 / (a * base.peak_flops_per_s[d]), 1e-6, 1.0);
    rep.gemm_fitted[d] = true;
    rep.gemm_shapes[d] = pts.size();
    rep.gemm_max[d] = eff;
    hw.efficiency.gemm_max[d] = eff;
    out.sources[fmt::format("efficiency.gemm_max.{}", name)] = fmt::format(
        "fitted by planner calibrate fit to {} cuBLASLt {} GEMM shapes in {}: time = (F + gemm_half_flops) / (peak * "
        "gemm_max), "
        "weighted least squares in relative error",
        pts.size(), name, files);
  }
  if (rep.half_flops_fitted)
    out.sources["efficiency.gemm_half_flops"] = fmt::format(
        "fitted by planner calibrate fit with efficiency.gemm_max (intercept / slope of time against FLOPs) from {}",
        files);
  std::vector<double> bws;
  for (const auto& m : ms)
    for (const HbmMeasurement& h : m.set.hbm) bws.push_back(h.bandwidth_bytes_per_s);
  if (!bws.empty() && base.hbm_bandwidth_bytes_per_s > 0) {
    rep.hbm_fitted = true;
    rep.hbm_bandwidth_bytes_per_s = median_of(bws);
    rep.hbm_efficiency = std::clamp(rep.hbm_bandwidth_bytes_per_s / base.hbm_bandwidth_bytes_per_s, 1e-6, 1.0);
    hw.efficiency.hbm_efficiency = rep.hbm_efficiency;
    out.sources["efficiency.hbm_efficiency"] = fmt::format(
        "fitted by planner calibrate fit: median measured copy bandwidth {:.1f} GB/s (read + write) in {} over the "
        "nominal {:.1f} GB/s",
        rep.hbm_bandwidth_bytes_per_s / 1e9, files, base.hbm_bandwidth_bytes_per_s / 1e9);
  }
}

}  // namespace

GroupTier group_tier(const MeasuredSeries& s) {
  if (s.nodes == 1) return GroupTier::tier0;
  if (s.ranks_per_node == 1) return GroupTier::tier1;
  return GroupTier::mixed;
}

GroupPlacement placement_of(const HardwareProfile& hw, const MeasuredSeries& s) {
  GroupPlacement g;
  g.size = s.group_size;
  g.members_per_domain = s.ranks_per_node;
  g.domains = s.nodes;
  // send/recv is remote when consecutive members are a node apart.
  g.stride =
      s.ranks_per_node == 1 && s.nodes > 1 ? std::max<std::int64_t>(1, hw.tiers.empty() ? 1 : hw.tiers[0].size) : 1;
  return g;
}

double CheckReport::worst_median_abs_error() const {
  double w = 0;
  for (const auto& s : series) w = std::max(w, s.median_abs_error);
  return w;
}

double CheckReport::max_abs_error() const {
  double w = 0;
  for (const auto& s : series) w = std::max(w, s.max_abs_error);
  return w;
}

std::size_t CheckReport::points() const {
  std::size_t n = 0;
  for (const auto& s : series) n += s.points.size();
  return n;
}

CheckReport check_profile(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms) {
  if (hw.tiers.empty() || hw.tiers[0].topology != Topology::switched)
    throw InputError(hw.name, "calibrate works on profiles whose tier 0 is a switch (NVLink/NVSwitch), not a torus");
  CheckReport r;
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series) {
      if (group_tier(s) != GroupTier::tier0 && hw.tiers.size() < 2) continue;
      r.series.push_back(check_series(hw, m.origin, s));
    }
  return r;
}

FitResult fit_profile(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, const FitOptions& opt) {
  if (base.tiers.empty() || base.tiers[0].topology != Topology::switched)
    throw InputError(base.name,
                     "calibrate fit works on profiles whose tier 0 is a switch (NVLink/NVSwitch), not a torus");
  if (ms.empty()) throw InputError("--measurements", "expected at least one measurement file");
  FitResult out;
  HardwareProfile& hw = out.profile;
  hw = base;
  hw.name = opt.name.empty() ? base.name + "-fitted" : opt.name;
  hw.aliases.clear();
  hw.display_name = base.display_name + ", fitted to measurements";

  // Node size: what multi-node runs had per node (single-node runs may use part of a node).
  std::int64_t node_size = 0;
  std::string node_size_from;
  for (const auto& m : ms) {
    if (m.set.nodes <= 1) continue;
    if (node_size && m.set.ranks_per_node != node_size)
      throw InputError(m.origin, fmt::format("{} ranks per node, but {} has {}; fit runs of one node size together",
                                             m.set.ranks_per_node, node_size_from, node_size));
    node_size = m.set.ranks_per_node;
    node_size_from = m.origin;
  }
  if (node_size > 0 && node_size != hw.tiers[0].size) {
    out.notes.push_back(fmt::format("tiers[0].size {} -> {}: the measurements ran {} ranks per node ({}{})",
                                    hw.tiers[0].size, node_size, node_size, node_size_from,
                                    ms.front().set.emulated_nodes ? ", emulated nodes" : ""));
    out.sources["tiers[0].size"] =
        fmt::format("{} ranks per node in {} (planner calibrate fit)", node_size, node_size_from);
    if (hw.tiers.size() > 1) {
      InterconnectTier& t1 = hw.tiers[1];
      // Keep the NICs per GPU, so a NIC keeps its meaning.
      const double per_gpu = double(t1.nics_per_node) / double(std::max<std::int64_t>(t1.gpus_per_node, 1));
      t1.gpus_per_node = node_size;
      t1.nics_per_node = std::max<std::int64_t>(1, std::llround(per_gpu * double(node_size)));
      out.notes.push_back(
          fmt::format("tiers[1]: {} NICs per {} GPUs (the base's NICs per GPU)", t1.nics_per_node, t1.gpus_per_node));
      out.sources["tiers[1].gpus_per_node"] = out.sources["tiers[0].size"];
      out.sources["tiers[1].nics_per_node"] =
          "the base profile's NICs per GPU times tiers[1].gpus_per_node (planner calibrate fit)";
    }
    hw.tiers[0].size = node_size;
  }

  std::string files;
  for (const auto& m : ms) files += (files.empty() ? "" : ", ") + m.origin;

  for (std::size_t tier = 0; tier < 2; ++tier) {
    for (Collective c : kAllCollectives) {
      std::vector<Obs> obs;
      std::set<std::int64_t> sizes;
      std::size_t nseries = 0;
      std::set<std::string> origins;
      double min_bytes = std::numeric_limits<double>::infinity(), max_bytes = 0;
      for (const auto& m : ms)
        for (const MeasuredSeries& s : m.set.series) {
          if (s.collective != c || group_tier(s) != (tier == 0 ? GroupTier::tier0 : GroupTier::tier1)) continue;
          if (tier >= hw.tiers.size()) {
            out.notes.push_back(fmt::format("{}: {} skipped: the base profile has no tier 1", m.origin, describe(s)));
            continue;
          }
          ++nseries;
          origins.insert(m.origin);
          sizes.insert(s.group_size);
          for (const MeasuredPoint& p : s.points) {
            obs.push_back(Obs{p.bytes, p.time_s, candidate_terms(tier, c, s.group_size)});
            min_bytes = std::min(min_bytes, p.bytes);
            max_bytes = std::max(max_bytes, p.bytes);
          }
        }
      if (obs.empty()) continue;
      if (obs.size() < 3) {
        out.notes.push_back(fmt::format("tier {} {}: {} points are too few to fit (need 3), kept the base's values",
                                        tier, collective_key(c), obs.size()));
        continue;
      }
      const Params base_p = current_params(base, tier, c);
      const EngineResult e = fit_engine(obs, base_p, opt);
      InterconnectTier& t = hw.tiers[tier];
      CollectiveFit f;
      f.fitted = true;
      f.base_latency_s = std::min(e.params.l0, 1.0);
      f.latency_per_step_s = std::min(e.params.l1, 1.0);
      const double per_gpu = 1.0 / e.params.beta;
      f.bandwidth_bytes_per_s = std::min(
          1e15,
          tier == 0 ? per_gpu : per_gpu * double(t.gpus_per_node) / double(std::max<std::int64_t>(t.nics_per_node, 1)));
      t.collective_fits[std::size_t(c)] = f;

      CollectiveFitReport rep;
      rep.tier = tier;
      rep.collective = c;
      rep.group_sizes.assign(sizes.begin(), sizes.end());
      rep.series = nseries;
      rep.points = obs.size();
      rep.downweighted = e.downweighted;
      rep.fit = f;
      rep.growth_fitted = e.growth;
      rep.bandwidth_fitted = e.bandwidth;
      rep.iterations = e.iterations;
      out.collectives.push_back(rep);
      std::string from;
      for (const auto& o : origins) from += (from.empty() ? "" : ", ") + o;
      out.sources[fmt::format("tiers[{}].collectives.{}", tier, collective_key(c))] = fmt::format(
          "fitted by planner calibrate fit to {}: {} series, group sizes {}, {} points {}-{}; weighted least squares "
          "in relative "
          "error with Huber reweighting{}{}{}",
          from, nseries, join_sizes(rep.group_sizes), obs.size(), human_bytes(min_bytes), human_bytes(max_bytes),
          e.growth ? "" : "; one step count, so base and per-step latency split in the base profile's ratio",
          e.bandwidth ? "" : "; sizes too small to show bandwidth, the base's bandwidth kept",
          opt.command.empty() ? "" : fmt::format("; command: {}", opt.command));
    }
  }
  if (out.collectives.empty())
    throw InputError(files, "no series to fit: expected groups inside one node or with one rank per node");

  // Residuals through the planner's own collective_cost on the fitted profile.
  for (CollectiveFitReport& rep : out.collectives) {
    std::vector<double> errs, ln_meas, ln_pred;
    std::array<std::vector<double>, 3> by_regime;
    for (const auto& m : ms)
      for (const MeasuredSeries& s : m.set.series) {
        if (s.collective != rep.collective || group_tier(s) != (rep.tier == 0 ? GroupTier::tier0 : GroupTier::tier1))
          continue;
        const GroupPlacement g = placement_of(hw, s);
        for (const MeasuredPoint& p : s.points) {
          const CollectiveCost cost = collective_cost(hw, g, s.collective, p.bytes);
          const double e = std::abs(cost.total_s() - p.time_s) / p.time_s;
          errs.push_back(e);
          ln_meas.push_back(std::log(p.time_s));
          ln_pred.push_back(std::log(cost.total_s()));
          const std::size_t regime = cost.bandwidth_s < cost.latency_s / kRegimeRatio   ? kLatencyBound
                                     : cost.bandwidth_s > cost.latency_s * kRegimeRatio ? kBandwidthBound
                                                                                        : kMixed;
          RangeStats& rs = rep.regimes[regime];
          rs.min_bytes = rs.points ? std::min(rs.min_bytes, p.bytes) : p.bytes;
          rs.max_bytes = std::max(rs.max_bytes, p.bytes);
          ++rs.points;
          by_regime[regime].push_back(e);
        }
      }
    for (std::size_t k = 0; k < 3; ++k) {
      rep.regimes[k].median_abs_error = median_of(by_regime[k]);
      rep.regimes[k].max_abs_error =
          by_regime[k].empty() ? 0 : *std::max_element(by_regime[k].begin(), by_regime[k].end());
    }
    rep.median_abs_error = median_of(errs);
    rep.max_abs_error = errs.empty() ? 0 : *std::max_element(errs.begin(), errs.end());
    const double mean = std::accumulate(ln_meas.begin(), ln_meas.end(), 0.0) / double(ln_meas.size());
    double sse = 0, sst = 0;
    for (std::size_t i = 0; i < ln_meas.size(); ++i) {
      sse += (ln_pred[i] - ln_meas[i]) * (ln_pred[i] - ln_meas[i]);
      sst += (ln_meas[i] - mean) * (ln_meas[i] - mean);
    }
    rep.r2_log_time = sst > 0 ? 1.0 - sse / sst : 1.0;
  }
  // Groups with several ranks on each of several nodes: predicted, not fitted.
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series)
      if (group_tier(s) == GroupTier::mixed && hw.tiers.size() > 1)
        out.validation.series.push_back(check_series(hw, m.origin, s));

  fit_compute(base, ms, out);
  return out;
}

std::string render_fitted_profile(const FitResult& r, const json& base_sources) {
  json j = to_json(r.profile);
  json sources = base_sources.is_object() ? base_sources : json::object();
  for (const auto& [k, v] : r.sources) sources[k] = v;
  j["sources"] = sources;
  j["notes"] =
      "Fitted by planner calibrate fit (docs/calibration.md). Collectives without a fit on a tier keep that tier's "
      "generic "
      "latency_s and bandwidth_achieved_bytes_per_s.";
  return j.dump(2) + "\n";
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4 && std::fmod(b, 1024) == 0) b /= 1024, ++u;
  return fmt::format("{:g} {}", b, units[u]);
}

std::string join_sizes(const std::vector<std::int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

}  // namespace planner
