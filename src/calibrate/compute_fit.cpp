// Compute efficiencies from planner-bench's GEMM and HBM measurements
// (docs/calibration.md, "Compute"): gemm_max and gemm_half_flops from a
// weighted line of time against FLOPs, hbm_efficiency from copy bandwidth.
#include "calibrate/compute_fit.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <Eigen/Dense>

#include "calibrate/alpha_beta_fit.h"
#include "planner/model/gemm_cost.h"

namespace planner::calibrate_detail {

namespace {

constexpr double kGemmWarnError = 0.10;  // a shape the fitted GEMM line misses by more is a warning

// time = a*F + b by least squares weighted by 1/time (relative error), over
// (FLOPs, seconds) points; columns scaled to TFLOP and ms for conditioning.
std::pair<double, double> fit_time_line(const std::vector<std::pair<double, double>>& pts) {
  Eigen::MatrixXd X(Eigen::Index(pts.size()), 2);
  Eigen::VectorXd y(static_cast<Eigen::Index>(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double w = 1.0 / pts[i].second;
    X(Eigen::Index(i), 0) = w * pts[i].first / 1e12;
    X(Eigen::Index(i), 1) = w * 1e-3;
    y(Eigen::Index(i)) = w * pts[i].second;
  }
  const Eigen::VectorXd sol = X.colPivHouseholderQr().solve(y);
  return {sol(0) / 1e12, sol(1) * 1e-3};
}

// The compute gates (docs/calibration.md, "Fits that refuse to lie"), as the
// collectives' (fit_quality.cpp gate): no measured GEMM rate above the chip's
// peak (the base profile's), and the fitted line within kMaxMedianError of the
// median shape; a failure says why (exit 1 unless --force). A GEMM 10x above
// the peak gave gemm_max 1.000 (clamped) and exit 0.
void gate_gemm(const HardwareProfile& base, std::size_t d, const std::vector<std::pair<std::string, double>>& rates,
               FitResult& out) {
  const double peak = base.peak_flops_per_s[d];
  std::vector<std::string> why;
  std::size_t above = 0, fastest = 0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    above += rates[i].second > peak;
    if (rates[i].second > rates[fastest].second) fastest = i;
  }
  if (above)
    why.push_back(fmt::format("{} of {} shapes ran above the chip's peak ({} at {:.1f} TFLOP/s; {} {:.1f} TFLOP/s)",
                              above, rates.size(), rates[fastest].first, rates[fastest].second / 1e12, base.chip_name,
                              peak / 1e12));
  const double median = out.compute.gemm_median_abs_error[d];
  if (median > kMaxMedianError)
    why.push_back(fmt::format("median |error| {:.1f}% > {:.0f}%", median * 100, kMaxMedianError * 100));
  if (why.empty()) return;
  out.failures.push_back(fmt::format("{} GEMM ({} shapes): {}; {}", d == 0 ? "bf16" : "fp8", rates.size(),
                                     fmt::join(why, " and "),
                                     above ? "these are not the base's chip's times (a time unit off, or another GPU)"
                                           : "evaluate's GEMM formula does not describe these shapes on this GPU"));
}

// GEMM: time = (F / q + half) / (peak * gemm_max), q the wave efficiency of
// the output shape as evaluate prices it (gemm_time_s, gemm_cost.cpp) = a*F/q
// + b, a weighted line in F/q, so that evaluate gives back the measured times.
void fit_gemm(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, const std::string& files,
              FitResult& out) {
  HardwareProfile& hw = out.profile;
  ComputeFitReport& rep = out.compute;
  for (std::size_t d = 0; d < kNumDTypes; ++d) {
    const char* name = d == 0 ? "bf16" : "fp8";
    std::vector<std::pair<double, double>> pts;  // (flops / q, time)
    std::vector<std::string> shape_names;
    std::vector<std::pair<std::string, double>> rates;  // (shape, measured FLOP/s)
    for (const auto& m : ms)
      for (const GemmMeasurement& g : m.set.gemm)
        if (g.dtype == name) {
          pts.emplace_back(
              2.0 * double(g.m) * double(g.n) * double(g.k) / wave_efficiency(base, double(g.m), double(g.n)),
              g.time_s);
          shape_names.push_back(g.name.empty() ? fmt::format("{}x{}x{}", g.m, g.n, g.k) : g.name);
          rates.emplace_back(shape_names.back(), 2.0 * double(g.m) * double(g.n) * double(g.k) / g.time_s);
        }
    if (pts.empty() || !(base.peak_flops_per_s[d] > 0)) continue;
    std::set<double> distinct;
    for (auto& p : pts) distinct.insert(p.first);
    double a = 0, b = 0;
    if (distinct.size() >= 2) std::tie(a, b) = fit_time_line(pts);
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
        "fitted by planner calibrate fit to {} cuBLASLt {} GEMM shapes in {}: time = (F / q + gemm_half_flops) / "
        "(peak * gemm_max), q the wave efficiency, weighted least squares in relative error",
        pts.size(), name, files);
    // What the fitted line leaves per shape (as evaluate will price them, with
    // the half-efficiency size the profile keeps): a shape the formula does
    // not describe is a warning, not a silent average.
    std::vector<double> errs;
    double worst = -1;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const double pred = (pts[i].first + hw.efficiency.gemm_half_flops) / (base.peak_flops_per_s[d] * eff);
      const double e = (pred - pts[i].second) / pts[i].second;
      errs.push_back(std::abs(e));
      if (std::abs(e) > worst) worst = std::abs(e), rep.gemm_worst_shape[d] = shape_names[i];
    }
    rep.gemm_median_abs_error[d] = median_of(errs);
    rep.gemm_max_abs_error[d] = worst;
    gate_gemm(base, d, rates, out);
    if (worst > kGemmWarnError)
      out.warnings.push_back(fmt::format(
          "the {} GEMM line leaves {:.1f}% at {}: evaluate's GEMM formula (one {}x{} tile's wave quantisation, "
          "docs/cost_model.md Known gaps) does not describe that shape on this GPU",
          name, worst * 100, rep.gemm_worst_shape[d], base.efficiency.gemm_tile_m, base.efficiency.gemm_tile_n));
  }
  if (rep.half_flops_fitted)
    out.sources["efficiency.gemm_half_flops"] = fmt::format(
        "fitted by planner calibrate fit with efficiency.gemm_max (intercept / slope of time against FLOPs) from {}",
        files);
}

