#include "planner/model/contention.h"

#include <algorithm>

namespace planner {

double hbm_bytes_per_bus_byte(Collective c) {
  switch (c) {
    case Collective::all_reduce:
    case Collective::reduce_scatter:
      return 3.0;
    case Collective::all_gather:
    case Collective::all_to_all:
    case Collective::send_recv:
      return 2.0;
  }
  return 2.0;
}

// NCCL runs one CTA per channel, each on an SM no compute kernel shares
// (NVIDIA/nccl#689), for the whole collective (src/enqueue.cc: a
// collective's grid is its channel count). On 8x H100, 24 of 132 SMs: 18%,
// the 18.9% average compute slowdown under overlap that Lee et al. 2025
// measured ("Characterizing Compute-Communication Overlap in GPU-Accelerated
// Distributed Deep Learning", arXiv:2507.03114). The channels of a group
// confined to the scale-up domain are tier 0's, of a group crossing domains
// tier 1's. HBM: the bytes it moves over its duration, against the achieved
// HBM bandwidth (roofline, Williams et al. 2009; communication and GEMMs
// "compete for memory bandwidth", NVIDIA/nccl#1433).
ContentionShare contention_share(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                 const CollectiveCost& cost) {
  ContentionShare s;
  if (hw.tiers.empty() || g.size <= 1) return s;
  const InterconnectTier& tier = hw.tiers[g.crosses_domains() && hw.tiers.size() > 1 ? 1 : 0];
  if (hw.efficiency.compute_units > 0)
    s.sm = std::min(1.0, double(tier.collective_channels) / double(hw.efficiency.compute_units));
  const double hbm = hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency;
  // Its bytes spread over its whole duration (latency included): the HBM
  // rate it draws is k * bus bytes / total time.
  if (hbm > 0 && cost.bandwidth_s > 0 && cost.total_s() > 0)
    s.hbm = std::min(
        1.0, hbm_bytes_per_bus_byte(c) * cost.bus_bandwidth_bytes_per_s * (cost.bandwidth_s / cost.total_s()) / hbm);
  return s;
}

double contention_s(const HardwareProfile& hw, const GroupPlacement& g, Collective c, const CollectiveCost& cost,
                    double hidden_s, double window_s, double memory_bound_s) {
  if (!(hidden_s > 0) || !(window_s > 0)) return 0.0;
  const ContentionShare s = contention_share(hw, g, c, cost);
  const double f = std::clamp(memory_bound_s / window_s, 0.0, 1.0);
  return hidden_s * ((1.0 - f) * s.sm + f * s.hbm);
}

}  // namespace planner
