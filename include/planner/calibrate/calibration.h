// Calibration: fits a hardware profile's collective alpha-beta (per tier and
// per collective) and compute efficiencies to measurement files, and checks a
// profile against measurements. Sits after measurements.h; its output is a
// HardwareProfile whose tiers carry CollectiveFit values that collective_cost
// (collectives.h) prices, so the fitted profile drives `planner search`.
// docs/calibration.md gives the model, the fit and the report.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "planner/calibrate/measurements.h"
#include "planner/calibrate/series_placement.h"
#include "planner/model/collectives.h"
#include "planner/spec/specs.h"

namespace planner {

struct NamedMeasurements {
  std::string origin;  // file name, for reports and sources
  MeasurementSet set;
};

// |relative error| statistics of the points of one regime.
struct RangeStats {
  std::size_t points = 0;
  double min_bytes = 0, max_bytes = 0;
  double median_abs_error = 0, max_abs_error = 0;
};
// Regimes by the fitted model's own split of each point's time: latency-bound
// (bandwidth term < 1/4 of the latency term), bandwidth-bound (> 4x), mixed.
enum Regime : std::size_t { kLatencyBound = 0, kMixed = 1, kBandwidthBound = 2 };

struct CollectiveFitReport {
  std::size_t tier = 0;
  Collective collective = Collective::all_reduce;
  std::vector<std::int64_t> group_sizes;  // distinct, ascending
  std::size_t series = 0, points = 0;
  std::size_t downweighted = 0;  // outliers: points the biweight gave no weight (|residual| > c * MAD scale)
  CollectiveFit fit;
  bool growth_fitted = false;    // base and per-step latency fitted separately (>= 2 step counts)
  bool latency_kept = false;     // no size below kSmallMessageBytes: the base's latency kept (not --force)
  double min_bytes = 0, max_bytes = 0;
  bool bandwidth_fitted =
      true;  // false: sizes too small to see bandwidth (send/recv: or every point channel-paced); the base's kept
  bool p2p_channels = false;  // send/recv priced on NCCL's p2p channels (fit.p2p_channel_bandwidth_bytes_per_s)
  bool channel_bandwidth_fitted = false;  // some point paced by its channels: their rate fitted (else the base's)
  int iterations = 0;
  double r2_log_time = 0;  // 1 - SSE/SST of ln(time)
  double median_abs_error = 0, max_abs_error = 0;
  std::array<RangeStats, 3> regimes{};
};

struct ComputeFitReport {
  std::array<bool, kNumDTypes> gemm_fitted{false, false};
  std::array<std::size_t, kNumDTypes> gemm_shapes{0, 0};
  std::array<double, kNumDTypes> gemm_max{0, 0};
  // |predicted - measured| / measured of the fitted line over the shapes.
  std::array<double, kNumDTypes> gemm_median_abs_error{0, 0}, gemm_max_abs_error{0, 0};
  std::array<std::string, kNumDTypes> gemm_worst_shape;
  double gemm_half_flops = 0;
  bool half_flops_fitted = false;
  bool hbm_fitted = false;
  double hbm_efficiency = 0;
  double hbm_bandwidth_bytes_per_s = 0;
  // sustained / burst of planner-bench's --sustain-seconds runs (median over
  // the runs); else the base's efficiency.sustained_clock_fraction is kept.
  bool sustained_fitted = false;
  double sustained_clock_fraction = 0;
  std::string sustained_from;  // "llama3.1-8b tp1 gate-up bf16, 30 s: 689.1 of 814.6 TFLOP/s"
};

// Measured against predicted, one series (calibrate check, and the validation
// part of the fit report).
struct CheckPoint {
  double bytes = 0, measured_s = 0, predicted_s = 0;
  double rel_error = 0;  // (predicted - measured) / measured
  Algorithm algorithm = Algorithm::none;
  Protocol protocol = Protocol::none;
  int p2p_channels_used = 0;  // send/recv: NCCL's p2p channels where they limit (CollectiveCost)
  bool not_forced = false;    // --algo given, but it cannot run this collective on this group (another priced)
};
struct SeriesCheck {
  std::string origin;
  std::string label;  // describe(series)
  Collective collective = Collective::all_reduce;
  GroupTier tier = GroupTier::mixed;
  bool fitted = false;  // the profile has a fit for this collective on this group's tier
  std::vector<CheckPoint> points;
  double median_abs_error = 0, max_abs_error = 0;
};
struct CheckReport {
  std::vector<SeriesCheck> series;
  std::vector<std::string> notes;  // series not checked, and why (a profile without tier 1)
  [[nodiscard]] double worst_median_abs_error() const;
  [[nodiscard]] double max_abs_error() const;
  [[nodiscard]] std::size_t points() const;
};

struct FitOptions {
  double huber_k = 1.345;     // Huber tuning constant, in robust (MAD) scale units
  bool redescending = true;   // then Tukey's biweight from the Huber solution
  double bisquare_c = 4.685;  // biweight tuning constant (95% efficiency under normal noise)
  int max_iterations = 200;
  // --force: write a fit that fails the quality gates, and fit latency from
  // sizes that cannot show it; both stay in the report as warnings.
  bool force = false;
  // --algo: the NCCL_ALGO the runs forced. The fit prices every point with it
  // (all-reduce across nodes: ring or tree; the others have one algorithm in
  // the alpha-beta model); nullopt: the cheaper per point, as NCCL's tuner.
  std::optional<Algorithm> algorithm;
  std::string name;     // the fitted profile's name
  std::string command;  // recorded in the profile's sources
};

struct FitResult {
  HardwareProfile profile;
  std::vector<CollectiveFitReport> collectives;  // tier 0 then tier 1, collective order
  CheckReport validation;                        // mixed groups: predicted, not fitted
  ComputeFitReport compute;
  std::vector<std::string> notes;              // topology changes, what was skipped
  std::vector<std::string> warnings;           // device differs from the base's chip, latency not measured, --force
  // Series whose fit does not describe them (R^2 of ln t < kMinR2 or median
  // |error| > kMaxMedianError): the command fails unless --force.
  std::vector<std::string> failures;
  std::map<std::string, std::string> sources;  // profile field path -> how it was obtained
};

// Quality gates of a fit (docs/calibration.md, "Fits that refuse to lie").
inline constexpr double kMinR2 = 0.9;
inline constexpr double kMaxMedianError = 0.10;
// Latency is only seen in sizes below this (above it, even 72-rank rings are
// bandwidth-bound on NVLink and InfiniBand).
inline constexpr double kSmallMessageBytes = 1 << 20;

// "NVIDIA A100-SXM4-40GB" -> "A100 40GB": the GPU family and memory size a
// device string names, to compare a log's device with a profile's chip.
[[nodiscard]] std::string device_key(const std::string& device);
// The board form factor a device string names: "SXM", "PCIe" or "NVL" (the
// words themselves; nvidia-smi names an SXM Hopper part only by its memory,
// "NVIDIA H100 80GB HBM3", so an HBM word without PCIe or NVL is SXM); "" when
// it says none ("NVIDIA H200", "synthetic"). An H100 PCIe or NVL card is not
// the SXM5 part of dgx-h100 (lower clocks, power and links).
[[nodiscard]] std::string device_form_factor(const std::string& device);

// Fits every (tier, collective) that has measurements; the rest of `base` is
// kept. Throws InputError when nothing can be fitted or the base is a torus.
[[nodiscard]] FitResult fit_profile(const HardwareProfile& base, const std::vector<NamedMeasurements>& measurements,
                                    const FitOptions& opt = {});
// The new profile file: to_json(profile) with `base_sources` updated by the fit's sources.
[[nodiscard]] std::string render_fitted_profile(const FitResult& r, const nlohmann::json& base_sources);

// Predicts every measured point with collective_cost on `hw`.
// With `algorithm` (--algo), all-reduce points of a group inside one tier are
// priced with that algorithm through the tier's alpha-beta (the formula the fit
// uses) where collective_cost would pick the other; points of mixed groups
// keep collective_cost's choice and are marked (the cost model has no
// per-algorithm entry point). A series the profile cannot price (across nodes
// on a profile without tier 1) is skipped with a note; none left is an
// InputError giving the reasons.
[[nodiscard]] CheckReport check_profile(const HardwareProfile& hw, const std::vector<NamedMeasurements>& measurements,
                                        std::optional<Algorithm> algorithm = std::nullopt);

// "32 MiB", "1 GiB": a byte count in the largest binary unit that divides it.
[[nodiscard]] std::string human_bytes(double b);
// "2,4,8": group sizes as a list.
[[nodiscard]] std::string join_sizes(const std::vector<std::int64_t>& v);

}  // namespace planner