// HBM: the median measured copy bandwidth over the nominal.
void fit_hbm(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, const std::string& files,
             FitResult& out) {
  HardwareProfile& hw = out.profile;
  ComputeFitReport& rep = out.compute;
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
    // A copy faster than the chip's HBM is not this chip's (30 TB/s on a
    // 3.35 TB/s H100 gave hbm_efficiency 1.000 and exit 0): a failure.
    const double fastest = *std::max_element(bws.begin(), bws.end());
    if (fastest > base.hbm_bandwidth_bytes_per_s)
      out.failures.push_back(fmt::format(
          "HBM ({} cop{}): {:.1f} GB/s measured (read + write), above the chip's {:.1f} GB/s ({}); these are not the "
          "base's chip's times (a time unit off, or another GPU)",
          bws.size(), bws.size() == 1 ? "y" : "ies", fastest / 1e9, base.hbm_bandwidth_bytes_per_s / 1e9,
          base.chip_name));
  }
}

// Sustained clock: the median of sustained / burst over the sustained GEMM
// runs. It scales gemm_max and attention_max in evaluate (layer_parts.h
// sustained_peak), which stay burst figures; a ratio above 1 (noise) is 1.
// A rate above the chip's peak fails the gates, as a GEMM's does (gate_gemm).
void fit_sustained(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, const std::string& files,
                   FitResult& out) {
  std::vector<double> ratios;
  std::string from;
  for (const auto& m : ms)
    for (const SustainedGemmMeasurement& x : m.set.gemm_sustained)
      if (x.burst_flops_per_s > 0 && x.sustained_flops_per_s > 0) {
        const double peak = base.peak_flops_per_s[x.dtype == "fp8" ? 1 : 0];
        if (peak > 0 && x.burst_flops_per_s > peak)
          out.failures.push_back(fmt::format(
              "sustained {} GEMM {}: burst {:.1f} TFLOP/s, above the chip's peak ({} {:.1f} TFLOP/s); these are not "
              "the base's chip's times (a time unit off, or another GPU)",
              x.dtype, x.name, x.burst_flops_per_s / 1e12, base.chip_name, peak / 1e12));
        ratios.push_back(x.sustained_flops_per_s / x.burst_flops_per_s);
        if (from.empty())
          from = fmt::format("{} {}, {:.0f} s: {:.1f} of {:.1f} TFLOP/s", x.name, x.dtype, x.duration_s,
                             x.sustained_flops_per_s / 1e12, x.burst_flops_per_s / 1e12);
      }
  if (ratios.empty()) return;
  ComputeFitReport& rep = out.compute;
  rep.sustained_fitted = true;
  rep.sustained_clock_fraction = std::clamp(median_of(ratios), 1e-3, 1.0);
  rep.sustained_from = ratios.size() == 1 ? from : fmt::format("median of {} runs; first {}", ratios.size(), from);
  out.profile.efficiency.sustained_clock_fraction = rep.sustained_clock_fraction;
  out.sources["efficiency.sustained_clock_fraction"] = fmt::format(
      "measured by planner-bench --sustain-seconds in {}: a GEMM run back to back until the power limit settles the "
      "clock, the median rate over the second half of the run over its rate in a short burst on an idle GPU ({})",
      files, rep.sustained_from);
}

}  // namespace

void fit_compute(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, FitResult& out) {
  std::string files;
  for (const auto& m : ms)
    if (!m.set.gemm.empty() || !m.set.hbm.empty() || !m.set.gemm_sustained.empty())
      files += (files.empty() ? "" : ", ") + m.origin;
  fit_gemm(base, ms, files, out);
  fit_hbm(base, ms, files, out);
  fit_sustained(base, ms, files, out);
}

}  // namespace planner::calibrate_detail
