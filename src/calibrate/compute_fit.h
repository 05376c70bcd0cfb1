// Fitting a profile's compute efficiencies (GEMM, HBM) to planner-bench's
// cuBLASLt and copy measurements. Private to calibrate/.
#pragma once

#include <vector>

#include "planner/calibrate/calibration.h"

namespace planner::calibrate_detail {

// Fills out.compute, out.profile's efficiencies and out.sources from the GEMM
// and HBM measurements in `ms` (nothing when there are none).
void fit_compute(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, FitResult& out);

}  // namespace planner::calibrate_detail
