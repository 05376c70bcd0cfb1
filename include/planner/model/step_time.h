// One training step's time on the critical (heaviest) pipeline stage, every
// term separate: compute, recompute, exposed TP / CP / PP / DP / ZeRO-3
// communication, the pipeline bubble and the optimizer step.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "planner/model/explain.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/specs.h"

namespace planner {

struct StepTimeBreakdown {
  double compute_s = 0;     // forward + backward kernels, all micro-batches, heaviest stage
  double recompute_s = 0;   // recomputation in the backward pass
  double contention_s = 0;  // compute slowed by overlapped communication (contention.h), steady state + tail
  double tp_comm_s = 0;     // exposed tensor-parallel collectives
  double cp_comm_s = 0;     // exposed part of the context-parallel K/V exchange
  double pp_p2p_s = 0;      // exposed pipeline send/recv
  double pp_bubble_s = 0;   // pipeline fill and drain
  double dp_comm_s = 0;     // exposed gradient reduction (+ ZeRO-1/2 parameter all-gather), stage dp_tail_stage
  double zero3_comm_s = 0;  // exposed ZeRO-2/3 per-layer all-gathers / gradient reduce-scatters
  double optimizer_s = 0;   // Adam update, memory bound, less the critical stage's lead over stage 0
  double ep_comm_s = 0;     // exposed MoE expert all-to-alls (dispatch, combine; 0 for dense models)
  double step_s = 0;        // sum of the above

