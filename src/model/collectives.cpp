#include "planner/model/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "model/collective_links.h"
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
  if (c.p2p_channels_used > 0)
    s += fmt::format(" ({} p2p channel{})", c.p2p_channels_used, c.p2p_channels_used == 1 ? "" : "s");
  if (c.ctas_per_nic > 0)
    s += fmt::format(" ({} CTAs a NIC x one NVLink's worth: NVIDIA/nccl src/graph/connect.cc, docs/cost_model.md Known gaps)",
                     c.ctas_per_nic);
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

namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_torus(const HardwareProfile& hw) { return !hw.tiers.empty() && hw.tiers[0].topology == Topology::torus; }

// The fitted alpha-beta of collective `c` on tier `tier` (`planner calibrate
// fit`), or nullptr when the profile carries none: then the tier's generic
// latency_s / bandwidth_achieved_bytes_per_s apply, exactly as before fits existed.
// A fit NCCL's tuner prices (CollectiveFit::nccl_tuner) is returned too: its
// curve scales the tiers by it (nccl_curve.cpp build_nccl_fitted); of the
// helpers below only binding_ctas_per_nic's note then reads its raw values.
const CollectiveFit* fit_for(const HardwareProfile& hw, std::size_t tier, std::optional<Collective> c) {
  if (!c || tier >= hw.tiers.size() || hw.tiers[tier].topology != Topology::switched) return nullptr;
  const CollectiveFit& f = hw.tiers[tier].collective_fits[std::size_t(*c)];
  return f.fitted ? &f : nullptr;
}

// Bandwidth to the scale-out network per GPU: the node's NICs shared by its GPUs.
double nic_bandwidth_per_gpu(const HardwareProfile& hw, std::optional<Collective> c) {
  if (hw.tiers.size() < 2) return 0;
  const auto& t = hw.tiers[1];
  const CollectiveFit* f = fit_for(hw, 1, c);
  const double per_nic = f ? f->bandwidth_bytes_per_s : t.bandwidth_achieved_bytes_per_s;
  return per_nic * double(t.nics_per_node) / double(std::max<std::int64_t>(t.gpus_per_node, 1));
}

