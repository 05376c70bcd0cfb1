// The recompute modules NVIDIA's Megatron-Bridge performance recipes set for
// the published DeepSeek-V3 rows (private to validate/): a row of
// moe_runs.json that does not state its recomputation takes its recipe's
// only where the recipe of the row's container release, hardware, precision
// and exact layout is known (moe_recipes.cpp cites each file and version).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace planner::moe_runs {

struct RecipeRecompute {
  std::uint8_t modules = 0;  // TrainingSpec::recompute_modules (selective granularity)
  std::string citation;      // Megatron-Bridge version, file and config name
};

// The recipe's modules for this row, or nullopt when no recipe is known for
// its container, hardware, precision and layout.
[[nodiscard]] std::optional<RecipeRecompute> recipe_recompute(const nlohmann::json& row);

}  // namespace planner::moe_runs
