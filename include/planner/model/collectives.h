// Alpha-beta (Hockney) costs of collectives over a process group placed on the
// hardware's tiers. Ranks are ordered [TP, CP, PP, DP] with TP innermost, so a
// group is described by its size and its stride in that order; placement()
// derives how many members share a node (or torus axis) and which links the
// group crosses. Used by step_time.cpp for TP, CP, PP and DP communication.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "planner/spec/names.h"
#include "planner/spec/specs.h"

namespace planner {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
// ring .. direct: the planner's own names; nvls .. pat: NCCL's algorithms
// (NCCL_ALGO: NVLS, NVLSTree, CollNetDirect, PAT) where the profile carries
// NCCL's tuning (HardwareProfile::nccl_generation).
enum class Algorithm { none, ring, tree, torus, direct, nvls, nvls_tree, collnet, pat };
// NCCL's protocols (NCCL_PROTO); none where the profile has no NCCL tuning.
enum class Protocol { none, ll, ll128, simple };
inline constexpr Collective kAllCollectives[] = {Collective::all_reduce, Collective::all_gather,
                                                 Collective::reduce_scatter, Collective::all_to_all,
                                                 Collective::send_recv};
static_assert(std::size(kAllCollectives) == kNumCollectives);
// The identifier of each collective in files (hardware profiles, measurement
// files); to_string(Collective) is the text for people ("all-reduce").
inline constexpr EnumName<Collective> kCollectiveKeyNames[] = {{Collective::all_reduce, "all_reduce"},
                                                               {Collective::all_gather, "all_gather"},
                                                               {Collective::reduce_scatter, "reduce_scatter"},
                                                               {Collective::all_to_all, "all_to_all"},
                                                               {Collective::send_recv, "send_recv"}};
constexpr std::span<const EnumName<Collective>> name_table(Collective) { return kCollectiveKeyNames; }

struct GroupPlacement {
  std::int64_t size = 1;
  std::int64_t stride = 1;
  std::int64_t members_per_domain = 1;                  // members inside one tier-0 domain (node / pod)
  std::int64_t domains = 1;                             // tier-0 domains the group spans
  std::array<std::int64_t, 3> torus_extent{1, 1, 1};    // torus only: members along each axis
  std::array<bool, 3> torus_wrap{false, false, false};  // axis fully covered: wrap-around link usable
  // send/recv only: the communicator the pair sends on, where it is not this
  // group (a pipeline hop sends on the PP group's): its ranks and GPUs a node;
  // 0: this group is the communicator.
  std::int64_t comm_size = 0, comm_members_per_domain = 0;
  [[nodiscard]] bool crosses_domains() const { return domains > 1; }
};

struct CollectiveCost {
  Algorithm algorithm = Algorithm::none;
  Protocol protocol = Protocol::none;
  double latency_s = 0;                  // alpha terms (incl. the base launch latency)
  double bandwidth_s = 0;                // beta terms
  double bus_bandwidth_bytes_per_s = 0;  // the bottleneck bandwidth used
  int p2p_channels_used = 0;         // send/recv: NCCL's p2p channels, where they (not the link) limit
  int ctas_per_nic = 0;              // ring/tree/NVLS tree across nodes: NCCL's CTAs a NIC, where they (not the NIC) limit
  [[nodiscard]] double total_s() const { return latency_s + bandwidth_s; }
};

[[nodiscard]] GroupPlacement placement(const HardwareProfile& hw, std::int64_t size, std::int64_t stride);
class Explain;
// For --explain: where NCCL's p2p channels, not the link, set a send/recv's
// bandwidth (CollectiveCost::p2p_channels_used), one step saying so, with the
// source and the approximation; nothing otherwise.
void explain_p2p_channels(Explain* ex, const char* what, const CollectiveCost& c, double bytes);


// `bytes`: all-reduce: per-rank buffer; all-gather: gathered (output) size;
// reduce-scatter: input size; all-to-all: bytes each rank sends in total;
// send/recv: the message. With NCCL tuning (hw.nccl_generation) all-reduce,
// all-gather and reduce-scatter price every algorithm and protocol NCCL could
// run and keep the one its tuner picks (src/graph/tuning.cc); without it (or
// with a fitted alpha-beta for `c`), the cheaper of ring and tree (torus on a
// torus tier). `force` restricts the choice to one algorithm (a run made with
// NCCL_ALGO); where that algorithm cannot run the collective it is ignored.
[[nodiscard]] CollectiveCost collective_cost(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                             double bytes, std::optional<Algorithm> force = std::nullopt);

// The cost of one collective over one group as a function of its size: what
// does not depend on the bytes (NCCL's candidate algorithms and protocols with
// their latencies and bandwidths) is worked out once, so a caller pricing the
// same group and collective at several sizes (the DP reduction, its last
// bucket, per stage) pays for it once. at(bytes) == collective_cost(hw, g, c,
// bytes, force). Holds a pointer to `hw`, which must outlive it.
class CollectiveCurve {
 public:
  CollectiveCurve(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                  std::optional<Algorithm> force = std::nullopt);
  [[nodiscard]] CollectiveCost at(double bytes) const;
  // Points the curve at `hw`, a profile equal to the one it was built from in
  // every field it reads: the per-thread memo (nccl_curve.cpp cached_curve)
  // hands a curve built for one profile object to a caller holding an equal
  // one, and the first may be gone by then.
  void rebind(const HardwareProfile& hw) { hw_ = &hw; }

