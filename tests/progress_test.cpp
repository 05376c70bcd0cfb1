// Search progress: the library's callback counts every configuration and
// ends at the total; the CLI's ProgressLine draws on a terminal only after
// its delay, at most once per interval, erases itself, and writes nothing
// when disabled (stderr not a terminal).
#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../src/cli/progress.h"
#include "planner/io/catalog.h"
#include "planner/search/search.h"

using namespace planner;
using planner::cli::ProgressLine;
using namespace std::chrono_literals;

TEST_CASE("search reports its progress up to the number of configurations it considers", "[search][progress]") {
  const ModelSpec m = find_model("llama70b", PLANNER_SOURCE_DIR);
  const HardwareProfile hw = find_hardware("dgx-h100", PLANNER_SOURCE_DIR);
  SearchSpec spec;
  spec.training.num_gpus = 1024;
  spec.training.seq_len = m.default_seq_len;
  spec.training.global_batch_sequences = m.default_global_batch_tokens / m.default_seq_len;
  spec.progress_every = 1000;
  std::vector<SearchProgress> seen;
  spec.progress = [&seen](const SearchProgress& p) { seen.push_back(p); };
  const SearchResult r = search(m, hw, spec);
  REQUIRE(seen.size() >= 2);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].total == r.considered);
    CHECK(seen[i].considered <= seen[i].total);
    if (i > 0) CHECK(seen[i].considered >= seen[i - 1].considered + (i + 1 < seen.size() ? 1000 : 0));
  }
  CHECK(seen.back().considered == r.considered);
  // Throttled: about one call per progress_every configurations.
  CHECK(std::int64_t(seen.size()) <= r.considered / 1000 + 2);

  // Without a callback the search is the same.
  SearchSpec quiet = spec;
  quiet.progress = nullptr;
  const SearchResult q = search(m, hw, quiet);
  CHECK(q.considered == r.considered);
  REQUIRE(q.top.size() == r.top.size());
  for (std::size_t i = 0; i < q.top.size(); ++i) CHECK(q.top[i].config == r.top[i].config);
}

TEST_CASE("the progress line waits a second, redraws at most every interval and erases itself", "[progress]") {
  ProgressLine::Clock::time_point t{};
  std::ostringstream out;
  {
    ProgressLine line(out, true, "searched", 1s, 250ms, [&t] { return t; });
    line.update(10, 100);
    t += 999ms;
    line.update(20, 100);
    CHECK(out.str().empty());  // not before the delay
    t += 1ms;
    line.update(30, 100);
    CHECK(out.str() == "\rplanner: searched 30 of 100 configurations (30%)");
    t += 100ms;
    line.update(40, 100);  // within the interval: not redrawn
    CHECK(out.str() == "\rplanner: searched 30 of 100 configurations (30%)");
    t += 150ms;
    line.update(100, 100);
    const std::string two =
        "\rplanner: searched 30 of 100 configurations (30%)"
        "\rplanner: searched 100 of 100 configurations (100%)";
    CHECK(out.str() == two);
    line.finish();
    CHECK(out.str() == two + "\r" + std::string(50, ' ') + "\r");
    line.finish();  // once erased, nothing more
    CHECK(out.str() == two + "\r" + std::string(50, ' ') + "\r");
  }
}

TEST_CASE("a shorter progress line blanks what the longer one left", "[progress]") {
  ProgressLine::Clock::time_point t{};
  std::ostringstream out;
  ProgressLine line(out, true, "searched", 0s, 0s, [&t] { return t; });
  line.update(1000, 1000);
  const std::size_t first = out.str().size() - 1;  // without the leading \r
  out.str("");
  line.update(5, 1000);
  const std::string text = "planner: searched 5 of 1000 configurations (0%)";
  CHECK(out.str() == "\r" + text + std::string(first - text.size(), ' '));
}

TEST_CASE("a disabled progress line writes nothing", "[progress]") {
  ProgressLine::Clock::time_point t{};
  std::ostringstream out;
  {
    ProgressLine line(out, false, "searched", 0s, 0s, [&t] { return t; });
    for (int i = 0; i < 10; ++i) {
      t += 1s;
      line.update(i, 10);
    }
  }  // the destructor erases nothing either
  CHECK(out.str().empty());
}
