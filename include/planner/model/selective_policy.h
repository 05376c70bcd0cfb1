// torchtitan's two selective activation-checkpointing policies as the cost
// model sees them (SelectivePolicy, spec/specs.h): which layers a per-layer
// policy recomputes, and which matmuls the op policy saves. Read by the layer
// time, activation memory and FLOP counts (layer_cost.cpp, model_math.cpp).
#pragma once

#include <string>
#include <vector>

#include "planner/model/explain.h"
#include "planner/model/layer_cost.h"
#include "planner/spec/specs.h"

namespace planner {

// torchtitan_every_nth_layer: the share of the transformer blocks that are
// fully recomputed, floor(L/N)/L. torchtitan v0.2.2 _apply_layer_sac wraps a
// block iff its running count (1, 2, ...) is a multiple of N, so a model of L
// blocks recomputes floor(L/N) of them (torchtitan/distributed/
// activation_checkpoint.py). The cost model gives every layer this mean share
// (layer_cost.cpp); 0 for the other policies.
[[nodiscard]] double recomputed_layer_fraction(const ModelSpec& model, const TrainingSpec& ts);

// The share of the layers whose whole forward runs again in the backward:
// 1 under full recomputation, recomputed_layer_fraction under torchtitan's
// per-layer selective policy, else 0.
[[nodiscard]] double full_recompute_share(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts);

// One matmul of a dense (non-MLA) transformer block, in torchtitan's forward
// order (models/llama3/model/model.py: wq, wk, wv, wo, then w1, w3, w2 for a
// gated FFN, w1, w2 otherwise), with its full (unsharded) widths.
struct LayerMatmul {
  const char* name;
  double out_width, in_width;  // per token: the matmul is [tokens, in] x [in, out]
  bool row_parallel;           // split over TP on its input (wo, w2): the output is full width
  bool saved;                  // torchtitan_op: its output is kept, not recomputed
};

// The block's matmuls and which of them op-level SAC saves: _apply_op_sac
// counts aten.mm calls per block and saves all but every second one (the
// 1st, 3rd, 5th, ...; torchtitan v0.2.2 activation_checkpoint.py
// _custom_policy, "Saves output of all compute ops, except every second mm").
[[nodiscard]] std::vector<LayerMatmul> op_sac_matmuls(const ModelSpec& model);

// torchtitan op-level SAC on one layer whose forward terms are set (tokens:
// the micro-batch's tokens on this GPU): the recomputed GEMMs and
// element-wise forward, and the TP traffic that runs again (layer_cost.cpp).
void add_op_sac_recompute(LayerTime& lt, const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                          const TrainingSpec& ts, double tokens, Explain* ex);
// What op-level SAC keeps of one layer per micro-batch, bytes.
[[nodiscard]] double op_sac_stored_bytes(const ModelSpec& model, const ParallelConfig& pc, double tokens,
                                         double attention_core_bytes);

// torchtitan per-layer SAC: the mean layer of floor(L/N) fully recomputed
// and L - floor(L/N) kept whole; time and activations.
[[nodiscard]] LayerTime every_nth_layer_time(const ModelSpec& model, const HardwareProfile& hw,
                                             const ParallelConfig& pc, const TrainingSpec& ts, Explain* ex);
[[nodiscard]] LayerActivations every_nth_layer_activations(const ModelSpec& model, const ParallelConfig& pc,
                                                           const TrainingSpec& ts, Explain* ex);

// Reads "megatron", "op" or "layer:N" (N >= 1) into ts.selective and
// ts.selective_every_n_layers; false (ts unchanged) for anything else.
[[nodiscard]] bool parse_selective_policy(const std::string& text, TrainingSpec& ts);

// "megatron", "op", or "layer:N": the policy as --selective-ac spells it.
[[nodiscard]] std::string selective_policy_label(const TrainingSpec& ts);

}  // namespace planner
