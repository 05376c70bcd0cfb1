// planner validate over the whole measured-runs dataset
// (tests/validation/published_runs.json, 87 rows): issue target < 1 s. The
// benchmark times mapping + evaluation (the rows needing a search included),
// with the file parsed once outside the loop. Run with scripts/bench.sh.
#include <string>

#include <nlohmann/json.hpp>

#include <benchmark/benchmark.h>

#include "planner/io/json_io.h"
#include "planner/validate/published_runs.h"
#include "planner/validate/validate.h"

namespace {

void BM_ValidatePublishedRuns(benchmark::State& state) {
  const std::string path = std::string(PLANNER_SOURCE_DIR) + "/tests/validation/published_runs.json";
  const nlohmann::json j = planner::read_json_file(path);
  for (auto _ : state) {
    const auto rows = planner::read_published_runs(j, path);
    const planner::ValidationReport rep = planner::validate_runs(rows);
    benchmark::DoNotOptimize(rep.overall.median_abs);
  }
  state.counters["rows"] = 87;
}
BENCHMARK(BM_ValidatePublishedRuns)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
