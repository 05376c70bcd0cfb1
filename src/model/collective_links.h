// The links a collective crosses (private to src/model/): per-GPU bandwidths
// and latencies of a group placed on the hardware's tiers, and the per-thread
// memo of NCCL-priced curves. collectives.cpp prices with them;
// nccl_curve.cpp builds NCCL's candidates from them.
#pragma once

#include <cstddef>
#include <optional>

#include "planner/model/collectives.h"

namespace planner::detail {

[[nodiscard]] bool is_torus(const HardwareProfile& hw);
// The fitted alpha-beta of `c` on `tier` (planner calibrate fit), or nullptr.
[[nodiscard]] const CollectiveFit* fit_for(const HardwareProfile& hw, std::size_t tier, std::optional<Collective> c);
// Bandwidth to the scale-out network per GPU: the node's NICs shared by its GPUs.
[[nodiscard]] double nic_bandwidth_per_gpu(const HardwareProfile& hw, std::optional<Collective> c = std::nullopt);
// Per-GPU ring bandwidth inside one tier-0 domain.
[[nodiscard]] double intra_bandwidth(const HardwareProfile& hw, const GroupPlacement& g,
                                     std::optional<Collective> c = std::nullopt);
[[nodiscard]] double hop_latency(const HardwareProfile& hw, std::size_t tier,
                                 std::optional<Collective> c = std::nullopt);
[[nodiscard]] double base_latency(const HardwareProfile& hw, bool crosses_domains, std::optional<Collective> c);
// The channels of NCCL's ring across nodes when `members` GPUs of each node
// leave it through their NICs: one searched ring per NIC, doubled or not by
// NCCL's rules (`rings`, the ring graph's nChannels that tuning.cc multiplies
// per-channel caps by), two CTAs per ring, doubled again below 16 on Hopper+
// (`ctas`) (src/graph/search.cc ncclTopoCompute, ncclTopoDupChannels;
// src/graph/connect.cc ncclTopoPostset; NCCL 2.29.2). DGX H100, 8 GPUs a node:
// 8 NICs, 8 rings, 16 CTAs (2 a NIC); 1-4 GPUs a node: 4 CTAs a NIC. All 0
// without NCCL tuning or a switched scale-out tier.
struct RingChannels {
  double nics = 0, rings = 0, ctas = 0;
};
[[nodiscard]] RingChannels ring_channels(const HardwareProfile& hw, std::int64_t members);
// nic_bandwidth_per_gpu with each NIC capped at its CTAs x one NVLink's worth
// a CTA (NCCL's per-link figure, the approximation send/recv uses in a node):
// two CTAs move ~41 GB/s, less than a 400G NIC's 47.
[[nodiscard]] double ring_nic_bandwidth_per_gpu(const HardwareProfile& hw, std::int64_t members,
                                                std::optional<Collective> c = std::nullopt);
// The ring's bottleneck: NVLink inside a node, the members' NICs across nodes.
[[nodiscard]] double ring_bandwidth(const HardwareProfile& hw, const GroupPlacement& g, std::optional<Collective> c);

// The channels NCCL moves one send/recv of `bytes` on, between two ranks of a
// communicator of `ranks` ranks on different nodes or in one (src/graph/paths.cc
// ncclTopoComputeP2pChannels, src/enqueue.cc addP2pToPlan; NCCL >= 2.29); 0
// where the profile has no NCCL tuning or no channel count for that tier.
// `comm_gpus_per_node` > 0: the communicator spans nodes with that many GPUs on
// each, and its p2p channels are pow2Up of its CTAs (ring_channels: 4 with one
// GPU a node on DGX H100), capped by the profile's count; 0: the profile's count.
[[nodiscard]] int p2p_channels(const HardwareProfile& hw, std::int64_t ranks, bool across_nodes, double bytes,
                               std::int64_t comm_gpus_per_node = 0);

// The NCCL curve of `c` over `g` from the calling thread's memo (built on a miss).
[[nodiscard]] const CollectiveCurve& cached_curve(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                                  std::optional<Algorithm> force);
// The curve of `c` over `g` as collective_cost prices it, by value: copied
// from the memo where NCCL's tables price it, built otherwise (cheap then).
[[nodiscard]] CollectiveCurve collective_curve(const HardwareProfile& hw, const GroupPlacement& g, Collective c);

}  // namespace planner::detail
