// Discrete-event simulation of one training step of one pipeline replica.
//
// The closed form (step_time.h) prices the heaviest stage and adds a bubble
// formula; the simulator runs the actual schedule: per stage a compute stream,
// a send stream and a data-parallel stream; forward (F), recompute (R),
// backward (B; input gradient only when the schedule splits it) and weight
// gradient (W) ops per micro-batch and virtual chunk; activation/gradient
// sends between stages; DP gradient buckets reduced as the last backward
// produces them; ZeRO-1/2 parameter gathers and ZeRO-3 per-layer gathers; the
// optimizer step. Every duration comes from the analytical engine's per-op
// costs (pipeline_problem() below): one source of truth, no second cost model.
//
// Deterministic: events are ordered by (time, sequence number) in a priority
// queue; op orders per stage are fixed by the schedule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/spec/names.h"  // to_string(Schedule)
#include "planner/spec/specs.h"

namespace planner {

enum class OpKind : std::uint8_t { forward, recompute, backward, weight_grad };

struct StageOp {
  OpKind kind = OpKind::forward;
  std::int32_t micro_batch = 0;
  std::int32_t chunk = 0;  // virtual chunk on this stage (0..v-1); model chunk = chunk * p + stage
  bool operator==(const StageOp&) const = default;
};

// The fixed op order of every stage (outer index: stage).
//  GPipe (Huang et al. 2019, Fig. 2c): all forwards, then backwards in reverse.
//  1F1B (Narayanan et al. 2021 §2.2.1, Megatron-LM schedules.py): p-i-1
//   warm-up forwards on stage i, then one forward / one backward, then the rest.
//  Interleaved (Narayanan et al. 2021 §2.2.2, Megatron-LM
//   forward_backward_pipelining_with_interleaving): micro-batches in groups of
//   p, chunks in order (forward) / reverse (backward); 2(p-i-1) + (v-1)p
//   warm-up chunk-forwards (all of them when m == p).
//  ZB-H1 (Qi et al. 2023 §3, "handcrafted schedule"): 1F1B's F/B order with
//   the backward split into B (input gradient) and W (weight gradient); stage
//   i defers i W passes, which fill the drain: bubble (p-1)(T_F + T_B - T_W)
//   against 1F1B's (p-1)(T_F + T_B + T_W), at 1F1B's peak activation memory.
// Recompute ops R precede each B when `with_recompute`.
[[nodiscard]] std::vector<std::vector<StageOp>> stage_op_order(Schedule s, std::int64_t p, std::int64_t v,
                                                               std::int64_t m, bool with_recompute);

// Cost of one micro-batch through one virtual chunk of one stage, seconds.
// Each op's duration includes its exposed communication (listed separately
// for attribution and drawing).
struct ChunkCost {
  double forward_s = 0;      // F: compute + exposed TP/CP + exposed ZeRO-3
  double recompute_s = 0;    // R: recomputed forward + its exposed TP comm
  double backward_s = 0;     // B: whole backward (input + weight gradient) when not split
  double weight_grad_s = 0;  // of backward_s: the weight-gradient part (W when split)
  double forward_tp_cp_s = 0, backward_tp_cp_s = 0, recompute_tp_s = 0;  // exposed, inside the ops
  double forward_ep_s = 0, backward_ep_s = 0, recompute_ep_s = 0;  // exposed MoE all-to-alls, inside the ops
  // --overlap-a2a: what a forward / backward with no other micro-batch's pass
  // beside it (warm-up, cool-down: unpaired_chunk_passes) exposes on top.
  double forward_ep_unpaired_s = 0, backward_ep_unpaired_s = 0;
  double forward_zero3_s = 0, backward_zero3_s = 0;                      // exposed ZeRO-3 gathers inside the ops
  double zero3_forward_total_s = 0, zero3_backward_total_s = 0;          // before overlap (DP stream)
  std::int64_t layers = 0;             // transformer layers in the chunk (>= 1 for gather progress)
  std::vector<double> grad_buckets_s;  // DP reduction of each gradient bucket, in backward order
  // Where in the chunk's backward op each bucket's gradients are complete, as
  // a fraction of the op, (0, 1] and non-decreasing; empty: bucket k of n at
  // (k + 1) / n. MoE: the routed experts' buckets (reduced over EDP) are
  // produced alongside the rest's, layer by layer, so the two interleave.
  std::vector<double> grad_bucket_ready;
  double param_gather_s = 0;           // ZeRO-1/2: all-gather of the chunk's updated weights (start of step)
};

struct PipelineProblem {
  Schedule schedule = Schedule::one_f_one_b;
  std::int64_t stages = 1;            // Narayanan et al.'s p
  std::int64_t chunks_per_stage = 1;  // virtual chunks per stage, their v
  std::int64_t micro_batches = 1;     // per step, their m
  std::vector<ChunkCost> chunks;      // [stage * v + chunk]
  std::vector<double> send_s;         // [stage]: one activation (or gradient) between stage and stage+1 (mod p)
  bool overlap_p2p = false;           // sends on their own stream; otherwise they block the sender's compute
  bool overlap_grad_reduce = true;    // buckets reduced during the backward; otherwise after it
  bool overlap_param_gather = true;   // ZeRO-1/2 gathers prefetched at the step start; otherwise after the optimizer
  std::vector<double> optimizer_s;    // [stage]
  [[nodiscard]] const ChunkCost& cost(std::int64_t stage, std::int64_t chunk) const {
    return chunks[std::size_t(stage * chunks_per_stage + chunk)];
  }
  // F + R + B of one micro-batch through every chunk of `stage`.
  [[nodiscard]] double stage_work_s(std::int64_t stage) const;
  // The stage with the most stage_work_s (the earliest on ties). Usually the
  // closed form's PricedPlan::slowest_stage(), but not always: here each
  // chunk exposes its first layer's ZeRO-3 gather, so a stage whose chunks
  // all hold layers can outweigh one the closed form prices as slower.
  [[nodiscard]] std::int64_t heaviest_stage() const;
};

// ep: the exposed MoE expert all-to-alls (dispatch / combine), MoE models only.
enum class Stream : std::uint8_t { compute, tp_cp, send, dp, ep };
inline constexpr int kNumStreams = 5;
[[nodiscard]] const char* to_string(Stream s);

enum class EventKind : std::uint8_t {
  forward,
  recompute,
  backward,
  weight_grad,  // compute stream (match OpKind)
  tp_cp_comm,   // exposed TP/CP part of an op (tp_cp stream)
  send_activation,
  send_gradient,  // send stream
  grad_reduce,
  param_gather,
  zero3_gather,  // dp stream
  optimizer,     // compute stream
  ep_comm        // exposed MoE all-to-all part of an op (ep stream)
};
[[nodiscard]] const char* to_string(EventKind k);

struct SimEvent {
  double start_s = 0, end_s = 0;
  std::int32_t stage = 0;
  Stream stream = Stream::compute;
  EventKind kind = EventKind::forward;
  std::int32_t micro_batch = -1;  // -1: not per micro-batch
  std::int32_t chunk = -1;
  std::int32_t index = -1;  // bucket index (grad_reduce)
  bool blocking = false;    // send that held the sender's compute stream
  bool operator==(const SimEvent&) const = default;
};

struct StageStats {
  double end_s = 0;            // optimizer end
  double compute_s = 0;        // F/R/B/W kernels excluding their exposed comm
  double recompute_s = 0;      // of compute_s
  double tp_cp_s = 0;          // exposed TP/CP inside ops
  double ep_s = 0;             // exposed MoE all-to-alls inside ops
  double zero3_s = 0;          // exposed ZeRO-3 inside ops
  double send_blocked_s = 0;   // compute stream held by blocking sends
  double pipeline_wait_s = 0;  // idle waiting for activations / gradients (the bubble)
  double dp_wait_s = 0;        // idle waiting for gradient buckets or parameter gathers
  double optimizer_s = 0;
  [[nodiscard]] double busy_fraction() const {
    return end_s > 0 ? (compute_s + tp_cp_s + zero3_s + optimizer_s + ep_s) / end_s : 0.0;
  }
};

struct SimResult {
  double step_s = 0;                // last stage to finish its optimizer step
  std::int64_t critical_stage = 0;  // that stage (lowest index on ties)
  std::vector<StageStats> stages;
  std::vector<SimEvent> events;       // in completion order (deterministic)
  std::int64_t events_processed = 0;  // queue pops
  [[nodiscard]] const StageStats& critical() const { return stages[std::size_t(critical_stage)]; }
  // The critical stage's wait for activations and gradients over the step:
  // the simulated bubble (reported as "bubble_fraction"), not
  // ideal_bubble_fraction's formula nor the closed form's priced bubble.
  [[nodiscard]] double critical_wait_fraction() const { return step_s > 0 ? critical().pipeline_wait_s / step_s : 0.0; }
};

// Runs the schedule. Throws InputError("simulate", ...) for an inconsistent
// problem (sizes, negative or non-finite durations, a schedule that deadlocks).
[[nodiscard]] SimResult simulate(const PipelineProblem& problem);

// The problem for one configuration, priced by the analytical engine (layer
// and head costs, collectives, optimizer) exactly as evaluate() prices it.
// `ev` must be a structurally valid evaluation of (model, hw, pc, ts): its
// PricedPlan supplies the layer, head, ZeRO-3 and chunk figures.
// Approximations (stated in `planner simulate` output): W = half the backward
// GEMM time plus the gradient accumulation (dgrad and wgrad GEMMs have equal
// FLOPs); the head's backward is all B; gradients come out of a backward op
// uniformly over its duration; ZeRO-3 exposure per op follows the closed
// form's per-layer prefetch rule.
[[nodiscard]] PipelineProblem pipeline_problem(const ModelSpec& model, const HardwareProfile& hw,
                                               const ParallelConfig& pc, const TrainingSpec& ts, const Evaluation& ev,
                                               Schedule schedule);

// The schedule a configuration runs in evaluate(): interleaved when v > 1,
// GPipe when asked, 1F1B otherwise.
[[nodiscard]] Schedule default_sim_schedule(const ParallelConfig& pc);

}  // namespace planner
