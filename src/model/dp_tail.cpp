#include "model/dp_tail.h"

#include <algorithm>

#include "model/collective_links.h"
#include "planner/model/contention.h"
#include "planner/model/step_time.h"

namespace planner {
namespace detail {
namespace {

// Data parallelism over DP x CP (ranks holding the same weights): a stage
// reduces its own gradients and steps its own optimizer after its last
// backward. ZeRO-0: all-reduce; ZeRO-1 (Megatron distributed optimizer):
// reduce-scatter the accumulated gradients once; ZeRO-2 reduce-scatters every
// micro-batch instead (zero3_terms). ZeRO-1/2 then all-gather the updated
// bf16 weights. Buckets of max(40M, 1M x DP x CP) parameters (Megatron-Core's
// default, step_time.h; Li et al. 2020): the last bucket, which on stage 0
// holds the input embedding, starts reducing only when the backward ends, so
// it is always exposed; the rest hides behind the last micro-batch's backward.
// The weight group's reduction and gather as functions of size, once per step
// for every stage's tail (collectives.h, CollectiveCurve): copies of the
// per-thread memo's curves (collective_links.h collective_curve; the next
// collective_cost may replace the memo's), not built again every step.
struct TailCurves {
  Collective red;
  CollectiveCurve reduce, gather;
  TailCurves(const HardwareProfile& hw, const ParallelConfig& pc, const PricedPlan& plan)
      : red(pc.zero_stage == 0 ? Collective::all_reduce : Collective::reduce_scatter),
        reduce(detail::collective_curve(hw, plan.weight_group, red)),
        gather(detail::collective_curve(hw, plan.weight_group, Collective::all_gather)) {}
};

StageTail stage_tail(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                     const PricedPlan& plan, const TailCurves& curves, std::int64_t r) {
  const LayerTime& lt = plan.layer;
  const GroupPlacement& wg = plan.weight_group;
  StageTail tl;
  tl.stage = r;
  const double layers_r = double(plan.layout.layers_on(r));
  // MoE: the routed experts' gradients reduce over the EDP group, after the
  // rest's over DP x CP (Megatron-Core DDP keeps expert parameters in their
  // own buckets, reduced over the expert data-parallel group, in the same
  // reduce dtype: grad_reduce_in_fp32 sets every buffer's grad_dtype).
  const double expert_local = plan.stage_expert_params(r) / double(plan.expert_shards);
  const double params_local = plan.local_non_expert_params(r, pc.tp);
  // The last backward, a cool-down pass: with --overlap-a2a its all-to-alls
  // are exposed whole (LayerTime::ep_unpaired_bwd_s), as the first forward's.
  const double bwd_window = ts.overlap_grad_reduce ? layers_r * (lt.bwd_s() + lt.ep_unpaired_bwd_s()) : 0.0;
  if (plan.grads_reduced) {
    const double grad_bytes = params_local * reduce_bytes_per_param(ts);  // on the wire
    const Collective red = curves.red;
    const CollectiveCost reduce = curves.reduce.at(grad_bytes);
    // Hybrid sharding: each bucket's shard then all-reduced over the replicas.
    const CollectiveCost replica = replica_all_reduce(hw, plan, grad_bytes);
    tl.replica_s = replica.total_s();
    tl.reduce_s = reduce.total_s() + tl.replica_s;
    if (expert_local > 0)
      tl.reduce_s +=
          collective_cost(hw, plan.expert_dp_group, red, expert_local * reduce_bytes_per_param(ts)).total_s();
    tl.reduce_cost = reduce;
    const double embedding_local = r == 0 ? double(plan.params.embedding) / double(pc.tp) : 0.0;
    const double bucket = last_grad_bucket_params(params_local, embedding_local, wg.size) * reduce_bytes_per_param(ts);
    double t_bucket = curves.reduce.at(bucket).total_s() + replica_all_reduce(hw, plan, bucket).total_s();
    // MoE: the routed experts' buffer has buckets of the same size (Megatron-Core
    // DDP sizes every buffer's buckets alike), its last also ready only as the
    // backward ends; reduced over EDP after the dense one, as the simulator's
    // single DP stream orders them (sharing the NICs either way).
    if (expert_local > 0)
      t_bucket += collective_cost(hw, plan.expert_dp_group, red,
                                  std::min(expert_local, grad_bucket_params(wg.size)) * reduce_bytes_per_param(ts))
                      .total_s();
    tl.dp_exposed_s = ts.overlap_grad_reduce ? std::max(tl.reduce_s - bwd_window, t_bucket) : tl.reduce_s;
    // The hidden part, split between the shard's reduction and the replicas'
    // all-reduce in proportion to their times.
    const double hidden = tl.reduce_s - tl.dp_exposed_s;
    const double replica_part = tl.reduce_s > 0 ? replica.total_s() / tl.reduce_s : 0.0;
    tl.contention_s +=
        contention_s(hw, wg, red, reduce, hidden * (1.0 - replica_part), lt.bwd_s(), lt.memory_bound_bwd_s()) +
        contention_s(hw, plan.replica_group, Collective::all_reduce, replica, hidden * replica_part, lt.bwd_s(),
                     lt.memory_bound_bwd_s());
    tl.window_s = bwd_window;
    tl.grad_bytes = grad_bytes;
  }
  if (plan.params_gathered) {
    const CollectiveCost gather = curves.gather.at(params_local * ts.weight_bytes_per_param);
    tl.gather_s = gather.total_s();
    if (expert_local > 0)
      tl.gather_s +=
          collective_cost(hw, plan.expert_dp_group, Collective::all_gather, expert_local * ts.weight_bytes_per_param)
              .total_s();
    tl.gather_s *= weight_gather_rounds(ts, expert_local > 0);  // a MoE stage: two chained optimizers
    tl.gather_cost = gather;
    const double fwd_window = ts.overlap_grad_reduce ? layers_r * (lt.fwd_s() + lt.ep_unpaired_fwd_s()) : 0.0;
    const double gather_exposed = std::max(tl.gather_s - fwd_window, 0.0);
    tl.dp_exposed_s += gather_exposed;
    tl.contention_s += contention_s(hw, wg, Collective::all_gather, gather, tl.gather_s - gather_exposed, lt.fwd_s(),
                                    lt.memory_bound_fwd_s());
  }
  tl.optimizer_s = stage_optimizer_s(hw, pc, ts, plan, r);
  return tl;
}

// Stage r's last backward ends before stage 0's by the drain that follows it:
// the last micro-batch's gradient still passes back through stages r-1 .. 0,
// (sum_{j<r} bwd_j)/v (one chunk each with interleaving). A lower bound of
// the lead (a busier stage below r only starts later), so the tail is never
// under-charged; the event simulation (`planner simulate`) times each
// stage's tail exactly.
double stage_lead_s(const PricedPlan& plan, std::int64_t r) {
  if (r == 0) return 0.0;
  return (double(plan.layout.layers_before(r)) * (plan.layer.bwd_s() + plan.layer.ep_unpaired_bwd_s()) +
          plan.head.embedding_bwd_s) /
         double(plan.virtual_stages);
}

}  // namespace

// The step ends with the latest of end_r + tail_r over the stages; among
// stages of one kind the one nearest stage 0 has the shortest lead
// (PricedPlan::state_distinct_stages: a MoE model's kinds count their MoE
// layers, whose expert gradients reduce over EDP). Stage 0 has no lead, so
// the tail is at least its own.
StageTail critical_tail(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                        const PricedPlan& plan) {
  const TailCurves curves(hw, pc, plan);
  StageTail tail = stage_tail(hw, pc, ts, plan, curves, 0);
  for (std::int64_t r : plan.state_distinct_stages()) {
    if (r == 0) continue;
    StageTail tl = stage_tail(hw, pc, ts, plan, curves, r);
    tl.lead_s = stage_lead_s(plan, r);
    if (tl.end_s() > tail.end_s()) tail = tl;
  }
  return tail;
}

TailTerms split_tail(const StageTail& tail, const PricedPlan& plan, Explain* ex) {
  TailTerms t;
  t.optimizer_s = std::max(0.0, tail.optimizer_s - tail.lead_s);
  const double rest = tail.end_s() - t.optimizer_s;
  t.contention_s = std::clamp(rest, 0.0, tail.contention_s);
  t.dp_comm_s = rest - t.contention_s;
  if (ex && t.contention_s > 0)
    note_step(ex, "overlap contention (DP tail)",
              "share * hidden part of the DP reduction (behind the last backward) and of the weight all-gather "
              "(behind the first forward), share as for the per-layer contention",
              "NCCL one CTA (SM) per channel (src/enqueue.cc, NVIDIA/nccl#689); Lee et al. 2025 (arXiv:2507.03114); "
              "roofline for HBM",
              {{"stage", double(tail.stage)}, {"contention_s", tail.contention_s}}, t.contention_s);
  if (ex && (plan.grads_reduced || plan.params_gathered))
    note_step(
        ex, "DP gradient reduction (exposed)",
        "max over stages r of [max(reduce(grads_r) - backward of last micro-batch, last bucket: max(40M, 1M*DP*CP) "
        "params, stage 0: at least the input embedding) "
        "(+ ZeRO-1/2 weight all-gather, twice on a MoE stage without overlap: two chained distributed optimizers) "
        "+ Adam_r - lead_r], lead_r = (sum_{j<r} bwd_j)/v; less the optimizer line",
        ("Li et al. 2020 (PyTorch DDP buckets); Megatron-LM distributed optimizer; bucket size and order: "
         "Megatron-Core "
         "core_v0.19.0 distributed_data_parallel_config.py bucket_size, distrib_optimizer.py (params in backward "
         "order); drain lead: approximation, checked "
         "by planner simulate; reduction as NCCL runs it (NVIDIA/nccl src/graph/tuning.cc, src/enqueue.cc; NVLS "
         "tree at medium sizes: docs/cost_model.md Known gaps; LL/LL128 rings across nodes pay the network hop "
         "every step: NVIDIA/nccl-tests#123): " +
         describe(tail.reduce_cost) +
         (plan.params_gathered ? ", weight all-gather: " + describe(tail.gather_cost) : std::string()))
            .c_str(),
        {{"stage", double(tail.stage)},
         {"grad_bytes", tail.grad_bytes},
         {"group", double(plan.weight_group.size)},
         {"reduce_s", tail.reduce_s},
         {"window_s", tail.window_s},
         {"lead_s", tail.lead_s}},
        t.dp_comm_s);
  if (ex && plan.replica_group.size > 1)
    note_step(ex,
              plan.per_layer_sharding ? "hybrid sharding: replica all-reduce (per layer and micro-batch)"
                                      : "hybrid sharding: replica all-reduce (per step, stage of the tail)",
              "states sharded over the shard group of S = --zero-shard ranks, replicated over R = DP*CP/S groups; "
              "ZeRO-1: each bucket reduce-scattered over S, then its 1/S all-reduced over the R replicas (part of "
              "the DP reduction above); ZeRO-2/3: each layer's reduce-scatter output all-reduced over R every "
              "micro-batch, hidden with the backward's traffic (part of the ZeRO-2/3 line)",
              "Zhao et al. 2023 (PyTorch FSDP, arXiv:2304.11277) §3.2.2; pytorch/pytorch "
              "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_reduce (all_reduce on the "
              "replicate group); Megatron-LM --num-distributed-optimizer-instances (inter-instance all-reduce)",
              {{"shard", double(plan.weight_group.size)},
               {"replicas", double(plan.replica_group.size)},
               {"replica_nodes", double(plan.replica_group.domains)}},
              plan.per_layer_sharding ? plan.zero3.replica_all_reduce_s : tail.replica_s);
  if (ex && plan.expert_params_per_layer > 0)
    note_step(ex, "expert gradients (MoE): reduced over EDP",
              "routed-expert grads of the stage / (EP*ETP) reduced (and ZeRO-1/2 gathered) over the EDP group, after "
              "the rest's over DP x CP; their optimizer state sharded over EDP",
              "Megatron-Core DDP expert buckets (expert data-parallel group); Megatron-LM theoretical_memory_usage.py",
              {{"stage", double(tail.stage)},
               {"expert_params_local", plan.stage_expert_params(tail.stage) / double(plan.expert_shards)},
               {"edp", double(plan.expert_dp_group.size)},
               {"edp_nodes", double(plan.expert_dp_group.domains)}},
              tail.reduce_s, "s");
  if (ex)
    note_step(ex, "optimizer step (Adam, memory bound)",
              "[(3g + 28 + w) bytes per local parameter (/ DP*CP with ZeRO >= 1) + gradient buffer (4g - g/N) "
              "per local parameter (ZeRO 0-2, DP*CP > 1: NaN-check norm, 1/DP scaling, zeroing the whole "
              "buffer)] / (HBM bandwidth * efficiency), of the stage that ends the step, less the part of its lead "
              "over stage 0 its DP traffic leaves; 104 bytes and no buffer where the trainer loops over the "
              "parameters one kernel per operation (HBM only, its launches not counted: an approximation)",
              "Megatron-LM MixedPrecisionOptimizer.step (grad norm, Adam, bf16 copy, zeroing); Megatron-Core "
              "param_and_grad_buffer.py start_grad_sync (check_for_nan_in_grad, gradient_scaling_factor), "
              "zero_grad_buffer; Composer v0.17.2 composer/optim/decoupled_weight_decay.py adamw (the loop) and "
              "torch FSDP1 clip_grad_norm_",
              {{"stage", double(tail.stage)}, {"adam_s", tail.optimizer_s}, {"lead_s", tail.lead_s}}, t.optimizer_s);
  return t;
}

}  // namespace detail

// step_time.h
double dp_tail_contention_s(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                            const PricedPlan& plan, std::int64_t stage) {
  return detail::stage_tail(hw, pc, ts, plan, detail::TailCurves(hw, pc, plan), stage).contention_s;
}

}  // namespace planner
