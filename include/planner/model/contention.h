// Compute-communication contention: an NCCL collective that runs beside
// compute (overlapped) occupies one SM per channel and moves its bytes
// through HBM, so the kernels it hides behind run slower. Read by
// layer_cost.cpp (CP exchange), priced_plan.cpp (ZeRO-2/3 per-layer traffic)
// and step_time.cpp (DP reduction and weight gathers); the simulator gets the
// same durations through the PricedPlan.
#pragma once

#include "planner/model/collectives.h"
#include "planner/spec/specs.h"

namespace planner {

// The share of the GPU an overlapped collective on group `g` takes from the
// compute beside it: SMs (the tier's collective_channels, one CTA each, over
// compute_units) for the compute-bound part, HBM (`hbm_bytes_per_bus_byte`
// times its bus bytes over its duration, against the achieved HBM bandwidth)
// for the memory-bound part, each at most 1.
struct ContentionShare {
  double sm = 0, hbm = 0;
};

// HBM bytes an NCCL ring moves per byte of bus traffic: it reads what it sends
// and writes what it receives (2), and a reduction also reads the local
// operand it adds (3). An approximation (docs/cost_model.md, Known gaps).
[[nodiscard]] double hbm_bytes_per_bus_byte(Collective c);

[[nodiscard]] ContentionShare contention_share(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                               const CollectiveCost& cost);

// Extra compute time when a collective of cost `cost` is hidden for
// `hidden_s` behind a window of `window_s` of compute, `memory_bound_s` of it
// in HBM-bound kernels: while it runs, compute progresses at 1 - share, so
// it finishes share * hidden_s later, the share mixed as the window is
// (approximation: the collective overlaps compute- and memory-bound kernels
// in proportion). The HBM share counts the collective's bytes, not its peak
// rate, so a faster link or chip never adds contention beyond the exposed
// time it removes (tests/property_test.cpp).
[[nodiscard]] double contention_s(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                  const CollectiveCost& cost, double hidden_s, double window_s,
                                  double memory_bound_s);

}  // namespace planner
