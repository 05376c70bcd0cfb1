#include "io/unit_checks.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "planner/spec/names.h"

namespace planner::detail {

namespace {

// A unit the value may have been typed in: SI value = typed value x factor.
// `exponent` is how the suggestion writes the factor ("e12"); empty for byte
// counts, which are suggested as whole numbers.
struct Prefix {
  double factor;
  const char* exponent;
  const char* unit;
};

// One kind of quantity. [lo, hi] is what no real accelerator falls outside of;
// [typical_lo, typical_hi], inside it, is where a prefixed reading is first looked
// for, so 2.25 reads as 2.25e15 (PFLOP/s) rather than 2.25e12.
struct Quantity {
  const char* unit;   // SI unit of the field
  const char* noun;   // "implausible for ..."
  const char* range;  // the expected range, as the message states it
  double lo, hi, typical_lo, typical_hi;
  std::vector<Prefix> prefixes;
};

constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;

// The ranges (docs/hardware_profiles.md): dense peaks of shipped accelerators run
// from 65 TFLOP/s (T4-class) to 5 PFLOP/s (GB300 FP8); HBM from 16 GiB (TPU v5e)
// to 288 GB (B300) at 0.8 to 8 TB/s; links from 1.25 GB/s (10 GbE) to 900 GB/s
// (NVLink5); latencies from 0.5 us (ICI hop) to tens of us (data-centre network).
const Quantity kPeak{"FLOP/s",
                     "an accelerator",
                     "1e12 to 1e17 FLOP/s",
                     1e12,
                     1e17,
                     1e13,
                     1e16,
                     {{1e12, "e12", "TFLOP/s"}, {1e15, "e15", "PFLOP/s"}, {1e9, "e9", "GFLOP/s"}}};
const Quantity kCapacity{"bytes",
                         "accelerator memory",
                         "1 GiB to 4 TiB",
                         kGiB,
                         4 * kTiB,
                         4 * kGiB,
                         kTiB,
                         {{kGiB, "", "GiB"}, {kMiB, "", "MiB"}}};
const Quantity kHbmBandwidth{"bytes/s",
                             "a memory bandwidth",
                             "1e10 to 1e14 bytes/s",
                             1e10,
                             1e14,
                             1e11,
                             5e13,
                             {{1e9, "e9", "GB/s"}, {1e12, "e12", "TB/s"}}};
const Quantity kLinkBandwidth{"bytes/s",
                              "a link bandwidth",
                              "1e8 to 1e13 bytes/s",
                              1e8,
                              1e13,
                              1e9,
                              1e13,
                              {{1e9, "e9", "GB/s"}, {1e12, "e12", "TB/s"}}};
const Quantity kLatency{"s",  "a latency", "0 to 1e-2 s", 0,
                        1e-2, 1e-7,        1e-4,          {{1e-6, "e-6", "us"}, {1e-9, "e-9", "ns"}}};
const Quantity kReserve{"bytes",   "a memory reserve", "0, or 1 KiB to 1e15 bytes",           kKiB, 1e15,
                        64 * kMiB, 64 * kGiB,          {{kGiB, "", "GiB"}, {kMiB, "", "MiB"}}};

std::optional<std::string> suggestion(double v, const Quantity& q) {
  for (const bool typical : {true, false}) {
    const double lo = typical ? q.typical_lo : q.lo, hi = typical ? q.typical_hi : q.hi;
    for (const Prefix& p : q.prefixes) {
      const double w = v * p.factor;
      if (w < lo || w > hi) continue;
      if (*p.exponent == '\0') return fmt::format("{} ({} {})", std::int64_t(std::llround(w)), v, p.unit);
      return fmt::format("{}{} ({} {})", v, p.exponent, v, p.unit);
    }
  }
  return std::nullopt;
}

void check(double v, const std::string& field, const Quantity& q, std::vector<std::string>& problems) {
  if (v == 0 || !std::isfinite(v) || (v >= q.lo && v <= q.hi)) return;
  std::string msg = fmt::format("{}: {} {} is implausible for {} (expected {})", field, v, q.unit, q.noun, q.range);
  if (const auto s = suggestion(v, q)) msg += "; did you mean " + *s + "?";
  problems.push_back(std::move(msg));
}

// Efficiency fractions (of the peak, of HBM bandwidth, of the burst clock):
// no kernel a profile describes runs below 1% of its chip's peak, the same
// floor `planner validate` applies to a measured time; below it the fraction
// is a slip (a percentage typed as a fraction of a fraction) and would price
// steps of 1e300 s or inf.
void check_fraction(double v, const std::string& field, std::vector<std::string>& problems) {
  if (v == 0 || !std::isfinite(v) || v >= 0.01) return;
  problems.push_back(
      fmt::format("{}: {} is implausible for an efficiency (expected a fraction from 0.01 to 1)", field, v));
}

}  // namespace

void check_profile_units(const HardwareProfile& h, std::vector<std::string>& problems) {
  const ComputeEfficiency& e = h.efficiency;
  for (const DType d : {DType::bf16, DType::fp8}) {
    const std::string dt(to_string(d));
    check_fraction(e.gemm_max[std::size_t(d)], "efficiency.gemm_max." + dt, problems);
    check_fraction(e.attention_max[std::size_t(d)], "efficiency.attention_max." + dt, problems);
  }
  check_fraction(e.flash2_attention_max, "efficiency.flash2_attention_max", problems);
  check_fraction(e.unfused_attention_max, "efficiency.unfused_attention_max", problems);
  check_fraction(e.hbm_efficiency, "efficiency.hbm_efficiency", problems);
  check_fraction(e.sustained_clock_fraction, "efficiency.sustained_clock_fraction", problems);
  check(h.peak_flops_per_s[std::size_t(DType::bf16)], "chip.peak_flops_per_s.bf16", kPeak, problems);
  check(h.peak_flops_per_s[std::size_t(DType::fp8)], "chip.peak_flops_per_s.fp8", kPeak, problems);
  check(h.hbm_capacity_bytes, "chip.hbm_capacity_bytes", kCapacity, problems);
  check(h.hbm_bandwidth_bytes_per_s, "chip.hbm_bandwidth_bytes_per_s", kHbmBandwidth, problems);
  check(h.memory_reserve_bytes, "memory_reserve_bytes", kReserve, problems);
  check(h.collective_base_latency_s, "collective_base_latency_s", kLatency, problems);
  for (std::size_t i = 0; i < h.tiers.size(); ++i) {
    const InterconnectTier& t = h.tiers[i];
    const std::string path = fmt::format("tiers[{}].", i);
    check(t.latency_s, path + "latency_s", kLatency, problems);
    check(t.bandwidth_nominal_bytes_per_s, path + "bandwidth_nominal_bytes_per_s", kLinkBandwidth, problems);
    check(t.bandwidth_achieved_bytes_per_s, path + "bandwidth_achieved_bytes_per_s", kLinkBandwidth, problems);
    check(t.nvls_bus_bandwidth_bytes_per_s, path + "nvls_bus_bandwidth_bytes_per_s", kLinkBandwidth, problems);
  }
}

}  // namespace planner::detail
