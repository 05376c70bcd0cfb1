// regress: comparing predictions with a golden file. A perturbed value is a
// row with its change in percent, a missing case is reported, --update
// round-trips exactly, tolerances have absolute floors, and a malformed suite is
// one InputError naming the file, the case and the field (checked verbatim).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/io/atomic_write.h"
#include "planner/spec/input_error.h"
#include "planner/validate/regress.h"
#include "planner/views/regress_report.h"
#include "test_support.h"

using namespace planner;
using nlohmann::json;

using planner::testing::error_of;
using planner::testing::TempDir;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;

json small_suite_json() {
  return json::parse(R"({
    "schema_version": 1,
    "cases": [
      {"name": "a", "model": "llama8b", "hardware": "h100", "gpus": 64, "seq_len": 8192, "global_batch": 256,
       "tp": 2, "pp": 1, "dp": 32, "zero": 1},
      {"name": "b", "model": "llama70b", "hardware": "dgx-h100", "gpus": 1024, "seq_len": 8192, "global_batch": 512,
       "tp": 8, "pp": 4, "dp": 32, "vpp": 5, "recompute": "full", "zero": 1, "note": "interleaved"}
    ]
  })");
}

RegressResults small_predictions() { return predict(suite_from_json(small_suite_json(), "x.json", kDir)); }

double& metric(RegressResults& r, const std::string& case_name, const std::string& name) {
  for (auto& c : r.cases)
    if (c.name == case_name)
      for (auto& [n, v] : c.metrics)
        if (n == name) return v;
  FAIL("no metric " << case_name << "." << name);
  throw;
}

}  // namespace

TEST_CASE("a suite is priced into every metric, in a fixed order", "[regress]") {
  const RegressResults r = small_predictions();
  REQUIRE(r.cases.size() == 2);
  CHECK(r.cases[0].name == "a");
  CHECK(r.cases[1].name == "b");
  for (const auto& c : r.cases) {
    REQUIRE(c.metrics.size() == regress_metric_names().size());
    for (std::size_t i = 0; i < c.metrics.size(); ++i) CHECK(c.metrics[i].first == regress_metric_names()[i]);
  }
  RegressResults copy = r;
  CHECK(metric(copy, "a", "feasible") == 1.0);
  CHECK(metric(copy, "a", "reasons") == 0.0);
  CHECK(metric(copy, "b", "pp_bubble_s") > 0.0);
  CHECK(metric(copy, "b", "layout_first") == 20.0);  // 80 layers over pp 4
  CHECK(metric(copy, "a", "step_s") > metric(copy, "a", "compute_s"));
}

TEST_CASE("a perturbed golden value is one row with its change in percent", "[regress]") {
  const RegressResults now = small_predictions();
  RegressResults golden = now;
  metric(golden, "b", "step_s") *= 1.02;
  const RegressReport rep = compare(golden, now);
  CHECK_FALSE(rep.passed());
  CHECK(rep.cases == 2);
  CHECK(rep.metrics == 2 * regress_metric_names().size());
  REQUIRE(rep.differences.size() == 1);
  const MetricDiff& d = rep.differences[0];
  CHECK(d.case_name == "b");
  CHECK(d.metric == "step_s");
  REQUIRE(d.change_pct());
  CHECK(*d.change_pct() == Approx((1 / 1.02 - 1) * 100).epsilon(1e-12));  // -1.96...%
  CHECK(render_regress(rep).find("-1.96%") != std::string::npos);
}

