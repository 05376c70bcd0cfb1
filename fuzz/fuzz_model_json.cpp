// libFuzzer target: a model JSON file (docs/models.md). Valid models are
// priced on a DGX H100 at a few layouts; every figure must be finite and
// non-negative. Bad input must be an InputError, never a crash.
#include "fuzz_support.h"
#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"

using namespace planner;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const HardwareProfile hw = find_hardware("dgx-h100", PLANNER_SOURCE_DIR);
  const auto j = fuzz::parse(data, size);
  if (!j) return 0;
  try {
    const ModelSpec m = model_from_json(*j, "fuzz.json");
    for (auto [tp, pp, dp] : {std::tuple{1, 1, 8}, {8, 1, 1}, {2, 2, 2}}) {
      TrainingSpec ts;
      ts.num_gpus = 8;
      ts.seq_len = m.default_seq_len > 0 ? m.default_seq_len : 2048;
      ts.global_batch_sequences = 16;
      ParallelConfig pc;
      pc.tp = tp, pc.pp = pp, pc.dp = dp;
      pc.recompute = Recompute::selective;
      fuzz::check_evaluation(evaluate(m, hw, pc, ts));
    }
  } catch (const InputError&) {}
  return 0;
}
