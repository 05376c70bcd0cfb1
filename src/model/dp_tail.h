// The DP tail of a step (private to src/model/): what a stage runs after its
// last backward (the gradient reduction, the ZeRO-1/2 weight all-gather, the
// optimizer step), which stage's tail ends the step, and its split into the
// step's DP, contention and optimizer terms. step_time.cpp adds them up;
// dp_tail_contention_s (step_time.h) gives the simulator a stage's contention.
#pragma once

#include <cstdint>

#include "planner/model/collectives.h"
#include "planner/model/explain.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/specs.h"

namespace planner::detail {

// One stage's work after its last backward (the DP tail), and its lead over
// stage 0.
struct StageTail {
  std::int64_t stage = 0;
  double dp_exposed_s = 0, optimizer_s = 0, lead_s = 0;
  double contention_s = 0;  // the backward / forward the hidden DP traffic slowed (contention.h)
  double reduce_s = 0, gather_s = 0, window_s = 0, grad_bytes = 0;  // for the report
  double replica_s = 0;                     // of reduce_s: hybrid sharding's all-reduce over the replicas
  CollectiveCost reduce_cost, gather_cost;  // their NCCL algorithm / protocol, for --explain
  [[nodiscard]] double total_s() const { return dp_exposed_s + contention_s + optimizer_s; }
  [[nodiscard]] double end_s() const { return total_s() - lead_s; }  // relative to stage 0's last backward
};

// The tail that ends the step: the latest of end_r + tail_r over the stages.
[[nodiscard]] StageTail critical_tail(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                                      const PricedPlan& plan);

// The critical tail split for the report: its optimizer step (Megatron-LM
// MixedPrecisionOptimizer.step, optimizer_time_s) less its lead over stage 0
// (taken from the optimizer first: the other stages' drain covers it), and
// its exposed DP traffic, the rest.
struct TailTerms {
  double dp_comm_s = 0, contention_s = 0, optimizer_s = 0;
};
[[nodiscard]] TailTerms split_tail(const StageTail& tail, const PricedPlan& plan, Explain* ex);

}  // namespace planner::detail
