// Time of GEMMs on one GPU: a single GEMM at the sustained tensor-core rate
// less wave quantisation, bounded by the HBM roofline, and the grouped expert
// GEMMs of a MoE layer. Read by the layer, head, MoE and recompute costs and
// by calibration's compute fit.
#pragma once

#include "planner/spec/specs.h"

namespace planner {

// Time of one (M x K) * (K x N) GEMM: the slower of
// (2MNK / q + F_half)/(peak * gemm_max), q the wave-quantisation efficiency of
// the M x N output, and its operand bytes / (HBM bw * efficiency).
[[nodiscard]] double gemm_time_s(const HardwareProfile& hw, DType dt, double M, double N, double K);

// `groups` GEMMs of (M x K) * (K x N), one per local expert, as Transformer
// Engine's grouped linear runs them: on 4 streams, rounds of 4 concurrent
// GEMMs sharing the waves of tiles and one per-kernel overhead.
[[nodiscard]] double grouped_gemm_time_s(const HardwareProfile& hw, DType dt, double groups, double M, double N,
                                         double K);

// Fraction of compute-unit capacity doing useful work over all waves of an
// M x N output tiled gemm_tile_m x gemm_tile_n (either orientation, the better
// one): M*N / (ceil(tiles / units) * units * tile area). 1 without tile data.
[[nodiscard]] double wave_efficiency(const HardwareProfile& hw, double M, double N);

}  // namespace planner
