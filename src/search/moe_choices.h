// The recomputation and all-to-all overlap the search tries for a MoE model
// (private to src/search/): Megatron's recompute-module sets that DeepSeek
// and NVIDIA's recipes run, full and none, each with --overlap-a2a off and on
// where not pinned. search.cpp keeps, per layout, the cheapest that fits.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/model/layer_cost.h"
#include "planner/search/search.h"
#include "planner/spec/specs.h"

namespace planner::search_detail {

struct TrainingChoice {
  Recompute recompute = Recompute::none;
  std::uint8_t modules = 1;  // TrainingSpec::recompute_modules, read under Recompute::selective
  bool overlap_a2a = false;
};

// The choices the pins and the model allow, in a fixed order (none, the
// module sets, full; each without then with overlap). `ts` carries a given
// --recompute-modules and --overlap-a2a.
[[nodiscard]] std::vector<TrainingChoice> moe_training_choices(const ModelSpec& model, const SearchSpec& spec,
                                                               const TrainingSpec& ts);

// One choice priced on a layout (the per-layer and head costs evaluate reuses).
struct PricedChoice {
  ParallelConfig pc;
  TrainingSpec ts;
  LayerTime lt;
  HeadTime head;
};

// The choices on `base`, the overlap kept only where it prices the layer
// cheaper (and never at EP 1, where there is nothing to overlap), sorted by
// per-layer time; `floor` receives the index of the one storing the least
// activations: full recomputation when listed, else the least stored + the
// recompute working layer weighted 1/16 (one layer of the ~16 a peak stage
// holds in flight: a heuristic for which to try first). With `keep_exposed`
// the exposed choice stays beside an overlapped one that prices cheaper, for
// the variants of `base` a framework rule refuses the overlap (Megatron: PP > 1
// without virtual stages).
[[nodiscard]] std::vector<PricedChoice> price_choices(const ModelSpec& model, const HardwareProfile& hw,
                                                      const TrainingSpec& ts, const ParallelConfig& base,
                                                      const std::vector<TrainingChoice>& choices, std::size_t& floor,
                                                      bool keep_exposed = false);

}  // namespace planner::search_detail