TEST_CASE("tolerances: relative per class, an absolute floor, exact counts, --rtol", "[regress]") {
  CHECK(metric_class("step_s") == MetricClass::time);
  CHECK(metric_class("mfu") == MetricClass::time);
  CHECK(metric_class("total_bytes") == MetricClass::amount);
  CHECK(metric_class("model_flops_per_step") == MetricClass::amount);
  CHECK(metric_class("micro_batches") == MetricClass::exact);
  CHECK(metric_class("reasons") == MetricClass::exact);
  CHECK(tolerance_for("step_s", {}).rtol == 1e-6);
  CHECK(tolerance_for("total_bytes", {}).rtol == 1e-9);
  CHECK(tolerance_for("step_s", RegressOptions{0.05}).rtol == 0.05);
  CHECK(tolerance_for("reasons", RegressOptions{0.05}).rtol == 0.0);

  const RegressResults now = small_predictions();
  RegressResults golden = now;
  metric(golden, "a", "step_s") *= 1 + 1e-8;  // inside 1e-6
  metric(golden, "a", "cp_comm_s") = 1e-15;   // 0 now; under the 1e-12 s floor
  metric(golden, "a", "total_bytes") += 0.5;  // under the 1-byte floor
  CHECK(compare(golden, now).passed());

  metric(golden, "a", "compute_s") *= 1 + 1e-5;  // outside 1e-6, inside --rtol 1e-4
  metric(golden, "a", "micro_batches") += 1;     // counts are exact whatever --rtol says
  const RegressReport strict = compare(golden, now);
  REQUIRE(strict.differences.size() == 2);
  CHECK(strict.differences[0].metric == "compute_s");
  CHECK(strict.differences[1].metric == "micro_batches");
  const RegressReport loose = compare(golden, now, RegressOptions{1e-4});
  REQUIRE(loose.differences.size() == 1);
  CHECK(loose.differences[0].metric == "micro_batches");
}

TEST_CASE("cases missing on either side are reported", "[regress]") {
  const RegressResults now = small_predictions();
  RegressResults golden = now;
  golden.cases.erase(golden.cases.begin());  // drop "a"
  golden.cases.push_back({"retired", {{"step_s", 1.0}}});
  const RegressReport rep = compare(golden, now);
  CHECK_FALSE(rep.passed());
  CHECK(rep.differences.empty());
  CHECK(rep.missing_from_golden == std::vector<std::string>{"a"});
  CHECK(rep.missing_from_suite == std::vector<std::string>{"retired"});
  const std::string text = render_regress(rep);
  CHECK(text.find("missing from the golden file (1): a\n") != std::string::npos);
  CHECK(text.find("in the golden file but no longer in the suite (1): retired\n") != std::string::npos);
}

TEST_CASE("a metric present on one side only is a difference", "[regress]") {
  const RegressResults now = small_predictions();
  RegressResults golden = now;
  auto& ms = golden.cases[0].metrics;
  ms.erase(ms.begin());  // compute_s
  ms.emplace_back("retired_s", 2.0);
  const RegressReport rep = compare(golden, now);
  REQUIRE(rep.differences.size() == 2);
  CHECK(rep.differences[0].metric == "compute_s");
  CHECK_FALSE(rep.differences[0].golden);
  CHECK(rep.differences[1].metric == "retired_s");
  CHECK_FALSE(rep.differences[1].now);
}

TEST_CASE("the difference table and the summary line, verbatim", "[regress]") {
  RegressReport rep;
  rep.cases = 3;
  rep.metrics = 120;
  rep.differences = {{"big-case", "step_s", 2.0, 2.5}, {"c", "reasons", 0.0, 4096.0}};
  rep.missing_from_golden = {"new-case"};
  CHECK(render_regress(rep) ==
        "case      metric             golden               now      change\n"
        "big-case  step_s                  2               2.5        +25%\n"
        "c         reasons                 0              4096         n/a\n"
        "c: infeasibility reasons were: none; now: does not fit in GPU memory\n"
        "missing from the golden file (1): new-case\n"
        "regress: 3 cases, 120 metrics, 2 differ; cases missing from the golden file: 1, no longer in the suite: 0\n");
  CHECK(render_regress(RegressReport{2, 80, {}, {}, {}}) == "regress: 2 cases, 80 metrics, 0 differ\n");
  CHECK_THAT(render_update(RegressReport{2, 80, {}, {}, {}}, "my/golden.json"),
             Catch::StartsWith("regress: updated the golden file my/golden.json: 2 cases, 80 metrics;"));
}

TEST_CASE("a prediction that is not finite is named, never printed as nan", "[regress]") {
  RegressReport rep;
  rep.cases = 1;
  rep.metrics = 2;
  const double nan = std::nan("");
  rep.differences = {{"c", "step_s", 2.0, nan}, {"c", "reasons", 0.0, nan}};
  CHECK_FALSE(rep.differences[0].change_pct());
  CHECK(render_regress(rep) ==
        "case  metric             golden               now      change\n"
        "c     step_s                  2        not finite         n/a\n"
        "c     reasons                 0        not finite         n/a\n"
        "c: infeasibility reasons were: none; now: not finite\n"
        "regress: 1 cases, 2 metrics, 2 differ\n");
}

