// The layouts a search visits: the knobs' candidate values and every
// (tp, cp, pp, dp) the pins allow, with the virtual-stage, SP and expert
// choices each admits (private to src/search; search.cpp prices them).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "planner/search/search.h"

namespace planner::layout_space {

std::vector<std::int64_t> divisors_up_to(std::int64_t n, std::int64_t limit);

// The values the search tries for a knob: a pin of one value as given; a
// pin of several, those of them among `valid` (`--pp 1-16`: the valid values
// in the range); no pin, every valid value.
template <typename T>
std::vector<T> pinned_or(const Pin<T>& pin, std::vector<T> valid) {
  if (pin.single()) return pin.values();
  if (!pin) return valid;
  std::vector<T> out;
  for (const T& v : valid)
    if (pin.allows(v)) out.push_back(v);
  return out;
}

// A pin's values as the candidates themselves (knobs whose every positive
// value is a candidate: micro-batch size, ZeRO stage, recomputation).
template <typename T>
std::vector<T> pinned_values_or(const Pin<T>& pin, std::vector<T> all) {
  return pin ? pin.values() : all;
}

// A ZeRO stage and, at ZeRO-3, whether the gathered weights are freed after
// the forward.
struct Sharding {
  int zero_stage = 0;
  bool reshard_after_forward = true;
  std::int64_t zero_shard = 0;  // hybrid sharding's group (ParallelConfig::zero_shard); 0: all of DP x CP
  bool shard_as_given = false;  // --zero-shard pinned to this one value: tried as given on every layout
};

// The values of the knobs that do not depend on the other degrees: the pinned
// value alone, else every candidate.
struct Axes {
  std::vector<std::int64_t> tps, cps, mbss;
  std::vector<Recompute> recs;
  std::vector<Sharding> shardings;
};

[[nodiscard]] Axes search_axes(const HardwareProfile& hw, const SearchSpec& spec);

// ZeRO shards over the DP x CP ranks holding the same weights, and a MoE
// model's routed experts over the EDP ranks (`edp`: expert_dp_size, 1 for a
// dense model); with one rank of each every stage shards nothing (ZeRO-3
// gathers from itself) and all equal ZeRO 0 in memory and time, so the
// lowest stage given stands for all and an identical configuration is priced
// (and listed) once. Hybrid shard groups (--zero-shard) this (dp, cp) cannot
// form are left out, unless the pin held one value (Sharding::shard_as_given:
// rejected with its reason); one spanning all of DP x CP is plain ZeRO.
[[nodiscard]] std::vector<Sharding> distinct_shardings(std::vector<Sharding> shardings, std::int64_t dp,
                                                       std::int64_t cp, std::int64_t edp);

// One (tp, cp, pp, dp) with tp*cp*pp*dp = N, and the virtual-stage and SP
// choices it allows.
struct Outer {
  std::int64_t tp, cp, pp, dp;
  std::vector<std::int64_t> vpps;
  std::vector<bool> sps;
  std::vector<std::pair<std::int64_t, std::int64_t>> experts;  // (ep, etp); (1, 1) for dense models
};

struct Enumeration {
  std::vector<Outer> outers;
  std::int64_t total = 0;  // configurations, all knobs
};

// Every (tp, cp, pp, dp) the pins allow, listed first (a few thousand at
// most), so that the number of configurations is known before pricing;
// virtual stages up to what `split` lets the layers fill (layers_fill_chunks:
// the framework's split under --framework).
[[nodiscard]] Enumeration enumerate_layouts(const ModelSpec& model, const SearchSpec& spec, const Axes& ax,
                                            PipelineSplit split);

}  // namespace planner::layout_space
