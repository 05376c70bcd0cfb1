// One configuration -> memory, time, and feasibility with reasons. The single
// entry point the CLI's `evaluate` and the search call; infeasibility is a
// value (a set of reasons), never an exception.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/model/explain.h"
#include "planner/model/layer_cost.h"
#include "planner/model/memory_model.h"
#include "planner/model/pipeline.h"
#include "planner/model/priced_plan.h"
#include "planner/model/step_time.h"
#include "planner/spec/specs.h"

namespace planner {

enum class Reason : std::uint8_t {
  gpu_count_mismatch,     // tp*cp*pp*dp != GPUs
  tp_exceeds_scale_up,    // TP group larger than the NVLink domain / pod
  tp_not_dividing_heads,  // TP must divide attention heads and KV heads
  tp_not_dividing_ffn,
  cp_not_dividing_seq,             // sequence must split into 2*cp chunks (causal load balance)
  batch_not_divisible,             // global batch not divisible by dp * micro-batch size
  too_few_layers,                  // fewer layers than stages * virtual stages
  vpp_needs_pp,                    // interleaving needs pp > 1
  interleave_needs_micro_batches,  // interleaved 1F1B needs micro-batches a multiple of pp (Megatron-LM)
  zero_stage_invalid,
  dtype_unsupported,      // no peak FLOP/s for this dtype on this chip
  crosses_single_domain,  // group leaves the only tier the profile describes
  out_of_memory,
  // Expert parallelism (MoE parallel folding; moe_cost.h): Megatron-LM's checks (after
  // out_of_memory, so that the bits stored in regress goldens keep their meaning).
  ep_on_dense_model,            // ep or etp > 1 on a model without experts
  ep_not_dividing_experts,      // num_experts % ep != 0
  expert_grid_not_folding,      // (tp*cp*dp) % (ep*etp) != 0
  etp_not_dividing_expert_ffn,  // expert FFN width % etp != 0
  moe_tp_needs_sp,              // MoE with TP > 1 needs sequence parallelism
  // Hybrid sharding (ParallelConfig::zero_shard; after the MoE checks, for the same reason).
  zero_shard_invalid,  // not whole CP groups dividing DP x CP, ZeRO 0, or a MoE model
  count_
};
inline constexpr std::size_t kNumReasons = std::size_t(Reason::count_);

[[nodiscard]] const char* describe(Reason r);

struct Evaluation {
  ParallelConfig config;
  std::uint32_t reasons = 0;  // bit set of Reason
  StageLayout layout;         // plan.layout, kept here for the reports and regress metrics
  PricedPlan plan;            // what memory and time were priced from (filled once the structure is valid)
  MemoryBreakdown memory;
  StepTimeBreakdown time;
  // The training choices the search makes per layout for MoE models (and
  // evaluate copies from the spec): Megatron's --recompute-modules (read
  // under selective recomputation) and --overlap-a2a.
  std::uint8_t recompute_modules = 1;
  bool overlap_a2a = false;
  [[nodiscard]] bool feasible() const { return reasons == 0; }
  [[nodiscard]] bool has(Reason r) const { return (reasons >> unsigned(r)) & 1u; }
  [[nodiscard]] std::vector<Reason> reason_list() const;
};

// Checks the structure, lays out stages, prices memory and time. Memory and
// time are filled whenever the structure is valid, even if the result does not
// fit (so a user sees by how much). A model or training run outside the size
// bounds of limits.h is an InputError (not a reason: it is bad input).
[[nodiscard]] Evaluation evaluate(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                  const TrainingSpec& ts, Explain* ex = nullptr);

// The same, with the per-layer and head costs already priced (the search
// reuses them across pipeline/ZeRO variants that share tp, cp, mbs, sp, recompute;
// it checks the sizes once, so this overload does not).
[[nodiscard]] Evaluation evaluate(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                  const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head,
                                  Explain* ex = nullptr);

// The training spec `ev` was priced with: `ts` with the recompute modules
// and all-to-all overlap `ev` carries (for a MoE model, the search's choice
// for its layout). What the simulator and the launch flags of a search
// result read.
[[nodiscard]] TrainingSpec training_for(TrainingSpec ts, const Evaluation& ev);

// Normalises flags that depend on others (SP needs TP > 1; v > 1 is interleaved).
[[nodiscard]] ParallelConfig normalized(ParallelConfig pc);

// Structural checks only (cheap; the search runs them before pricing).
[[nodiscard]] std::uint32_t structural_reasons(const ModelSpec& model, const HardwareProfile& hw,
                                               const ParallelConfig& pc, const TrainingSpec& ts);

// The expert-parallel checks alone (part of structural_reasons): a dense
// model needs ep = etp = 1; a MoE model needs EP | experts, EP*ETP | TP*CP*DP
// (MoE parallel folding), ETP | expert FFN width and SP when TP > 1.
[[nodiscard]] std::uint32_t expert_reasons(const ModelSpec& model, const ParallelConfig& pc);
// Hybrid sharding's rule (Reason::zero_shard_invalid, evaluate.cpp).
[[nodiscard]] bool zero_shard_valid(const ModelSpec& model, const ParallelConfig& pc);

// Name of the largest exposed overhead (what to attack next): the largest term
// but compute, or "none" when it is under 1% of the step.
[[nodiscard]] const char* dominant_overhead(const StepTimeBreakdown& t);

}  // namespace planner
