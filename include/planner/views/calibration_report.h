// `planner calibrate`'s reports over FitResult and CheckReport
// (calibrate/calibration.h). Built into planner_calibrate with the fitter.
#pragma once

#include <string>

#include "planner/calibrate/calibration.h"

namespace planner {

[[nodiscard]] std::string render_fit_report(const FitResult& r);

[[nodiscard]] std::string render_check(const CheckReport& r);

}  // namespace planner
