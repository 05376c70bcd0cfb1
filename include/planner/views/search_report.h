// What `planner search` prints: the search result and, with --simulate-top,
// its first results re-ranked by simulation (simulate_top.h's SearchReport),
// rendered once per format. The JSON is one object: the search report with a
// "simulated_ranking" array. The CSV is one table: the search's, with the
// columns simulated_rank, simulated_step_s, simulated_bubble_fraction and
// not_simulated (empty for a row not simulated), and a row for each simulated
// layout past --top.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "planner/simulate/simulate_top.h"
#include "planner/views/report.h"

namespace planner {

[[nodiscard]] std::string render_search_report(const SearchReport& rep, const RunContext& ctx, Format f);

// The re-ranking alone: a table, CSV rows, or (to_json) a JSON array.
[[nodiscard]] std::string render_simulated_ranking(const std::vector<SimulatedRank>& ranks, Format f);
[[nodiscard]] nlohmann::json to_json(const std::vector<SimulatedRank>& ranks);

}  // namespace planner
