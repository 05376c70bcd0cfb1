// GEMM time on one GPU (gemm_cost.h): the sustained tensor-core rate less
// wave quantisation, the HBM roofline, and Transformer Engine's grouped expert
// GEMMs.
#include "planner/model/gemm_cost.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "model/layer_parts.h"

namespace planner {

using namespace layer_detail;

namespace {

// Capacity (output elements) of the waves of tiles launched for an M x N
// output, in the better of the two tile orientations; M * N without tile data.
double wave_capacity_of(double M, double N, std::int64_t compute_units, std::int64_t tile_m, std::int64_t tile_n) {
  // NVIDIA, "Matrix Multiplication Background User's Guide", wave quantisation.
  // Useful work over the capacity of the waves launched: partially filled
  // tiles and the idle units of the last wave both count as lost.
  const double units = double(compute_units), tm = double(tile_m), tn = double(tile_n);
  auto cap = [&](double a, double b) { return std::ceil(std::ceil(M / a) * std::ceil(N / b) / units) * units * a * b; };
  return std::min(cap(tm, tn), cap(tn, tm));
}

// The capacities last computed, by output shape and the profile fields they
// read (values, not the profile's address): a layer's GEMMs repeat a few
// shapes (n x h for four of a dense layer's twelve), and the six divisions
// above were a fifth of evaluate()'s time. A memo: results are identical
// with or without it.
struct WaveSlot {
  double M = -1, N = -1;
  std::int64_t units = 0, tile_m = 0, tile_n = 0;
  double capacity = 0;
};

double wave_capacity(const HardwareProfile& hw, double M, double N) {
  const auto& e = hw.efficiency;
  if (e.compute_units <= 0 || e.gemm_tile_m <= 0 || e.gemm_tile_n <= 0) return M * N;
  constexpr std::size_t kSlots = 256;
  thread_local std::array<WaveSlot, kSlots> memo;
  const std::uint64_t h =
      std::bit_cast<std::uint64_t>(M) * 0x9E3779B97F4A7C15ull ^ std::bit_cast<std::uint64_t>(N) * 0xC2B2AE3D27D4EB4Full;
  WaveSlot& slot = memo[std::size_t(h >> 56)];
  if (slot.M != M || slot.N != N || slot.units != e.compute_units || slot.tile_m != e.gemm_tile_m ||
      slot.tile_n != e.gemm_tile_n) {
    const double capacity = wave_capacity_of(M, N, e.compute_units, e.gemm_tile_m, e.gemm_tile_n);
    slot = {M, N, e.compute_units, e.gemm_tile_m, e.gemm_tile_n, capacity};
  }
  return slot.capacity;
}

}  // namespace

double wave_efficiency(const HardwareProfile& hw, double M, double N) { return (M * N) / wave_capacity(hw, M, N); }

double gemm_time_s(const HardwareProfile& hw, DType dt, double M, double N, double K) {
  // Large-GEMM throughput gemm_max * peak (best-shape cuBLAS measurements),
  // less the idle units of the last wave, plus a fixed per-kernel overhead
  // equivalent to gemm_half_flops; bounded below by the HBM roofline
  // (Williams et al. 2009). An approximation: docs/hardware_profiles.md.
  const double eff_peak = sustained_peak(hw, dt) * hw.efficiency.gemm_max[std::size_t(dt)];
  const double operand = dt == DType::fp8 ? 1.0 : 2.0;
  const double bytes = operand * (M * K + K * N) + kAct * M * N;
  // 2MNK FLOPs over the wave efficiency MN / capacity: 2K * capacity.
  return std::max((2.0 * K * wave_capacity(hw, M, N) + hw.efficiency.gemm_half_flops) / eff_peak, bytes / hbm_bw(hw));
}

double grouped_gemm_time_s(const HardwareProfile& hw, DType dt, double groups, double M, double N, double K) {
  if (!(groups > 0) || !(M > 0)) return 0.0;
  // Transformer Engine's GroupedLinear (Megatron-Core TEGroupedMLP) issues one
  // cuBLAS GEMM per expert, round-robin on 4 compute streams
  // (transformer_engine/common/gemm/cublaslt_gemm.cu multi_stream_cublas_gemm,
  // common/util/multi_stream.h num_compute_streams = 4): up to 4 run at once,
  // their tiles sharing the waves and their fixed per-kernel overhead
  // (gemm_half_flops) overlapping. Priced per round of 4 concurrent GEMMs:
  // (2K * capacity of the round's tiles + F_half) / (peak * gemm_max), at
  // least the round's operand bytes over HBM. Approximation (docs/cost_model.md
  // Known gaps): equal rows per expert; TE's CUTLASS grouped GEMM (one kernel
  // over every expert) is faster at small M.
  constexpr double kStreams = 4.0;
  const auto& e = hw.efficiency;
  const double eff_peak = sustained_peak(hw, dt) * e.gemm_max[std::size_t(dt)];
  const double operand = dt == DType::fp8 ? 1.0 : 2.0;
  const double bytes = operand * (M * K + K * N) + kAct * M * N;
  auto round = [&](double g) {
    double capacity = g * M * N;
    if (e.compute_units > 0 && e.gemm_tile_m > 0 && e.gemm_tile_n > 0) {
      const double units = double(e.compute_units), tm = double(e.gemm_tile_m), tn = double(e.gemm_tile_n);
      auto cap = [&](double a, double b) {
        return std::ceil(g * std::ceil(M / a) * std::ceil(N / b) / units) * units * a * b;
      };
      capacity = std::min(cap(tm, tn), cap(tn, tm));
    }
    return std::max((2.0 * K * capacity + e.gemm_half_flops) / eff_peak, g * bytes / hbm_bw(hw));
  };
  const double full = std::floor(groups / kStreams), rest = groups - full * kStreams;
  return full * round(kStreams) + (rest > 0 ? round(rest) : 0.0);
}

}  // namespace planner
