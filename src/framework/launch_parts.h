// Private to src/framework/: what launch_flags.cpp and megatron_flags.cpp
// share (the batch a launch describes, Megatron's chunk order, the Megatron
// argument lines and their notes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/specs.h"

namespace planner::launch_detail {

struct Batch {
  std::int64_t global, micro, micro_batches;
};

// Layers of every chunk in Megatron's entry order: chunk c of stage s at c*p + s.
std::vector<std::int64_t> chunk_order(const PricedPlan& plan);

// Megatron-LM arguments (bridge false) or Megatron-Bridge overrides (megatron_flags.cpp).
std::vector<std::string> megatron_lines(const ModelSpec& model, const TrainingSpec& ts, const Evaluation& ev,
                                        const Batch& b, bool bridge);
// What those flags cannot carry, for the note.
std::vector<std::string> megatron_notes(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts,
                                        const ParallelConfig& pc, bool bridge);

}  // namespace planner::launch_detail
