// What the evaluation report (report.cpp) and the search report
// (search_table.cpp) share: the run's context line, a rejection reason worded
// for the profile, and GiB (private to src/views/).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/model/evaluate.h"
#include "planner/views/report.h"

namespace planner::report_detail {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A reason of many configurations, worded for the profile: TPU chips, not
// GPUs, and no Megatron-LM citation for a layout Megatron-LM does not run.
[[nodiscard]] std::string reason_for(Reason r, const HardwareProfile& hw);

// "model ... | hardware ... | N GPUs | seq ... | ...": the first line of every text report.
[[nodiscard]] std::string context_line(const RunContext& ctx);

// An evaluation's "config" object: the layout (to_json(ParallelConfig)) with
// the recompute modules and the all-to-all overlap where they apply.
[[nodiscard]] nlohmann::json config_json(const Evaluation& ev);

// The search's CSV (search_table.cpp): a header and one row per evaluation,
// ranked from 1; `extra_header` (",a,b") ends the header and extra[i]
// (",x,y"), where given, row i.
[[nodiscard]] std::string search_csv(const std::vector<Evaluation>& rows, const RunContext& ctx,
                                     const std::string& extra_header = "", const std::vector<std::string>& extra = {});

}  // namespace planner::report_detail
