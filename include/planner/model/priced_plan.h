// The quantities of one configuration that more than one cost function reads,
// priced once per evaluate(): layer and head costs, ZeRO-3 traffic per layer,
// the micro-batch count, the stage layout balanced over them, and each stage's
// and chunk's time and parameters. memory_per_gpu, step_time and the
// simulator's pipeline_problem read them here instead of pricing them again.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/model/collectives.h"
#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/pipeline.h"
#include "planner/spec/specs.h"

namespace planner {

// The ranks one ZeRO shard spans, placed on the tiers: DP x CP (the ranks
// holding the same weights), or under hybrid sharding
// (ParallelConfig::zero_shard) its shard group: whole CP groups and the
// innermost DP ranks.
[[nodiscard]] GroupPlacement weight_sharing_group(const HardwareProfile& hw, const ParallelConfig& pc);
// Hybrid sharding: the ranks holding the same shard, one per shard group
// (size 1 without hybrid sharding). Zhao et al. 2023 ("PyTorch FSDP",
// arXiv:2304.11277) §3.2.2: shard within a group, replicate across groups,
// the sharded gradients all-reduced over the replicas.
[[nodiscard]] GroupPlacement replica_group(const HardwareProfile& hw, const ParallelConfig& pc);

// Sharded-data traffic of one layer for one micro-batch, and the part that
// the layer's own compute does not hide (the next layer is prefetched while
// this one computes):
// - ZeRO-3 / FSDP: the all-gather of its weights before the forward, again
//   before the backward unless they were kept (reshard_after_forward false),
//   and the reduce-scatter of its gradients;
// - ZeRO-2: the reduce-scatter of its gradients in every micro-batch's
//   backward (gradients are sharded, so each micro-batch's must be reduced
//   into the shard: DeepSpeed stage 2's backward hooks, FSDP2's
//   SHARD_GRAD_OP), no gathers.
// All zero below ZeRO-2 or over one rank.
struct Zero3LayerComm {
  double all_gather_s = 0;      // before the forward
  double bwd_all_gather_s = 0;  // before the backward (ZeRO-3 with resharding)
  // Before the recomputed forward (ZeRO-3, full recompute,
  // TrainingSpec::zero3_recompute_regather): the weights DeepSpeed released
  // after the forward and does not keep for the backward.
  double recompute_all_gather_s = 0;
  double regathered_params = 0;  // per TP rank
  double reduce_scatter_s = 0;   // in the reduce dtype (reduce_bytes_per_param)
  // Hybrid sharding: the reduce-scatter's output all-reduced over the replicas.
  double replica_all_reduce_s = 0;
  double exposed_fwd_s = 0, exposed_bwd_s = 0;
  // Memory-bound staging copies on the compute stream: gather outputs into
  // the parameters, gradients into the reduce-scatter input.
  double staging_fwd_s = 0, staging_bwd_s = 0;
  // The compute it hides behind, slowed while it runs (contention.h).
  double contention_fwd_s = 0, contention_bwd_s = 0;
  [[nodiscard]] double exposed_s() const { return exposed_fwd_s + exposed_bwd_s; }
  [[nodiscard]] double staging_s() const { return staging_fwd_s + staging_bwd_s; }
  [[nodiscard]] double contention_s() const { return contention_fwd_s + contention_bwd_s; }
  [[nodiscard]] double bwd_comm_s() const {
    return recompute_all_gather_s + bwd_all_gather_s + reduce_scatter_s + replica_all_reduce_s;
  }
  [[nodiscard]] double total_s() const { return all_gather_s + bwd_comm_s(); }
};
// Bytes per gradient element on the wire of a gradient reduction:
// TrainingSpec::grad_reduce_bytes_per_param, or the gradients' own width.
[[nodiscard]] double reduce_bytes_per_param(const TrainingSpec& ts);
// Weights per TP rank that DeepSpeed ZeRO-3 gathers again for the
// recomputed forward of one layer: those whose next use (their backward)
// lies at least stage3_max_reuse_distance parameters away.
[[nodiscard]] double recompute_regathered_params(const ModelSpec& model, const ParallelConfig& pc);
[[nodiscard]] Zero3LayerComm zero3_layer_comm(const ModelSpec& model, const HardwareProfile& hw,
                                              const ParallelConfig& pc, const TrainingSpec& ts, const LayerTime& lt,
                                              const GroupPlacement& weight_group);
// The same from the model's counts (count_params(model)), as price_plan has them.
[[nodiscard]] Zero3LayerComm zero3_layer_comm(const ModelSpec& model, const HardwareProfile& hw,
                                              const ParallelConfig& pc, const TrainingSpec& ts, const LayerTime& lt,
                                              const GroupPlacement& weight_group, const ParamCounts& counts,
                                              const GroupPlacement& replicas);

// Time of one layer for one micro-batch on the critical path: forward and
// backward (LayerTime::total_s) plus its exposed ZeRO-2/3 traffic and the
// contention of the hidden part and its staging copies. The unit in
// which stages are balanced and the slowest stage is found.
[[nodiscard]] double layer_step_s(const LayerTime& lt, const Zero3LayerComm& z3);

// One virtual chunk of a stage: its layers (chunk_layers' water-filling), the
// head it carries and its parameters.
struct ChunkPlan {
  std::int64_t layers = 0;
  std::int64_t moe_layers = 0;  // of layers: MoE ones (PricedPlan::moe_layers_in)
  bool embedding = false;  // chunk 0 of stage 0
  bool output = false;     // chunk v-1 of stage p-1
  double params = 0;       // before TP / ZeRO sharding
  double expert_params = 0;  // of params: routed experts (MoE), sharded over EP x ETP, reduced over EDP
  double replicated_params = 0;  // of params: held whole by every TP rank (ParamCounts replicated_*)
  // What one GPU holds of the chunk apart from the routed experts: the split part over TP, the replicated whole.
  [[nodiscard]] double local_non_expert_params(std::int64_t tp) const {
    return (params - expert_params - replicated_params) / double(tp) + replicated_params;
  }
};

struct PricedPlan {
  LayerTime layer;  // one layer, one micro-batch
  HeadTime head;
  GroupPlacement weight_group;     // DP x CP (the ranks holding the same weights), or the hybrid shard group
  GroupPlacement replica_group;    // hybrid sharding: the replicas of a shard (size 1 without)
  bool grads_reduced = false;      // DP x CP or EDP > 1, ZeRO 0-1: each stage reduces its grads after its last backward
  bool zero3_gathers = false;      // DP x CP or EDP > 1, ZeRO-3: each layer's weights gathered, grads reduce-scattered
  // ZeRO-3 with gathers (Zero3Gather): the parameters one gather unit holds
  // per GPU after TP / EP x ETP sharding (a layer, or the largest weight
  // tensor), and those prefetched beside it; memory_model.cpp counts both
  // gathered and one unit of gradients.
  Zero3Gather zero3_gather = Zero3Gather::layer;
  double zero3_gather_unit_params = 0;
  double zero3_prefetch_params = 0;
  bool per_layer_sharding = false;  // DP x CP or EDP > 1, ZeRO 2-3: the per-layer, per-micro-batch traffic of `zero3`
  bool params_gathered = false;     // DP x CP or EDP > 1, ZeRO 1-2: updated weight shards all-gathered once per step
  Zero3LayerComm zero3;            // per layer and micro-batch; zero unless per_layer_sharding
  double layer_step_s = 0;         // layer.total_s() + zero3 exposed + staging + contention
  double layer_unit_s = 0;         // layer_step_s, at least kTinyTime_s: what a layer-equivalent is worth
  double head_first_s = 0;         // embedding forward + backward (stage 0), one micro-batch
  double head_last_s = 0;          // output layer forward + backward + its TP all-reduces (stage p-1)
  double extra_first = 0;          // head_first_s in layer-equivalents
  double extra_last = 0;           // head_last_s in layer-equivalents
  std::int64_t micro_batches = 0;  // per step and pipeline: global batch / (dp * micro-batch size)
  std::int64_t virtual_stages = 1;  // chunks per stage
  ParamCounts params;               // of the whole model
  bool tied_embeddings = false;     // the output layer reuses the embedding matrix (stage_params)
  // The chunks are split counting the heads (PipelineSplit::balanced) or by
  // layers alone (uniform); the heads are priced either way.
  bool heads_in_split = true;
  StageLayout layout;
  // MoE (moe_cost.h; zero / size-1 groups for dense models): routed-expert
  // parameters per layer (the mean over layers: what the per-layer ZeRO-3
  // traffic of the mean layer reads), sharded over EP x ETP, their gradients
  // reduced and optimizer state sharded over the EDP group. A stage or chunk
  // counts its own dense and MoE layers (moe_layers_in), not the mean.
  double expert_params_per_layer = 0;
  double mtp_expert_params = 0;    // of the MTP modules (last stage): their routed experts
  std::int64_t expert_shards = 1;  // EP * ETP
  GroupPlacement expert_dp_group;  // EDP
  // Which layers are MoE (ModelSpec::moe, model_math.h is_moe_layer): after
  // moe_first_dense_layers, the last of every moe_layer_freq; moe_layer_freq
  // 0 for a dense model.
  std::int64_t num_layers = 0;
  std::int64_t moe_first_dense_layers = 0;
  std::int64_t moe_layer_freq = 0;
  // Interleaved MoE plans: each stage's MoE layers, counted by price_plan for
  // its layout (stage_moe_layers counts again for any other layout).
  std::vector<std::int64_t> stage_moe_cache;
  StageLayout stage_moe_cache_layout;
  std::int64_t stage_moe_cache_v = 0;
  void count_stage_moe_layers();

