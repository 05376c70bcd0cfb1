// Pipeline-parallel structure: how layers are balanced over stages (the PP
// degree need not divide the layer count), how many micro-batches each stage
// holds in flight under GPipe / 1F1B / interleaved 1F1B, and the bubble.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "planner/spec/specs.h"

namespace planner {

// One stage of each kind a layout has, in stage order: stage 0 (the
// embedding), stage 1 (middle_hi layers), the first middle stage with
// middle_hi - 1 layers, and stage p-1 (the output layer); fewer when p < 4 or
// a kind is absent. Every other stage holds the layers and parameters of the
// representative of its kind and comes later in the pipeline (fewer
// micro-batches in flight, a longer lead over stage 0), so a maximum over the
// stages of such a cost is a maximum over these.
struct DistinctStages {
  std::array<std::int64_t, 4> stage{};
  std::size_t count = 0;
  [[nodiscard]] const std::int64_t* begin() const { return stage.data(); }
  [[nodiscard]] const std::int64_t* end() const { return stage.data() + count; }
};

struct StageLayout {
  std::int64_t stages = 1;
  std::int64_t first = 0;            // layers on stage 0 (carries the embedding)
  std::int64_t last = 0;             // layers on stage p-1 (carries the output layer); == first when p == 1
  std::int64_t middle_hi = 0;        // middle stages hold middle_hi or middle_hi-1 layers
  std::int64_t middle_hi_count = 0;  // how many middle stages hold middle_hi (the first ones)
  bool feasible = true;              // false when some stage would get fewer than min layers
  [[nodiscard]] std::int64_t layers_on(std::int64_t stage) const {
    if (stage == 0) return first;
    if (stage == stages - 1) return last;
    return stage - 1 < middle_hi_count ? middle_hi : middle_hi - 1;
  }
  // Layers on the stages before `stage` (0 for stage 0).
  [[nodiscard]] std::int64_t layers_before(std::int64_t stage) const {
    if (stage == 0) return 0;
    // The middle stages hold middle_hi layers first, then middle_hi - 1.
    const std::int64_t mids = stage - 1, hi = std::min(mids, middle_hi_count);
    return first + hi * middle_hi + (mids - hi) * (middle_hi - 1);
  }
  [[nodiscard]] DistinctStages distinct_stages() const {
    const std::int64_t p = stages, lo_mid = 1 + middle_hi_count;
    const std::int64_t kinds[4] = {0, std::min<std::int64_t>(1, p - 1), lo_mid < p - 1 ? lo_mid : p - 1, p - 1};
    DistinctStages d;
    for (std::int64_t s : kinds)
      if (d.count == 0 || s != d.stage[d.count - 1]) d.stage[d.count++] = s;
    return d;
  }
};

// Minimises the heaviest stage's cost, cost = layers + extra, where the first
// and last stages carry `extra_first` / `extra_last` layer-equivalents
// (embedding, output layer). Each middle stage gets at least `min_layers` (the
// number of interleaved chunks); with min_layers > 1 the first and last stages
// may hold one layer fewer, their head filling a chunk alone (Megatron-LM
// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split:
// megatron/core/transformer/transformer_block.py get_num_layers_to_build builds
// num_layers_to_build - 1 >= 0 layers in that chunk; also expressible as a
// --pipeline-model-parallel-layout). Llama 3 405B's PP16 over 126 layers gives
// the first and last stages 7 layers, the others 8 (Llama 3 paper §3.3.2),
// which with v = 8 is one layer a chunk and the heads alone in theirs.
[[nodiscard]] StageLayout balance_layers(std::int64_t layers, std::int64_t stages, std::int64_t min_layers,
                                         double extra_first, double extra_last);

// Whether `layers` can fill pp stages of v chunks each: every chunk a layer
// (uniform split), or all but the heads' chunks on the end stages (balanced,
// v > 1 and pp > 1: pp * v - 2 <= layers, balance_layers). Overflow-free for
// any positive pp and v.
[[nodiscard]] bool layers_fill_chunks(std::int64_t layers, std::int64_t pp, std::int64_t v, PipelineSplit split);

// The layers alone split as evenly as possible, the first (layers mod stages)
// stages holding one more (DeepSpeed ds_utils.partition_uniform, v0.19.5
// deepspeed/runtime/utils.py; with stages dividing layers, Megatron-LM's even
// split and MaxText's num_layers_per_pipeline_stage). Infeasible when a stage
// would get fewer than `min_layers`.
[[nodiscard]] StageLayout uniform_layers(std::int64_t layers, std::int64_t stages, std::int64_t min_layers);

// Layers of each of the v virtual chunks of `stage`: water-filling, each
// layer to the chunk with the least work so far, counting the embedding
// (stage 0, chunk 0) and the output layer (stage p-1, chunk v-1) in
// layer-equivalents, ties to the earlier chunk. Megatron-LM splits a stage's
// layers evenly over its chunks; this also covers stages whose layer count v
// does not divide, and keeps the head-carrying chunks light (Llama 3 §3.3.2:
// one layer fewer on the first and last stages). With heads_in_split false
// the heads are left out of the water-filling (a uniform split: PipelineSplit).
[[nodiscard]] std::vector<std::int64_t> chunk_layers(const StageLayout& layout, std::int64_t stage, std::int64_t v,
                                                     double extra_first, double extra_last, bool heads_in_split = true);

// Interleaved 1F1B advances in rounds: p micro-batches through chunk 0 of
// every stage, then chunk 1, ... In the steady state each round is paced by
// its slowest stage, so one micro-batch costs sum_c max_s t(s, c) in
// layer-equivalents (t: layers of chunk c on stage s plus the head it
// carries), at least the heaviest stage's total. An approximation checked
// against the event simulation (`planner simulate`); exact for uniform chunks.
[[nodiscard]] double interleaved_pace_layers(const StageLayout& layout, std::int64_t v, double extra_first,
                                             double extra_last, bool heads_in_split = true);

// Stage-units of micro-batch activations that `stage` holds at its peak, with
// m = micro_batches per step. GPipe: m. 1F1B: min(m, p - stage) (Narayanan et
// al. 2021 §2.2). Interleaved with v chunks (Megatron-LM schedule): warm-up
// 2(p-stage-1) + (v-1)p chunk micro-batches plus the one in flight, in units
// of whole stages: for stage 0 p + (p-1)/v (Korthikanti et al. 2022 §4.2.3).
[[nodiscard]] double micro_batches_in_flight(Schedule s, std::int64_t p, std::int64_t v, std::int64_t micro_batches,
                                             std::int64_t stage);

// Chunk passes (forwards, and as many backwards) of `stage` that run with no
// pass of another micro-batch beside them when MoE all-to-alls overlap
// another micro-batch's compute (--overlap-a2a): the warm-up forwards, one
// more, and as many cool-down backwards. Megatron-Core pairs forward i+1 with
// backward i and schedules one extra warm-up forward to do so
// (pipeline_parallel/schedules.py get_pp_rank_microbatches: "When enabling
// overlap_moe_expert_parallel_comm, we schedule one extra micro-batch forward
// step"; combined_1f1b.py: "The forward step for the first microbatch is
// executed alone"). Warm-up as the simulator's order (simulate.h
// stage_op_order): GPipe all m, 1F1B and ZB-H1 min(p-stage-1, m), interleaved
// 2(p-stage-1) + (v-1)min(p, m) chunk passes (all m*v when m == p).
[[nodiscard]] std::int64_t unpaired_chunk_passes(Schedule s, std::int64_t p, std::int64_t v, std::int64_t micro_batches,
                                                 std::int64_t stage);

// Idle fraction of an ideal pipeline with uniform stages: (p-1)/(v*m + p-1),
// m = micro_batches (GPipe, 1F1B: v = 1; interleaved: Narayanan et al. 2021
// §2.2.2, bubble time (p-1)/v micro-batch times against m of work). Not the
// closed form's StepTimeBreakdown::bubble_fraction (its priced bubble over its
// step) nor the simulator's SimResult::critical_wait_fraction().
[[nodiscard]] double ideal_bubble_fraction(std::int64_t p, std::int64_t v, std::int64_t micro_batches);

}  // namespace planner
