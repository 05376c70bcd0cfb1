// The HTML pages (views/html_report.h): their structure (element ids, one
// row and one pair of breakdowns per result, one mark per feasible layout up
// to merging), the helpers behind the scatter (Pareto front, thinning) and
// the command line they show. Numbers are the cost model's and are tested
// elsewhere; nothing here pins a predicted value.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "planner/io/catalog.h"
#include "planner/model/recompute_modules.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/simulate_top.h"
#include "planner/views/html_report.h"
#include "test_support.h"

using namespace planner;
using planner::testing::kSourceDir;
using planner::testing::training_run;

namespace {

std::size_t occurrences(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// Every URL in the page but SVG's namespace name.
std::size_t external_urls(const std::string& page) {
  return occurrences(page, "http://") + occurrences(page, "https://") -
         occurrences(page, "xmlns=\"http://www.w3.org/2000/svg\"");
}

const HtmlPageInfo kInfo{"planner search -m llama8b -n 64 --html r.html", "0.1.0"};

SearchPoint point(double step_s, double gib, std::int64_t tp = 1) {
  SearchPoint p;
  p.config.tp = tp;
  p.step_s = step_s;
  p.memory_bytes = gib * double(1ull << 30);
  return p;
}

}  // namespace

TEST_CASE("the Pareto front keeps each layout faster than all that need no more memory", "[views][html]") {
  //                                      0           1           2           3           4           5
  const std::vector<SearchPoint> pts = {point(10, 40), point(8, 50), point(12, 30), point(9, 60), point(8, 55),
                                        point(7, 70)};
  // By memory: 30 GiB (12 s), 40 (10 s), 50 (8 s), 55 (8 s: not faster), 60 (9 s: slower), 70 (7 s).
  CHECK(pareto_front(pts) == std::vector<std::size_t>{2, 0, 1, 5});
  CHECK(pareto_front({}).empty());
  // Equal memory: only the faster one.
  CHECK(pareto_front({point(5, 10), point(4, 10)}) == std::vector<std::size_t>{1});
}

TEST_CASE("the scatter thins only above its limit, keeping what it is told to", "[views][html]") {
  CHECK(thinned_points(5, 10, {}) == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(thinned_points(10, 10, {3}).size() == 10);
  // 11 points, at most 5: every ceil(11/5) = 3rd, plus the kept 4 and 10.
  CHECK(thinned_points(11, 5, {4, 10, 3}) == std::vector<std::size_t>{0, 3, 4, 6, 9, 10});
}

TEST_CASE("a page shows the command line without absolute paths", "[views][html]") {
  CHECK(page_command_line("planner search -m /home/me/models/m.json --html /tmp/out/r.html -n 8") ==
        "planner search -m m.json --html r.html -n 8");
  CHECK(page_command_line("planner evaluate --html=/abs/dir/p.html --hardware=/x/h.json") ==
        "planner evaluate --html=p.html --hardware=h.json");
  CHECK(page_command_line("planner search -m 'https://x'") == "planner search -m 'https://x'");
  CHECK(page_command_line("planner simulate --svg '/a/t.svg' --trace rel/t.json") ==
        "planner simulate --svg 't.svg' --trace rel/t.json");
}

TEST_CASE("a search page holds the scatter, every result with its breakdowns, and the rejections", "[views][html]") {
  const ModelSpec m = find_model("llama8b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  SearchSpec spec;
  spec.training = training_run(64, 512);
  spec.collect_points = true;
  const SearchReport rep = search_and_simulate(m, hw, spec, 4, 2, true);
  REQUIRE(rep.search.top.size() == 4);
  REQUIRE(rep.search.points.size() == std::size_t(rep.search.feasible));
  REQUIRE(rep.top_step);
  const RunContext ctx{m, hw, spec.training};
  const std::string page = render_search_html(rep, ctx, kInfo);

  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  for (const char* id : {"run-info", "scatter", "scatter-data", "pareto", "top-k", "ranked-table", "simulated-table",
                         "timeline", "rejections", "time-breakdown-1", "memory-breakdown-4"})
    CHECK(occurrences(page, fmt::format("id=\"{}\"", id)) == 1);
  CHECK(occurrences(page, "<tr class=\"result\">") == 4);
  CHECK(occurrences(page, "<th>TFLOP/s per GPU</th>") == 1);  // beside MFU in the ranked table
  CHECK(occurrences(page, "<details") == 4);
  CHECK(occurrences(page, "<details open>") == 1);  // the best one
  CHECK(occurrences(page, "class=\"breakdown time\"") == 4);
  CHECK(occurrences(page, "class=\"breakdown memory\"") == 4);
  CHECK(occurrences(page, "<circle") == 4);  // the top K on the scatter
  CHECK(occurrences(page, "<rect class=\"reason\"") ==
        std::size_t(std::count_if(rep.search.rejections.begin(), rep.search.rejections.end(),
                                  [](std::int64_t n) { return n > 0; })));
  CHECK(page.find(kInfo.command) != std::string::npos);
  CHECK(page.find("version 0.1.0") != std::string::npos);
  CHECK(page.find("thinned") == std::string::npos);
  CHECK(external_urls(page) == 0);
  CHECK(page.find("<?xml") == std::string::npos);

  // Each mark stands for at least one layout, and together they stand for all.
  const std::regex mark_count(R"re(\((\d[\d,]*) marks\))re");
  std::size_t marks = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), mark_count); it != std::sregex_iterator(); ++it) {
    std::string n = (*it)[1];
    n.erase(std::remove(n.begin(), n.end(), ','), n.end());
    marks += std::stoul(n);
  }
  CHECK(marks > 0);
  CHECK(marks <= rep.search.points.size());
  CHECK(occurrences(page, "h0") >= marks);

