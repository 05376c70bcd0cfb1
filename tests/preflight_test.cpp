// What `planner simulate` checks before simulating (simulate/preflight.h) and
// `search --simulate-top` (simulate/simulate_top.h): hand-picked layouts
// with the exact messages the CLI prints.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/simulate/preflight.h"
#include "planner/simulate/simulate_top.h"
#include "test_support.h"

using namespace planner;
using planner::testing::error_of;
using planner::testing::kSourceDir;
using planner::testing::training_run;

namespace {

ParallelConfig layout(std::int64_t v, Schedule s = Schedule::one_f_one_b) {
  ParallelConfig pc;
  pc.tp = 4, pc.pp = 4, pc.dp = 4, pc.virtual_stages = v, pc.schedule = s;
  return pc;
}

std::uint32_t bit(Reason r) { return 1u << unsigned(r); }

}  // namespace

TEST_CASE("simulated_schedule: the one asked for, else the layout's own", "[preflight]") {
  CHECK(simulated_schedule(layout(1), std::nullopt) == Schedule::one_f_one_b);
  CHECK(simulated_schedule(layout(2), std::nullopt) == Schedule::interleaved);
  CHECK(simulated_schedule(layout(1, Schedule::gpipe), std::nullopt) == Schedule::gpipe);
  CHECK(simulated_schedule(layout(1), Schedule::zb_h1) == Schedule::zb_h1);
  CHECK(simulated_schedule(layout(1), Schedule::gpipe) == Schedule::gpipe);
  CHECK(simulated_schedule(layout(3), Schedule::interleaved) == Schedule::interleaved);
  CHECK(error_of([] { (void)simulated_schedule(layout(1), Schedule::interleaved); }) ==
        "--schedule: interleaved needs --vpp 2 or more (virtual stages per GPU)");
  CHECK(error_of([] { (void)simulated_schedule(layout(2), Schedule::gpipe); }) ==
        "--schedule: gpipe runs one chunk per stage; --vpp 2 needs --schedule interleaved");
  CHECK(error_of([] { (void)simulated_schedule(layout(2), Schedule::zb_h1); }) ==
        "--schedule: zb-h1 runs one chunk per stage; --vpp 2 needs --schedule interleaved");
  ParallelConfig one_stage = layout(1);
  one_stage.pp = 1;
  CHECK(simulated_schedule(one_stage, std::nullopt) == Schedule::one_f_one_b);
  CHECK(error_of([&] {
          (void)simulated_schedule(one_stage, Schedule::gpipe);
        }).find("--schedule: gpipe schedules a pipeline, but the layout has PP 1") == 0);
}

TEST_CASE("closed_form_config prices ZB-H1 as 1F1B and changes nothing else", "[preflight]") {
  const ParallelConfig pc = layout(1);
  ParallelConfig expected = pc;
  CHECK(closed_form_config(pc, Schedule::zb_h1) == expected);
  expected.schedule = Schedule::gpipe;
  CHECK(closed_form_config(pc, Schedule::gpipe) == expected);
  CHECK(closed_form_config(layout(2), Schedule::interleaved) == layout(2, Schedule::interleaved));
}

TEST_CASE("require_runnable: out of memory runs, structural reasons do not", "[preflight]") {
  Evaluation ev;
  CHECK(error_of([&] { require_runnable(ev); }).empty());
  ev.reasons = bit(Reason::out_of_memory);
  CHECK(error_of([&] { require_runnable(ev); }).empty());
  ev.reasons |= bit(Reason::tp_not_dividing_heads) | bit(Reason::gpu_count_mismatch);
  CHECK(error_of([&] { require_runnable(ev); }) == fmt::format("simulate: this layout cannot run: {}; {}",
                                                               describe(Reason::gpu_count_mismatch),
                                                               describe(Reason::tp_not_dividing_heads)));

  // A real one: llama3.1-70b's 64 heads do not split over TP 3.
  const ModelSpec m = find_model("llama70b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  ParallelConfig pc;
  pc.tp = 3, pc.dp = 1;
  const Evaluation bad = evaluate(m, hw, pc, training_run(3, 8));
  REQUIRE(bad.has(Reason::tp_not_dividing_heads));
  CHECK_THAT(error_of([&] { require_runnable(bad); }), Catch::StartsWith("simulate: this layout cannot run: ") &&
                                                           Catch::Contains(describe(Reason::tp_not_dividing_heads)));
}

TEST_CASE("search_and_simulate: the first `top` results, the first K simulated", "[preflight]") {
  const ModelSpec m = find_model("llama70b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  SearchSpec spec;
  spec.training = training_run(256, 256);
  spec.top_k = 3;
  const SearchResult plain = search(m, hw, spec);
  REQUIRE(plain.top.size() == 3);

  const SearchReport none = search_and_simulate(m, hw, spec, 3, 0);
  CHECK(!none.simulated);
  REQUIRE(none.search.top.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(none.search.top[i].config == plain.top[i].config);
  CHECK(none.search.considered == plain.considered);

  // More simulated than shown: the simulation sees the first 5, the report keeps 3.
  const SearchReport more = search_and_simulate(m, hw, spec, 3, 5);
  REQUIRE(more.simulated);
  CHECK(more.simulated->size() == 5);
  REQUIRE(more.search.top.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(more.search.top[i].config == plain.top[i].config);
  std::vector<std::size_t> ranks;
  for (const auto& x : *more.simulated) ranks.push_back(x.closed_form_rank);
  std::sort(ranks.begin(), ranks.end());
  CHECK(ranks == std::vector<std::size_t>{1, 2, 3, 4, 5});

  // Fewer simulated than shown.
  const SearchReport fewer = search_and_simulate(m, hw, spec, 3, 1);
  REQUIRE(fewer.simulated);
  REQUIRE(fewer.simulated->size() == 1);
  CHECK(fewer.simulated->front().closed_form_rank == 1);
  CHECK(fewer.search.top.size() == 3);
}
