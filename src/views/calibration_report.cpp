// `planner calibrate`'s reports: a fit (per tier and collective, by regime, the
// validation series, the compute fit) and a check of a profile against
// measurements.
#include "planner/views/calibration_report.h"

#include <fmt/format.h>

namespace planner {

namespace {

// What groups a tier's fits come from, for the fit report's tier headings.
std::string tier_groups(const HardwareProfile& hw, std::size_t tier) {
  if (tier != 0) return "groups with one rank per node; bandwidth per NIC";
  const std::int64_t hosts = hosts_per_domain(hw);
  return hosts > 1 ? fmt::format("groups inside one NVLink domain ({} nodes)", hosts) : "groups inside one node";
}

}  // namespace

std::string render_fit_report(const FitResult& r) {
  std::string out;
  std::size_t points = 0;
  for (const auto& c : r.collectives) points += c.points;
  out += fmt::format("calibrate fit: {} (tier 0 size {}), {} collective fits from {} points\n", r.profile.name,
                     r.profile.tiers[0].size, r.collectives.size(), points);
  for (const auto& n : r.notes) out += fmt::format("  note: {}\n", n);
  for (const auto& w : r.warnings) out += fmt::format("  warning: {}\n", w);
  for (const auto& x : r.failures) out += fmt::format("  FAILED: {}\n", x);
  for (std::size_t tier = 0; tier < 2; ++tier) {
    bool header = false;
    for (const CollectiveFitReport& c : r.collectives) {
      if (c.tier != tier) continue;
      if (!header) {
        out += fmt::format("\ntier {} ({}): {}\n", tier, r.profile.tiers[tier].name, tier_groups(r.profile, tier));
        out += fmt::format("  {:<15} {:>7} {:>5} {:>10} {:>10} {:>11} {:>7} {:>7} {:>7} {:>5}\n", "collective", "sizes",
                           "pts", "base us", "step us", "GB/s", "R2 ln t", "med err", "max err", "outl");
        header = true;
      }
      std::string channel;
      if (c.p2p_channels)
        channel = fmt::format("  (p2p channel {:.3f} GB/s{})", c.fit.p2p_channel_bandwidth_bytes_per_s / 1e9,
                              c.channel_bandwidth_fitted ? "" : ": base's");
      out +=
          fmt::format("  {:<15} {:>7} {:>5} {:>10.3f} {:>10.4f} {:>11.3f} {:>7.4f} {:>6.1f}% {:>6.1f}% {:>5}{}{}{}{}\n",
                      collective_key(c.collective), join_sizes(c.group_sizes), c.points, c.fit.base_latency_s * 1e6,
                      c.fit.latency_per_step_s * 1e6, c.fit.bandwidth_bytes_per_s / 1e9, c.r2_log_time,
                      c.median_abs_error * 100, c.max_abs_error * 100, c.downweighted,
                      c.latency_kept    ? "  (latency: base's, no size < 1 MiB)"
                      : c.growth_fitted ? ""
                                        : "  (one step count: latency split as base)",
                      c.bandwidth_fitted ? "" : "  (bandwidth: base's)", channel,
                      c.fit.nccl_tuner ? "  (priced by NCCL's tuner)" : "");
    }
    if (!header) continue;
    out += "  |error| by regime (latency-bound: bandwidth term < 1/4 of latency; bandwidth-bound: > 4x):\n";
    for (const CollectiveFitReport& c : r.collectives) {
      if (c.tier != tier) continue;
      out += fmt::format("  {:<15}", collective_key(c.collective));
      const char* names[] = {"latency", "mixed", "bandwidth"};
      for (std::size_t k = 0; k < 3; ++k) {
        const RangeStats& s = c.regimes[k];
        if (s.points == 0)
          out += fmt::format(" {}: -;", names[k]);
        else
          out += fmt::format(" {} {} ({}): median {:.1f}% max {:.1f}%;", names[k],
                             s.min_bytes == s.max_bytes
                                 ? human_bytes(s.min_bytes)
                                 : fmt::format("{}-{}", human_bytes(s.min_bytes), human_bytes(s.max_bytes)),
                             s.points, s.median_abs_error * 100, s.max_abs_error * 100);
      }
      out.pop_back();
      out += "\n";
    }
  }
  if (!r.validation.series.empty()) {
    out += "\nvalidation: groups with several ranks on several nodes, predicted from both tiers (not fitted):\n";
    for (const SeriesCheck& s : r.validation.series)
      out += fmt::format("  {:<58} {:>4} pts  median {:>5.1f}%  max {:>6.1f}%\n", s.label, s.points.size(),
                         s.median_abs_error * 100, s.max_abs_error * 100);
  }
  const ComputeFitReport& c = r.compute;
  if (c.gemm_fitted[0] || c.gemm_fitted[1] || c.hbm_fitted || c.sustained_fitted) {
    out += "\ncompute:\n";
    for (std::size_t d = 0; d < kNumDTypes; ++d)
      if (c.gemm_fitted[d])
        out += fmt::format("  gemm_max.{} {:.3f} from {} GEMM shapes (median |error| {:.1f}%, max {:.1f}% at {})\n",
                           d == 0 ? "bf16" : "fp8", c.gemm_max[d], c.gemm_shapes[d], c.gemm_median_abs_error[d] * 100,
                           c.gemm_max_abs_error[d] * 100, c.gemm_worst_shape[d]);
    // The benchmark's GEMM loops are short (burst clock); the sustained clock
    // fraction, measured (--sustain-seconds) or kept from the base, applies on
    // top (docs/calibration.md section 4).
    if (c.sustained_fitted)
      out += fmt::format("  sustained_clock_fraction {:.3f} measured ({}): evaluate runs GEMMs at gemm_max x {:.3f}\n",
                         c.sustained_clock_fraction, c.sustained_from, c.sustained_clock_fraction);
    else if ((c.gemm_fitted[0] || c.gemm_fitted[1]) && r.profile.efficiency.sustained_clock_fraction != 1.0)
      out += fmt::format(
          "  sustained_clock_fraction {:.3f} kept from the base: evaluate runs GEMMs at gemm_max x {:.3f}\n",
          r.profile.efficiency.sustained_clock_fraction, r.profile.efficiency.sustained_clock_fraction);
    if (c.half_flops_fitted) out += fmt::format("  gemm_half_flops {:.3g}\n", c.gemm_half_flops);
    if (c.hbm_fitted)
      out += fmt::format("  hbm_efficiency {:.3f} ({:.1f} GB/s measured)\n", c.hbm_efficiency,
                         c.hbm_bandwidth_bytes_per_s / 1e9);
  }
  return out;
}

std::string render_check(const CheckReport& r) {
  std::string out;
  for (const SeriesCheck& s : r.series) {
    out += fmt::format("{}: {}{}\n", s.origin, s.label,
                       s.tier == GroupTier::mixed ? " [validation: both tiers]"
                       : s.fitted                 ? ""
                                                  : " [no fit for this collective on this tier]");
    out +=
        fmt::format("  {:>12} {:>13} {:>13} {:>8}  {}\n", "bytes", "measured us", "predicted us", "error", "algorithm");
    for (const CheckPoint& p : s.points)
      out +=
          fmt::format("  {:>12.0f} {:>13.3f} {:>13.3f} {:>7.1f}%  {}{}\n", p.bytes, p.measured_s * 1e6,
                      p.predicted_s * 1e6, p.rel_error * 100,
                      describe(CollectiveCost{
                          .algorithm = p.algorithm, .protocol = p.protocol, .p2p_channels_used = p.p2p_channels_used}),
                      p.not_forced ? " (not the --algo: NCCL cannot run it for this collective and group)" : "");
    out += fmt::format("  median |error| {:.1f}%, max {:.1f}%\n", s.median_abs_error * 100, s.max_abs_error * 100);
  }
  for (const std::string& n : r.notes) out += fmt::format("note: {}\n", n);
  out += fmt::format("check: {} series, {} points; worst series median |error| {:.1f}%, max |error| {:.1f}%\n",
                     r.series.size(), r.points(), r.worst_median_abs_error() * 100, r.max_abs_error() * 100);
  return out;
}

namespace {

// Where --algo was not applied to a series' points (the full table marks each
// point), so the one-line summary does not hide it.
std::string not_forced_note(const SeriesCheck& s) {
  std::size_t n = 0;
  for (const CheckPoint& p : s.points) n += p.not_forced;
  if (n == 0) return "";
  return fmt::format(" (not the --algo{}: NCCL cannot run it for this collective and group)",
                     n == s.points.size() ? "" : fmt::format(" at {} of {} points", n, s.points.size()));
}

}  // namespace

std::string render_check_summary(const CheckReport& r) {
  std::string out;
  for (const auto& s : r.series)
    out += fmt::format("{}: {}: {} pts, median |error| {:.1f}%, max {:.1f}%{}{}\n", s.origin, s.label, s.points.size(),
                       s.median_abs_error * 100, s.max_abs_error * 100,
                       s.tier == GroupTier::mixed ? " [validation]" : "", not_forced_note(s));
  for (const std::string& n : r.notes) out += fmt::format("note: {}\n", n);
  out += fmt::format("check: {} series, {} points; worst series median |error| {:.1f}%, max |error| {:.1f}%\n",
                     r.series.size(), r.points(), r.worst_median_abs_error() * 100, r.max_abs_error() * 100);
  return out;
}

std::string render_import_summary(const MeasurementSet& m, std::size_t files, const std::string& path) {
  std::size_t points = 0;
  for (const auto& s : m.series) points += s.points.size();
  std::string out = fmt::format("imported {} series ({} points) from {} file{} into {}\n", m.series.size(), points,
                                files, files == 1 ? "" : "s", path);
  for (const auto& s : m.series)
    out += fmt::format("  {}: {} size{} {}\n", describe(s), s.points.size(), s.points.size() == 1 ? "" : "s",
                       s.points.size() == 1 ? human_bytes(s.points.front().bytes)
                                            : fmt::format("{}-{}", human_bytes(s.points.front().bytes),
                                                          human_bytes(s.points.back().bytes)));
  return out;
}

}  // namespace planner
