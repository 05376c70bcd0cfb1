// libFuzzer target: the measurement file (docs/calibration.md). Valid files
// of a bounded size are fitted against the DGX H100 profile; the fitted
// profile must price every measured point finitely.
#include "fuzz_support.h"
#include "planner/calibrate/calibration.h"
#include "planner/calibrate/measurements.h"
#include "planner/io/catalog.h"
#include "planner/spec/input_error.h"

using namespace planner;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const HardwareProfile base = find_hardware("dgx-h100", PLANNER_SOURCE_DIR);
  const auto j = fuzz::parse(data, size);
  if (!j) return 0;
  try {
    MeasurementSet m = measurements_from_json(*j, "fuzz.json");
    std::size_t points = 0;
    for (const auto& s : m.series) points += s.points.size();
    if (points > 512) return 0;  // bounded work per input
    const std::vector<NamedMeasurements> named{{"fuzz.json", std::move(m)}};
    const FitResult fit = fit_profile(base, named);
    const CheckReport check = check_profile(fit.profile, named);
    fuzz::require(std::isfinite(check.max_abs_error()) || check.points() == 0, "check of a fitted profile is finite");
  } catch (const InputError&) {}
  return 0;
}