 private:
  struct Candidate {  // filled by build_nccl before use; no default initialisation (priced per call)
    Algorithm algorithm;
    int protocol;  // NCCL's index: LL, LL128, Simple
    double latency_us, bus_gbps, algbw_gbps, per_channel_gbps;
    double us_per_byte;     // 1 / (1e3 * algbw_gbps)
    double run_latency_us;  // what the run costs when this candidate wins (latency_us: what NCCL's tuner expects)
    bool tree;  // takes NCCL's tree correction by size
  };
  // NCCL's per-hop latencies as a fit scales them (1: the tables' own).
  struct LatencyScale {
    double base = 1, nvlink = 1, net = 1;
  };
  // build_nccl on the profile as the fits of c that NCCL's tuner prices
  // (CollectiveFit::nccl_tuner) set it; without such fits, on hw as it is.
  void build_nccl_fitted(std::optional<Algorithm> force);
  void build_nccl(const HardwareProfile& hw, std::optional<Algorithm> force, const LatencyScale& scale);
  [[nodiscard]] CollectiveCost nccl_at(double bytes) const;

  const HardwareProfile* hw_;
  GroupPlacement g_;
  Collective c_;
  std::optional<Algorithm> force_;
  bool nccl_ = false;
  std::array<Candidate, 12> cand_;  // the first count_ are set
  int count_ = 0;
  double channels_ = 0, plateau_ = 1.0, plateau_bytes_ = 0;
  std::int64_t ranks_ = 1;
  int ctas_per_nic_ = 0;  // CollectiveCost::ctas_per_nic of this group
};

// What one send/recv of `bytes` between members of `g` moves at, per GPU
// (the one rule collective_cost, evaluate, the simulator and calibrate fit
// use): the link's (the NIC share across nodes, NVLink in a node) or, with
// NCCL tuning, NCCL's p2p channels for that message x what one channel moves,
// where they give less (src/graph/paths.cc ncclTopoComputeP2pChannels,
// src/enqueue.cc addP2pToPlan; docs/cost_model.md "Communication"). The
// channels are those of the communicator (g, or g.comm_* for a pipeline hop).
// A fitted send/recv (calibrate fit) sets the link and, where it carries
// p2p_channel_bandwidth_bytes_per_s, the per-channel rate; a fit without it
// has no channel cap (channels 0).
struct SendRecvBandwidth {
  bool remote = false;                 // priced on tier 1 (the pair or ring of pairs crosses nodes)
  double link_bytes_per_s = 0;         // per GPU
  int channels = 0;                    // NCCL's p2p channels for the message; 0: no channel cap
  double per_channel_bytes_per_s = 0;  // what one channel moves
  [[nodiscard]] double channel_bytes_per_s() const { return double(channels) * per_channel_bytes_per_s; }
  [[nodiscard]] bool channel_bound() const { return channels > 0 && channel_bytes_per_s() < link_bytes_per_s; }
  [[nodiscard]] double bytes_per_s() const { return channel_bound() ? channel_bytes_per_s() : link_bytes_per_s; }
};
[[nodiscard]] SendRecvBandwidth send_recv_bandwidth(const HardwareProfile& hw, const GroupPlacement& g, double bytes);

// Per-GPU bandwidth of the bottleneck link a ring over this group uses.
[[nodiscard]] double ring_bandwidth_bytes_per_s(const HardwareProfile& hw, const GroupPlacement& g);

[[nodiscard]] const char* to_string(Collective c);
// The identifier used in files (kCollectiveKeyNames): all_reduce, all_gather,
// reduce_scatter, all_to_all, send_recv.
[[nodiscard]] const char* collective_key(Collective c);
[[nodiscard]] std::optional<Collective> collective_from_key(std::string_view key);
[[nodiscard]] const char* to_string(Algorithm a);
[[nodiscard]] const char* to_string(Protocol p);
// "ring", or "ring/LL128" where a protocol was chosen.
[[nodiscard]] std::string describe(const CollectiveCost& c);

}  // namespace planner
