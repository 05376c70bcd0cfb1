// Memory per GPU by component, for the pipeline stage that needs the most:
// weights, gradients and optimizer state (ZeRO 0-3 over DP x CP), activations
// of the micro-batches in flight, output-layer logits, transients, reserve.
#pragma once

#include <cstdint>

#include "planner/model/explain.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/specs.h"

namespace planner {

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // stored activations of micro-batches in flight
  double logits_bytes = 0;       // last stage: logits + fp32 loss buffers, one micro-batch
  double transient_bytes = 0;    // ZeRO-3 gathered layers, full-recompute working layer
  double reserve_bytes = 0;      // CUDA context, NCCL buffers, fragmentation
  double total_bytes = 0;
  double capacity_bytes = 0;
  std::int64_t peak_stage = 0;  // the stage these figures belong to
  std::int64_t layers_on_peak_stage = 0;
  double micro_batches_in_flight = 0;  // on the peak stage, in whole-stage units
  [[nodiscard]] bool fits() const { return total_bytes <= capacity_bytes; }
};

// ZeRO (Rajbhandari et al. 2020): stage 1 shards the optimizer state, 2 also
// the gradients, 3 also the weights, over the DP x CP ranks that hold the same
// weights (Megatron's distributed optimizer shards over DP x CP). The peak
// stage is the one of plan.state_distinct_stages() that needs the most.
[[nodiscard]] MemoryBreakdown memory_per_gpu(const ModelSpec& model, const HardwareProfile& hw,
                                             const ParallelConfig& pc, const TrainingSpec& ts, const PricedPlan& plan,
                                             Explain* ex = nullptr);

}  // namespace planner
