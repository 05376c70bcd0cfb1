// Rows of the MoE measured-runs file (../shared/reference/moe_runs.json,
// schema in moe.md §1.1; docs/published_runs.md "MoE rows"): they name a
// model and a hardware type and give the layout as Megatron-Bridge tables do
// (tp, pp, cp, vp, ep, etp, mbs, gbs, fsdp), unlike the dense rows, which
// carry their own architecture. Private to validate/ (published_runs.cpp).
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "planner/validate/published_runs.h"

namespace planner::moe_runs {

// A row of that schema: it has "model" and "hardware", and neither the dense rows' "num_layers" nor "gpu_type".
[[nodiscard]] bool is_moe_row(const nlohmann::json& row);

// The row as the planner's specs (model file, profile name, layout pinned
// exactly as the row states it), or the reason it is skipped.
[[nodiscard]] RunRow map_moe_row(const nlohmann::json& row, std::size_t index);

// Profile name for a row's hardware string ("GB200" -> gb200-nvl72); empty when none is known.
[[nodiscard]] std::string profile_for(const std::string& hardware);

}  // namespace planner::moe_runs
