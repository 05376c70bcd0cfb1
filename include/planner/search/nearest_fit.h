// When a search finds no feasible layout: the nearest changes that give one
// (fewer or more GPUs, another global batch, a pinned knob let go, FP8),
// each verified by running the search with that one change. Sits after
// search(); the search report prints what it returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/search/search.h"
#include "planner/spec/specs.h"

namespace planner {

struct FitSuggestion {
  std::string change;     // as a flag: "--gpus 992", "--global-batch 2040", "--recompute full", "drop --tp"
  Evaluation best;        // the best layout the search finds with that change
  TrainingSpec training;  // the training run it was searched with
};

// Bounds, so that a failed search stays quick: each candidate is a full
// search, so at most this many GPU counts are tried in each direction and
// this many global batch sizes; knobs are a handful more. The GPU counts are
// the multiples of the scale-up domain nearest N (below the domain size,
// every count), the batch sizes the multiples of N's divisors nearest the
// batch. The bound is a count of searches (at most 6 + 6 + 6 + one per pin
// + 1), not a clock, so the output stays deterministic; a search is one
// enumeration of the layouts (`search -m llama405b -n 1000 --tp 8 --pp 1-64`
// with its suggestions: 0.3 s on a 2-core VM).
struct FitSearchLimits {
  int gpu_counts_each_way = 6;
  int batch_sizes = 6;
};

// Empty when nothing tried fits (or the search had results). The GPU-count
// suggestions come first (below, then above), then global batch, then knobs.
[[nodiscard]] std::vector<FitSuggestion> nearest_fits(const ModelSpec& model, const HardwareProfile& hw,
                                                      const SearchSpec& spec, const FitSearchLimits& limits = {});

}  // namespace planner