// Per-GPU ring bandwidth inside one tier-0 domain.
double intra_bandwidth(const HardwareProfile& hw, const GroupPlacement& g, std::optional<Collective> c) {
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

double hop_latency(const HardwareProfile& hw, std::size_t tier, std::optional<Collective> c) {
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

RingChannels ring_channels(const HardwareProfile& hw, std::int64_t members) {
  if (hw.nccl_generation == NcclGeneration::none || hw.tiers.size() < 2) return {};
  const InterconnectTier& t = hw.tiers[1];
  if (t.topology != Topology::switched || t.nics_per_node <= 0 || t.bandwidth_nominal_bytes_per_s <= 0) return {};
  const bool hopper_on = hw.nccl_generation >= NcclGeneration::hopper;
  // One ring per NIC the members own, at NCCL's fastest inter-node speed the NIC carries.
  RingChannels r;
  r.nics = std::max(1.0, double(members) * double(t.nics_per_node) / double(std::max<std::int64_t>(t.gpus_per_node, 1)));
  const double nic_gbps = t.bandwidth_nominal_bytes_per_s / 1e9;
  auto fastest = [&](const auto& speeds) {
    for (double s : speeds)
      if (s <= nic_gbps) return s;
    return speeds.back();
  };
  double speed = hw.nccl_generation == NcclGeneration::blackwell ? fastest(nccl::kSpeedInterBlackwell)
                 : hopper_on                                     ? fastest(nccl::kSpeedInterHopper)
                                                                 : fastest(nccl::kSpeedInterPreHopper);
  r.rings = r.nics;
  const bool dup = speed >= nccl::kDupMinSpeed &&
                   !(hopper_on && speed < nccl::kDupHopperSpeed && r.rings > nccl::kDupHopperMaxRings);
  if (dup) {
    r.rings *= 2;
    speed /= 2;
  }
  r.ctas = 2 * r.rings;
  if (hopper_on && speed > nccl::kCtaDoubleSpeed && r.ctas < nccl::kCtaDoubleBelow) r.ctas *= 2;
  return r;
}

double ring_nic_bandwidth_per_gpu(const HardwareProfile& hw, std::int64_t members, std::optional<Collective> c) {
  const double per_gpu = nic_bandwidth_per_gpu(hw, c);
  const RingChannels rc = ring_channels(hw, members);
  if (rc.ctas <= 0 || per_gpu <= 0) return per_gpu;
  const double ctas = rc.ctas / rc.nics;
  const InterconnectTier& t = hw.tiers[1];
  const double per_nic = per_gpu * double(std::max<std::int64_t>(t.gpus_per_node, 1)) / double(t.nics_per_node);
  const double cta_cap = ctas * nccl::kNvlinkBwPerLink[std::size_t(hw.nccl_generation) - 1] * 1e9;
  return per_nic > cta_cap ? per_gpu * cta_cap / per_nic : per_gpu;
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
  // Each NIC is driven by the CTAs NCCL runs per NIC (ring_channels): two
  // on a full DGX H100 node, which move less than the NIC (ring_nic_bandwidth_per_gpu).
  const double inter = double(g.members_per_domain) * ring_nic_bandwidth_per_gpu(hw, g.members_per_domain, c);
  return std::min(intra, inter);
}

}  // namespace detail

using namespace detail;

namespace {

double log2_ceil(std::int64_t x) { return x <= 1 ? 0.0 : std::ceil(std::log2(double(x))); }

// Alpha per step of a collective inside one tier-0 domain and across domains.
struct HopLatency {
  double intra, inter;
};

// One message between two ranks: alpha + n/B (Hockney), B from
// send_recv_bandwidth.
CollectiveCost send_recv_cost(const HardwareProfile& hw, const GroupPlacement& g, double bytes, HopLatency a) {
  constexpr Collective c = Collective::send_recv;
  CollectiveCost out;
  out.algorithm = Algorithm::direct;
  const SendRecvBandwidth b = send_recv_bandwidth(hw, g, bytes);
  if (b.channel_bound()) out.p2p_channels_used = b.channels;
  out.bus_bandwidth_bytes_per_s = b.bytes_per_s();
  out.latency_s = base_latency(hw, b.remote, c) + (b.remote ? a.inter : a.intra);
  out.bandwidth_s = bytes / out.bus_bandwidth_bytes_per_s;
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

}  // namespace

namespace {

// A fit that prices its own alpha-beta (not one NCCL's tuner takes its
// bandwidth and latency scales from: CollectiveFit::nccl_tuner).
bool has_alpha_beta_fit(const HardwareProfile& hw, Collective c) {
  for (std::size_t tier = 0; tier < 2; ++tier)
    if (const CollectiveFit* f = fit_for(hw, tier, c); f && !f->nccl_tuner) return true;
  return false;
}

// All-reduce, all-gather and reduce-scatter by NCCL's tables, where the profile
// carries them and no alpha-beta fit replaces them.
bool priced_by_nccl(const HardwareProfile& hw, Collective c) {
  return !(hw.nccl_generation == NcclGeneration::none || c == Collective::all_to_all || c == Collective::send_recv ||
           is_torus(hw) || has_alpha_beta_fit(hw, c));
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

namespace {

// Where NCCL's CTAs a NIC (ring_channels), not the NICs, set a ring, tree or
// NVLS tree's bandwidth across nodes: that count, for describe(); else 0.
int binding_ctas_per_nic(const HardwareProfile& hw, const GroupPlacement& g, Collective c) {
  if (!g.crosses_domains() || c == Collective::all_to_all || c == Collective::send_recv) return 0;
  const RingChannels rc = ring_channels(hw, g.members_per_domain);
  if (rc.ctas <= 0 || !(ring_nic_bandwidth_per_gpu(hw, g.members_per_domain, c) < nic_bandwidth_per_gpu(hw, c)))
    return 0;
  return int(std::lround(rc.ctas / rc.nics));
}

}  // namespace

double ring_bandwidth_bytes_per_s(const HardwareProfile& hw, const GroupPlacement& g) {
  return ring_bandwidth(hw, g, std::nullopt);
}

// With fitted values (InterconnectTier::collective_fits) the formulas below
// are unchanged; only their alpha, bandwidth and base latency come from the
// fit of collective `c` on the tier in question (docs/calibration.md); fits
// NCCL's tuner prices (CollectiveFit::nccl_tuner) set its bandwidths and
// scale its latencies (build_nccl_fitted, nccl_curve.cpp).
CollectiveCurve::CollectiveCurve(const HardwareProfile& hw, const GroupPlacement& g, Collective c,
                                 std::optional<Algorithm> force)
    : hw_(&hw), g_(g), c_(c), force_(force) {
  nccl_ = g.size > 1 && priced_by_nccl(hw, c);
  ctas_per_nic_ = binding_ctas_per_nic(hw, g, c);
  if (nccl_) build_nccl_fitted(force);
}

CollectiveCost CollectiveCurve::at(double bytes) const {
  if (g_.size <= 1 || bytes <= 0) return {};
  CollectiveCost out = nccl_ ? nccl_at(bytes) : alpha_beta_cost(*hw_, g_, c_, bytes, force_);
  out.ctas_per_nic = ctas_per_nic_;
  return out;
}

CollectiveCurve detail::collective_curve(const HardwareProfile& hw, const GroupPlacement& g, Collective c) {
  if (g.size > 1 && priced_by_nccl(hw, c)) return cached_curve(hw, g, c, std::nullopt);
  return CollectiveCurve(hw, g, c);
}

CollectiveCost collective_cost(const HardwareProfile& hw, const GroupPlacement& g, Collective c, double bytes,
                               std::optional<Algorithm> force) {
  if (g.size <= 1 || bytes <= 0) return {};
  if (!priced_by_nccl(hw, c)) {
    CollectiveCost out = alpha_beta_cost(hw, g, c, bytes, force);
    out.ctas_per_nic = binding_ctas_per_nic(hw, g, c);
    return out;
  }
  return detail::cached_curve(hw, g, c, force).at(bytes);
}

}  // namespace planner
