// NCCL's tuner as a CollectiveCurve (collectives.h): every algorithm and
// protocol NCCL weighs for a group, built once (build_nccl), priced per size
// (nccl_at), and the per-thread memo of built curves (cached_curve).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "model/collective_links.h"
#include "model/nccl_tables.h"
#include "planner/model/collectives.h"

namespace planner {

using namespace detail;

namespace {

// --- NCCL's tuner (hw.nccl_generation set). Every algorithm NCCL could run
// for the collective, with each protocol, priced as NVIDIA/nccl
// src/graph/tuning.cc ncclTopoTuneModel / ncclTopoGetAlgoTime price them
// (the numbers: model/nccl_tables.h, NCCL 2.30.7): time = latency +
// bytes / algorithm bandwidth, latency = base + per-step latencies of the
// NVLink and network steps, algorithm bandwidth = bus bandwidth (the
// profile's achieved ring bandwidth, which stands for NCCL's channels x
// per-channel bandwidth) x the protocol's factor, capped by LL / LL128 /
// tree limits per channel, x ranks/steps. The cheapest wins, as in
// src/enqueue.cc topoGetAlgoInfo; the winner's bandwidth then drops with the
// channels NCCL uses for a message that small (the same file), which the
// tuner's own estimate leaves out.
namespace nc = nccl;

constexpr Protocol kProtocols[nc::kNumProtos] = {Protocol::ll, Protocol::ll128, Protocol::simple};

// floor(log2(x)) for x >= 1, as NCCL's log2i.
int log2i(std::int64_t x) { return x <= 1 ? 0 : int(std::bit_width(std::uint64_t(x))) - 1; }

}  // namespace

// Every algorithm and protocol the tuner weighs for this group, with what does
// not depend on the message size; at() adds the size-dependent parts (tree
// correction, ring plateau, channels by size).
void CollectiveCurve::build_nccl(const HardwareProfile& hw, std::optional<Algorithm> force, const LatencyScale& scale) {
  const GroupPlacement& g = g_;
  const Collective c = c_;
  const std::size_t gen = std::size_t(hw.nccl_generation) - 1;  // NCCL's compute-capability index
  const std::int64_t n = g.size, nodes = g.domains;
  const bool multi = nodes > 1, ar = c == Collective::all_reduce;
  const std::size_t col = nodes <= 2 ? std::size_t(nodes - 1) : 2;
  const std::int64_t ppn = n / nodes;  // NCCL: nRanks / nNodes
  const InterconnectTier& ch_tier = hw.tiers[multi && hw.tiers.size() > 1 ? 1 : 0];
  channels_ = double(ch_tier.collective_channels);  // 0: unknown, no per-channel limits
  const double channels = channels_;
  const double ch_cap = channels > 0 ? channels : std::numeric_limits<double>::infinity();
  const double ll_max = multi ? nc::kLLMaxBw[hw.host_cpu == HostCpu::amd ? 1 : 0][col] : nc::kLLMaxBw[gen][0];
  const double nsteps = ar ? 2.0 * double(n - 1) : double(n - 1);
  const double inter_steps = !multi ? 0.0 : ar ? 2.0 * double(nodes - 1) : double(nodes - 1);
  const double ring_ratio = double(n) / nsteps;  // bus -> algorithm bandwidth of ring and NVLS
  const double bw = ring_bandwidth(hw, g, std::nullopt) / 1e9;
  const double net_overhead = scale.net * (!multi                        ? 0.0
                                           : hw.host_cpu == HostCpu::amd ? nc::kNetOverheadAmdUs
                                                                         : nc::kNetOverheadIntelUs);
  // The tables' latencies, as a fit scales them (LatencyScale; 1 without one).
  auto inter_lat = [&](nc::Algo a, int p) {
    return scale.net * (ppn == 1 ? nc::kNetLatencyUs[nc::kTree][p] : nc::kNetLatencyUs[a][p]);
  };
  auto nvlink_lat = [&](nc::Algo a, int p) { return scale.nvlink * nc::kNvlinkLatencyUs[a][p]; };
  auto base_lat = [&](nc::Algo a, int p) { return scale.base * nc::kBaseLatencyUs[a][p]; };
  const double lg_nodes = double(log2i(nodes));
  ranks_ = n;
  plateau_ = ar && multi && channels > 0 ? (gen == 0 ? nc::kRingPlateauPreAmpere : nc::kRingPlateau) : 1.0;
  plateau_bytes_ = 64.0 * channels * double(n);  // the ring plateau applies from 64 bytes per channel and rank

  // run_lat_us: the latency the run pays when NCCL picks this candidate, where
  // it differs from the tuner's estimate (lat_us, which makes the choice).
  auto add = [&](Algorithm algo, int p, double lat_us, double bus, double algbw, double per_channel, bool tree,
                 double run_lat_us = -1.0) {
    if (force && *force != algo) return;
    if (!(algbw > 0)) return;
    cand_[std::size_t(count_++)] = {
        algo, p, lat_us, bus, algbw, per_channel, 1.0 / (1e3 * algbw), run_lat_us >= 0 ? run_lat_us : lat_us, tree};
  };

  // Ring: every collective here. Across nodes the LL128 cap counts the ring
  // graph's searched channels (tuning.cc: graphs[RING]->nChannels x
  // perChMaxRingLL128Bw), half the CTAs the profile's channel count holds:
  // 8 x 36.7 GB/s on 8 x H100 nodes (ring_channels).
  const double ring_rings = multi ? ring_channels(hw, ppn).rings : 0.0;
  const double ring_ll128_cap = ring_rings > 0 ? ring_rings : ch_cap;
  for (int p = 0; p < nc::kNumProtos; ++p) {
    double bus = bw, uncapped = bw;
    if (p == nc::kLL) bus = std::min(ll_max, uncapped = bw * nc::kRingLLFactor);
    if (p == nc::kLL128) bus = std::min(uncapped = bw * nc::kRingLL128Factor, ring_ll128_cap * nc::kPerChannelMaxRingLL128Bw[gen][col]);
    const double intra =
        std::max(nvlink_lat(nc::kRing, p), net_overhead * (p == nc::kSimple ? nc::kNetOverheadSimpleFactor : 1.0));
    const double lat = base_lat(nc::kRing, p) + (nsteps - inter_steps) * intra + inter_steps * inter_lat(nc::kRing, p);
    // The run, LL and LL128: every step of a ring moves a slice over every link
    // at once, so each waits for the slowest hop, and a ring that spans nodes
    // pays the network hop's latency at every one of its steps, not at the
    // node crossings only as the tuner's estimate counts them: ring latency =
    // steps x max_latency (sjeaugey, NVIDIA/nccl-tests#123, of an LL-sized
    // 8-128 B all-reduce: "This formula [2(n-1) x latency] is correct, but
    // network_latency should be called max_latency"). Simple keeps the
    // tuner's sum: its large chunks pipeline over the connection's slots, and
    // 14 us at every step prices the 10 x 2 / 10 x 4 H100 all-gathers 44-99%
    // slow where the LL128 rule fits them (tests/data/nccl_logs/README.md).
    // The tuner still chooses with its own estimate (NCCL picks by it).
    const double run_lat =
        multi && p != nc::kSimple ? base_lat(nc::kRing, p) + nsteps * std::max(intra, inter_lat(nc::kRing, p)) : lat;
    const double per_channel = channels > 0 ? uncapped * ring_ratio / channels : 0.0;
    add(Algorithm::ring, p, lat, bus, bus * ring_ratio, per_channel, false, run_lat);
  }
  if (ar) {
    // Tree (a chain inside each node, double binary tree across): all-reduce only.
    for (int p = 0; p < nc::kNumProtos; ++p) {
      double bus = std::min(bw * nc::kTreeAllReduceFactor, ch_cap * nc::kPerChannelMaxTreeBw[gen][col]);
      double uncapped = bw * nc::kTreeAllReduceFactor;
      if (p == nc::kLL) bus = std::min(uncapped = bus * nc::kTreeLLFactor, ll_max);
      if (p == nc::kLL128) {
        uncapped = bus * (multi ? nc::kTreeLL128NetFactor : nc::kTreeLL128NvlinkFactor);
        bus = std::min(uncapped, ch_cap * nc::kPerChannelMaxTreeLL128Bw[gen][col]);
      }
      const double lat = base_lat(nc::kTree, p) +
                         2.0 * (double(ppn - 1) * nvlink_lat(nc::kTree, p) + lg_nodes * inter_lat(nc::kTree, p));
      const double per_channel = channels > 0 ? uncapped * 0.5 / channels : 0.0;
      add(Algorithm::tree, p, lat, bus, bus * 0.5, per_channel, true);
    }
  }
  // NVLS: NVLink SHARP, Simple only, at least two GPUs of a node; across
  // nodes only with CollNet. Its all-reduce bus bandwidth is the profile's
  // measured figure; all-gather / reduce-scatter get NCCL's (ppn-1)/ppn in
  // place of all-reduce's x2 and no bus -> algorithm conversion.
  const double nvls_bus = hw.tiers[0].nvls_bus_bandwidth_bytes_per_s / 1e9;
  const bool collnet = multi && hw.tiers.size() > 1 && hw.tiers[1].collnet;
  // The node's NICs as its CTAs drive them (ring_nic_bandwidth_per_gpu): NVLS
  // tree runs NCCL's 16 NVLS channels over one head a NIC, 2 CTAs a NIC on
  // DGX H100, as the ring does.
  const double node_nic = multi ? double(ppn) * ring_nic_bandwidth_per_gpu(hw, ppn) / 1e9 : 0.0;
  if (nvls_bus > 0 && ppn >= 2 && (ar || ppn <= 32)) {
    constexpr int p = nc::kSimple;
    if (!multi || (collnet && ar)) {
      const double intra = ar ? nvls_bus : nvls_bus * 0.5 * double(ppn - 1) / double(ppn);
      const double bus = multi ? std::min(intra, node_nic) : intra;
      const double lat = nvlink_lat(nc::kNvls, p) + (multi ? inter_lat(nc::kNvls, p) : 0.0);
      add(Algorithm::nvls, p, lat, bus, ar ? bus * ring_ratio : bus, 0.0, false);
    }
    if (multi && ar) {
      const double nvls_channels = nc::kNvlsChannels[gen];
      const double bus = std::min({nvls_bus, node_nic * (nodes <= 2 ? 2.0 : 1.0),
                                   nvls_channels * nc::kPerChannelMaxNvlsTreeBw[gen][col]});
      const double lat = nvlink_lat(nc::kNvlsTree, p) + 2.0 * lg_nodes * inter_lat(nc::kNvlsTree, p);
      add(Algorithm::nvls_tree, p, lat, bus, bus * ring_ratio, 0.0, false);
    }
  }
  // CollNet Direct (SHARP in the network switches): all-reduce across nodes,
  // at most 8 GPUs a node, with one NIC per GPU assumed.
  if (collnet && ar && ppn <= 8) {
    constexpr int p = nc::kSimple;
    double bus = intra_bandwidth(hw, g) / 1e9;
    if (gen >= 2) bus *= nc::kCollNetHopperFactor;
    const double lat = 2.0 * (double(std::min<std::int64_t>(1, ppn - 1)) * nvlink_lat(nc::kCollNetDirect, p) +
                              double(ppn - 1) * scale.nvlink * nc::kCollNetArityUs) +
                       inter_lat(nc::kCollNetDirect, p);
    add(Algorithm::collnet, p, lat, bus, bus * 0.5, 0.0, false);
  }
  // PAT: all-gather / reduce-scatter with one GPU per node.
  if (!ar && multi && ppn == 1) {
    constexpr int p = nc::kSimple;
    const double bus = bw * nc::kPatFactor;
    const double lat = base_lat(nc::kPat, p) + lg_nodes * (inter_lat(nc::kPat, p) / nc::kPatLevelDivisor) +
                       double(n) * scale.net * nc::kPatPerRankUs;
    add(Algorithm::pat, p, lat, bus, bus, 0.0, false);
  }
  // A forced algorithm that cannot run this collective is ignored.
  if (count_ == 0 && force) build_nccl(hw, std::nullopt, scale);
}

namespace {

double ratio_or_one(double a, double b) { return b > 0 ? a / b : 1.0; }

}  // namespace

// A fit NCCL's tuner prices (CollectiveFit::nccl_tuner: calibrate fit on NCCL
// runs) calibrates the tiers and NCCL's tuner still composes them (algorithm,
// protocol, latency per protocol, channel and NIC limits: build_nccl). The
// fit's values over the same fit of the base profile's own prices
// (CollectiveFit::stock) say how the cluster differs from the base, and scale:
//   - tier 0's ring and NVLS bandwidths by the bandwidth ratio (a node's
//     fitted bandwidth is what its group moved with the algorithm NCCL ran
//     there, NVLS for an 8 x H100 all-reduce: the ratio carries it to both);
//   - tier 1's NIC bandwidth (bandwidth_achieved_bytes_per_s) likewise;
//   - NCCL's NVLink hop latencies by tier 0's per-step latency ratio, its
//     network latencies by tier 1's, its base latencies by the base-latency
//     ratio of the tier base_latency() takes for the group.
// All 1 where the cluster matches the base, or where calibrate fit kept the
// base's latency (no size below 1 MiB): then the fitted profile prices the
// base's NCCL curve on the fitted bandwidths. Approximation: one alpha-beta
// latency per tier scales LL, LL128 and Simple alike (docs/calibration.md).
void CollectiveCurve::build_nccl_fitted(std::optional<Algorithm> force) {
  const HardwareProfile& hw = *hw_;
  const CollectiveFit* f0 = fit_for(hw, 0, c_);
  const CollectiveFit* f1 = fit_for(hw, 1, c_);
  if (!f0 && !f1) {
    build_nccl(hw, force, {});
    return;
  }
  HardwareProfile fitted = hw;
  LatencyScale scale;
  if (f0) {
    const double s0 = ratio_or_one(f0->bandwidth_bytes_per_s, f0->stock.bandwidth_bytes_per_s);
    fitted.tiers[0].bandwidth_achieved_bytes_per_s *= s0;
    fitted.tiers[0].nvls_bus_bandwidth_bytes_per_s *= s0;
    scale.nvlink = ratio_or_one(f0->latency_per_step_s, f0->stock.latency_per_step_s);
  }
  if (f1) {
    fitted.tiers[1].bandwidth_achieved_bytes_per_s *=
        ratio_or_one(f1->bandwidth_bytes_per_s, f1->stock.bandwidth_bytes_per_s);
    scale.net = ratio_or_one(f1->latency_per_step_s, f1->stock.latency_per_step_s);
  }
  if (const CollectiveFit* fb = g_.crosses_domains() ? f1 : f0)
    scale.base = ratio_or_one(fb->base_latency_s, fb->stock.base_latency_s);
  build_nccl(fitted, force, scale);
}

CollectiveCost CollectiveCurve::nccl_at(double bytes) const {
  const int log_size = bytes >= 64 ? log2i(std::int64_t(bytes) >> 6) : -1;
  const bool corrected = log_size >= 0 && log_size < 23;  // NCCL's tree correction table covers 64 B .. 256 MiB
  // NVLS tree all-reduce takes the same table's Simple row up to 512 MiB
  // (ncclTopoGetAlgoTime, logSize < 24), in NCCL's own choice only from
  // Blackwell on with an x86 host (NCCL 2.29.2; both of HostCpu's values are x86).
  const bool nvls_tree_sized = log_size >= 0 && log_size < 24;
  const bool tuner_corrects_nvls_tree = hw_->nccl_generation >= NcclGeneration::blackwell;
  const bool plateau = plateau_ > 1.0 && bytes >= plateau_bytes_;
  // The cheapest wins, as in src/enqueue.cc topoGetAlgoInfo.
  const Candidate* best = nullptr;
  double best_t = std::numeric_limits<double>::infinity(), best_corr = 1.0, best_run_lat = 0;
  for (int i = 0; i < count_; ++i) {
    const Candidate& k = cand_[std::size_t(i)];
    const double scale = plateau && k.algorithm == Algorithm::ring && k.protocol == nc::kSimple ? plateau_ : 1.0;
    const double lat = k.latency_us * scale;
    if (lat >= best_t) continue;
    double corr = k.tree && corrected ? nc::kTreeCorrection[std::size_t(k.protocol)][std::size_t(log_size)] : 1.0;
    if (k.algorithm == Algorithm::nvls_tree && nvls_tree_sized && tuner_corrects_nvls_tree)
      corr = nc::kTreeCorrection[nc::kSimple][std::size_t(log_size)];
    const double t = lat + bytes * k.us_per_byte / corr;
    if (t < best_t) {
      best_t = t;
      best = &k;
      best_corr = corr;
      best_run_lat = k.run_latency_us * scale;  // the plateau scales both alike
    }
  }
  if (!best) return {};
  // Before Blackwell NCCL chooses NVLS tree by its uncorrected estimate, but
  // the run falls short of that estimate at medium sizes as the tree does
  // ("Trees are not perfectly sticking to the model for medium sizes",
  // tuning.cc): src/enqueue.cc calcCollChunking cuts NVLS-tree chunks from
  // 256 KiB down to 32 KiB below 32 x channels x heads x chunk bytes, so a
  // 1-64 MiB all-reduce runs as many small pipelined network steps. The price
  // takes NCCL's correction (Simple row) on every generation; the choice stays
  // NCCL's. Approximation: NCCL corrects only Blackwell x86 (docs/cost_model.md
  // Known gaps); on Hopper it brings the 8-64 MiB points of the 2 x 8 H100
  // logs in tests/data/nccl_logs from 25-37% too fast to about 10-20%.
  if (best->algorithm == Algorithm::nvls_tree && nvls_tree_sized && !tuner_corrects_nvls_tree)
    best_corr = nc::kTreeCorrection[nc::kSimple][std::size_t(log_size)];

  // Channels by size (src/enqueue.cc): ring and tree drop channels while
  // bytes < channels * threads * threshold (LL ring: threshold x ranks); the
  // tuner's own estimate leaves this out.
  double algbw = best->algbw_gbps * best_corr, bus = best->bus_gbps;
  const double per_channel = best->per_channel_gbps * best_corr;
  const int bp = best->protocol;
  if (per_channel > 0) {
    const double threshold = nc::kMaxThreads[std::size_t(bp)] * nc::kThreadThreshold[std::size_t(bp)] *
                             (best->algorithm == Algorithm::ring && bp == nc::kLL ? double(ranks_) : 1.0);
    if (bytes < channels_ * threshold) {
      const double used = std::max(1.0, std::floor(bytes / threshold));
      const double limited = used * per_channel;
      if (limited < algbw) {
        bus *= limited / algbw;
        algbw = limited;
      }
    }
  }
  CollectiveCost out;
  out.algorithm = best->algorithm;
  out.protocol = kProtocols[bp];
  out.latency_s = best_run_lat * 1e-6;
  out.bandwidth_s = bytes / (algbw * 1e9);
  out.bus_bandwidth_bytes_per_s = bus * 1e9;
  return out;
}


namespace {

// The search prices the same few groups over and over: each thread keeps the
// curves it built, keyed by the group, the collective and every profile field
// build_nccl reads (not by the profile's address alone, which a new profile
// can reuse), and build_nccl_fitted's fits of the collective. A memo: results
// are identical with or without it.
using ProfileFields = std::array<double, 19>;

ProfileFields profile_fields(const HardwareProfile& hw, Collective c) {
  const InterconnectTier& t0 = hw.tiers[0];
  const InterconnectTier* t1 = hw.tiers.size() > 1 ? &hw.tiers[1] : nullptr;
  const CollectiveFit* f0 = fit_for(hw, 0, c);
  const CollectiveFit* f1 = fit_for(hw, 1, c);
  return {double(hw.nccl_generation),
          double(hw.host_cpu),
          double(hw.tiers.size()),
          double(t0.topology),
          t0.bandwidth_achieved_bytes_per_s,
          double(t0.collective_channels),
          t0.nvls_bus_bandwidth_bytes_per_s,
          t1 ? double(t1->collective_channels) : 0.0,
          t1 ? t1->bandwidth_achieved_bytes_per_s : 0.0,
          t1 ? double(t1->nics_per_node) : 0.0,
          t1 ? double(t1->gpus_per_node) : 0.0,
          t1 ? double(t1->collnet) : 0.0,
          t1 ? t1->bandwidth_nominal_bytes_per_s : 0.0,  // ring_channels: NCCL's ring speed from the NIC's
          f0 ? ratio_or_one(f0->bandwidth_bytes_per_s, f0->stock.bandwidth_bytes_per_s) : 0.0,
          f0 ? ratio_or_one(f0->base_latency_s, f0->stock.base_latency_s) : 0.0,
          f0 ? ratio_or_one(f0->latency_per_step_s, f0->stock.latency_per_step_s) : 0.0,
          f1 ? ratio_or_one(f1->bandwidth_bytes_per_s, f1->stock.bandwidth_bytes_per_s) : 0.0,
          f1 ? ratio_or_one(f1->base_latency_s, f1->stock.base_latency_s) : 0.0,
          f1 ? ratio_or_one(f1->latency_per_step_s, f1->stock.latency_per_step_s) : 0.0};
}

struct CurveSlot {
  ProfileFields profile{};
  std::int64_t size = 0, stride = 0, members_per_domain = 0, domains = 0;
  int collective = -1, force = -2;
  std::optional<CollectiveCurve> curve;
  [[nodiscard]] bool holds(const ProfileFields& fields, const GroupPlacement& g, int c, int f) const {
    return curve && size == g.size && stride == g.stride && members_per_domain == g.members_per_domain &&
           domains == g.domains && collective == c && force == f &&
           std::memcmp(profile.data(), fields.data(), sizeof(ProfileFields)) == 0;
  }
};

// Four slots share a set; a miss refills them in turn.
constexpr std::size_t kWays = 4;
struct CurveSet {
  std::array<CurveSlot, kWays> slots;
  std::size_t next = 0;  // the slot the next miss refills
};

}  // namespace

const CollectiveCurve& detail::cached_curve(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                            std::optional<Algorithm> force) {
  // 64 sets of 4 (~230 KB per thread). A MoE evaluate prices some twenty
  // groups and collectives (TP, CP, DP x CP, PP, EP, ETP, EDP), a search some
  // eighty: 64 direct-mapped slots evicted one another (5% misses in the
  // evaluate benchmarks, each a build_nccl); four ways hold them all.
  constexpr std::size_t kSets = 64;
  thread_local std::array<CurveSet, kSets> cache;
  const int f = force ? int(*force) : -1;
  std::uint64_t h = std::uint64_t(g.size) * 0x9E3779B97F4A7C15ull;
  h ^= std::uint64_t(g.stride) * 0xC2B2AE3D27D4EB4Full + std::uint64_t(int(c) * 8 + f + 1) * 0x165667B19E3779F9ull;
  CurveSet& set = cache[std::size_t(h >> 58)];
  const ProfileFields fields = profile_fields(hw, c);
  CurveSlot* hit = nullptr;
  for (CurveSlot& slot : set.slots)
    if (slot.holds(fields, g, int(c), f)) {
      hit = &slot;
      break;
    }
  if (!hit) {
    hit = &set.slots[set.next];
    set.next = (set.next + 1) % kWays;
    hit->profile = fields;
    hit->size = g.size;
    hit->stride = g.stride;
    hit->members_per_domain = g.members_per_domain;
    hit->domains = g.domains;
    hit->collective = int(c);
    hit->force = f;
    hit->curve.emplace(hw, g, c, force);
  }
  hit->curve->rebind(hw);  // the profile it was built from may have been freed since; `hw` equals it
  return *hit->curve;
}

}  // namespace planner
