// libFuzzer target: the measured-runs dataset reader (docs/published_runs.md).
// Every row either maps onto specs or names why not; a mapped row's model and
// layout are structurally checked (pricing is left to the model target:
// validate's pinned searches are too slow for a fuzz loop).
#include "fuzz_support.h"
#include "planner/spec/input_error.h"
#include "planner/validate/published_runs.h"

using namespace planner;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = fuzz::parse(data, size);
  if (!j) return 0;
  try {
    for (const RunRow& row : read_published_runs(*j, "fuzz.json")) {
      fuzz::require(row.run.has_value() != !row.skip_reason.empty(), "a row is mapped or has a skip reason");
      if (!row.run) continue;
      const TrainingSpec& ts = row.run->training;
      fuzz::require(ts.num_gpus >= 1 && ts.seq_len >= 1 && ts.global_batch_sequences >= 1, "mapped row sizes");
    }
  } catch (const InputError&) {}
  return 0;
}
