// libFuzzer target: the prediction-regression suite and golden files
// (docs/regress.md). Both readers must reject bad input with an InputError.
#include "fuzz_support.h"
#include "planner/spec/input_error.h"
#include "planner/validate/regress.h"

using namespace planner;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = fuzz::parse(data, size);
  if (!j) return 0;
  try {
    (void)golden_from_json(*j, "golden.json");
  } catch (const InputError&) {}
  try {
    const RegressSuite suite = suite_from_json(*j, "suite.json", PLANNER_SOURCE_DIR);
    if (suite.cases.size() <= 4) (void)predict(suite);  // bounded work per input
  } catch (const InputError&) {}
  return 0;
}
