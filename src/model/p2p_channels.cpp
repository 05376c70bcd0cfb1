// NCCL's p2p channels for send/recv (src/graph/paths.cc
// ncclTopoComputeP2pChannels, src/enqueue.cc addP2pToPlan): how many a message
// moves on, what each moves, and the bandwidth one send/recv gets from them
// and its link (send_recv_bandwidth, collectives.h); collectives.cpp prices
// send/recv with it, calibrate fit recovers the per-channel rate through it.
#include <algorithm>
#include <bit>
#include <cmath>

#include "model/collective_links.h"
#include "model/nccl_tables.h"
#include "planner/model/collectives.h"
#include "planner/model/explain.h"

namespace planner {

void explain_p2p_channels(Explain* ex, const char* what, const CollectiveCost& c, double bytes) {
  if (!ex || c.p2p_channels_used <= 0) return;
  note_step(ex, what,
            "B = p2p channels x per-channel rate (across nodes NCCL_P2P_PER_CHANNEL_NET_BW 14 GB/s; in a node one "
            "NVLink, NCCL's per-link figure: an approximation; a calibrated profile's fitted rate where it has one); "
            "the communicator's p2p channels follow its GPUs a "
            "node (pipeline sends: the PP group's; PP 2's WORLD direction priced as the PP one)",
            "NVIDIA/nccl src/graph/paths.cc ncclTopoComputeP2pChannels, src/enqueue.cc addP2pToPlan (NCCL 2.29); "
            "Megatron-LM core_v0.19.0 megatron/core/pipeline_parallel/p2p_communication.py",
            {{"bytes", bytes}, {"p2p_channels", double(c.p2p_channels_used)}}, c.bus_bandwidth_bytes_per_s, "B/s");
}

namespace detail {

int p2p_channels(const HardwareProfile& hw, std::int64_t ranks, bool across_nodes, double bytes,
                 std::int64_t comm_gpus_per_node) {
  if (hw.nccl_generation == NcclGeneration::none || hw.tiers.size() < (across_nodes ? 2u : 1u)) return 0;
  const InterconnectTier& t = hw.tiers[across_nodes ? 1 : 0];
  if (t.topology != Topology::switched || t.collective_channels <= 0) return 0;
  const auto pow2_up = [](std::int64_t x) {
    return std::int64_t(std::bit_ceil(std::uint64_t(std::max<std::int64_t>(x, 1))));
  };
  // The communicator's p2p channels: pow2Up of its channels (paths.cc,
  // ncclTopoComputeP2pChannels: p2pnChannels from comm->nChannels). One that
  // spans nodes has its ring search's CTAs (ring_channels), which follow its
  // GPUs a node; the profile's count (16 across DGX H100 nodes) caps them.
  std::int64_t comm_channels = t.collective_channels;
  if (comm_gpus_per_node > 0 && hw.tiers.size() > 1 && hw.tiers[1].collective_channels > 0) {
    comm_channels = hw.tiers[1].collective_channels;
    if (const double ctas = ring_channels(hw, comm_gpus_per_node).ctas; ctas > 0)
      comm_channels = std::min(comm_channels, std::int64_t(ctas));
  }
  const std::int64_t total = pow2_up(comm_channels);
  const std::int64_t n_ranks = std::max<std::int64_t>(ranks, 1);
  std::int64_t per_peer = total;  // NVSwitch: two channels per NVLink of the path, more than `total`
  if (across_nodes) {
    if (t.bandwidth_nominal_bytes_per_s <= 0 || t.nics_per_node <= 0) return 0;
    // The NICs nearest the GPU and their speed in whole GB/s, as NCCL's topology reports them.
    const std::int64_t nets = std::max<std::int64_t>(1, t.nics_per_node / std::max<std::int64_t>(t.gpus_per_node, 1));
    const double net_gbps = std::floor(double(nets) * t.bandwidth_nominal_bytes_per_s / 1e9);
    per_peer = pow2_up(std::max<std::int64_t>(nets, std::int64_t(std::ceil(net_gbps / nccl::kP2pPerChannelNetBw))));
    const std::int64_t rounds = (n_ranks + nccl::kMaxP2pPerBatch - 1) / nccl::kMaxP2pPerBatch;
    while (per_peer * rounds > total && per_peer > 1) per_peer /= 2;
  }
  per_peer = std::min(per_peer, total);
  // One message (src/enqueue.cc, addP2pToPlan): start from the channels that
  // give every rank one, then double while a part exceeds the chunk bound.
  std::int64_t min_ch = per_peer;
  while (min_ch * n_ranks > total && min_ch > 1) min_ch /= 2;
  const double step = across_nodes ? nccl::kP2pNetChunkBytes : nccl::kP2pNvlChunkBytes;
  const double min_part = across_nodes ? step / 2 : step / 8, max_part = across_nodes ? step : 32 * step;
  std::int64_t n = std::max<std::int64_t>(1, std::min<std::int64_t>(min_ch, std::int64_t(std::ceil(bytes / min_part))));
  double part = std::max(min_part, std::ceil(bytes / double(n)));
  while (part > max_part && n <= per_peer / 2) {
    n *= 2;
    part = std::ceil(bytes / double(n));
  }
  return int(n);
}

}  // namespace detail

using namespace detail;

SendRecvBandwidth send_recv_bandwidth(const HardwareProfile& hw, const GroupPlacement& g, double bytes) {
  constexpr Collective c = Collective::send_recv;
  SendRecvBandwidth out;
  // A ring of send/recv pairs (nccl-tests sendrecv_perf, a pipeline's stage
  // boundaries) is paced by its slowest pair: once the group spans domains,
  // some pair crosses the network whatever the stride.
  out.remote = g.stride >= (hw.tiers.empty() ? 1 : hw.tiers[0].size) || g.crosses_domains();
  out.link_bytes_per_s =
      out.remote ? nic_bandwidth_per_gpu(hw, c) : intra_bandwidth(hw, GroupPlacement{.members_per_domain = 2}, c);
  if (is_torus(hw)) {
    if (!out.remote) out.link_bytes_per_s = hw.tiers[0].bandwidth_achieved_bytes_per_s;  // one neighbour link
    return out;
  }
  // NCCL moves the message on its p2p channels to that peer (p2p_channels):
  // across nodes each drives about NCCL_P2P_PER_CHANNEL_NET_BW (14 GB/s) of
  // network and NCCL opens fewer the larger the communicator (DGX H100: 4, so
  // the NIC limits, up to 32 ranks; 2 up to 64; 1 beyond: an 80-rank sendrecv
  // ring runs at ~14 GB/s a pair); over NVLink each moves about one NVLink's
  // worth (NCCL's per-link figure) and a message below 16 MiB x the channels
  // every rank gets uses only those (8 ranks: 4 channels, ~82 GB/s at 32 MiB).
  // The communicator is the group's (or g.comm_*, a pipeline hop's PP
  // group): its ranks set the rounds, its GPUs a node its p2p channels (4
  // with one GPU a node across DGX H100 nodes, so PP 16 at one GPU a node
  // gets 2 channels, 28 GB/s). A fitted send/recv (calibrate fit) carries
  // its own per-channel rate, recovered with the channels of the measured
  // communicator, and is priced with this communicator's channels; a fit
  // without one already holds whatever capped the measured run.
  const CollectiveFit* fit = fit_for(hw, out.remote ? 1 : 0, c);
  if (fit && !(fit->p2p_channel_bandwidth_bytes_per_s > 0)) return out;
  const std::int64_t comm_ranks = g.comm_size > 0 ? g.comm_size : g.size;
  const std::int64_t comm_ppn =
      g.comm_size > 0 ? std::max<std::int64_t>(1, g.comm_members_per_domain) : g.members_per_domain;
  const std::int64_t comm_multi_ppn = comm_ranks > comm_ppn ? comm_ppn : 0;
  out.channels = p2p_channels(hw, comm_ranks, out.remote, bytes, comm_multi_ppn);
  if (out.channels <= 0) return out;
  out.per_channel_bytes_per_s = fit ? fit->p2p_channel_bandwidth_bytes_per_s
                                    : 1e9 * (out.remote ? nccl::kP2pPerChannelNetBw
                                                        : nccl::kNvlinkBwPerLink[std::size_t(hw.nccl_generation) - 1]);
  return out;
}

}  // namespace planner