  // Deterministic.
  CHECK(render_search_html(rep, ctx, kInfo) == page);
}

TEST_CASE("a search page with no feasible layout still explains the rejections", "[views][html]") {
  const ModelSpec m = find_model("llama405b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  SearchSpec spec;
  spec.training = training_run(8, 64);
  spec.collect_points = true;
  const SearchReport rep = search_and_simulate(m, hw, spec, 10, 0);
  REQUIRE(rep.search.top.empty());
  const std::string page = render_search_html(rep, RunContext{m, hw, spec.training}, kInfo);
  CHECK(page.find("No layout fits") != std::string::npos);
  CHECK(occurrences(page, "id=\"rejections\"") == 1);
  CHECK(occurrences(page, "<tr class=\"result\">") == 0);
}

TEST_CASE("evaluate and simulate pages hold the breakdowns, the timeline and the formulas", "[views][html]") {
  const ModelSpec m = find_model("llama8b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  const TrainingSpec ts = training_run(32, 32);
  ParallelConfig pc;
  pc.tp = 2, pc.pp = 4, pc.dp = 4, pc.sequence_parallel = true;
  Explain ex;
  const Evaluation ev = evaluate(m, hw, pc, ts, &ex);
  REQUIRE(ev.feasible());
  const RunContext ctx{m, hw, ts};
  const std::optional<SimulatedStep> step = simulate_own_schedule(m, hw, ts, ev);
  REQUIRE(step);

  const std::string page = render_evaluation_html(ev, ex, &*step, ctx, kInfo);
  for (const char* id : {"run-info", "fits", "time-breakdown", "memory-breakdown", "timeline", "explain"})
    CHECK(occurrences(page, fmt::format("id=\"{}\"", id)) == 1);
  CHECK(occurrences(page, "<tr><td class=\"l wrap\">") == ex.steps().size());
  CHECK(external_urls(page) == 0);

  const SimComparison cmp = compare_with_closed_form(ev, step->problem, step->result);
  const std::string sim = render_simulation_html(step->result, cmp, ev, step->problem, ex, ctx, kInfo);
  for (const char* id : {"time-breakdown", "memory-breakdown", "timeline", "explain", "simulation-summary"})
    CHECK(occurrences(sim, fmt::format("id=\"{}\"", id)) == 1);

  // A layout whose structure is invalid: its reasons, no breakdown, no timeline.
  ParallelConfig bad = pc;
  bad.tp = 3, bad.dp = 1;
  Explain none;
  const Evaluation invalid = evaluate(m, hw, bad, ts, &none);
  REQUIRE_FALSE(invalid.feasible());
  REQUIRE_FALSE(simulate_own_schedule(m, hw, ts, invalid));
  const std::string page_bad = render_evaluation_html(invalid, none, nullptr, ctx, kInfo);
  CHECK(page_bad.find("fits: no") != std::string::npos);
  CHECK(page_bad.find("id=\"time-breakdown\"") == std::string::npos);
  CHECK(page_bad.find("id=\"timeline\"") == std::string::npos);
  CHECK(page_bad.find("cannot be simulated") != std::string::npos);
}

// The percentages of the step-time legend: each term's share of the step.
double time_legend_percent_sum(const std::string& page) {
  const std::size_t begin = page.find("id=\"time-breakdown\"");
  const std::size_t end = page.find("</figure>", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string figure = page.substr(begin, end - begin);
  static const std::regex share(R"(\((\d+\.\d)%\)</li>)");
  double sum = 0;
  for (auto it = std::sregex_iterator(figure.begin(), figure.end(), share); it != std::sregex_iterator(); ++it)
    sum += std::stod((*it)[1].str());
  return sum;
}

TEST_CASE("the step-time bar stacks every term of the step, the MoE all-to-all included", "[views][html]") {
  // The bar once left out the EP all-to-all, so an MoE page's legend covered
  // ~60% of a step whose dominant overhead it did not show.
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  for (const char* name : {"mixtral-8x7b", "llama8b"}) {
    const ModelSpec m = find_model(name, kSourceDir);
    const bool moe = std::string(name) == "mixtral-8x7b";
    const TrainingSpec ts = training_run(64, 128, 4096);
    ParallelConfig pc;
    pc.tp = 1, pc.pp = 1, pc.dp = 64, pc.zero_stage = 1;
    if (moe) pc.ep = 8;
    Explain ex;
    const Evaluation ev = evaluate(m, hw, pc, ts, &ex);
    REQUIRE(ev.feasible());
    REQUIRE((ev.time.ep_comm_s > 0) == moe);
    const std::string page = render_evaluation_html(ev, ex, nullptr, RunContext{m, hw, ts}, kInfo);
    CHECK((page.find("EP all-to-all") != std::string::npos) == moe);
    // Shares printed to 0.1%, one rounding each: within 0.05% per term.
    CHECK(time_legend_percent_sum(page) == Approx(100.0).margin(0.05 * double(kNumStepTerms)));
    double sum = 0;
    for (const StepTermValue& x : step_terms(ev.time)) sum += x.s;
    CHECK(sum == Approx(ev.time.step_s).epsilon(1e-12));
  }
}

TEST_CASE("an MoE search page names each layout's expert parallelism, as the CLI table does", "[views][html]") {
  const ModelSpec m = find_model("mixtral-8x7b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  SearchSpec spec;
  spec.training = training_run(64, 256, 4096);
  spec.pins.tp = 2, spec.pins.pp = 1;
  const SearchReport rep = search_and_simulate(m, hw, spec, 3, 0, false);
  REQUIRE(rep.search.top.size() == 3);
  const std::string page = render_search_html(rep, RunContext{m, hw, spec.training}, kInfo);
  CHECK(occurrences(page, "<th>EP</th><th>ETP</th>") == 1);
  for (const Evaluation& ev : rep.search.top)
    CHECK(page.find(fmt::format("<td>{}</td><td>{}</td><td class=\"l\">{}</td>", ev.config.ep, ev.config.etp,
                                ev.overlap_a2a ? "overlapped" : "exposed")) != std::string::npos);
  CHECK(occurrences(page, "<td colspan=\"20\">") == 3);
}

TEST_CASE("an evaluate page names the recompute modules and the all-to-all overlap, as the CLI's config line does",
          "[views][html]") {
  const ModelSpec m = find_model("mixtral-8x7b", kSourceDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  TrainingSpec ts = training_run(64, 256, 4096);
  ParallelConfig pc;
  pc.tp = 1, pc.pp = 1, pc.dp = 64, pc.ep = 8, pc.zero_stage = 1, pc.recompute = Recompute::selective;
  ts.recompute_modules = module_bit(RecomputeModule::moe_act);
  for (bool overlap : {false, true}) {
    ts.overlap_a2a = overlap;
    Explain ex;
    const Evaluation ev = evaluate(m, hw, pc, ts, &ex);
    const std::string page = render_evaluation_html(ev, ex, nullptr, RunContext{m, hw, ts}, kInfo);
    CHECK(page.find("recompute modules <code>moe_act</code>") != std::string::npos);
    CHECK((page.find("MoE all-to-alls overlapped with compute") != std::string::npos) == overlap);
  }
}
