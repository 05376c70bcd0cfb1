// The slowest of N chips: identical GPUs run the same kernels at different
// speeds (manufacturing variability and power management), and a synchronous
// training step (every collective of DP, TP, PP) waits for the slowest one.
// Read by layer_cost.cpp, which stretches every kernel of a layer and the
// heads by this factor, so the closed form and the simulator both see it.
#pragma once

#include <cstdint>

#include "planner/spec/specs.h"

namespace planner {

// Expected maximum of n independent standard normal draws, by Blom's
// approximation Phi^-1((n - 0.375) / (n + 0.25)) (Blom 1958, "Statistical
// Estimates and Transformed Beta-Variables"); 0 for n <= 1.
[[nodiscard]] double expected_max_standard_normal(std::int64_t n);

// Relative slowdown of a step over `gpus` chips: chip_speed_sigma * E[max of
// `gpus` standard normals]. Per-chip speed spread from Sinha et al. 2022,
// "Not All GPUs Are Created Equal" (SC'22, arXiv:2208.11035): 8% average
// performance variation among identical GPUs of a cluster (outliers up to
// 1.5x, which this normal model leaves out). An approximation: speeds taken
// as independent and normal, fixed over the run (docs/cost_model.md).
[[nodiscard]] double straggler_slowdown(const HardwareProfile& hw, std::int64_t gpus);

}  // namespace planner
