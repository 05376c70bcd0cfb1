// Mixture-of-Experts costs: the expert grid of MoE parallel folding on the
// hardware's tiers, the tokens one GPU's experts see, the expert all-to-alls
// (NCCL or DeepEP), and one layer's time and activations averaged over the
// model's dense and MoE layers. layer_cost.cpp hands MoE models here; the
// plan, memory and step-time models read the expert groups and parameters.
// Facts and sources: shared/reference/moe.md (§3.2-3.6, §4).
#pragma once

#include <cstdint>

#include "planner/model/collectives.h"
#include "planner/model/explain.h"
#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"
#include "planner/spec/specs.h"

namespace planner {

// MoE parallel folding (Liu et al. 2025, arXiv:2504.14960; Megatron-Core
// parallel_state.py, the expert RankGenerator tp=ETP, ep=EP, dp=EDP, pp=PP in
// the default order "tp-cp-ep-dp-pp"): ETP innermost, EP next, EDP outside
// them, so EP members are ETP ranks apart and an EP group of up to a
// scale-up domain's size (8 on a DGX, 72 on an NVL72) stays inside it.
struct ExpertGroups {
  std::int64_t edp = 1;     // expert data parallel: TP*CP*DP / (EP*ETP)
  GroupPlacement ep;        // dispatch / combine all-to-all
  GroupPlacement etp;       // expert tensor parallel: gathers the routed tokens
  GroupPlacement edp_group;  // expert gradients reduce here, not over DP x CP
};
[[nodiscard]] ExpertGroups expert_groups(const HardwareProfile& hw, const ParallelConfig& pc);
// ExpertGroups::edp without the placement: TP*CP*DP / (EP*ETP), at least 1.
[[nodiscard]] std::int64_t expert_dp_size(const ParallelConfig& pc);

// Whether the step reduces any gradient over more than one rank: the dense
// weights' over DP x CP, a MoE model's routed experts' over EDP (Megatron-Core
// DDP keeps them in buffers of their own, reduced over the expert data-
// parallel group), which TP can make larger than one where DP x CP is one
// (TP 8, EP 1, ETP 1: EDP 8).
[[nodiscard]] bool reduces_gradients(const ModelSpec& model, const ParallelConfig& pc);

// Dense and MoE layers of the model (ParamCounts' when it counts them; else
// from MoeSpec: after first_dense_layers, one MoE layer in layer_freq).
struct MoeLayerCounts {
  std::int64_t dense = 0, moe = 0;
};
[[nodiscard]] MoeLayerCounts moe_layer_counts(const ModelSpec& model);

// Routed-expert parameters per layer, the mean over all layers (what a stage
// of n layers holds n times, before EP x ETP sharding); 0 for dense models.
[[nodiscard]] double routed_params_per_layer(const ModelSpec& model);
// The same from the model's counts (count_params(model)), already at hand.
[[nodiscard]] double routed_params_per_layer(const ModelSpec& model, const ParamCounts& counts);

// Tokens of one MoE layer on one GPU for one micro-batch. Megatron's
// alltoall dispatcher sends each of its local tokens (b*s/(cp*tp), the
// sequence-parallel shard) to its top-k experts; under uniform routing each
// of the EP ranks receives local*k rows, the ETP gather multiplies them by
// ETP, and E/EP local experts share them (moe.md §3.4).
struct MoeTokens {
  double local = 0;          // tokens entering the layer on this GPU
  double load = 1;           // busiest rank's rows over the mean: the imbalance; the capacity factor when set
  double routed_rows = 0;    // rows this GPU's experts process: local*k*ETP*load
  double local_experts = 0;  // E / EP
  double rows_per_expert = 0;  // M of each expert GEMM
  double a2a_rows = 0;       // rows one dispatch sends from (or one combine returns to) this GPU: local*k*load
};
[[nodiscard]] MoeTokens moe_tokens(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts);

// Bytes one all-to-all moves off each GPU under uniform routing:
// rows*h*bytes*(EP-1)/EP (moe.md §3.4; nccl-tests alltoall busbw (n-1)/n).
[[nodiscard]] double a2a_volume_bytes(double rows, double hidden, double bytes_per_element, std::int64_t ep);

// The expert all-to-alls of one MoE layer and micro-batch, before overlap:
// dispatch and combine forward, their gradients backward (4 per layer), and
// with ETP > 1 the all-gather / reduce-scatter of the routed rows.
struct MoeA2a {
  double dispatch_fwd_s = 0, combine_fwd_s = 0, dispatch_bwd_s = 0, combine_bwd_s = 0;
  double etp_fwd_s = 0, etp_bwd_s = 0;
  double dispatch_bytes = 0;  // one dispatch, sent per GPU (before the (EP-1)/EP share)
  CollectiveCost dispatch;     // its cost, for --explain
  [[nodiscard]] double fwd_s() const { return dispatch_fwd_s + combine_fwd_s + etp_fwd_s; }
  [[nodiscard]] double bwd_s() const { return dispatch_bwd_s + combine_bwd_s + etp_bwd_s; }
};
[[nodiscard]] MoeA2a moe_a2a(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                             const TrainingSpec& ts);

// DeepEP's normal (high-throughput) dispatch/combine kernels over `g`: one
// fused kernel (the launch latency once), NVLink at the scale-up tier's
// achieved bandwidth, RDMA at the NIC's, with each token sent to a remote
// node once however many of its k experts live there (moe.md §4).
[[nodiscard]] CollectiveCost deepep_cost(const HardwareProfile& hw, const GroupPlacement& g, double bytes,
                                         std::int64_t top_k);

// One MoE layer (attention, shared experts, router, routed experts, the
// all-to-alls) for one micro-batch on one GPU.
[[nodiscard]] LayerTime moe_layer_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                       const TrainingSpec& ts, Explain* ex = nullptr);

// What layer_time returns for a MoE model: the mean of one dense and one MoE
// layer weighted by their counts (the pipeline prices equal layers: an
// approximation, docs/cost_model.md Known gaps). moe_out, if given, receives
// the MoE layer alone (what moe_layer_time returns), for head_time's MTP layer.
[[nodiscard]] LayerTime mean_moe_model_layer_time(const ModelSpec& model, const HardwareProfile& hw,
                                                  const ParallelConfig& pc, const TrainingSpec& ts,
                                                  Explain* ex = nullptr, LayerTime* moe_out = nullptr);

// The same mean for the stored activations: a MoE layer keeps the k copies
// of its routed tokens (the permuted input, FC1's), the
// experts' intermediates and the router's fp32 logits (Megatron-LM
// theoretical_memory_usage.py, compute_activation_memory).
[[nodiscard]] LayerActivations mean_moe_model_layer_activations(const ModelSpec& model, const ParallelConfig& pc,
                                                                const TrainingSpec& ts, Explain* ex = nullptr);

// a*(1-w) + b*w, field by field.
[[nodiscard]] LayerTime blend(const LayerTime& a, const LayerTime& b, double w);

}  // namespace planner
