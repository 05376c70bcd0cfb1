// From one configuration to a PipelineProblem: every duration is the
// analytical engine's (the evaluation's PricedPlan: layer and head costs,
// ZeRO-3 traffic, chunk layers and parameters; collective_cost, the optimizer
// formula), cut into the per-chunk ops the simulator schedules.
#include <algorithm>
#include <cmath>
#include <vector>

#include "planner/model/collectives.h"
#include "planner/model/priced_plan.h"
#include "planner/model/recompute_modules.h"
#include "planner/model/selective_policy.h"
#include "planner/model/step_time.h"
#include "planner/simulate/simulate.h"

namespace planner {

Schedule default_sim_schedule(const ParallelConfig& pc) {
  // normalized() settles interleaving (iff v > 1); ZB-H1 is priced, so run, as 1F1B.
  const Schedule s = normalized(pc).schedule;
  return s == Schedule::zb_h1 ? Schedule::one_f_one_b : s;
}

double PipelineProblem::stage_work_s(std::int64_t stage) const {
  double x = 0;
  for (std::int64_t c = 0; c < chunks_per_stage; ++c) {
    const ChunkCost& cc = cost(stage, c);
    x += cc.forward_s + cc.recompute_s + cc.backward_s;
  }
  return x;
}

std::int64_t PipelineProblem::heaviest_stage() const {
  std::int64_t heavy = 0;
  for (std::int64_t k = 1; k < stages; ++k)
    if (stage_work_s(k) > stage_work_s(heavy)) heavy = k;
  return heavy;
}

namespace {

// Pair of consecutive stages k, k+1 (mod p): ranks tp*cp*(distance) apart.
GroupPlacement hop_placement(const HardwareProfile& hw, const ParallelConfig& pc, std::int64_t k) {
  const std::int64_t distance = k + 1 < pc.pp ? 1 : pc.pp - 1;  // the wrap-around hop p-1 -> 0
  const std::int64_t block = pc.tp * pc.cp;                      // ranks of one stage (TP, CP innermost)
  GroupPlacement g = placement(hw, 2, block * std::max<std::int64_t>(1, distance));
  // A hop whose two stages sit in different scale-up domains crosses the
  // network whatever its stride (p2p_channels.cpp, send_recv_bandwidth).
  const std::int64_t domain = hw.tiers.empty() ? 1 : std::max<std::int64_t>(1, hw.tiers[0].size);
  const std::int64_t from = k * block, to = (k + 1 < pc.pp ? k + 1 : 0) * block;
  if (hw.tiers.size() > 1 && from / domain != to / domain) g.stride = std::max(g.stride, domain);
  // It sends on the PP group's communicator (Megatron-LM core_v0.19.0
  // p2p_communication.py: P2POp / isend on the pipeline group), whose ranks
  // and GPUs a node set NCCL's p2p channels (p2p_channels.cpp, send_recv_bandwidth),
  // as the closed form's pipeline send/recv prices them.
  const GroupPlacement comm = placement(hw, pc.pp, block);
  g.comm_size = comm.size;
  g.comm_members_per_domain = comm.members_per_domain;
  return g;
}

}  // namespace

PipelineProblem pipeline_problem(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc_in,
                                 const TrainingSpec& ts_in, const Evaluation& ev, Schedule schedule) {
  const TrainingSpec ts = training_for(ts_in, ev);  // the search's per-layout recompute modules and overlap
  const ParallelConfig pc = normalized(pc_in);
  const PricedPlan& plan = ev.plan;
  const LayerTime& lt = plan.layer;
  const HeadTime& head = plan.head;
  const Zero3LayerComm& z3 = plan.zero3;
  const double t = double(pc.tp);

  PipelineProblem pr;
  pr.schedule = schedule;
  pr.stages = pc.pp;
  pr.chunks_per_stage = pc.virtual_stages;
  pr.micro_batches = plan.micro_batches;
  pr.overlap_p2p = overlaps_p2p(ts, pc);
  pr.overlap_grad_reduce = ts.overlap_grad_reduce;
  pr.overlap_param_gather = ts.overlap_grad_reduce;

  const GroupPlacement& wg = plan.weight_group;
  const Collective red = pc.zero_stage == 0 ? Collective::all_reduce : Collective::reduce_scatter;

  pr.chunks.resize(std::size_t(pr.stages * pr.chunks_per_stage));
  pr.optimizer_s.resize(std::size_t(pr.stages));
  pr.send_s.resize(std::size_t(pr.stages));
  for (std::int64_t s = 0; s < pr.stages; ++s) {
    const std::vector<ChunkPlan> chunks = plan.chunks(s);
    // The optimizer op also carries the contention of the stage's hidden DP
    // traffic, as the closed form's tail does (dp_tail_contention_s).
    pr.optimizer_s[std::size_t(s)] = stage_optimizer_s(hw, pc, ts, plan, s) + dp_tail_contention_s(hw, pc, ts, plan, s);
    pr.send_s[std::size_t(s)] = pr.stages > 1 ? collective_cost(hw, hop_placement(hw, pc, s), Collective::send_recv,
                                                                pp_send_bytes(model, pc, ts))
                                                    .total_s()
                                              : 0.0;
    for (std::int64_t c = 0; c < pr.chunks_per_stage; ++c) {
      ChunkCost& cc = pr.chunks[std::size_t(s * pr.chunks_per_stage + c)];
      const ChunkPlan& chunk = chunks[std::size_t(c)];
      const std::int64_t n = chunk.layers;
      const double nd = double(n);
      const bool embedding = chunk.embedding;
      const bool output = chunk.output;
      cc.layers = std::max<std::int64_t>(1, n);
      cc.forward_tp_cp_s = nd * (lt.tp_comm_fwd_s + lt.cp_comm_fwd_s) + (output ? head.output_tp_comm_s : 0.0);
      // Contention (contention.h) slows the kernels themselves: it is compute time.
      cc.forward_s = nd * (lt.compute_fwd_s() + lt.contention_fwd_s) + cc.forward_tp_cp_s +
                     (embedding ? head.embedding_fwd_s : 0.0) + (output ? head.output_fwd_s : 0.0);
      cc.recompute_tp_s = nd * lt.tp_comm_recompute_s;
      cc.recompute_s = nd * lt.recompute_s + cc.recompute_tp_s;
      cc.backward_tp_cp_s = nd * (lt.tp_comm_bwd_s + lt.cp_comm_bwd_s);
      cc.backward_s = nd * (lt.compute_bwd_s() + lt.contention_bwd_s) + cc.backward_tp_cp_s +
                      (embedding ? head.embedding_bwd_s : 0.0) + (output ? head.output_bwd_s : 0.0);
      if (lt.ep_comm_total_s > 0) {
        // MoE: the exposed expert all-to-alls (moe_cost.h) inside F and B,
        // and under full recomputation the forward's again inside R (part of
        // lt.recompute_s).
        cc.forward_ep_s = nd * lt.ep_comm_fwd_s;
        cc.backward_ep_s = nd * lt.ep_comm_bwd_s;
        cc.forward_ep_unpaired_s = nd * lt.ep_unpaired_fwd_s();
        cc.backward_ep_unpaired_s = nd * lt.ep_unpaired_bwd_s();
        cc.recompute_ep_s =
            std::max(full_recompute_share(model, pc, ts), recomputed_a2a_share(pc, ts)) * nd * lt.ep_comm_fwd_s;
        cc.forward_s += cc.forward_ep_s;
        cc.backward_s += cc.backward_ep_s;
      }
      // dgrad and wgrad GEMMs have equal FLOPs: W is half the backward GEMMs
      // plus the gradient accumulation (Qi et al. 2023 §2 count T_B = T_W).
      cc.weight_grad_s = nd * (0.5 * lt.gemm_bwd_s + lt.grad_accumulate_s);
      if (plan.per_layer_sharding && n > 0) {
        // The closed form's per-layer prefetch rule (zero3_layer_comm), with
        // the first layer's gather of each chunk exposed (ZeRO-2: no gathers,
        // the reduce-scatters only).
        // The staging copies run on the compute stream, exposed as in the closed form.
        cc.forward_zero3_s = z3.all_gather_s + nd * (z3.exposed_fwd_s + z3.staging_fwd_s);
        cc.backward_zero3_s = nd * (z3.exposed_bwd_s + z3.staging_bwd_s);
        cc.zero3_forward_total_s = nd * z3.all_gather_s;
        cc.zero3_backward_total_s = nd * z3.bwd_comm_s();
        cc.forward_s += cc.forward_zero3_s + nd * z3.contention_fwd_s;
        cc.backward_s += cc.backward_zero3_s + nd * z3.contention_bwd_s;
      }
      // Parameters of the chunk, per GPU; MoE: the routed experts' EP x ETP
      // shard apart, reduced and gathered over the EDP group (moe_cost.h).
      const double params = chunk.local_non_expert_params(pc.tp);
      const double expert = chunk.expert_params / double(plan.expert_shards);
      if (plan.grads_reduced && params > 0) {
        // Megatron-Core DDP buckets of grad_bucket_params(DP x CP) in backward
        // order (at most 4096 per chunk: larger ones for huge chunks); the
        // input embedding, the backward's last gradient, ends the first chunk
        // of stage 0 in a bucket of its own (step_time.h, as the closed form).
        const double bucket = std::max(grad_bucket_params(wg.size), params / 4096.0);
        const double embedding_params = chunk.embedding ? std::min(params, double(plan.params.embedding) / t) : 0.0;
        const double last = embedding_params >= bucket ? embedding_params : 0.0;
        // Hybrid sharding: a bucket's shard then all-reduced over the replicas.
        const auto reduce_s = [&](double bucket_params) {
          const double bytes = bucket_params * reduce_bytes_per_param(ts);
          return collective_cost(hw, wg, red, bytes).total_s() + replica_all_reduce(hw, plan, bytes).total_s();
        };
        std::vector<double> dense;
        double left = params - last;
        while (left > 0) {
          const double b = std::min(left, bucket);
          dense.push_back(reduce_s(b));
          left -= b;
        }
        if (last > 0) dense.push_back(reduce_s(last));
        // MoE: the routed experts' buffer, in buckets of the same size
        // (Megatron-Core DDP sizes every buffer's buckets alike), reduced over
        // EDP as the closed form's tail prices it (reduce_bytes_per_param).
        std::vector<double> experts;
        const double expert_bucket = std::max(bucket, expert / 4096.0);
        for (double e = expert; e > 0; e -= expert_bucket)
          experts.push_back(
              collective_cost(hw, plan.expert_dp_group, red, std::min(e, expert_bucket) * reduce_bytes_per_param(ts))
                  .total_s());
        // Each list comes out of the backward uniformly; merged by readiness,
        // an expert bucket first on a tie (the input embedding stays last).
        std::size_t i = 0, j = 0;
        while (i < dense.size() || j < experts.size()) {
          const double fd = i < dense.size() ? double(i + 1) / double(dense.size()) : 2.0;
          const double fe = j < experts.size() ? double(j + 1) / double(experts.size()) : 2.0;
          const bool take_expert = fe <= fd;
          cc.grad_buckets_s.push_back(take_expert ? experts[j] : dense[i]);
          cc.grad_bucket_ready.push_back(std::min(fd, fe));
          ++(take_expert ? j : i);
        }
      }
      if (plan.params_gathered && params > 0) {
        cc.param_gather_s = collective_cost(hw, wg, Collective::all_gather, params * ts.weight_bytes_per_param).total_s();
        if (expert > 0)
          cc.param_gather_s += collective_cost(hw, plan.expert_dp_group, Collective::all_gather,
                                               expert * ts.weight_bytes_per_param)
                                   .total_s();
        cc.param_gather_s *= weight_gather_rounds(ts, plan.stage_expert_params(s) > 0);  // as dp_tail.cpp
      }
    }
  }
  return pr;
}

}  // namespace planner
