#include "planner/model/priced_plan.h"

#include "planner/model/contention.h"
#include "planner/model/moe_cost.h"

#include "model/collective_links.h"

#include <algorithm>
#include <vector>

#include "planner/spec/limits.h"

namespace planner {

namespace {
// DeepSpeed's stage3_prefetch_bucket_size default, in elements
// (deepspeed/runtime/zero/config.py prefetch_bucket_size).
constexpr double kDeepSpeedPrefetchBucketParams = 5e7;
}  // namespace

// The ranks sharing one weight shard: DP x CP, or under hybrid sharding
// whole CP groups and the innermost DP ranks (ParallelConfig::zero_shard).
// Contiguous in the rank order [TP, CP, PP, DP] when PP = 1; otherwise CP and
// DP members combine.
GroupPlacement weight_sharing_group(const HardwareProfile& hw, const ParallelConfig& pc) {
  // Hybrid sharding: whole CP groups and the innermost `k` DP ranks.
  const std::int64_t k = std::max<std::int64_t>(1, zero_shard_size(pc) / std::max<std::int64_t>(1, pc.cp));
  if (pc.pp == 1) return placement(hw, pc.cp * k, pc.tp);
  const GroupPlacement dp = placement(hw, k, pc.tp * pc.cp * pc.pp);
  const GroupPlacement cp = placement(hw, pc.cp, pc.tp);
  GroupPlacement g;
  g.size = pc.cp * k;
  g.stride = pc.tp;
  g.members_per_domain = std::min(g.size, dp.members_per_domain * cp.members_per_domain);
  g.domains = (g.size + g.members_per_domain - 1) / g.members_per_domain;
  for (std::size_t d = 0; d < 3; ++d) {
    g.torus_extent[d] = std::max(dp.torus_extent[d], cp.torus_extent[d]);
    g.torus_wrap[d] = dp.torus_wrap[d] || cp.torus_wrap[d];
  }
  return g;
}

// The replicas of a hybrid shard: the DP ranks `k` apart (the shard group's
// DP part, above), one per shard group.
GroupPlacement replica_group(const HardwareProfile& hw, const ParallelConfig& pc) {
  const std::int64_t r = zero_replicas(pc);
  if (r <= 1) return GroupPlacement{};
  const std::int64_t k = zero_shard_size(pc) / pc.cp;
  return placement(hw, r, pc.tp * pc.cp * pc.pp * k);
}

CollectiveCost replica_all_reduce(const HardwareProfile& hw, const PricedPlan& plan, double reduced_bytes) {
  if (plan.replica_group.size <= 1 || !(reduced_bytes > 0)) return {};
  return collective_cost(hw, plan.replica_group, Collective::all_reduce,
                         reduced_bytes / double(std::max<std::int64_t>(1, plan.weight_group.size)));
}

double reduce_bytes_per_param(const TrainingSpec& ts) {
  return ts.grad_reduce_bytes_per_param > 0 ? ts.grad_reduce_bytes_per_param : ts.grad_bytes_per_param;
}

// DeepSpeed's stage3_max_reuse_distance default, in parameters
// (deepspeed/runtime/zero/config.py, DeepSpeedZeroConfig.max_reuse_distance,
// deepspeedai/DeepSpeed@edaa7221).
constexpr double kDeepSpeedMaxReuseDistanceParams = 1e9;

namespace {

double regathered_params(const ModelSpec& model, const ParallelConfig& pc, const ParamCounts& counts) {
  // One layer's weight-holding submodules in forward order, per TP rank:
  // attention input (Q, K, V) and output projections, then the FFN's input
  // matrices (gate and up, or fc1) and its output matrix, the rest of the
  // layer's parameters split among them.
  const double t = double(pc.tp);
  const double per_layer = double(counts.per_layer) / t;
  const double h = double(model.hidden_size);
  const double hd = model.head_dim > 0 ? double(model.head_dim) : h / double(std::max<std::int64_t>(1, model.num_heads));
  const double attn_in = std::min(per_layer, h * double(model.num_heads + 2 * model.num_kv_heads) * hd / t);
  const double attn_out = std::min(per_layer - attn_in, double(model.num_heads) * hd * h / t);
  const double ffn = per_layer - attn_in - attn_out;
  std::vector<double> modules{attn_in, attn_out};
  const int ffn_matrices = is_gated(model.ffn_kind) ? 3 : 2;
  for (int i = 0; i < ffn_matrices; ++i) modules.push_back(ffn / double(ffn_matrices));
  // After module j's recomputed forward come the later modules' recomputed
  // forwards and their backwards before its own backward: 2 * (their
  // parameters). DeepSpeed releases j (PartitionedParameterCoordinator
  // __params_to_release) when that reuse lies max_reuse_distance or more away.
  double regathered = 0, later = 0;
  for (std::size_t j = modules.size(); j-- > 0;) {
    if (2.0 * later >= kDeepSpeedMaxReuseDistanceParams) regathered += modules[j];
    later += modules[j];
  }
  return regathered;
}

}  // namespace

double recompute_regathered_params(const ModelSpec& model, const ParallelConfig& pc) {
  return regathered_params(model, pc, count_params(model));
}

namespace {

// Staging copies on the compute stream, memory bound: each gather's output
// is copied out into the parameters (FSDP2 foreach_all_gather_copy_out,
// split_with_sizes_copy: read and write w bytes per parameter; DeepSpeed's
// list all_gather unflattens the same way), and the gradients are copied,
// cast to the reduce dtype, into the reduce-scatter input before it starts
// (FSDP2 foreach_reduce_scatter_copy_in, chunk_cat on the current stream:
// read g, write r bytes). The 1/p-sized copy-in of the gather and the cast
// of the reduce-scatter output are left out. These are PyTorch's copies: a
// TPU (torus profile) runs JAX/XLA, whose compiled collectives write into
// the buffers their consumers read, so none are priced there. `local`: this
// GPU's part of the layer, experts included; z's gathers are already priced.
void stage_copies(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts, double local,
                  Zero3LayerComm& z) {
  const double hbm = hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency;
  const bool xla = !hw.tiers.empty() && hw.tiers[0].topology == Topology::torus;
  if (!(hbm > 0) || xla) return;
  const double w = ts.weight_bytes_per_param, g = ts.grad_bytes_per_param, r = reduce_bytes_per_param(ts);
  const double gathers_bwd = (z.bwd_all_gather_s > 0 ? local : 0.0) + z.regathered_params;
  if (ts.zero3_staging == Zero3Staging::flat_parameter) {
    // FSDP1 (TrainingSpec::zero3_staging): gathers land in the flat
    // parameter, no copy; the backward concatenates the views' gradients
    // (read and write w), casts them to the reduce dtype (w + r) and
    // pre-divides them (2r), all over the unsharded layer. The cast and the
    // division run on the post-backward stream beside the compute; priced
    // as if on it (an approximation: docs/cost_model.md Known gaps, "FSDP1").
    z.staging_fwd_s = 0.0;
    z.staging_bwd_s = local * (3.0 * w + 3.0 * r) / hbm;
  } else {
    z.staging_fwd_s = pc.zero_stage >= 3 ? local * 2.0 * w / hbm : 0.0;
    z.staging_bwd_s = (gathers_bwd * 2.0 * w + local * (g + r)) / hbm;
  }
}

}  // namespace

Zero3LayerComm zero3_layer_comm(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                const TrainingSpec& ts, const LayerTime& lt, const GroupPlacement& weight_group) {
  return zero3_layer_comm(model, hw, pc, ts, lt, weight_group, count_params(model), replica_group(hw, pc));
}

Zero3LayerComm zero3_layer_comm(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                const TrainingSpec& ts, const LayerTime& lt, const GroupPlacement& weight_group,
                                const ParamCounts& counts, const GroupPlacement& replicas) {
  Zero3LayerComm z;
  if (pc.zero_stage < 2) return z;
  // ZeRO-3 / FSDP: all-gather each layer's weights before its forward (and
  // before its backward when they were resharded after the forward),
  // reduce-scatter its gradients after the backward; prefetching the next
  // layer hides the gather when a layer's compute outlasts it:
  // alpha*lg p <= (B*S/C - 1/beta)*n (Zhao et al. 2023, "PyTorch FSDP",
  // arXiv:2304.11277 §3.3). ZeRO-2: the reduce-scatter alone, every
  // micro-batch (Rajbhandari et al. 2020 §5.2: gradients are reduced into
  // their owner's shard as the backward produces them). The backward's
  // gathers and reduce-scatters share the link, so they hide together
  // behind the backward, not each on its own.
  // MoE: the routed experts' shard (over EP x ETP) is gathered and reduced
  // over the EDP group, the rest over DP x CP (moe_cost.h).
  const double expert = routed_params_per_layer(model, counts);
  // The mean layer's replicated part (ParamCounts replicated_*) stays whole on each TP rank.
  const double replicated = model.num_layers > 0
                                ? (double(counts.dense_layers) * double(counts.replicated_dense_layer) +
                                   double(counts.moe_layers) * double(counts.replicated_moe_layer)) /
                                      double(model.num_layers)
                                : 0.0;
  const GroupPlacement edp = expert > 0 ? expert_groups(hw, pc).edp_group : GroupPlacement{};
  // A group of one rank shards nothing: with DP x CP = 1 only a MoE model's
  // experts, over EDP > 1, are gathered and reduce-scattered.
  if (weight_group.size <= 1 && edp.size <= 1) return z;
  const double layer_params = (double(counts.per_layer) - expert - replicated) / double(pc.tp) + replicated;
  const double expert_local = expert / double(pc.ep * pc.etp);
  const double w = ts.weight_bytes_per_param, r = reduce_bytes_per_param(ts);
  CollectiveCost ag{}, rag{};
  if (pc.zero_stage >= 3) {
    ag = collective_cost(hw, weight_group, Collective::all_gather, layer_params * w);
    z.all_gather_s = ag.total_s();
    if (expert > 0)
      z.all_gather_s +=
          collective_cost(hw, edp, Collective::all_gather, expert_local * w).total_s();
    if (pc.reshard_after_forward) z.bwd_all_gather_s = z.all_gather_s;
    // DeepSpeed ZeRO-3 under full recomputation: the recomputed forward
    // fetches what its submodule hooks released (TrainingSpec::zero3_recompute_regather).
    // Weights kept whole from the forward (reshard_after_forward false) are
    // never released, so nothing is gathered again.
    if (ts.zero3_recompute_regather && pc.recompute == Recompute::full && pc.reshard_after_forward) {
      z.regathered_params = regathered_params(model, pc, counts);
      rag = collective_cost(hw, weight_group, Collective::all_gather, z.regathered_params * w);
      z.recompute_all_gather_s = rag.total_s();
    }
  }
  // Reduced in the reduce dtype (FSDP2 reduce_dtype: fp32 in torchtitan).
  const CollectiveCost rs = collective_cost(hw, weight_group, Collective::reduce_scatter, layer_params * r);
  z.reduce_scatter_s = rs.total_s();
  if (expert > 0)
    z.reduce_scatter_s +=
        collective_cost(hw, edp, Collective::reduce_scatter, expert_local * r).total_s();
  // Hybrid sharding: the reduce-scatter's output, this rank's shard of the
  // layer's gradients, all-reduced over the replicas right after it, every
  // micro-batch (FSDP2 foreach_reduce: all_reduce on the replicate group in
  // the post-backward; torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py).
  CollectiveCost ar{};
  if (replicas.size > 1) {
    ar = collective_cost(hw, replicas, Collective::all_reduce, layer_params * r / double(weight_group.size));
    z.replica_all_reduce_s = ar.total_s();
  }
  z.exposed_fwd_s = std::max(0.0, z.all_gather_s - lt.fwd_s());
  const double bwd_comm = z.bwd_comm_s();
  z.exposed_bwd_s = std::max(0.0, bwd_comm - lt.bwd_s());
  stage_copies(hw, pc, ts, (weight_group.size > 1 ? layer_params : 0.0) + expert_local, z);
  // What is hidden runs beside the layer's kernels and slows them
  // (contention.h); the backward's hidden part is split between its gathers
  // and its reduce-scatter in proportion to their times.
  const double hidden_fwd = z.all_gather_s - z.exposed_fwd_s;
  const double hidden_bwd = bwd_comm - z.exposed_bwd_s;
  z.contention_fwd_s =
      contention_s(hw, weight_group, Collective::all_gather, ag, hidden_fwd, lt.fwd_s(), lt.memory_bound_fwd_s());
  if (bwd_comm > 0) {
    const double ag_part = (z.recompute_all_gather_s + z.bwd_all_gather_s) / bwd_comm;
    const double rs_part = z.reduce_scatter_s / bwd_comm;
    const double ar_part = z.replica_all_reduce_s / bwd_comm;
    z.contention_bwd_s = contention_s(hw, weight_group, Collective::all_gather, ag, hidden_bwd * ag_part, lt.bwd_s(),
                                      lt.memory_bound_bwd_s()) +
                         contention_s(hw, weight_group, Collective::reduce_scatter, rs, hidden_bwd * rs_part,
                                      lt.bwd_s(), lt.memory_bound_bwd_s()) +
                         contention_s(hw, replicas, Collective::all_reduce, ar, hidden_bwd * ar_part, lt.bwd_s(),
                                      lt.memory_bound_bwd_s());
  }
  return z;
}

double layer_step_s(const LayerTime& lt, const Zero3LayerComm& z3) {
  return lt.total_s() + z3.exposed_s() + z3.staging_s() + z3.contention_s();
}

namespace {

// Everything but the layout.
PricedPlan price_costs(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                       const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head) {
  PricedPlan plan;
  // Counted once here: the ZeRO traffic and the MoE shares below read them too.
  plan.params = count_params(model);
  plan.layer = lt;
  plan.head = head;
  plan.weight_group = weight_sharing_group(hw, pc);
  plan.replica_group = replica_group(hw, pc);
  if (model.is_moe()) {
    plan.expert_params_per_layer = routed_params_per_layer(model, plan.params);
    plan.expert_shards = pc.ep * pc.etp;
    plan.expert_dp_group = expert_groups(hw, pc).edp_group;
    // MTP modules repeat the model's last layer (MoE when it is: Megatron-LM
    // training.py counts them as MoE layers then, theoretical_memory_usage.py
    // mtp_layer_is_moe = moe_layer_pattern[-1]).
    plan.mtp_expert_params = is_moe_layer(model, model.num_layers - 1)
                                 ? double(model.mtp_layers) * double(plan.params.routed_experts_per_moe_layer)
                                 : 0.0;
    plan.moe_first_dense_layers = model.moe.first_dense_layers;
    plan.moe_layer_freq = std::max<std::int64_t>(1, model.moe.layer_freq);
  }
  // Gradients reduce over DP x CP, a MoE model's routed experts' over EDP,
  // which is more than one where DP x CP is one when EP x ETP < TP
  // (reduces_gradients): TP 8, EP 1 reduces the experts over 8 ranks.
  const bool sharded = plan.weight_group.size > 1 || plan.expert_dp_group.size > 1;
  plan.grads_reduced = sharded && pc.zero_stage <= 1;
  plan.zero3_gathers = sharded && pc.zero_stage >= 3;
  plan.per_layer_sharding = sharded && pc.zero_stage >= 2;
  plan.params_gathered = sharded && (pc.zero_stage == 1 || pc.zero_stage == 2);
  plan.zero3 = zero3_layer_comm(model, hw, pc, ts, lt, plan.weight_group, plan.params, plan.replica_group);
  // A layer costs its compute and TP/CP traffic plus its exposed ZeRO-3
  // traffic: with ZeRO-3 a stage with more layers can be the slowest even
  // where one with fewer layers and the output layer computes longer.
  plan.layer_step_s = layer_step_s(lt, plan.zero3);
  plan.layer_unit_s = std::max(plan.layer_step_s, kTinyTime_s);
  plan.head_first_s = head.embedding_fwd_s + head.embedding_bwd_s;
  plan.head_last_s = head.output_fwd_s + head.output_bwd_s + head.output_tp_comm_s;
  plan.extra_first = plan.head_first_s / plan.layer_unit_s;
  plan.extra_last = plan.head_last_s / plan.layer_unit_s;
  plan.micro_batches = ts.global_batch_sequences / std::max<std::int64_t>(1, pc.dp * pc.micro_batch_size);
  plan.virtual_stages = pc.virtual_stages;
  plan.tied_embeddings = model.tied_embeddings;
  plan.heads_in_split = ts.pipeline_split == PipelineSplit::balanced;
  plan.num_layers = model.num_layers;
  if (plan.zero3_gathers) {
    // What one ZeRO-3 gather holds per GPU (Zero3Gather): a layer (its
    // non-expert weights over TP, its routed experts over EP x ETP), or the
    // largest weight tensor; a TPU runs XLA, which gathers tensors.
    // With DP x CP = 1 the non-expert weights are whole on every rank: only
    // the experts, sharded over EDP, are gathered.
    const double dense = plan.weight_group.size > 1 ? 1.0 : 0.0;
    plan.zero3_gather =
        ts.zero3_gather == Zero3Gather::layer && detail::is_torus(hw) ? Zero3Gather::tensor : ts.zero3_gather;
    if (plan.zero3_gather == Zero3Gather::layer) {
      // The largest layer gathered: a MoE model's MoE layer (its non-expert
      // weights over TP, its routed experts over EP x ETP) or its dense one,
      // not their mean; the non-expert weights only where DP x CP > 1.
      const ParamCounts& c = plan.params;
      const double t = double(pc.tp);
      const double dense_local =
          dense * (double(c.dense_layer - c.replicated_dense_layer) / t + double(c.replicated_dense_layer));
      plan.zero3_gather_unit_params =
          model.is_moe()
              ? std::max(dense * (double(c.moe_layer - c.routed_experts_per_moe_layer - c.replicated_moe_layer) / t +
                                  double(c.replicated_moe_layer)) +
                             double(c.routed_experts_per_moe_layer) / double(plan.expert_shards),
                         c.dense_layers > 0 ? dense_local : 0.0)
              : dense_local;
    } else {
      // XLA: all of a rank's experts are one tensor; DeepSpeed: each expert
      // is a module of its own.
      const LargestWeight w = largest_weight_tensor(model);
      const double experts = plan.zero3_gather == Zero3Gather::tensor ? double(w.experts) / double(plan.expert_shards)
                                                                      : double(w.one_expert) / double(pc.etp);
      plan.zero3_gather_unit_params = std::max(dense * double(w.dense) / double(pc.tp), experts);
    }
    plan.zero3_prefetch_params = plan.zero3_gather == Zero3Gather::submodule
                                     ? std::min(plan.zero3_gather_unit_params, kDeepSpeedPrefetchBucketParams)
                                     : plan.zero3_gather_unit_params;
  }
  return plan;
}

}  // namespace

PricedPlan price_plan(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                      const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head) {
  PricedPlan plan = price_costs(model, hw, pc, ts, lt, head);
  // Balance layers over stages counting the embedding and output layer in
  // layer-equivalents of time (Llama 3 paper §3.3.2: uneven first/last stages).
  // A uniform split (DeepSpeed partition_method 'uniform', MaxText) ignores the heads.
  plan.layout = ts.pipeline_split == PipelineSplit::uniform
                    ? uniform_layers(model.num_layers, pc.pp, pc.virtual_stages)
                    : balance_layers(model.num_layers, pc.pp, pc.virtual_stages, plan.extra_first, plan.extra_last);
  plan.count_stage_moe_layers();
  return plan;
}

PricedPlan price_plan(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                      const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head, const StageLayout& layout) {
  PricedPlan plan = price_costs(model, hw, pc, ts, lt, head);
  plan.layout = layout;
  plan.count_stage_moe_layers();
  return plan;
}

std::int64_t PricedPlan::slowest_stage() const {
  std::int64_t slowest = 0;
  double t_max = stage_time_s(0);
  for (std::int64_t s : layout.distinct_stages())
    if (const double t = stage_time_s(s); t > t_max) t_max = t, slowest = s;
  return slowest;
}

}  // namespace planner
