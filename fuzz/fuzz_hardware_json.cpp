// libFuzzer target: a hardware-profile JSON file (docs/hardware_profiles.md).
// Valid profiles price Llama 3.1 8B at a few layouts spanning one and two
// tiers; every figure must be finite and non-negative.
#include "fuzz_support.h"
#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"

using namespace planner;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ModelSpec m = find_model("llama8b", PLANNER_SOURCE_DIR);
  const auto j = fuzz::parse(data, size);
  if (!j) return 0;
  try {
    const HardwareProfile hw = hardware_from_json(*j, "fuzz.json");
    for (auto [tp, cp, pp, dp, zero] : {std::tuple{1, 1, 1, 16, 1}, {8, 1, 2, 1, 0}, {2, 2, 2, 2, 3}}) {
      TrainingSpec ts;
      ts.num_gpus = 16;
      ts.seq_len = 8192;
      ts.global_batch_sequences = 64;
      ParallelConfig pc;
      pc.tp = tp, pc.cp = cp, pc.pp = pp, pc.dp = dp, pc.zero_stage = zero;
      fuzz::check_evaluation(evaluate(m, hw, pc, ts));
    }
  } catch (const InputError&) {}
  return 0;
}
