// Exhaustive search over TP x CP x PP x DP = N, micro-batch size, virtual
// stages, recomputation, ZeRO stage and sequence parallelism, and for MoE
// models expert parallelism (EP, ETP; MoE parallel folding): enumerate, prune
// (structure first, then memory), rank by step time, keep the top K.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/spec/specs.h"

namespace planner {

// Values the user fixed; unset fields are searched.
struct SearchPins {
  std::optional<std::int64_t> tp, cp, pp, dp, micro_batch_size, virtual_stages;
  std::optional<Recompute> recompute;
  std::optional<int> zero_stage;
  std::optional<bool> reshard_after_forward;  // ZeRO-3 only
  std::optional<bool> sequence_parallel;
  // Expert parallelism (MoE models only): EP and expert TP.
  std::optional<std::int64_t> ep, etp;
};

// The layout the pins give, each knob not pinned at its default: degrees 1,
// micro-batch 1, one virtual stage, no recompute, ZeRO 0, sequence parallelism
// on when TP > 1 (as `planner evaluate`), schedule 1F1B.
[[nodiscard]] ParallelConfig pinned_config(const SearchPins& pins);

// How far a running search is: configurations enumerated so far out of all
// it will enumerate (SearchResult::considered at the end).
struct SearchProgress {
  std::int64_t considered = 0;
  std::int64_t total = 0;
};

struct SearchSpec {
  TrainingSpec training;  // GPUs, sequence length, global batch, dtype, ...
  SearchPins pins;
  std::size_t top_k = 10;
  std::int64_t max_micro_batch_size = 16;
  std::int64_t max_virtual_stages = 8;
  std::int64_t max_cp = 64;
  // Called, when set, each time about progress_every more configurations
  // have been enumerated, and once at the end (considered == total). The
  // library only counts; a caller that shows progress decides when and how
  // (the CLI: on a terminal, after a second).
  std::function<void(const SearchProgress&)> progress;
  std::int64_t progress_every = 4096;
  // Keep every feasible configuration's (layout, step, memory) in
  // SearchResult::points, for a scatter of the whole trade-off (--html). Off
  // by default: the ranked table needs only the top K.
  bool collect_points = false;
};

// One feasible configuration, as a scatter of the search draws it.
struct SearchPoint {
  ParallelConfig config;
  double step_s = 0;
  double memory_bytes = 0;  // per GPU, peak stage
};

struct SearchResult {
  std::vector<Evaluation> top;  // best first
  std::int64_t considered = 0;  // configurations enumerated
  std::int64_t feasible = 0;
  std::int64_t rejected = 0;
  std::array<std::int64_t, kNumReasons> rejections{};  // by first reason
  std::vector<SearchPoint> points;  // every feasible one, in enumeration order, when spec.collect_points
};

// Keeps only the top_k best configurations, so memory stays bounded however
// many it enumerates. A model or training run outside the size bounds of
// limits.h, or a pin below 1, is an InputError.
[[nodiscard]] SearchResult search(const ModelSpec& model, const HardwareProfile& hw, const SearchSpec& spec);

// Strict ordering used to rank results: step time, then memory, then the
// configuration itself (deterministic ties).
[[nodiscard]] bool better(const Evaluation& a, const Evaluation& b);

}  // namespace planner