TEST_CASE("update round-trips: the rewritten golden file compares with zero differences", "[regress]") {
  TempDir dir;
  const std::string path = (dir.path / "golden.json").string();
  const RegressResults now = small_predictions();
  write_file_atomically(path, render_golden(now));
  const RegressResults back = load_golden(path);
  const RegressReport rep = compare(back, now, RegressOptions{0.0});  // bit-exact
  CHECK(rep.passed());
  CHECK(rep.differences.empty());
  REQUIRE(back.cases.size() == now.cases.size());
  // Writing what was read gives the same file: keys keep the suite's order.
  CHECK(render_golden(now) == render_golden(predict(suite_from_json(small_suite_json(), "x.json", kDir))));
  const std::string text = render_golden(now);
  CHECK(text.find("\"schema_version\": 1") != std::string::npos);
  CHECK(text.find("\"compute_s\"") < text.find("\"total_bytes\""));
}

TEST_CASE("suite errors name the file, the case and the field, verbatim", "[regress]") {
  struct Row {
    const char* what;
    std::function<void(json&)> edit;
    const char* message;
  };
  const Row rows[] = {
      {"wrong type", [](json& j) { j["cases"][0]["tp"] = "2"; },
       R"(x.json: cases[0] (a).tp: expected an integer from 1 to 16777216, got "2")"},
      {"unknown field", [](json& j) { j["cases"][1]["tpp"] = 8; }, "x.json: cases[1] (b).tpp: unknown field"},
      {"missing field", [](json& j) { j["cases"][0].erase("gpus"); },
       "x.json: cases[0] (a).gpus: missing (expected an integer from 1 to 16777216)"},
      {"missing name", [](json& j) { j["cases"][0].erase("name"); },
       "x.json: cases[0].name: missing (expected a non-empty string)"},
      {"bad enum", [](json& j) { j["cases"][0]["recompute"] = "some"; },
       R"(x.json: cases[0] (a).recompute: expected one of none | selective | full, got "some")"},
      {"ZeRO out of range", [](json& j) { j["cases"][0]["zero"] = 4; },
       "x.json: cases[0] (a).zero: expected an integer from 0 to 3, got 4"},
      {"bool as number", [](json& j) { j["cases"][0]["sp"] = 1; },
       "x.json: cases[0] (a).sp: expected true or false, got 1"},
      {"two problems", [](json& j) { j["cases"][0]["dtype"] = "fp4", j["cases"][1]["pp"] = 0; },
       R"(x.json: cases[0] (a).dtype: expected one of bf16 | fp8, got "fp4"; )"
       "cases[1] (b).pp: expected an integer from 1 to 16777216, got 0"},
      {"duplicate name", [](json& j) { j["cases"][1]["name"] = "a"; },
       "x.json: cases[1] (a).name: duplicate of cases[0]"},
      {"case not an object", [](json& j) { j["cases"][1] = 3; }, "x.json: cases[1]: expected an object, got 3"},
      {"unknown top-level field", [](json& j) { j["case"] = json::array(); }, "x.json: case: unknown field"},
      {"empty suite", [](json& j) { j["cases"] = json::array(); },
       "x.json: cases: expected a non-empty list of cases, got []"},
      {"schema version", [](json& j) { j["schema_version"] = 2; }, "x.json: schema_version: expected 1, got 2"},
      {"re-gather without ZeRO-3 full recompute", [](json& j) { j["cases"][0]["zero3_recompute_regather"] = true; },
       R"(x.json: cases[0] (a).zero3_recompute_regather: applies to ZeRO-3 with full recomputation ("zero": 3, )"
       R"("recompute": "full"))"},
      {"negative reduce bytes", [](json& j) { j["cases"][0]["grad_reduce_bytes"] = -1; },
       "x.json: cases[0] (a).grad_reduce_bytes: expected a number >= 0 and <= 64, got -1"},
      {"bad selective policy",
       [](json& j) { j["cases"][0]["recompute"] = "selective", j["cases"][0]["selective_ac"] = "layer:0"; },
       R"(x.json: cases[0] (a).selective_ac: expected "megatron", "op" or "layer:N" (N >= 1), got "layer:0")"},
      {"MoE imbalance on a dense model", [](json& j) { j["cases"][0]["moe_imbalance"] = 2.0; },
       "x.json: cases[0] (a).moe_imbalance: applies to MoE models only; llama3.1-8b is dense (no experts)"},
      {"capacity factor on a dense model", [](json& j) { j["cases"][0]["capacity_factor"] = 1.0; },
       "x.json: cases[0] (a).capacity_factor: applies to MoE models only; llama3.1-8b is dense (no experts)"},
      {"a2a backend with EP 1", [](json& j) { j["cases"][1]["model"] = "mixtral-8x7b", j["cases"][1]["a2a"] = "nccl"; },
       R"(x.json: cases[1] (b).a2a: chooses the expert all-to-all, but the layout has EP 1 ("ep"))"},
      {"resharding without ZeRO-3", [](json& j) { j["cases"][0]["reshard_after_forward"] = false; },
       R"(x.json: cases[0] (a).reshard_after_forward: applies to ZeRO-3 ("zero": 3))"},
      {"the default gather unit without ZeRO-3", [](json& j) { j["cases"][0]["zero3_gather"] = "layer"; },
       R"(x.json: cases[0] (a).zero3_gather: applies to ZeRO-3 ("zero": 3))"},
      {"TP overlap with TP 1",
       [](json& j) { j["cases"][0]["tp"] = 1, j["cases"][0]["dp"] = 64, j["cases"][0]["tp_comm_overlap"] = true; },
       R"(x.json: cases[0] (a).tp_comm_overlap: overlaps TP communication, but the layout has TP 1 ("tp"))"},
      {"TP overlap without SP", [](json& j) { j["cases"][0]["sp"] = false, j["cases"][0]["tp_comm_overlap"] = true; },
       "x.json: cases[0] (a).tp_comm_overlap: needs sequence parallelism (Megatron-LM requires --sequence-parallel "
       R"(with --tp-comm-overlap; "sp"))"},
      {"selective policy without selective recompute",
       [](json& j) { j["cases"][0]["recompute"] = "full", j["cases"][0]["selective_ac"] = "op"; },
       R"(x.json: cases[0] (a).selective_ac: applies to selective recomputation ("recompute": "selective"))"},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      json j = small_suite_json();
      r.edit(j);
      CHECK(error_of([&] { (void)suite_from_json(j, "x.json", kDir); }) == r.message);
    }
  }
  SECTION("unknown model: the catalog's message, with the case") {
    json j = small_suite_json();
    j["cases"][1]["model"] = "llama9b";
    CHECK_THAT(
        error_of([&] { (void)suite_from_json(j, "x.json", kDir); }),
        Catch::StartsWith("x.json: cases[1] (b).model: unknown model 'llama9b' (did you mean 'llama8b'?); known: "));
  }
  SECTION("missing file") {
    CHECK(error_of([] { (void)load_suite("/nonexistent/suite.json", kDir); }) ==
          "/nonexistent/suite.json: cannot open file");
  }
}

