#include "planner/model/collectives.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "model/nccl_tables.h"

namespace planner {

const char* to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce:
      return "all-reduce";
    case Collective::all_gather:
      return "all-gather";
    case Collective::reduce_scatter:
      return "reduce-scatter";
    case Collective::all_to_all:
      return "all-to-all";
    case Collective::send_recv:
      return "send/recv";
  }
  return "?";
}

// The table's names are string literals, so data() is null-terminated.
const char* collective_key(Collective c) { return name_of(c).data(); }

std::optional<Collective> collective_from_key(std::string_view key) { return parse_name<Collective>(key); }

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::none:
      return "none";
    case Algorithm::ring:
      return "ring";
    case Algorithm::tree:
      return "tree";
    case Algorithm::torus:
      return "torus";
    case Algorithm::direct:
      return "direct";
    case Algorithm::nvls:
      return "nvls";
    case Algorithm::nvls_tree:
      return "nvls-tree";
    case Algorithm::collnet:
      return "collnet";
    case Algorithm::pat:
      return "pat";
  }
  return "?";
}

const char* to_string(Protocol p) {
  switch (p) {
    case Protocol::none:
      return "none";
    case Protocol::ll:
      return "LL";
    case Protocol::ll128:
      return "LL128";
    case Protocol::simple:
      return "Simple";
  }
  return "?";
}

std::string describe(const CollectiveCost& c) {
  std::string s = to_string(c.algorithm);
  if (c.protocol != Protocol::none) s += std::string("/") + to_string(c.protocol);
  return s;
}

