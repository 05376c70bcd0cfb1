// planner simulate on the flagship case: Llama 3 405B, TP8 PP16, 64
// micro-batches per step, interleaved with 4 chunks (target < 50 ms). Times
// the problem construction from the analytical engine plus the event
// simulation; a second benchmark times the simulation alone, and a third the
// SVG rendering of its ~20k events. Run with scripts/bench.sh.
#include <string>

#include <benchmark/benchmark.h>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/simulate/simulate.h"
#include "planner/views/timeline.h"

namespace {

struct Flagship {
  planner::ModelSpec model = planner::find_model("llama405b", PLANNER_SOURCE_DIR);
  planner::HardwareProfile hw = planner::find_hardware("dgx-h100", PLANNER_SOURCE_DIR);
  planner::TrainingSpec ts;
  planner::ParallelConfig pc;
  planner::Evaluation ev;
  Flagship() {
    ts.num_gpus = 4096;  // TP8 x PP16 x DP32
    ts.seq_len = 8192;
    ts.global_batch_sequences = 2048;  // 16M tokens: 64 micro-batches of 1 per replica
    pc.tp = 8;
    pc.pp = 16;
    pc.dp = 32;
    pc.virtual_stages = 4;
    pc.sequence_parallel = true;
    pc.zero_stage = 1;
    pc.recompute = planner::Recompute::selective;
    ev = planner::evaluate(model, hw, pc, ts);
  }
};

void BM_Simulate405B_TP8_PP16_m64_v4(benchmark::State& state) {
  const Flagship f;
  std::size_t events = 0;
  for (auto _ : state) {
    const auto pr = planner::pipeline_problem(f.model, f.hw, f.pc, f.ts, f.ev, planner::Schedule::interleaved);
    const planner::SimResult r = planner::simulate(pr);
    events = r.events.size();
    benchmark::DoNotOptimize(r.step_s);
  }
  state.counters["events"] = double(events);
}
BENCHMARK(BM_Simulate405B_TP8_PP16_m64_v4)->Unit(benchmark::kMillisecond);

void BM_Simulate405B_EventsOnly(benchmark::State& state) {
  const Flagship f;
  const auto pr = planner::pipeline_problem(f.model, f.hw, f.pc, f.ts, f.ev, planner::Schedule::interleaved);
  for (auto _ : state) benchmark::DoNotOptimize(planner::simulate(pr).step_s);
}
BENCHMARK(BM_Simulate405B_EventsOnly)->Unit(benchmark::kMillisecond);

void BM_Simulate405B_Svg(benchmark::State& state) {
  const Flagship f;
  const auto pr = planner::pipeline_problem(f.model, f.hw, f.pc, f.ts, f.ev, planner::Schedule::interleaved);
  const planner::SimResult r = planner::simulate(pr);
  for (auto _ : state) benchmark::DoNotOptimize(planner::render_svg_timeline(r, {}).size());
}
BENCHMARK(BM_Simulate405B_Svg)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