TEST_CASE("golden file errors name the file and the field", "[regress]") {
  // Hand edits: a golden file holds finite predictions, and counts and bit sets are whole.
  CHECK(error_of([] {
          (void)golden_from_json(json::parse(R"({"schema_version": 1, "cases": {"a": {"step_s": null}}})"), "g.json");
        }) == "g.json: cases.a.step_s: expected a number, got null");
  CHECK(error_of([] {
          (void)golden_from_json(json::parse(R"({"schema_version": 1, "cases": {"a": {"reasons": 1.5}}})"), "g.json");
        }) == "g.json: cases.a.reasons: expected a whole number >= 0 (a count or bit set), got 1.5");
  CHECK(error_of([] {
          (void)golden_from_json(json::parse(R"({"schema_version": 1, "cases": {"a": {"micro_batches": -2}}})"),
                                 "g.json");
        }) == "g.json: cases.a.micro_batches: expected a whole number >= 0 (a count or bit set), got -2");
  CHECK(error_of([] {
          (void)golden_from_json(json::parse(R"({"schema_version": 1, "cases": {"a": {"step_s": "1"}}})"), "g.json");
        }) == R"(g.json: cases.a.step_s: expected a number, got "1")");
  CHECK(error_of([] { (void)golden_from_json(json::parse(R"({"cases": {}})"), "g.json"); }) ==
        "g.json: schema_version: missing (expected an integer from 1 to 1000000)");
  CHECK(error_of([] { (void)load_golden("/nonexistent/golden.json"); }) ==
        "/nonexistent/golden.json: cannot open file (create it with `planner regress --update`)");
}
