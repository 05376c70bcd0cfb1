// `planner search`'s report (views/search_report.h) against the way the CLI
// built it before the SearchReport struct: the search JSON and the ranking
// JSON rendered separately, parsed back and spliced; the text concatenated.
// Differential: both must give the same bytes. The CSV with --simulate-top is
// one table (it was two, one after the other).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/model/labels.h"
#include "planner/simulate/simulate_top.h"
#include "planner/views/search_report.h"
#include "test_support.h"

using namespace planner;
using planner::testing::kSourceDir;
using planner::testing::training_run;

namespace {

// The search these tests render: llama70b on 1024 H100s (global batch 512)
// with PP 4.
struct Llama70bSearch {
  const ModelSpec model = find_model("llama70b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  const SearchSpec spec = [] {
    SearchSpec s;
    s.training = training_run(1024, 512);
    s.pins.pp = 4;
    return s;
  }();
  const RunContext ctx{model, hw, spec.training};

  Llama70bSearch() = default;
  Llama70bSearch(const Llama70bSearch&) = delete;  // ctx refers to the members
  Llama70bSearch& operator=(const Llama70bSearch&) = delete;

  // The search simulated at --top `top` and --simulate-top `k`, as many
  // simulated as shown, more and fewer: check(report, top, k) for each, the
  // report holding k simulated rows.
  template <typename Check>
  void each_simulated(Check check) const {
    for (auto [top, k] : {std::pair<std::size_t, std::size_t>{5, 5}, {3, 6}, {6, 2}}) {
      INFO("top " << top << ", simulate " << k);
      const SearchReport rep = search_and_simulate(model, hw, spec, top, k);
      REQUIRE(rep.simulated);
      REQUIRE(rep.simulated->size() == k);
      check(rep, top, k);
    }
  }
};

}  // namespace