  // Forward and backward of one micro-batch on `stage`: its layers at
  // layer_step_s plus the embedding / output layer it carries (Llama 3 paper
  // §3.3.2). The slowest stage sets the pipeline's steady state (Narayanan et
  // al. 2021 §2.2).
  [[nodiscard]] double stage_time_s(std::int64_t stage) const {
    double x = double(layout.layers_on(stage)) * layer_step_s;
    if (stage == 0) x += head_first_s;
    if (stage == layout.stages - 1) x += head_last_s;
    return x;
  }
  // The stage with the largest stage_time_s (the earliest on ties): the one
  // that paces the steady state.
  [[nodiscard]] std::int64_t slowest_stage() const;

  // What each stage and chunk holds (stage_params.cpp).
  // MoE layers among the model's layers [first, first + n) (0 for dense models).
  [[nodiscard]] std::int64_t moe_layers_in(std::int64_t first, std::int64_t n) const;
  // The model's index of the first layer of each of the v chunks of `stage`:
  // Megatron-LM's interleaved schedule orders the model's chunks chunk-major,
  // model chunk c*p + s on stage s (get_transformer_layer_offset), with the
  // chunk_layers of every stage; layers_before(stage) when v = 1.
  [[nodiscard]] std::vector<std::int64_t> chunk_first_layers(std::int64_t stage) const;
  // MoE layers on `stage` (all its chunks); 0 for dense models.
  [[nodiscard]] std::int64_t stage_moe_layers(std::int64_t stage) const;
  // One stage of each kind for the costs that follow a stage's parameters and
  // activations (memory, the DP tail), in stage order: the earliest stage
  // with each (layers, MoE layers, embedding, output layer); later stages of
  // a kind hold fewer micro-batches in flight and have a longer lead. The
  // layout's distinct_stages for dense models.
  [[nodiscard]] std::vector<std::int64_t> state_distinct_stages() const;
  // Parameters held by `stage`, before TP / ZeRO sharding: its own dense and
  // MoE layers (count_params' dense_layer, moe_layer), not the model's mean.
  [[nodiscard]] double stage_params(std::int64_t stage) const;
  // Of stage_params: the routed experts' (MoE; 0 for dense models).
  [[nodiscard]] double stage_expert_params(std::int64_t stage) const {
    return double(stage_moe_layers(stage)) * double(params.routed_experts_per_moe_layer) +
           (stage == layout.stages - 1 ? mtp_expert_params : 0.0);
  }
  // Of stage_params: those every TP rank holds whole (norms, MLA's
  // down-projections, the router, ...: ParamCounts replicated_*).
  [[nodiscard]] double stage_replicated_params(std::int64_t stage) const;
  // What one GPU of `stage` holds apart from the routed experts: the
  // TP-split part over TP, the replicated part whole (Megatron-LM
  // theoretical_memory_usage.py: tp_sharded / TP + replicated).
  [[nodiscard]] double local_non_expert_params(std::int64_t stage, std::int64_t tp) const {
    const double rep = stage_replicated_params(stage);
    return (stage_params(stage) - stage_expert_params(stage) - rep) / double(tp) + rep;
  }
  // Parameters one GPU of `stage` holds: the rest as local_non_expert_params,
  // the routed experts over EP x ETP (Megatron-LM theoretical_memory_usage.py).
  [[nodiscard]] double local_params(std::int64_t stage, std::int64_t tp) const {
    return local_non_expert_params(stage, tp) + stage_expert_params(stage) / double(expert_shards);
  }
  // The v chunks of `stage`, in chunk order; their parameters sum to stage_params.
  [[nodiscard]] std::vector<ChunkPlan> chunks(std::int64_t stage) const;
};

// Hybrid sharding, ZeRO-1 (Megatron-Core's distributed optimizer instances:
// reduce-scatter inside an instance, then all-reduce across them): the
// all-reduce over plan.replica_group of what a reduction over the shard group
// leaves each rank, `reduced_bytes` / shard size. Zero without replicas.
[[nodiscard]] CollectiveCost replica_all_reduce(const HardwareProfile& hw, const PricedPlan& plan,
                                                double reduced_bytes);

// Prices the plan of a normalised, structurally valid configuration from its
// layer and head costs, and balances the layers over the stages in
// layer-equivalents of layer_step_s (balance_layers; the layout may come out
// infeasible, which evaluate() reports), or by layers alone when
// ts.pipeline_split is uniform (uniform_layers).
[[nodiscard]] PricedPlan price_plan(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                    const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head);

// The same on a given layout (to price a configuration while holding the
// layout of another fixed).
[[nodiscard]] PricedPlan price_plan(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                    const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head,
                                    const StageLayout& layout);

}  // namespace planner
