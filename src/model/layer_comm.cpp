// The TP and CP communication of one layer (layer_parts.h): collectives placed
// on the hardware's tiers, exposed or overlapped with the layer's kernels.
#include <algorithm>
#include <string>

#include "model/layer_parts.h"
#include "planner/model/collectives.h"
#include "planner/model/contention.h"
#include "planner/model/straggler.h"

namespace planner::layer_detail {

namespace {

// --- Tensor parallelism (tp > 1): per layer 2 all-reduces forward and 2
// backward of the n*h activation; with SP each becomes all-gather +
// reduce-scatter of the same volume (Korthikanti et al. 2022 §4.2.2). Not
// overlapped with compute.
// Transformer Engine userbuffers defaults (transformer_engine/pytorch/module/
// base.py, initialize_ub get_default_config), which Megatron-LM uses without
// a --tp-comm-overlap-cfg: the forward all-gathers run as a ring exchange in
// tp chunks on 1 SM; the forward reduce-scatters pipelined in 4 chunks on 16
// SMs, the GEMM beside them on the others (set_sm_margin); the backward's
// collectives in bulk beside a backward GEMM on 16 SMs.
constexpr double kRingExchangeSms = 1, kPipelineSms = 16, kPipelineSplits = 4, kBulkSms = 16;

// One TP collective of `comm_s` overlapped with a GEMM of `gemm_s` in
// `splits` chunks (0: in bulk, one piece beside the whole GEMM): the first chunk cannot overlap, the rest hides behind the
// GEMM up to its length; the GEMM loses `sms` of the compute units while the
// collective runs, or all the GEMM long with an SM margin.
struct TpOverlap {
  double exposed_s = 0, contention_s = 0;
};
TpOverlap overlap_tp(const HardwareProfile& hw, double comm_s, double gemm_s, double splits, double sms, bool margin) {
  TpOverlap o;
  o.exposed_s = std::max(splits > 0 ? comm_s / splits : 0.0, comm_s - gemm_s);  // splits 0: bulk, no chunking
  const double share = hw.efficiency.compute_units > 0 ? std::min(1.0, sms / double(hw.efficiency.compute_units)) : 0;
  o.contention_s = (margin ? gemm_s * share / (1.0 - std::min(share, 0.5)) : (comm_s - o.exposed_s) * share);
  return o;
}

}  // namespace

void add_tp_comm(LayerTime& lt, const Dims& d, const HardwareProfile& hw, const ParallelConfig& pc,
                 const TrainingSpec& ts, const GemmTimes& gemm_fwd, Explain* ex) {
  const GroupPlacement g = placement(hw, pc.tp, 1);
  const double bytes = kAct * d.n * d.h;
  // Only the collectives the layout runs, each priced once (this is on the search's hot path).
  const bool sp = pc.sequence_parallel;
  const CollectiveCost ag_cost = sp ? collective_cost(hw, g, Collective::all_gather, bytes) : CollectiveCost{};
  const CollectiveCost rs_cost = sp ? collective_cost(hw, g, Collective::reduce_scatter, bytes) : CollectiveCost{};
  const CollectiveCost ar_cost = sp ? CollectiveCost{} : collective_cost(hw, g, Collective::all_reduce, bytes);
  const double ag = ag_cost.total_s(), rs = rs_cost.total_s();
  const double per_pair = sp ? ag + rs : ar_cost.total_s();
  lt.tp_comm_fwd_s = 2.0 * per_pair;
  lt.tp_comm_bwd_s = 2.0 * per_pair;
  if (hw.tiers[0].topology == Topology::torus && !g.crosses_domains() && pc.sequence_parallel) {
    // XLA on a TPU torus: MaxText's TPU scripts (MaxText/configs/v5e/*.sh) set
    // --xla_tpu_enable_async_collective_fusion(_fuse_all_gather, _multiple_steps)
    // and --xla_tpu_overlap_compute_collective_tc, under which XLA decomposes
    // each TP all-gather / reduce-scatter into tp - 1 neighbour permutes
    // interleaved with the einsum that consumes or produces it (Wang et al.
    // 2023, "Overlap Communication with Dependent Computation via
    // Decomposition in Large Deep Learning Models", ASPLOS'23; the JAX scaling
    // book's "collective matmul"). Priced as the overlap above in tp chunks,
    // forward and backward; ICI transfers run on DMA engines and take no
    // compute units, so no SM contention (collective_channels 0).
    const double k = 1.0 + straggler_slowdown(hw, ts.num_gpus);
    lt.tp_comm_fwd_s = 0;
    for (std::size_t i = 0; i < 4; ++i)
      lt.tp_comm_fwd_s += overlap_tp(hw, i == 0 || i == 2 ? ag : rs, k * gemm_fwd[i], d.t, 0.0, false).exposed_s;
    lt.tp_comm_bwd_s = overlap_tp(hw, 2.0 * per_pair + 2.0 * ag, lt.gemm_bwd_s, d.t, 0.0, false).exposed_s;
    if (pc.recompute == Recompute::full) lt.tp_comm_recompute_s = lt.tp_comm_fwd_s;
    if (ex)
      note_step(ex, "TP communication per layer (fwd, XLA collective matmul)",
                "sum over the 4 GEMMs of max(comm/tp, comm - GEMM); bwd: the same against the backward GEMMs",
                "MaxText/configs/v5e/*.sh LIBTPU_INIT_ARGS (async collective fusion); Wang et al. 2023 (ASPLOS)",
                {{"all_gather_s", ag}, {"reduce_scatter_s", rs}, {"tp", d.t}}, lt.tp_comm_fwd_s, "s");
    return;
  }
  if (ts.tp_comm_overlap && pc.sequence_parallel) {
    // Forward: all-gather before QKV and FFN-in (ring exchange), reduce-scatter
    // after O and FFN-out (pipelined); backward: the same volume plus the
    // norm-output re-gathers, in bulk beside the backward GEMMs.
    const double k = 1.0 + straggler_slowdown(hw, ts.num_gpus);  // the GEMMs as stretch_for_slowest_chip left them
    lt.tp_comm_fwd_s = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const bool gather = i == 0 || i == 2;
      const TpOverlap o = gather ? overlap_tp(hw, ag, k * gemm_fwd[i], d.t, kRingExchangeSms, false)
                                 : overlap_tp(hw, rs, k * gemm_fwd[i], kPipelineSplits, kPipelineSms, true);
      lt.tp_comm_fwd_s += o.exposed_s;
      lt.contention_fwd_s += o.contention_s;
    }
    const TpOverlap b = overlap_tp(hw, 2.0 * per_pair + 2.0 * ag, lt.gemm_bwd_s, 0.0, kBulkSms, false);
    lt.tp_comm_bwd_s = b.exposed_s;
    lt.contention_bwd_s += b.contention_s;
    if (pc.recompute == Recompute::full) lt.tp_comm_recompute_s = lt.tp_comm_fwd_s;
    if (ex)
      note_step(ex, "TP communication per layer (fwd, overlapped)",
                "sum over the 4 GEMMs of max(comm/splits, comm - GEMM); splits tp (ring-exchange all-gather, 1 SM), "
                "4 (pipelined reduce-scatter, 16 SMs of margin); bwd in bulk beside the backward GEMMs (16 SMs)",
                "Megatron-LM --tp-comm-overlap; Transformer Engine userbuffers defaults (pytorch/module/base.py)",
                {{"all_gather_s", ag}, {"reduce_scatter_s", rs}, {"contention_fwd_s", lt.contention_fwd_s}},
                lt.tp_comm_fwd_s, "s");
    return;
  }
  if (pc.sequence_parallel) {
    // SP keeps only the sequence-sharded norm outputs, so the backward
    // all-gathers them again for the QKV and FFN-in weight gradients
    // (Korthikanti et al. 2022 §4.2.2).
    lt.tp_comm_bwd_s += 2.0 * ag;
  }
  if (ts.tp_bwd_overlap) {
    // The column-parallel layers (QKV, FFN-in) launch their backward
    // collectives asynchronously beside their own GEMMs (TrainingSpec::
    // tp_bwd_overlap): without SP the input-gradient all-reduce beside the
    // weight-gradient GEMM; with SP the re-gather beside the input-gradient
    // GEMM and the reduce-scatter beside the weight-gradient GEMM, while the
    // row-parallel layers' gradient all-gathers stay exposed. Each backward
    // GEMM has its forward GEMM's FLOPs. What hides slows the GEMM
    // (contention.h).
    const double k = 1.0 + straggler_slowdown(hw, ts.num_gpus);
    lt.tp_comm_bwd_s = pc.sequence_parallel ? 2.0 * ag : 0.0;
    lt.tp_comm_bwd_mlp_s = pc.sequence_parallel ? ag : 0.0;
    bool mlp = false;
    const auto beside = [&](Collective c, const CollectiveCost& cost, double gemm_s) {
      const double comm_s = cost.total_s(), exposed = std::max(0.0, comm_s - gemm_s);
      const double slowed = contention_s(hw, g, c, cost, comm_s - exposed, gemm_s, 0.0);
      lt.tp_comm_bwd_s += exposed;
      lt.contention_bwd_s += slowed;
      if (mlp) lt.tp_comm_bwd_mlp_s += exposed, lt.tp_contention_bwd_mlp_s += slowed;
    };
    for (const std::size_t i : {std::size_t(0), std::size_t(2)}) {
      const double gemm_s = k * gemm_fwd[i];
      mlp = i == 2;
      if (sp) {
        beside(Collective::all_gather, ag_cost, gemm_s);
        beside(Collective::reduce_scatter, rs_cost, gemm_s);
      } else {
        beside(Collective::all_reduce, ar_cost, gemm_s);
      }
    }
    if (ex)
      note_step(ex, "TP communication per layer (bwd, beside the column-parallel GEMMs)",
                pc.sequence_parallel
                    ? "2 x all-gather (row-parallel gradients) + sum over QKV, FFN-in of max(0, re-gather - dgrad) + "
                      "max(0, reduce-scatter - wgrad)"
                    : "sum over QKV, FFN-in of max(0, all-reduce - wgrad)",
                "Megatron-LM megatron/core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication "
                "(async all-reduce since 2021-09; SP re-gather and reduce-scatter since 2022-04)",
                {{"bytes", bytes}, {"qkv_gemm_s", gemm_fwd[0]}, {"ffn_in_gemm_s", gemm_fwd[2]}}, lt.tp_comm_bwd_s, "s");
  } else {
    lt.tp_comm_bwd_mlp_s = 0.5 * lt.tp_comm_bwd_s;  // the halves' collectives are alike
  }
  if (pc.recompute == Recompute::full) lt.tp_comm_recompute_s = 2.0 * per_pair;
  if (ex) {
    const std::string nccl =
        pc.sequence_parallel
            ? "all-gather " + describe(collective_cost(hw, g, Collective::all_gather, bytes)) + ", reduce-scatter " +
                  describe(collective_cost(hw, g, Collective::reduce_scatter, bytes))
            : "all-reduce " + describe(collective_cost(hw, g, Collective::all_reduce, bytes));
    note_step(ex, "TP communication per layer (fwd)",
              pc.sequence_parallel ? "2 x (all-gather + reduce-scatter) of b*s/cp*h*2 bytes"
                                   : "2 x all-reduce of b*s/cp*h*2 bytes",
              ("Korthikanti et al. 2022 §4.2; cost: collective_cost (" + nccl + ")").c_str(),
              {{"bytes", bytes}, {"tp", d.t}}, lt.tp_comm_fwd_s, "s");
  }
}