TEST_CASE("the search report renders as the spliced reports did", "[views]") {
  const Llama70bSearch s;
  s.each_simulated([&s](const SearchReport& rep, std::size_t, std::size_t) {
    nlohmann::json spliced = nlohmann::json::parse(render_search(rep.search, s.ctx, Format::json));
    spliced["simulated_ranking"] = nlohmann::json::parse(render_simulated_ranking(*rep.simulated, Format::json));
    CHECK(render_search_report(rep, s.ctx, Format::json) == spliced.dump(2) + "\n");
    CHECK(render_search_report(rep, s.ctx, Format::table) ==
          render_search(rep.search, s.ctx, Format::table) + render_simulated_ranking(*rep.simulated, Format::table));
  });
  const SearchReport plain = search_and_simulate(s.model, s.hw, s.spec, 4, 0);
  for (Format f : {Format::table, Format::json, Format::csv})
    CHECK(render_search_report(plain, s.ctx, f) == render_search(plain.search, s.ctx, f));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(text.substr(start, nl - start));
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

TEST_CASE("search --simulate-top as CSV is one table: the search's rows with the simulation's columns", "[views]") {
  const Llama70bSearch s;
  s.each_simulated([&s](const SearchReport& rep, std::size_t top, std::size_t k) {
    const std::vector<std::string> lines = lines_of(render_search_report(rep, s.ctx, Format::csv));
    const std::vector<std::string> search = lines_of(render_search(rep.search, s.ctx, Format::csv));
    // A header, then a row per search result and per simulated result past --top.
    REQUIRE(lines.size() == 1 + std::max(top, k));
    CHECK(lines[0] == search[0] + ",simulated_rank,simulated_step_s,simulated_bubble_fraction,not_simulated");
    const auto fields = [](const std::string& line) { return std::count(line.begin(), line.end(), ',') + 1; };
    std::vector<std::string> simulated_ranks;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      CHECK(fields(lines[i]) == fields(lines[0]));
      if (i < search.size()) CHECK(lines[i].rfind(search[i] + ",", 0) == 0);
      CHECK(lines[i].rfind(std::to_string(i) + ",", 0) == 0);  // the search's rank
      const auto rank_at = std::size_t(fields(search[0]));     // the first of the simulation's columns
      std::vector<std::string> cells;
      std::size_t start = 0;
      for (std::size_t comma; (comma = lines[i].find(',', start)) != std::string::npos; start = comma + 1)
        cells.push_back(lines[i].substr(start, comma - start));
      cells.push_back(lines[i].substr(start));
      REQUIRE(cells.size() == rank_at + 4);
      if (i <= k) {
        CHECK(!cells[rank_at].empty());
        CHECK(!cells[rank_at + 1].empty());
        simulated_ranks.push_back(cells[rank_at]);
        // The row of search rank i is the ranking's entry of that search rank.
        const SimulatedRank& x = (*rep.simulated)[std::stoul(cells[rank_at]) - 1];
        CHECK(x.closed_form_rank == i);
      } else {
        CHECK(cells[rank_at].empty());
        CHECK(cells[rank_at + 1].empty());
      }
    }
    std::sort(simulated_ranks.begin(), simulated_ranks.end());
    CHECK(simulated_ranks.size() == k);
    CHECK(std::adjacent_find(simulated_ranks.begin(), simulated_ranks.end()) == simulated_ranks.end());
  });
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

TEST_CASE("the simulated ranking of a MoE search has the search table's EP and recompute columns", "[views]") {
  // Mixtral 8x7B on 64 H100s: the search's best layouts run EP 8 with the
  // all-to-alls overlapped, one with the moe_act recompute module.
  const ModelSpec model = find_model("mixtral-8x7b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  SearchSpec spec;
  spec.training = training_run(64, 256, 4096);
  const RunContext ctx{model, hw, spec.training};
  SearchReport rep = search_and_simulate(model, hw, spec, 5, 5);
  REQUIRE(rep.simulated);
  REQUIRE(rep.simulated->size() == 5);
  const std::vector<std::string> search = lines_of(render_search(rep.search, ctx, Format::table));
  const std::vector<std::string> sim = lines_of(render_simulated_ranking(*rep.simulated, Format::table));
  REQUIRE(sim.size() == 8);  // blank, title, header, 5 rows
  const std::string ep_head = "  | EP/ETP  a2a";
  REQUIRE(search[2].size() > ep_head.size());
  CHECK(search[2].substr(search[2].size() - ep_head.size()) == ep_head);
  CHECK(sim[2].substr(sim[2].size() - ep_head.size()) == ep_head);
  const std::size_t column = sim[2].size() - ep_head.size();
  bool modules = false;
  for (std::size_t i = 0; i < 5; ++i) {
    const SimulatedRank& x = (*rep.simulated)[i];
    const std::string& row = sim[3 + i];
    const std::string& searched = search[3 + (x.closed_form_rank - 1)];
    INFO(row);
    // The search row's EP/ETP and a2a, at the header's column.
    CHECK(row.substr(column) == searched.substr(searched.find("  | ")));
    // The recompute label, module names included, as the search table writes it.
    const std::string label = recompute_label(x.evaluation.config, x.evaluation.recompute_modules);
    CHECK(row.find(" " + label + " ") != std::string::npos);
    modules = modules || names_modules(x.evaluation.config, x.evaluation.recompute_modules);
  }
  CHECK(modules);  // the case shows a module label, not just "selective"
  // JSON: each simulated layout's config as the search result's.
  const nlohmann::json j = nlohmann::json::parse(render_search_report(rep, ctx, Format::json));
  for (const nlohmann::json& x : j["simulated_ranking"])
    CHECK(x["config"] == j["results"][x["search_rank"].get<std::size_t>() - 1]["config"]);
  // A layout not simulated keeps its EP columns aligned, the simulation's blank.
  (*rep.simulated)[4].not_simulated = "a reason";
  const std::string last = lines_of(render_simulated_ranking(*rep.simulated, Format::table)).back();
  CHECK(last.substr(column, ep_head.size() - 1) == sim[7].substr(column, ep_head.size() - 1));
  CHECK(last.find("not simulated: a reason") != std::string::npos);
}
