// A fit's quality as the fitted profile prices it (fit_quality.h): residuals
// through collective_cost, the quality gates of issue 14 (R^2 of ln time,
// median |error|: docs/calibration.md section 4), and NCCL's tuner or the
// fitted alpha-beta for all-reduce, all-gather and reduce-scatter.
#include "calibrate/fit_quality.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "calibrate/alpha_beta_fit.h"

namespace planner::calibrate_detail {

// Why a fit fails the quality gates (empty: it passes).
std::vector<std::string> gate_reasons(const CollectiveFitReport& rep) {
  std::vector<std::string> why;
  if (rep.r2_log_time < kMinR2) why.push_back(fmt::format("R2 of ln(time) {:.2f} < {:.1f}", rep.r2_log_time, kMinR2));
  if (rep.median_abs_error > kMaxMedianError)
    why.push_back(fmt::format("median |error| {:.1f}% > {:.0f}%", rep.median_abs_error * 100, kMaxMedianError * 100));
  return why;
}

// Which series fail the quality gates, and why (exit 1 unless --force).
void gate(const CollectiveFitReport& rep, FitResult& out) {
  const std::vector<std::string> why = gate_reasons(rep);
  if (why.empty()) return;
  out.failures.push_back(fmt::format(
      "tier {} {} (group sizes {}, {} points {}-{}): {}; the alpha-beta line does not describe these measurements "
      "(a protocol or algorithm switch, a mixed-up rank count, or runs of different machines)",
      rep.tier, collective_key(rep.collective), join_sizes(rep.group_sizes), rep.points, human_bytes(rep.min_bytes),
      human_bytes(rep.max_bytes), fmt::join(why, " and ")));
}

// A fit's residuals through the planner's own collective_cost on the fitted
// profile: overall, by regime, and R^2 of log time. With --algo every point is
// priced with the forced algorithm, as calibrate check prices it
// (calibration.cpp check_series), so fit and check report the same errors.
void fill_residuals(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms, CollectiveFitReport& rep,
                    std::optional<Algorithm> algo) {
  rep.regimes = {};
  std::vector<double> errs, ln_meas, ln_pred;
  std::array<std::vector<double>, 3> by_regime;
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series) {
      if (s.collective != rep.collective || group_tier(hw, s) != (rep.tier == 0 ? GroupTier::tier0 : GroupTier::tier1))
        continue;
      const GroupPlacement g = placement_of(hw, s);
      for (const MeasuredPoint& p : s.points) {
        const CollectiveCost cost = collective_cost(hw, g, s.collective, p.bytes, algo);
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

// The fits of collective c NCCL's tuner would price (CollectiveFit::nccl_tuner)
// keep it where the tuner, on the fitted scales, describes the runs (every
// tier's fit passes the gates); where one does not and the fitted alpha-beta
// does better, the alpha-beta prices c on both tiers (a profile prices a
// collective one way: collectives.cpp priced_by_nccl), with a note. The
// reports' residuals are those of the pricing kept; the sources say which.
void choose_nccl_tuner_or_alpha_beta(const std::vector<NamedMeasurements>& ms, Collective c,
                                     std::optional<Algorithm> algo, FitResult& out) {
  std::vector<CollectiveFitReport*> reps;
  for (CollectiveFitReport& rep : out.collectives)
    if (rep.collective == c && rep.fit.nccl_tuner) reps.push_back(&rep);
  if (reps.empty()) return;
  const auto set_tuner = [&](bool on) {
    for (CollectiveFitReport* r : reps) out.profile.tiers[r->tier].collective_fits[std::size_t(c)].nccl_tuner = on;
  };
  // A tier of c fitted to other runs (MPI) prices its alpha-beta, and so c everywhere.
  if (std::any_of(out.collectives.begin(), out.collectives.end(),
                  [&](const CollectiveFitReport& r) { return r.collective == c && !r.fit.nccl_tuner; })) {
    set_tuner(false);
    for (CollectiveFitReport* r : reps) r->fit.nccl_tuner = false;
    return;
  }
  const auto fails = [](const CollectiveFitReport* r) { return !gate_reasons(*r).empty(); };
  const auto worst_median = [](const std::vector<CollectiveFitReport*>& rs) {
    double w = 0;
    for (const CollectiveFitReport* r : rs) w = std::max(w, r->median_abs_error);
    return w;
  };
  bool tuner = true;
  if (std::any_of(reps.begin(), reps.end(), fails)) {
    std::vector<CollectiveFitReport> alpha_beta;
    set_tuner(false);
    for (const CollectiveFitReport* r : reps) {
      alpha_beta.push_back(*r);
      alpha_beta.back().fit.nccl_tuner = false;
      fill_residuals(out.profile, ms, alpha_beta.back(), algo);
    }
    std::vector<CollectiveFitReport*> ab;
    for (CollectiveFitReport& r : alpha_beta) ab.push_back(&r);
    tuner = !(std::none_of(ab.begin(), ab.end(), fails) || worst_median(ab) < worst_median(reps));
    if (!tuner) {
      for (std::size_t i = 0; i < reps.size(); ++i) {
        out.notes.push_back(fmt::format(
            "tier {} {}: NCCL's tuner on the fitted values misses these runs (median |error| {:.1f}%, R2 of ln(time) "
            "{:.2f}); the fitted alpha-beta prices {} (median {:.1f}%, R2 {:.2f})",
            reps[i]->tier, collective_key(c), reps[i]->median_abs_error * 100, reps[i]->r2_log_time, collective_key(c),
            alpha_beta[i].median_abs_error * 100, alpha_beta[i].r2_log_time));
        *reps[i] = alpha_beta[i];
      }
    } else {
      set_tuner(true);
    }
  }
  for (const CollectiveFitReport* r : reps)
    out.sources[fmt::format("tiers[{}].collectives.{}", r->tier, collective_key(c))] +=
        tuner ? "; nccl_tuner: the same fit of the base profile's own prices of these points; NCCL's tuner prices the "
                "collective, with this tier's bandwidths and NCCL's latencies scaled by the fitted values over these "
                "(docs/calibration.md, section 4)"
              : "; NCCL's tuner on these values missed the runs, so this alpha-beta prices it";
}

}  // namespace planner::calibrate_detail
