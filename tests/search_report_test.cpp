// `planner search`'s report (views/search_report.h) against the way the CLI
// built it before the SearchReport struct: the search JSON and the ranking
// JSON rendered separately, parsed back and spliced; text and CSV
// concatenated. Differential: both must give the same bytes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/simulate/simulate_top.h"
#include "planner/views/search_report.h"
#include "test_support.h"

using namespace planner;
using planner::testing::kSourceDir;
using planner::testing::training_run;

TEST_CASE("the search report renders as the spliced reports did", "[views]") {
  const ModelSpec m = find_model("llama70b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  SearchSpec spec;
  spec.training = training_run(1024, 512);
  spec.pins.pp = 4;
  const RunContext ctx{m, hw, spec.training};
  for (auto [top, k] : {std::pair<std::size_t, std::size_t>{5, 5}, {3, 6}, {6, 2}}) {
    const SearchReport rep = search_and_simulate(m, hw, spec, top, k);
    REQUIRE(rep.simulated);
    INFO("top " << top << ", simulate " << k);
    nlohmann::json spliced = nlohmann::json::parse(render_search(rep.search, ctx, Format::json));
    spliced["simulated_ranking"] = nlohmann::json::parse(render_simulated_ranking(*rep.simulated, Format::json));
    CHECK(render_search_report(rep, ctx, Format::json) == spliced.dump(2) + "\n");
    CHECK(render_search_report(rep, ctx, Format::csv) ==
          render_search(rep.search, ctx, Format::csv) + "\n" + render_simulated_ranking(*rep.simulated, Format::csv));
    CHECK(render_search_report(rep, ctx, Format::table) ==
          render_search(rep.search, ctx, Format::table) + render_simulated_ranking(*rep.simulated, Format::table));
  }
  const SearchReport plain = search_and_simulate(m, hw, spec, 4, 0);
  for (Format f : {Format::table, Format::json, Format::csv})
    CHECK(render_search_report(plain, ctx, f) == render_search(plain.search, ctx, f));
}

TEST_CASE("the simulated ranking's JSON has one row per simulated result", "[views]") {
  SimulatedRank ok;
  ok.closed_form_rank = 2;
  ok.evaluation.time.step_s = 1.5;
  ok.simulated_step_s = 1.25;
  ok.simulated_bubble_fraction = 0.125;
  SimulatedRank failed;
  failed.closed_form_rank = 1;
  failed.not_simulated = "deadlock";
  const nlohmann::json j = to_json(std::vector<SimulatedRank>{ok, failed});
  REQUIRE(j.size() == 2);
  CHECK(j[0]["simulated_rank"] == 1);
  CHECK(j[0]["search_rank"] == 2);
  CHECK(j[0]["closed_form_step_s"] == 1.5);
  CHECK(j[0]["simulated_step_s"] == 1.25);
  CHECK(j[0]["simulated_bubble_fraction"] == 0.125);
  CHECK(!j[0].contains("not_simulated"));
  CHECK(j[1]["simulated_rank"] == 2);
  CHECK(j[1]["not_simulated"] == "deadlock");
  CHECK(!j[1].contains("simulated_step_s"));
}
