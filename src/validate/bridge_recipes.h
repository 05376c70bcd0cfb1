// What NVIDIA's Megatron-Bridge performance recipes set and the
// performance-summary tables leave out (expert TP, the token dispatcher and
// its overlap: bridge_recipes.cpp; the recompute modules:
// bridge_recompute.cpp), read from the recipe of the row's NeMo container.
// Private to validate/ (moe_runs.cpp); docs/published_runs.md "MoE rows".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/validate/published_runs.h"

namespace planner::bridge_recipes {

// A row of NVIDIA's Megatron-Bridge performance summary (its `source`).
[[nodiscard]] bool is_bridge_row(const nlohmann::json& row);

// Sets the knobs of a mapped row `r` that its recipe fixes and the row does
// not state, each with an assumption naming the recipe. Rows from other
// sources are left as they are.
void apply(const nlohmann::json& row, MeasuredRun& r);

struct RecipeRecompute {
  std::uint8_t modules = 0;  // TrainingSpec::recompute_modules (selective granularity)
  std::string citation;      // Megatron-Bridge version, file and config name
};

// The recompute modules of the DeepSeek-V3 recipe that produced this row, or
// nullopt when no recipe is known for its container release, hardware,
// precision and exact layout (bridge_recompute.cpp cites each file and tag).
[[nodiscard]] std::optional<RecipeRecompute> recipe_recompute(const nlohmann::json& row);

}  // namespace planner::bridge_recipes
