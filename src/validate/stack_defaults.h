// What a measured row's software stack ran that the row does not say:
// torchtitan's FSDP2 reduce dtype, selective-checkpointing policies and eager
// PyTorch of the row's date; llm-foundry's Composer / FSDP1 / flash-attn stack;
// Megatron-LM's argument defaults.
// Private to validate/ (published_runs.cpp, which decides the stack);
// docs/published_runs.md "Inferred settings".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/validate/published_runs.h"

namespace planner::stack_defaults {

// torchtitan's rows (docs/performance.md), `year` and `precision` as the row gives them.
void apply_torchtitan(const nlohmann::json& row, int year, const std::string& precision, MeasuredRun& r);
// MosaicML llm-foundry's benchmark tables.
void apply_llm_foundry(MeasuredRun& r);
// Megatron-LM's own rows from 2023 on: its argument defaults unless the row
// (`notes` lower-cased) quotes a flag.
void apply_megatron_lm(const nlohmann::json& row, const std::string& notes, MeasuredRun& r);

}  // namespace planner::stack_defaults
