// Self-contained HTML pages (--html): one per search, evaluation or
// simulation, with inline SVG charts (the scatter of every feasible layout,
// stacked time and memory bars, rejection counts, the simulated timeline) and
// a little inline JavaScript for tooltips. No external resource of any kind.
// Pure functions returning the page; the CLI writes it with write_file_atomically.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/model/explain.h"
#include "planner/search/search.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/simulate_top.h"
#include "planner/views/report.h"

namespace planner {

// What makes a page reproducible beyond the RunContext.
struct HtmlPageInfo {
  std::string command;  // the command line (page_command_line: no absolute paths)
  std::string version;  // planner's version
};

// Above this many feasible layouts the scatter draws every n-th (and the
// whole Pareto front), and says so.
inline constexpr std::size_t kMaxScatterPoints = 50000;

// A search page: run information, the scatter (SearchResult::points, so the
// search ran with collect_points), the ranked table with each row's
// breakdowns, rejection counts, and with --simulate-top the re-ranking and
// the top pick's timeline (rep.top_step).
[[nodiscard]] std::string render_search_html(const SearchReport& rep, const RunContext& ctx, const HtmlPageInfo& info);

// An evaluation page: the breakdowns of one layout, its simulated timeline
// (`step`, when it could run) and the --explain formulas (`ex`).
[[nodiscard]] std::string render_evaluation_html(const Evaluation& ev, const Explain& ex, const SimulatedStep* step,
                                                 const RunContext& ctx, const HtmlPageInfo& info);

// A simulation page: as an evaluation page, plus the simulated step against
// the closed form.
[[nodiscard]] std::string render_simulation_html(const SimResult& r, const SimComparison& cmp, const Evaluation& ev,
                                                 const PipelineProblem& pr, const Explain& ex, const RunContext& ctx,
                                                 const HtmlPageInfo& info);

// The layouts of the Pareto front of step time against memory (indices into
// `points`, by memory ascending): each is faster than every layout that
// needs no more memory.
[[nodiscard]] std::vector<std::size_t> pareto_front(const std::vector<SearchPoint>& points);

// Indices of the points a scatter draws: all of them up to `max_points`, else
// every ceil(n / max_points)-th plus those in `keep` (sorted, unique).
[[nodiscard]] std::vector<std::size_t> thinned_points(std::size_t n, std::size_t max_points,
                                                      const std::vector<std::size_t>& keep);

// The command line as a page shows it: every absolute path (an argument, or
// the value of --flag=/path) cut to its file name, so pages do not depend on
// where they were made.
[[nodiscard]] std::string page_command_line(std::string_view command);

}  // namespace planner