GroupPlacement placement(const HardwareProfile& hw, std::int64_t size, std::int64_t stride) {
  GroupPlacement g;
  g.size = std::max<std::int64_t>(size, 1);
  g.stride = std::max<std::int64_t>(stride, 1);
  const std::int64_t domain = hw.tiers.empty() ? 1 : std::max<std::int64_t>(hw.tiers[0].size, 1);
  // Consecutive members are `stride` ranks apart; a domain holds `domain`
  // consecutive ranks, so it holds domain/stride members (at least one).
  g.members_per_domain = g.stride >= domain ? 1 : std::min(g.size, std::max<std::int64_t>(1, domain / g.stride));
  g.domains = (g.size + g.members_per_domain - 1) / g.members_per_domain;
  if (!hw.tiers.empty() && hw.tiers[0].topology == Topology::torus) {
    // Row-major mapping of ranks onto the torus (axis 0 fastest): walk the axes,
    // consuming the stride, then laying members along each axis in turn.
    std::int64_t st = g.stride, remaining = g.members_per_domain;
    const auto& dims = hw.tiers[0].torus_dims;
    for (std::size_t d = 0; d < dims.size() && d < 3; ++d) {
      const std::int64_t D = dims[d];
      if (remaining <= 1) break;
      if (st >= D) {
        st = std::max<std::int64_t>(1, st / D);
        continue;
      }
      const std::int64_t spacing = st;
      const std::int64_t ext = std::min(remaining, std::max<std::int64_t>(1, D / spacing));
      g.torus_extent[d] = ext;
      g.torus_wrap[d] = ext * spacing == D;
      remaining = (remaining + ext - 1) / ext;
      st = 1;
    }
  }
  return g;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_torus(const HardwareProfile& hw) { return !hw.tiers.empty() && hw.tiers[0].topology == Topology::torus; }

// The fitted alpha-beta of collective `c` on tier `tier` (`planner calibrate
// fit`), or nullptr when the profile carries none: then the tier's generic
// latency_s / bandwidth_achieved_bytes_per_s apply, exactly as before fits existed.
const CollectiveFit* fit_for(const HardwareProfile& hw, std::size_t tier, std::optional<Collective> c) {
  if (!c || tier >= hw.tiers.size() || hw.tiers[tier].topology != Topology::switched) return nullptr;
  const CollectiveFit& f = hw.tiers[tier].collective_fits[std::size_t(*c)];
  return f.fitted ? &f : nullptr;
}

// Bandwidth to the scale-out network per GPU: the node's NICs shared by its GPUs.
double nic_bandwidth_per_gpu(const HardwareProfile& hw, std::optional<Collective> c = std::nullopt) {
  if (hw.tiers.size() < 2) return 0;
  const auto& t = hw.tiers[1];
  const CollectiveFit* f = fit_for(hw, 1, c);
  const double per_nic = f ? f->bandwidth_bytes_per_s : t.bandwidth_achieved_bytes_per_s;
  return per_nic * double(t.nics_per_node) / double(std::max<std::int64_t>(t.gpus_per_node, 1));
}

// Per-GPU ring bandwidth inside one tier-0 domain.
double intra_bandwidth(const HardwareProfile& hw, const GroupPlacement& g, std::optional<Collective> c = std::nullopt) {
  if (g.members_per_domain <= 1 || hw.tiers.empty()) return kInf;
  const auto& t = hw.tiers[0];
  if (t.topology == Topology::switched) {
    const CollectiveFit* f = fit_for(hw, 0, c);
    return f ? f->bandwidth_bytes_per_s : t.bandwidth_achieved_bytes_per_s;
  }
  // Torus: a ring along each used axis runs both directions of its links at
  // once where the axis wraps around (2B), one direction's worth on an open
  // line (B); axes used together add up (JAX scaling book, "All-reduce on a
  // 2D torus": running both axes at once halves the time).
  double bw = 0;
  for (std::size_t d = 0; d < 3; ++d)
    if (g.torus_extent[d] > 1) bw += (g.torus_wrap[d] ? 2.0 : 1.0) * t.bandwidth_achieved_bytes_per_s;
  return bw > 0 ? bw : t.bandwidth_achieved_bytes_per_s;
}

double hop_latency(const HardwareProfile& hw, std::size_t tier, std::optional<Collective> c = std::nullopt) {
  if (const CollectiveFit* f = fit_for(hw, tier, c)) return f->latency_per_step_s;
  return tier < hw.tiers.size() ? hw.tiers[tier].latency_s : 0.0;
}

// Launch latency of one collective: the fitted base latency of the tier the
// group's measurements came from (one-per-node groups for anything crossing
// domains, intra-domain groups otherwise), else the profile's NCCL baseLat.
double base_latency(const HardwareProfile& hw, bool crosses_domains, std::optional<Collective> c) {
  if (const CollectiveFit* f = fit_for(hw, crosses_domains ? 1 : 0, c)) return f->base_latency_s;
  return hw.collective_base_latency_s;
}

double ring_bandwidth(const HardwareProfile& hw, const GroupPlacement& g, std::optional<Collective> c) {
  const double intra = intra_bandwidth(hw, g, c);
  if (!g.crosses_domains()) return intra;
  // NCCL pipelines the intra- and inter-node phases of a ring (one channel per
  // NIC), so the ring runs at the slower of NVLink and the NICs the group's
  // members on one node own: k members -> k * nics_per_node / gpus_per_node
  // NICs; a one-GPU-per-node group gets one NIC. Rings leave a node through one
  // NIC per channel ("Ring 00 : 7 -> 8 [send] via NET" in
  // https://github.com/NVIDIA/nccl/issues/398); DGX H100 has one 400 Gb/s NIC per
  // GPU (https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html).
  const double inter = double(g.members_per_domain) * nic_bandwidth_per_gpu(hw, c);
  return std::min(intra, inter);
}

double log2_ceil(std::int64_t x) { return x <= 1 ? 0.0 : std::ceil(std::log2(double(x))); }

// Alpha per step of a collective inside one tier-0 domain and across domains.
struct HopLatency {
  double intra, inter;
};

// One message between two ranks: alpha + n/B (Hockney).
CollectiveCost send_recv_cost(const HardwareProfile& hw, const GroupPlacement& g, double bytes, HopLatency a) {
  constexpr Collective c = Collective::send_recv;
  CollectiveCost out;
  out.algorithm = Algorithm::direct;
  // A ring of send/recv pairs (nccl-tests sendrecv_perf, a pipeline's stage
  // boundaries) is paced by its slowest pair: once the group spans domains,
  // some pair crosses the network whatever the stride.
  const bool remote = g.stride >= (hw.tiers.empty() ? 1 : hw.tiers[0].size) || g.crosses_domains();
  double bw = remote ? nic_bandwidth_per_gpu(hw, c) : intra_bandwidth(hw, GroupPlacement{.members_per_domain = 2}, c);
  if (!remote && is_torus(hw)) bw = hw.tiers[0].bandwidth_achieved_bytes_per_s;  // one neighbour link
  out.bus_bandwidth_bytes_per_s = bw;
  out.latency_s = base_latency(hw, remote, c) + (remote ? a.inter : a.intra);
  out.bandwidth_s = bytes / bw;
  return out;
}

// Pairwise exchange: (p-1)*alpha + each rank's off-domain share through its
// NIC share and on-domain share over the scale-up links (Thakur et al. 2005).
// On a torus, all-to-all moves ~1/4 of an all-gather's bytes per link (JAX
// scaling book). `a0` is the launch latency, `bw` the ring bandwidth.
CollectiveCost all_to_all_cost(const HardwareProfile& hw, const GroupPlacement& g, double bytes, HopLatency a,
                               double a0, double bw) {
  constexpr Collective c = Collective::all_to_all;
  const std::int64_t p = g.size, k = g.members_per_domain, D = g.domains;
  const double pd = double(p);
  CollectiveCost out;
  out.bus_bandwidth_bytes_per_s = bw;
  out.algorithm = is_torus(hw) && !g.crosses_domains() ? Algorithm::torus : Algorithm::direct;
  const double intra_bytes = bytes * double(k - 1) / pd;
  const double inter_bytes = bytes * double(p - k) / pd;
  double t_intra = k > 1 ? intra_bytes / intra_bandwidth(hw, g, c) : 0.0;
  if (out.algorithm == Algorithm::torus) t_intra = 0.25 * bytes * (pd - 1) / pd / intra_bandwidth(hw, g, c);
  const double t_inter = D > 1 ? inter_bytes / nic_bandwidth_per_gpu(hw, c) : 0.0;
  out.latency_s = a0 + double(k - 1) * a.intra + double(p - k) / double(std::max<std::int64_t>(k, 1)) * a.inter;
  out.bandwidth_s = std::max(t_intra, t_inter);
  return out;
}

// Ring all-reduce (two passes) or all-gather / reduce-scatter (one pass).
// Bandwidth factors (Thakur, Rabenseifner & Gropp 2005; nccl-tests busbw):
// all-reduce 2(p-1)/p, all-gather and reduce-scatter (p-1)/p.
// Ring: steps = passes*(p-1), of which passes*(D-1) cross domains (NCCL
// tuning.cc ring latency: base + intra-steps*intra + inter-steps*inter).
CollectiveCost ring_cost(const HardwareProfile& hw, const GroupPlacement& g, bool all_reduce, double bytes,
                         HopLatency a, double a0, double bw) {
  const double pd = double(g.size);
  const std::int64_t D = g.domains;
  const double factor = (all_reduce ? 2.0 : 1.0) * (pd - 1.0) / pd;
  const double passes = all_reduce ? 2.0 : 1.0;
  CollectiveCost ring;
  ring.algorithm = Algorithm::ring;
  ring.bus_bandwidth_bytes_per_s = bw;
  if (is_torus(hw)) {
    // Bidirectional rings along each axis: ceil((e-1)/2) hops per pass where
    // the axis wraps, e-1 on an open line (JAX scaling book, "How to Scale Your
    // Model", part 3, https://jax-ml.github.io/scaling-book/sharding/: collectives
    // on a bidirectional ring of ICI links).
    ring.algorithm = Algorithm::torus;
    double hops = 0;
    for (std::size_t d = 0; d < 3; ++d) {
      const double e = double(g.torus_extent[d]);
      if (e > 1) hops += g.torus_wrap[d] ? std::ceil((e - 1) / 2) : (e - 1);
    }
    ring.latency_s = a0 + passes * (hops * a.intra + double(D - 1) * a.inter);
  } else {
    const double steps = passes * (pd - 1), inter_steps = passes * double(D - 1);
    ring.latency_s = a0 + (steps - inter_steps) * a.intra + inter_steps * a.inter;
  }
  ring.bandwidth_s = factor * bytes / bw;
  return ring;
}

// NCCL double binary tree all-reduce across domains, a chain inside each:
// latency 2*(lg D * alpha_inter + (k-1) * alpha_intra), bandwidth ~2n*beta
// (NCCL 2.4 double binary trees,
// https://developer.nvidia.com/blog/massively-scale-deep-learning-training-nccl-2-4/;
// tree latency in NCCL's src/graph/tuning.cc).
CollectiveCost tree_all_reduce_cost(const GroupPlacement& g, double bytes, HopLatency a, double a0, double bw) {
  CollectiveCost tree;
  tree.algorithm = Algorithm::tree;
  tree.bus_bandwidth_bytes_per_s = bw;
  tree.latency_s = a0 + 2.0 * (log2_ceil(g.domains) * a.inter + double(g.members_per_domain - 1) * a.intra);
  tree.bandwidth_s = 2.0 * bytes / bw;
  return tree;
}

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
void CollectiveCurve::build_nccl(std::optional<Algorithm> force) {
  const HardwareProfile& hw = *hw_;
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
  const double net_overhead = !multi ? 0.0 : hw.host_cpu == HostCpu::amd ? nc::kNetOverheadAmdUs : nc::kNetOverheadIntelUs;
  auto inter_lat = [&](nc::Algo a, int p) { return ppn == 1 ? nc::kNetLatencyUs[nc::kTree][p] : nc::kNetLatencyUs[a][p]; };
  const double lg_nodes = double(log2i(nodes));
  ranks_ = n;
  plateau_ = ar && multi && channels > 0 ? (gen == 0 ? nc::kRingPlateauPreAmpere : nc::kRingPlateau) : 1.0;
  plateau_bytes_ = 64.0 * channels * double(n);  // the ring plateau applies from 64 bytes per channel and rank

  auto add = [&](Algorithm algo, int p, double lat_us, double bus, double algbw, double per_channel, bool tree) {
    if (force && *force != algo) return;
    if (!(algbw > 0)) return;
    cand_[std::size_t(count_++)] = {algo, p, lat_us, bus, algbw, per_channel, 1.0 / (1e3 * algbw), tree};
  };

  // Ring: every collective here.
  for (int p = 0; p < nc::kNumProtos; ++p) {
    double bus = bw, uncapped = bw;
    if (p == nc::kLL) bus = std::min(ll_max, uncapped = bw * nc::kRingLLFactor);
    if (p == nc::kLL128) bus = std::min(uncapped = bw * nc::kRingLL128Factor, ch_cap * nc::kPerChannelMaxRingLL128Bw[gen][col]);
    const double intra = std::max(nc::kNvlinkLatencyUs[nc::kRing][p],
                                  net_overhead * (p == nc::kSimple ? nc::kNetOverheadSimpleFactor : 1.0));
    const double lat = nc::kBaseLatencyUs[nc::kRing][p] + (nsteps - inter_steps) * intra +
                       inter_steps * inter_lat(nc::kRing, p);
    const double per_channel = channels > 0 ? uncapped * ring_ratio / channels : 0.0;
    add(Algorithm::ring, p, lat, bus, bus * ring_ratio, per_channel, false);
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
      const double lat = nc::kBaseLatencyUs[nc::kTree][p] +
                         2.0 * (double(ppn - 1) * nc::kNvlinkLatencyUs[nc::kTree][p] +
                                lg_nodes * inter_lat(nc::kTree, p));
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
  const double node_nic = multi ? double(ppn) * nic_bandwidth_per_gpu(hw) / 1e9 : 0.0;
  if (nvls_bus > 0 && ppn >= 2 && (ar || ppn <= 32)) {
    constexpr int p = nc::kSimple;
    if (!multi || (collnet && ar)) {
      const double intra = ar ? nvls_bus : nvls_bus * 0.5 * double(ppn - 1) / double(ppn);
      const double bus = multi ? std::min(intra, node_nic) : intra;
      const double lat = nc::kNvlinkLatencyUs[nc::kNvls][p] + (multi ? inter_lat(nc::kNvls, p) : 0.0);
      add(Algorithm::nvls, p, lat, bus, ar ? bus * ring_ratio : bus, 0.0, false);
    }
    if (multi && ar) {
      const double nvls_channels = nc::kNvlsChannels[gen];
      const double bus = std::min({nvls_bus, node_nic * (nodes <= 2 ? 2.0 : 1.0),
                                   nvls_channels * nc::kPerChannelMaxNvlsTreeBw[gen][col]});
      const double lat = nc::kNvlinkLatencyUs[nc::kNvlsTree][p] + 2.0 * lg_nodes * inter_lat(nc::kNvlsTree, p);
      add(Algorithm::nvls_tree, p, lat, bus, bus * ring_ratio, 0.0, false);
    }
  }
  // CollNet Direct (SHARP in the network switches): all-reduce across nodes,
  // at most 8 GPUs a node, with one NIC per GPU assumed.
  if (collnet && ar && ppn <= 8) {
    constexpr int p = nc::kSimple;
    double bus = intra_bandwidth(hw, g) / 1e9;
    if (gen >= 2) bus *= nc::kCollNetHopperFactor;
    const double lat = 2.0 * (double(std::min<std::int64_t>(1, ppn - 1)) * nc::kNvlinkLatencyUs[nc::kCollNetDirect][p] +
                              double(ppn - 1) * nc::kCollNetArityUs) +
                       inter_lat(nc::kCollNetDirect, p);
    add(Algorithm::collnet, p, lat, bus, bus * 0.5, 0.0, false);
  }
  // PAT: all-gather / reduce-scatter with one GPU per node.
  if (!ar && multi && ppn == 1) {
    constexpr int p = nc::kSimple;
    const double bus = bw * nc::kPatFactor;
    const double lat = nc::kBaseLatencyUs[nc::kPat][p] +
                       lg_nodes * (inter_lat(nc::kPat, p) / nc::kPatLevelDivisor) + double(n) * nc::kPatPerRankUs;
    add(Algorithm::pat, p, lat, bus, bus, 0.0, false);
  }
  // A forced algorithm that cannot run this collective is ignored.
  if (count_ == 0 && force) build_nccl(std::nullopt);
}

CollectiveCost CollectiveCurve::nccl_at(double bytes) const {
  const int log_size = bytes >= 64 ? log2i(std::int64_t(bytes) >> 6) : -1;
  const bool corrected = log_size >= 0 && log_size < 23;  // NCCL's tree correction table covers 64 B .. 256 MiB
  const bool plateau = plateau_ > 1.0 && bytes >= plateau_bytes_;
  // The cheapest wins, as in src/enqueue.cc topoGetAlgoInfo.
  const Candidate* best = nullptr;
  double best_t = std::numeric_limits<double>::infinity(), best_corr = 1.0, best_lat = 0;
  for (int i = 0; i < count_; ++i) {
    const Candidate& k = cand_[std::size_t(i)];
    double lat = k.latency_us;
    if (plateau && k.algorithm == Algorithm::ring && k.protocol == nc::kSimple) lat *= plateau_;
    if (lat >= best_t) continue;
    const double corr = k.tree && corrected ? nc::kTreeCorrection[std::size_t(k.protocol)][std::size_t(log_size)] : 1.0;
    const double t = lat + bytes * k.us_per_byte / corr;
    if (t < best_t) {
      best_t = t;
      best = &k;
      best_corr = corr;
      best_lat = lat;
    }
  }
  if (!best) return {};

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
  out.latency_s = best_lat * 1e-6;
  out.bandwidth_s = bytes / (algbw * 1e9);
  out.bus_bandwidth_bytes_per_s = bus * 1e9;
  return out;
}

namespace {

bool has_fit(const HardwareProfile& hw, Collective c) { return fit_for(hw, 0, c) || fit_for(hw, 1, c); }

// All-reduce, all-gather and reduce-scatter by NCCL's tables, where the profile
// carries them and no fit replaces them.
bool priced_by_nccl(const HardwareProfile& hw, Collective c) {
  return !(hw.nccl_generation == NcclGeneration::none || c == Collective::all_to_all || c == Collective::send_recv ||
           is_torus(hw) || has_fit(hw, c));
}

// Alpha-beta costs without NCCL's tuning tables (or with a fitted alpha-beta).
CollectiveCost alpha_beta_cost(const HardwareProfile& hw, const GroupPlacement& g, Collective c, double bytes,
                               std::optional<Algorithm> force) {
  const HopLatency a{hop_latency(hw, 0, c), hop_latency(hw, 1, c)};
  if (c == Collective::send_recv) return send_recv_cost(hw, g, bytes, a);

  const double a0 = base_latency(hw, g.crosses_domains(), c);
  const double bw = ring_bandwidth(hw, g, c);
  if (c == Collective::all_to_all) return all_to_all_cost(hw, g, bytes, a, a0, bw);

  const bool ar = c == Collective::all_reduce;
  const CollectiveCost ring = ring_cost(hw, g, ar, bytes, a, a0, bw);
  if (!ar || g.domains <= 1 || is_torus(hw) || force == Algorithm::ring) return ring;
  // Across domains NCCL's tuner picks the cheaper of ring and tree; so do we.
  const CollectiveCost tree = tree_all_reduce_cost(g, bytes, a, a0, bw);
  if (force == Algorithm::tree) return tree;
  return tree.total_s() < ring.total_s() ? tree : ring;
}

}  // namespace

double ring_bandwidth_bytes_per_s(const HardwareProfile& hw, const GroupPlacement& g) {
  return ring_bandwidth(hw, g, std::nullopt);
}

// With fitted values (InterconnectTier::collective_fits) the formulas below
// are unchanged; only their alpha, bandwidth and base latency come from the
// fit of collective `c` on the tier in question (docs/calibration.md).
CollectiveCurve::CollectiveCurve(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                 std::optional<Algorithm> force)
    : hw_(&hw), g_(g), c_(c), force_(force) {
  nccl_ = g.size > 1 && priced_by_nccl(hw, c);
  if (nccl_) build_nccl(force);
}

CollectiveCost CollectiveCurve::at(double bytes) const {
  if (g_.size <= 1 || bytes <= 0) return {};
  if (nccl_) return nccl_at(bytes);
  return alpha_beta_cost(*hw_, g_, c_, bytes, force_);
}

namespace {

// The search prices the same few groups over and over: each thread keeps the
// curves it built, keyed by the group, the collective and every profile field
// build_nccl reads (not by the profile's address alone, which a new profile
// can reuse). A memo: results are identical with or without it.
using ProfileFields = std::array<double, 12>;

ProfileFields profile_fields(const HardwareProfile& hw) {
  const InterconnectTier& t0 = hw.tiers[0];
  const InterconnectTier* t1 = hw.tiers.size() > 1 ? &hw.tiers[1] : nullptr;
  return {double(hw.nccl_generation), double(hw.host_cpu), double(hw.tiers.size()), double(t0.topology),
          t0.bandwidth_achieved_bytes_per_s, double(t0.collective_channels), t0.nvls_bus_bandwidth_bytes_per_s,
          t1 ? double(t1->collective_channels) : 0.0, t1 ? t1->bandwidth_achieved_bytes_per_s : 0.0,
          t1 ? double(t1->nics_per_node) : 0.0, t1 ? double(t1->gpus_per_node) : 0.0, t1 ? double(t1->collnet) : 0.0};
}

struct CurveSlot {
  ProfileFields profile{};
  std::int64_t size = 0, stride = 0, members_per_domain = 0, domains = 0;
  int collective = -1, force = -2;
  std::optional<CollectiveCurve> curve;
};

const CollectiveCurve& cached_curve(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                    std::optional<Algorithm> force) {
  constexpr std::size_t kSlots = 64;
  thread_local std::array<CurveSlot, kSlots> cache;
  const int f = force ? int(*force) : -1;
  std::uint64_t h = std::uint64_t(g.size) * 0x9E3779B97F4A7C15ull;
  h ^= std::uint64_t(g.stride) * 0xC2B2AE3D27D4EB4Full + std::uint64_t(int(c) * 8 + f + 1) * 0x165667B19E3779F9ull;
  CurveSlot& slot = cache[std::size_t(h >> 58)];
  const ProfileFields fields = profile_fields(hw);
  if (!slot.curve || slot.size != g.size || slot.stride != g.stride ||
      slot.members_per_domain != g.members_per_domain || slot.domains != g.domains || slot.collective != int(c) ||
      slot.force != f || std::memcmp(slot.profile.data(), fields.data(), sizeof(ProfileFields)) != 0) {
    slot.profile = fields;
    slot.size = g.size;
    slot.stride = g.stride;
    slot.members_per_domain = g.members_per_domain;
    slot.domains = g.domains;
    slot.collective = int(c);
    slot.force = f;
    slot.curve.emplace(hw, g, c, force);
  }
  return *slot.curve;
}

}  // namespace

CollectiveCost collective_cost(const HardwareProfile& hw, const GroupPlacement& g, Collective c, double bytes,
                               std::optional<Algorithm> force) {
  if (g.size <= 1 || bytes <= 0) return {};
  if (!priced_by_nccl(hw, c)) return alpha_beta_cost(hw, g, c, bytes, force);
  return cached_curve(hw, g, c, force).at(bytes);
}

}  // namespace planner