// --- Context parallelism (cp > 1): ring attention passes each rank's K and V
// around the CP ring (cp-1 steps), overlapped with the attention of the block
// in hand; backward moves K, V and their gradients (2x). Only the part longer
// than the attention compute is exposed (Liu et al. 2023, Ring Attention;
// Megatron-Core context parallelism). Forward, Transformer Engine
// (AttnFuncWithCPAndKVP2P, v2.8 context_parallel.py) issues step i+1's K/V
// receive as step i's kernel starts and waits for it before step i+1: the
// cp-1 transfers hide behind the first cp-1 of the cp steps, (cp-1)/cp of the
// attention. Backward, each step sends K/V and the dK/dV so far beside its own
// kernel, the last step included: all of it. Needs the attention times set.
void add_cp_exchange(LayerTime& lt, const Dims& d, const HardwareProfile& hw, const ParallelConfig& pc, Explain* ex) {
  const GroupPlacement g = placement(hw, pc.cp, pc.tp);
  const double kv_bytes = 2.0 * kAct * d.n * d.KV * d.hd / d.t;
  GroupPlacement pair = g;
  pair.size = 2;
  pair.stride = g.crosses_domains() ? hw.tiers[0].size : pc.tp;
  const CollectiveCost one = collective_cost(hw, pair, Collective::send_recv, kv_bytes);
  const double fwd = double(pc.cp - 1) * one.total_s();
  lt.cp_comm_total_s = 3.0 * fwd;
  const double fwd_window_s = lt.attention_fwd_s * (d.cp - 1.0) / d.cp;
  lt.cp_comm_fwd_s = std::max(0.0, fwd - fwd_window_s);
  lt.cp_comm_bwd_s = std::max(0.0, 2.0 * fwd - lt.attention_bwd_s);
  // The hidden part runs beside the attention kernels (compute-bound) and
  // slows them (contention.h).
  lt.contention_fwd_s +=
      contention_s(hw, pair, Collective::send_recv, one, fwd - lt.cp_comm_fwd_s, fwd_window_s, 0.0);
  lt.contention_bwd_s +=
      contention_s(hw, pair, Collective::send_recv, one, 2.0 * fwd - lt.cp_comm_bwd_s, lt.attention_bwd_s, 0.0);
  if (ex)
    note_step(ex, "CP K/V ring exchange (fwd)",
              "max(0, (cp-1) * send(2*b*s/cp*KV*hd/t*2 bytes) - attention_fwd*(cp-1)/cp); bwd max(0, 2x the sends - "
              "attention_bwd)",
              "Liu et al. 2023 (Ring Attention); Transformer Engine v2.8 context_parallel.py AttnFuncWithCPAndKVP2P "
              "(step i+1's K/V received during step i)",
              {{"kv_bytes", kv_bytes}, {"cp", d.cp}, {"attention_fwd_s", lt.attention_fwd_s}}, lt.cp_comm_fwd_s, "s");
  explain_p2p_channels(ex, "CP K/V send/recv bandwidth", one, kv_bytes);
}

}  // namespace planner::layer_detail
