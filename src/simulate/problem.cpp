// From one configuration to a PipelineProblem: every duration is the
// analytical engine's (layer_time, head_time, collective_cost, the optimizer
// formula), cut into the per-chunk ops the simulator schedules.
#include <algorithm>
#include <cmath>
#include <vector>

#include "planner/model/collectives.h"
#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/step_time.h"
#include "planner/simulate/simulate.h"

namespace planner {

Schedule default_sim_schedule(const ParallelConfig& pc) {
  if (pc.virtual_stages > 1) return Schedule::interleaved;
  return pc.schedule == Schedule::gpipe ? Schedule::gpipe : Schedule::one_f_one_b;
}

namespace {

// Pair of consecutive stages k, k+1 (mod p): ranks tp*cp*(distance) apart.
GroupPlacement hop_placement(const HardwareProfile& hw, const ParallelConfig& pc, std::int64_t k) {
  const std::int64_t distance = k + 1 < pc.pp ? 1 : pc.pp - 1;  // the wrap-around hop p-1 -> 0
  return placement(hw, 2, pc.tp * pc.cp * std::max<std::int64_t>(1, distance));
}

}  // namespace

PipelineProblem pipeline_problem(const ModelSpec& m, const HardwareProfile& hw, const ParallelConfig& pc_in,
                                 const TrainingSpec& ts, const Evaluation& ev, Schedule schedule) {
  const ParallelConfig pc = normalized(pc_in);
  const LayerTime lt = layer_time(m, hw, pc, ts);
  const HeadTime head = head_time(m, hw, pc, ts);
  const ParamCounts pcnt = count_params(m);
  const double t = double(pc.tp);

  PipelineProblem pr;
  pr.schedule = schedule;
  pr.p = pc.pp;
  pr.v = pc.virtual_stages;
  pr.m = ts.global_batch_sequences / (pc.dp * pc.micro_batch_size);
  pr.overlap_p2p = ts.overlap_p2p;
  pr.overlap_grad_reduce = ts.overlap_grad_reduce;
  pr.overlap_param_gather = ts.overlap_grad_reduce;

  const GroupPlacement wg = weight_sharing_group(hw, pc);
  const bool dp_reduce = wg.size > 1 && pc.zero_stage < 3;
  const bool zero3 = wg.size > 1 && pc.zero_stage >= 3;
  const Collective red = pc.zero_stage == 0 ? Collective::all_reduce : Collective::reduce_scatter;

  // ZeRO-3 per layer (the closed form's prefetch rule, step_time.cpp).
  double z3_ag = 0, z3_rs = 0;
  if (zero3) {
    const double layer_params = double(pcnt.per_layer) / t;
    z3_ag = collective_cost(hw, wg, Collective::all_gather, layer_params * ts.weight_bytes_per_param).total_s();
    z3_rs = collective_cost(hw, wg, Collective::reduce_scatter, layer_params * ts.grad_bytes_per_param).total_s();
  }

  pr.chunks.resize(std::size_t(pr.p * pr.v));
  pr.optimizer_s.resize(std::size_t(pr.p));
  pr.send_s.resize(std::size_t(pr.p));
  // Layer-equivalents as evaluate() counts them when it lays out the stages.
  const double per_layer = std::max(layer_step_s(lt, zero3_layer_comm(m, hw, pc, ts, lt)), 1e-30);
  const double extra_first = (head.embedding_fwd_s + head.embedding_bwd_s) / per_layer;
  const double extra_last = (head.output_fwd_s + head.output_bwd_s + head.output_tp_comm_s) / per_layer;
  for (std::int64_t s = 0; s < pr.p; ++s) {
    const std::vector<std::int64_t> layers = chunk_layers(ev.layout, s, pr.v, extra_first, extra_last);
    pr.optimizer_s[std::size_t(s)] = optimizer_time_s(hw, pc, ts, stage_params(m, ev.layout, s) / t);
    pr.send_s[std::size_t(s)] =
        pr.p > 1
            ? collective_cost(hw, hop_placement(hw, pc, s), Collective::send_recv, pp_send_bytes(m, pc, ts)).total_s()
            : 0.0;
    for (std::int64_t c = 0; c < pr.v; ++c) {
      ChunkCost& cc = pr.chunks[std::size_t(s * pr.v + c)];
      const std::int64_t n = layers[std::size_t(c)];
      const double nd = double(n);
      const bool embedding = s == 0 && c == 0;
      const bool output = s == pr.p - 1 && c == pr.v - 1;
      cc.layers = std::max<std::int64_t>(1, n);
      cc.forward_tp_cp_s = nd * (lt.tp_comm_fwd_s + lt.cp_comm_fwd_s) + (output ? head.output_tp_comm_s : 0.0);
      cc.forward_s = nd * lt.compute_fwd_s() + cc.forward_tp_cp_s + (embedding ? head.embedding_fwd_s : 0.0) +
                     (output ? head.output_fwd_s : 0.0);
      cc.recompute_tp_s = nd * lt.tp_comm_recompute_s;
      cc.recompute_s = nd * lt.recompute_s + cc.recompute_tp_s;
      cc.backward_tp_cp_s = nd * (lt.tp_comm_bwd_s + lt.cp_comm_bwd_s);
      cc.backward_s = nd * lt.compute_bwd_s() + cc.backward_tp_cp_s + (embedding ? head.embedding_bwd_s : 0.0) +
                      (output ? head.output_bwd_s : 0.0);
      // dgrad and wgrad GEMMs have equal FLOPs: W is half the backward GEMMs
      // plus the gradient accumulation (Qi et al. 2023 §2 count T_B = T_W).
      cc.weight_grad_s = nd * (0.5 * lt.gemm_bwd_s + lt.grad_accumulate_s);
      if (zero3 && n > 0) {
        cc.forward_zero3_s = z3_ag + nd * std::max(0.0, z3_ag - lt.fwd_s());
        cc.backward_zero3_s = nd * std::max(0.0, z3_ag + z3_rs - lt.bwd_s());
        cc.zero3_forward_total_s = nd * z3_ag;
        cc.zero3_backward_total_s = nd * (z3_ag + z3_rs);
        cc.forward_s += cc.forward_zero3_s;
        cc.backward_s += cc.backward_zero3_s;
      }
      // Parameters of the chunk, per GPU: its layers plus the embedding /
      // output layer it carries (stage_params' rules).
      double params = nd * double(pcnt.per_layer);
      if (embedding) params += double(pcnt.embedding + pcnt.position);
      if (output)
        params +=
            double(pcnt.output + pcnt.final_norm) + (m.tied_embeddings && pr.p > 1 ? double(pcnt.embedding) : 0.0);
      params /= t;
      if (dp_reduce && params > 0) {
        // Megatron-LM DDP buckets of kGradBucketParams, the last one smaller
        // (at most 4096 buckets per chunk: larger ones for huge chunks).
        const double bucket = std::max(kGradBucketParams, params / 4096.0);
        double left = params;
        while (left > 0) {
          const double b = std::min(left, bucket);
          cc.grad_buckets_s.push_back(collective_cost(hw, wg, red, b * ts.grad_bytes_per_param).total_s());
          left -= b;
        }
        if (pc.zero_stage >= 1)
          cc.param_gather_s =
              collective_cost(hw, wg, Collective::all_gather, params * ts.weight_bytes_per_param).total_s();
      }
    }
  }
  return pr;
}

}  // namespace planner