  // Context for reports.
  double contention_tail_s = 0;    // the part of contention_s in the DP tail (the rest is per layer)
  double straggler_s = 0;          // of compute_s: the layers' kernels waiting for the slowest chip (straggler.h)
  double dp_comm_total_s = 0;      // before overlap
  std::int64_t dp_tail_stage = 0;  // the stage whose reduction and optimizer end the step
  double zero3_comm_total_s = 0;
  double ep_comm_total_s = 0;  // MoE all-to-alls before overlap
  double stage_time_per_micro_batch_s = 0;  // heaviest stage, fwd+bwd of one micro-batch
  double layer_fwd_s = 0, layer_bwd_s = 0;  // one layer, one micro-batch (bwd incl. recompute)
  std::int64_t micro_batches = 0;
  double bubble_fraction = 0;  // pp_bubble_s / step_s
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     // Megatron-LM num_floating_point_operations (causal attention)
  double hardware_flops_per_step = 0;  // FLOPs executed (flash skips the masked half; recomputation)
  double mfu = 0, hfu = 0;
  double tflops_per_gpu = 0;  // model FLOPs per GPU per second / 1e12, as Megatron-LM logs it
};

// Megatron-LM DDP gradient buckets (parameters). Without --ddp-bucket-size,
// Megatron-Core sizes them max(40M, 1M x DP x CP) ("larger DP sizes need
// larger buckets to ensure collectives do not become latency-bound":
// core_v0.19.0 megatron/core/distributed/distributed_data_parallel_config.py,
// megatron/training/training.py; the same rule since core_v0.8.0). Parameters
// are laid out in backward order and a bucket closes once it holds bucket
// parameters, never splitting one (distrib_optimizer.py, param_and_grad_buffer.py),
// so the input embedding, whose gradient is the backward's last, ends the last
// bucket: its reduction starts when the backward ends and is always exposed.
// The terms of StepTimeBreakdown that add up to step_s, in the order the
// reports list them. One list for every view (the CLI table, the HTML bar,
// dominant_overhead), so that a term cannot be left out of one of them.
enum class StepTerm {
  compute,
  recompute,
  contention,
  tp_comm,
  cp_comm,
  pp_p2p,
  pp_bubble,
  dp_comm,
  zero3_comm,
  ep_comm,
  optimizer
};
inline constexpr std::size_t kNumStepTerms = 11;
struct StepTermValue {
  StepTerm term;
  double s;
};
[[nodiscard]] std::array<StepTermValue, kNumStepTerms> step_terms(const StepTimeBreakdown& t);

inline constexpr double kGradBucketParams = 40e6;
[[nodiscard]] inline double grad_bucket_params(std::int64_t dp_cp) {
  return std::max(kGradBucketParams, 1e6 * double(dp_cp));
}
// Parameters in the last bucket (reduced after the backward ends) of a chunk of
// `params` local parameters of which `embedding` (0: none) are the input embedding's.
[[nodiscard]] inline double last_grad_bucket_params(double params, double embedding, std::int64_t dp_cp) {
  return std::min(params, std::max(grad_bucket_params(dp_cp), embedding));
}

// How many times the step's weight all-gather (ZeRO-1/2) runs. Megatron-Core
// gives a MoE model two distributed optimizers (dense and expert, chained),
// and without --overlap-param-gather each one's step_with_ready_grads
// gathers every bucket group of every model chunk, dense and expert
// (megatron/core/optimizer/distrib_optimizer.py step_with_ready_grads ->
// start_param_sync_for_bucket_group_subset; optimizer.py ChainedOptimizer
// dedups only MXFP8's deferred path): twice. Overlapped, the gathers are
// dispatched once, from the forward pre-hooks.
[[nodiscard]] inline int weight_gather_rounds(const TrainingSpec& ts, bool has_experts) {
  return !ts.overlap_grad_reduce && has_experts ? 2 : 1;
}

// HBM bytes the Adam step moves per parameter it updates, as
// TrainingSpec::optimizer_kernel runs it: (3g + 28 + w) fused (Megatron-LM
// MixedPrecisionOptimizer.step: grad norm, Adam, master-to-bf16 copy,
// zeroing), 104 as a per-parameter loop of single-operation kernels.
[[nodiscard]] double optimizer_bytes_per_local_param(const TrainingSpec& ts);

// HBM bytes per local parameter (before ZeRO sharding) that Megatron-Core's
// gradient buffer costs each step outside the Adam kernels: the NaN check's
// norm, the 1/(DP x CP) scaling and zeroing the whole buffer (4g - g/shard),
// with DP x CP > 1, ZeRO 0-2 and the fused optimizer off a TPU torus; else 0.
[[nodiscard]] double grad_buffer_bytes_per_local_param(const HardwareProfile& hw, const ParallelConfig& pc,
                                                       const TrainingSpec& ts);

// Adam step over `params_local` parameters (per GPU before ZeRO sharding),
// memory bound: optimizer_bytes_per_local_param each on the ZeRO shard, plus
// grad_buffer_bytes_per_local_param on every local parameter.
[[nodiscard]] double optimizer_time_s(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                                      double params_local);

// The optimizer step of `stage` (optimizer_time_s of its local parameters);
// MoE: the routed experts' part over their EP x ETP shard, ZeRO-sharded over EDP.
[[nodiscard]] double stage_optimizer_s(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                                       const PricedPlan& plan, std::int64_t stage);

// Compute that stage `stage`'s hidden DP traffic slows after its last
// backward: the reduction hidden behind it and the weight all-gather hidden
// behind the next forward (contention.h). Read by the simulator, which adds
// it to the stage's optimizer step.
[[nodiscard]] double dp_tail_contention_s(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                                          const PricedPlan& plan, std::int64_t stage);

// One pipeline send/recv message: the boundary activation b*s/cp*h in bf16,
// split over TP by the scatter-gather optimisation (Narayanan et al. 2021 §4.1).
[[nodiscard]] double pp_send_bytes(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts);

// The step as the sum of its terms (step_time.cpp), each priced on the
// plan's slowest stage except the DP tail and optimizer, which belong to the
// stage that ends the step.
[[nodiscard]] StepTimeBreakdown step_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                          const TrainingSpec& ts, const PricedPlan& plan, Explain* ex = nullptr);

}  // namespace planner
