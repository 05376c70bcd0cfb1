// Timeline outputs of the simulator: the Chrome trace parses and every event
// carries ph/ts/dur/pid/tid; the SVG is well-formed XML; the text timeline
// shows every stage and refuses large cases.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"
#include "planner/views/timeline.h"

using namespace planner;

namespace {

SimResult small_run(Schedule s = Schedule::interleaved, std::int64_t v = 2) {
  PipelineProblem pr;
  pr.schedule = s;
  pr.stages = 4;
  pr.chunks_per_stage = v;
  pr.micro_batches = 8;
  pr.chunks.resize(std::size_t(pr.stages * pr.chunks_per_stage));
  for (ChunkCost& c : pr.chunks) {
    c.forward_s = 1e-3;
    c.forward_tp_cp_s = 1e-4;
    c.backward_s = 2e-3;
    c.weight_grad_s = 1e-3;
    c.recompute_s = 5e-4;
    c.grad_buckets_s = {2e-4, 2e-4};
    c.param_gather_s = 3e-4;
    c.layers = 2;
  }
  pr.send_s = {1e-4, 1e-4, 1e-4, 3e-4};
  pr.optimizer_s = {4e-4, 4e-4, 4e-4, 4e-4};
  return simulate(pr);
}

// A small well-formedness checker for the XML the SVG writer emits: balanced
// elements, quoted attributes, only the five predefined entities, no raw '<'
// or '&' in text. (The ctest simulate_cli_outputs also runs xmllint.)
std::string xml_problem(const std::string& x) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  if (x.rfind("<?xml", 0) == 0) i = x.find("?>") + 2;
  while (i < x.size()) {
    if (x[i] == '<') {
      const std::size_t end = x.find('>', i);
      if (end == std::string::npos) return "unterminated tag";
      std::string tag = x.substr(i + 1, end - i - 1);
      if (tag.empty()) return "empty tag";
      int quotes = 0;
      for (char c : tag) quotes += c == '"';
      if (quotes % 2) return "unbalanced quotes in <" + tag + ">";
      if (tag[0] == '/') {
        const std::string name = tag.substr(1);
        if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
        stack.pop_back();
      } else if (tag.back() != '/') {
        stack.push_back(tag.substr(0, tag.find_first_of(" \n\t")));
      }
      i = end + 1;
    } else if (x[i] == '&') {
      const std::size_t semi = x.find(';', i);
      const std::string ent = semi == std::string::npos ? "" : x.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;") return "bad entity";
      i = semi + 1;
    } else {
      ++i;
    }
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

}  // namespace

TEST_CASE("the Chrome trace parses and every event has ph, ts, dur, pid, tid", "[timeline]") {
  const SimResult r = small_run();
  TimelineLabels labels{"a <test> & \"title\"", {"stage 0: emb", "s1", "s2", "s3: out"}, "planner simulate --x 'y'"};
  const nlohmann::json j = nlohmann::json::parse(render_chrome_trace(r, labels));
  REQUIRE(j.contains("traceEvents"));
  std::size_t complete = 0;
  for (const auto& e : j["traceEvents"]) {
    for (const char* key : {"ph", "ts", "dur", "pid", "tid", "name"}) CHECK(e.contains(key));
    if (e["ph"] == "X") {
      ++complete;
      CHECK(e["dur"].get<double>() > 0);
      CHECK(e["ts"].get<double>() >= 0);
      CHECK(e["pid"].get<int>() >= 0);
      CHECK(e["pid"].get<int>() < 4);
      CHECK(e["tid"].get<int>() < kNumStreams);
    } else {
      CHECK(e["ph"] == "M");
    }
  }
  CHECK(complete == r.events.size());
  // Compute events name their micro-batch and chunk.
  bool found = false;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "forward") {
      CHECK(e["args"].contains("micro_batch"));
      CHECK(e["args"].contains("chunk"));
      found = true;
    }
  CHECK(found);
  CHECK(j["otherData"]["command"] == "planner simulate --x 'y'");
}

TEST_CASE("the SVG timeline is well-formed XML with a legend and an axis", "[timeline]") {
  for (Schedule s : {Schedule::interleaved, Schedule::zb_h1}) {
    const SimResult r = small_run(s, s == Schedule::interleaved ? 2 : 1);
    const std::string svg = render_svg_timeline(r, {"title with <angle> & amp", {}, ""});
    CHECK(xml_problem(svg).empty());
    CHECK(svg.find("<svg") != std::string::npos);
    CHECK(svg.find("time (ms)") != std::string::npos);
    CHECK(svg.find("weight grad (W)") != std::string::npos);
    CHECK(svg.find("&lt;angle&gt; &amp; amp") != std::string::npos);
  }
  // The checker itself catches broken XML.
  CHECK_FALSE(xml_problem("<svg><rect></svg>").empty());
  CHECK_FALSE(xml_problem("<svg>a & b</svg>").empty());
}

TEST_CASE("the text timeline shows every stage and refuses large cases", "[timeline]") {
  const SimResult r = small_run(Schedule::one_f_one_b, 1);
  const std::string text = render_ascii_timeline(r, 4, 1, 8, 100);
  for (const char* row : {"stage  0 |", "stage  1 |", "stage  2 |", "stage  3 |"})
    CHECK(text.find(row) != std::string::npos);
  CHECK(text.find("F0") != std::string::npos);
  CHECK(text.find('B') != std::string::npos);
  CHECK_THROWS_AS(render_ascii_timeline(r, 32, 1, 8), InputError);
  CHECK_THROWS_AS(render_ascii_timeline(r, 4, 4, 32), InputError);
}
