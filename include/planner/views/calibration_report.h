// `planner calibrate`'s reports over FitResult and CheckReport
// (calibrate/calibration.h). Built into planner_calibrate with the fitter.
#pragma once

#include <cstddef>
#include <string>

#include "planner/calibrate/calibration.h"
#include "planner/calibrate/measurements.h"

namespace planner {

[[nodiscard]] std::string render_fit_report(const FitResult& r);

[[nodiscard]] std::string render_check(const CheckReport& r);
// `calibrate check --summary`: one line per series and a total.
[[nodiscard]] std::string render_check_summary(const CheckReport& r);

// What `calibrate import-nccl-tests -o FILE` prints: the series it wrote
// there, read from `files` logs.
[[nodiscard]] std::string render_import_summary(const MeasurementSet& m, std::size_t files, const std::string& path);

}  // namespace planner
