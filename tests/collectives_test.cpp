// collectives: group placement and alpha-beta costs (Thakur, Rabenseifner & Gropp 2005; NCCL src/graph/tuning.cc).
// Every expected number is the formula evaluated with the loaded
// profile's alpha and bandwidth values, so retuning a profile does not break
// these tests; only a change of formula does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/collectives.h"

using namespace planner;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;
constexpr double kRel = 1e-12;  // same formula, different association order

// Per-GPU share of the node's NICs: nics_per_node / gpus_per_node NICs.
// The stock profile with NCCL's tuning switched off: the plain alpha-beta
// ring / tree model these formula tests check (profiles without
// nccl_generation, and fitted collectives, still use it).
HardwareProfile alpha_beta(HardwareProfile hw) {
  hw.nccl_generation = NcclGeneration::none;
  return hw;
}

double nic_share(const HardwareProfile& hw) {
  const InterconnectTier& ib = hw.tiers.at(1);
  return ib.bandwidth_achieved_bytes_per_s * double(ib.nics_per_node) / double(ib.gpus_per_node);
}
}  // namespace

TEST_CASE("placement of TP/DP-style groups on DGX H100", "[collectives]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  REQUIRE(hw.tiers.at(0).size == 8);
  // Ranks r = tp + TP*(cp + ...); node = r / 8. Members are stride apart.
  struct Row {
    std::int64_t size, stride, per_domain, domains;
  };
  const Row rows[] = {
      {8, 1, 8, 1},     // TP=8: the whole node
      {4, 1, 4, 1},     // TP=4: half a node
      {8, 8, 1, 8},     // DP with TP=8: one GPU per node
      {16, 1, 8, 2},    // two full nodes
      {4, 2, 4, 1},     // ranks 0,2,4,6
      {4, 4, 2, 2},     // ranks 0,4 | 8,12
      {64, 16, 1, 64},  // stride beyond a node
  };
  for (const Row& r : rows) {
    INFO("size " << r.size << " stride " << r.stride);
    const GroupPlacement g = placement(hw, r.size, r.stride);
    CHECK(g.size == r.size);
    CHECK(g.stride == r.stride);
    CHECK(g.members_per_domain == r.per_domain);
    CHECK(g.domains == r.domains);
    CHECK(g.crosses_domains() == (r.domains > 1));
  }
}

TEST_CASE("ring all-reduce inside one NVSwitch node", "[collectives]") {
  const HardwareProfile hw = alpha_beta(find_hardware("dgx-h100", kDir));
  const InterconnectTier& nv = hw.tiers.at(0);
  const double a0 = hw.collective_base_latency_s;
  for (std::int64_t p : {2, 4, 8}) {
    for (double n : {1e3, 1e6, 1e9}) {
      INFO("p " << p << " n " << n);
      const GroupPlacement g = placement(hw, p, 1);
      REQUIRE(g.domains == 1);
      const CollectiveCost c = collective_cost(hw, g, Collective::all_reduce, n);
      // Ring: 2(p-1) alpha + 2(p-1)/p * n / B (Thakur et al. 2005), plus the launch latency.
      CHECK(c.algorithm == Algorithm::ring);
      CHECK(c.latency_s == Approx(a0 + 2.0 * double(p - 1) * nv.latency_s).epsilon(kRel));
      CHECK(c.bandwidth_s ==
            Approx(2.0 * double(p - 1) / double(p) * n / nv.bandwidth_achieved_bytes_per_s).epsilon(kRel));
      CHECK(c.bus_bandwidth_bytes_per_s == nv.bandwidth_achieved_bytes_per_s);
      CHECK(c.total_s() == c.latency_s + c.bandwidth_s);
    }
  }
}

TEST_CASE("ring bandwidth across nodes: the slower of NVLink and the group's NICs", "[collectives]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const InterconnectTier& nv = hw.tiers.at(0);
  const InterconnectTier& ib = hw.tiers.at(1);
  // DGX H100: one NIC per GPU (NVIDIA DGX H100 User Guide).
  REQUIRE(ib.nics_per_node == ib.gpus_per_node);

  SECTION("one GPU per node gets one NIC") {
    const GroupPlacement dp = placement(hw, 8, 8);
    CHECK(dp.members_per_domain == 1);
    CHECK(ring_bandwidth_bytes_per_s(hw, dp) == Approx(ib.bandwidth_achieved_bytes_per_s).epsilon(kRel));
  }
  SECTION("eight GPUs per node use eight NICs, capped by NVLink (no NCCL tuning)") {
    const HardwareProfile ab = alpha_beta(hw);
    const GroupPlacement g = placement(ab, 16, 1);
    CHECK(g.members_per_domain == 8);
    const double expected = std::min(nv.bandwidth_achieved_bytes_per_s, 8.0 * nic_share(ab));
    CHECK(ring_bandwidth_bytes_per_s(ab, g) == Approx(expected).epsilon(kRel));
  }
  SECTION("eight GPUs per node: two NCCL CTAs per NIC move 2 x 20.6 GB/s, less than the NIC") {
    // NCCL 2.29.2: one ring per 400G NIC at 48 GB/s (sm90SpeedArrayInter), not
    // duplicated on Hopper (48 < 50 GB/s, 8 rings > 4: ncclTopoDupChannels),
    // two CTAs per ring (ncclTopoPostset), not doubled again (16 CTAs): 2 a NIC,
    // each one NVLink's worth (SM90_NVLINK_BW 20.6): min(370, 8 x 41.2) = 329.6 GB/s.
    CHECK(ring_bandwidth_bytes_per_s(hw, placement(hw, 16, 1)) == Approx(8 * 2 * 20.6e9).epsilon(kRel));
    const CollectiveCost c = collective_cost(hw, placement(hw, 16, 1), Collective::all_gather, double(1 << 30));
    CHECK(c.ctas_per_nic == 2);
    CHECK(describe(c).find("2 CTAs a NIC") != std::string::npos);
    // Two GPUs a node: 4 CTAs a NIC, the NIC limits, nothing said.
    CHECK(collective_cost(hw, placement(hw, 4, 4), Collective::all_gather, double(1 << 30)).ctas_per_nic == 0);
  }
  SECTION("two GPUs per node use two NICs") {
    const GroupPlacement g = placement(hw, 4, 4);
    CHECK(ring_bandwidth_bytes_per_s(hw, g) ==
          Approx(std::min(nv.bandwidth_achieved_bytes_per_s, 2.0 * nic_share(hw))).epsilon(kRel));
  }
  SECTION("inside one node: NVLink") {
    CHECK(ring_bandwidth_bytes_per_s(hw, placement(hw, 8, 1)) == nv.bandwidth_achieved_bytes_per_s);
  }
}

TEST_CASE("ring bandwidth across nodes: NCCL's CTAs per NIC by generation and NIC speed", "[collectives][nccl]") {
  // Fewer than 5 NICs a node: NCCL doubles the rings (2 NICs: 4 rings at 24 GB/s,
  // 8 CTAs, 4 a NIC = 82.4 GB/s > 47), so the NICs limit, as before.
  const HardwareProfile h100 = find_hardware("dgx-h100", kDir);
  CHECK(ring_bandwidth_bytes_per_s(h100, placement(h100, 4, 4)) == Approx(2 * nic_share(h100)).epsilon(kRel));
  CHECK(ring_bandwidth_bytes_per_s(h100, placement(h100, 8, 8)) == Approx(nic_share(h100)).epsilon(kRel));
  // B200, 400G NICs: 2 CTAs a NIC as on H100, but SM100_NVLINK_BW 40.1 x 2 = 80.2 GB/s > 47: the NICs limit.
  const HardwareProfile b200 = find_hardware("dgx-b200", kDir);
  REQUIRE(b200.tiers.at(1).bandwidth_nominal_bytes_per_s == 50e9);
  CHECK(ring_bandwidth_bytes_per_s(b200, placement(b200, 16, 1)) ==
        Approx(std::min(b200.tiers[0].bandwidth_achieved_bytes_per_s, 8 * nic_share(b200))).epsilon(kRel));
  // A100, 200G NICs: rings at 24 GB/s (speedArrayInter), 2 CTAs a NIC x 20 GB/s = 40 > 24: the NICs limit.
  const HardwareProfile a100 = find_hardware("dgx-a100-80gb", kDir);
  CHECK(ring_bandwidth_bytes_per_s(a100, placement(a100, 16, 1)) ==
        Approx(std::min(a100.tiers[0].bandwidth_achieved_bytes_per_s, 8 * nic_share(a100))).epsilon(kRel));
}

TEST_CASE("all-reduce across nodes: the cheaper of ring and double binary tree", "[collectives]") {
  const HardwareProfile hw = alpha_beta(find_hardware("dgx-h100", kDir));
  const double a0 = hw.collective_base_latency_s;
  const double a_nv = hw.tiers.at(0).latency_s, a_ib = hw.tiers.at(1).latency_s;
  // 16 nodes x 8 GPUs.
  const std::int64_t p = 128, k = 8, D = 16;
  const GroupPlacement g = placement(hw, p, 1);
  REQUIRE(g.members_per_domain == k);
  REQUIRE(g.domains == D);
  const double B = ring_bandwidth_bytes_per_s(hw, g);
  // NCCL tuning.cc ring: 2(p-1) steps, 2(D-1) of them between nodes.
  const double ring_lat = a0 + double(2 * (p - 1) - 2 * (D - 1)) * a_nv + double(2 * (D - 1)) * a_ib;
  // Tree: 2(lg D * alpha_inter + (k-1) * alpha_intra), 2n/B (NCCL 2.4 double binary trees, NVIDIA developer blog).
  const double tree_lat = a0 + 2.0 * (std::log2(double(D)) * a_ib + double(k - 1) * a_nv);

  SECTION("small messages take the tree") {
    const double n = 1024;
    const CollectiveCost c = collective_cost(hw, g, Collective::all_reduce, n);
    CHECK(c.algorithm == Algorithm::tree);
    CHECK(c.latency_s == Approx(tree_lat).epsilon(kRel));
    CHECK(c.bandwidth_s == Approx(2.0 * n / B).epsilon(kRel));
    CHECK(c.total_s() < ring_lat + 2.0 * double(p - 1) / double(p) * n / B);
  }
  SECTION("every size gets the cheaper of the two") {
    for (double n : {1e3, 1e6, 1e9, 1e11}) {
      INFO("n " << n);
      const double ring = ring_lat + 2.0 * double(p - 1) / double(p) * n / B;
      const double tree = tree_lat + 2.0 * n / B;
      const CollectiveCost c = collective_cost(hw, g, Collective::all_reduce, n);
      CHECK(c.total_s() == Approx(std::min(ring, tree)).epsilon(kRel));
      CHECK(c.algorithm == (tree < ring ? Algorithm::tree : Algorithm::ring));
    }
    // Bandwidth-bound enough that the ring's (p-1)/p saving beats the tree's latency.
    CHECK(collective_cost(hw, g, Collective::all_reduce, 1e11).algorithm == Algorithm::ring);
  }
}

TEST_CASE("all-gather and reduce-scatter: (p-1) alpha + (p-1)/p n/B", "[collectives]") {
  const HardwareProfile hw = alpha_beta(find_hardware("dgx-h100", kDir));
  const double a0 = hw.collective_base_latency_s;
  const double a_nv = hw.tiers.at(0).latency_s, a_ib = hw.tiers.at(1).latency_s;
  struct Row {
    std::int64_t size, stride, inter_steps;
  };
  const Row rows[] = {{8, 1, 0}, {4, 1, 0}, {16, 1, 1}, {8, 8, 7}};
  for (const Row& r : rows)
    for (Collective c : {Collective::all_gather, Collective::reduce_scatter}) {
      const double n = 3e8, p = double(r.size);
      INFO(to_string(c) << " size " << r.size << " stride " << r.stride);
      const GroupPlacement g = placement(hw, r.size, r.stride);
      const double B = ring_bandwidth_bytes_per_s(hw, g);
      const CollectiveCost cc = collective_cost(hw, g, c, n);
      CHECK(cc.algorithm == Algorithm::ring);
      CHECK(cc.latency_s ==
            Approx(a0 + double(r.size - 1 - r.inter_steps) * a_nv + double(r.inter_steps) * a_ib).epsilon(kRel));
      CHECK(cc.bandwidth_s == Approx((p - 1) / p * n / B).epsilon(kRel));
    }
}

TEST_CASE("send/recv: base + alpha + n/B on the link between the two ranks", "[collectives]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const double a0 = hw.collective_base_latency_s, n = 5e7;
  SECTION("inside a node: NVLink, or NCCL's p2p channels where fewer") {
    const CollectiveCost c = collective_cost(hw, placement(hw, 2, 4), Collective::send_recv, n);
    CHECK(c.algorithm == Algorithm::direct);
    CHECK(c.latency_s == Approx(a0 + hw.tiers[0].latency_s).epsilon(kRel));
    // A 2-rank communicator: 16 of the 32 channels each (16 x 2 = 32), parts of 3 MB <= 16 MiB: 16 x 20.6 GB/s.
    CHECK(c.p2p_channels_used == 16);
    CHECK(c.bandwidth_s == Approx(n / (16 * 20.6e9)).epsilon(kRel));
    const CollectiveCost plain = collective_cost(alpha_beta(hw), placement(hw, 2, 4), Collective::send_recv, n);
    CHECK(plain.bandwidth_s == Approx(n / hw.tiers[0].bandwidth_achieved_bytes_per_s).epsilon(kRel));
  }
  SECTION("between nodes: the GPU's NIC share") {
    const CollectiveCost c = collective_cost(hw, placement(hw, 2, 8), Collective::send_recv, n);
    CHECK(c.latency_s == Approx(a0 + hw.tiers[1].latency_s).epsilon(kRel));
    CHECK(c.bandwidth_s == Approx(n / nic_share(hw)).epsilon(kRel));
  }
}

// NCCL's p2p channels to a peer on another node (src/graph/paths.cc, NCCL >= 2.29),
// worked by hand for DGX H100 (one 400 Gb/s = 50 GB/s NIC a GPU, 16 channels
// across nodes): ceil(50 / 14) = 4 channels a peer, halved while
// 4 x ceil(ranks / 8) > 16. Up to 32 ranks 4 x 14 = 56 GB/s > the NIC share (the
// NIC limits); 33-64 ranks 2 x 14 = 28 GB/s; 80 ranks (nccl-tests sendrecv on
// 10 x 8) 1 x 14 GB/s, which is what xxrjun_cluster01_10x8_h100.log measured (15.2).
TEST_CASE("send/recv: NCCL's p2p channels cap the bandwidth", "[collectives]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  REQUIRE(hw.tiers.at(1).collective_channels == 16);
  REQUIRE(hw.tiers.at(1).bandwidth_nominal_bytes_per_s == 50e9);
  const double n = 1e9;
  struct Row {
    std::int64_t ranks;
    int channels;  // 0: the NIC limits
    double bw;
  };
  const Row rows[] = {{16, 0, nic_share(hw)}, {32, 0, nic_share(hw)}, {40, 2, 28e9}, {64, 2, 28e9}, {80, 1, 14e9},
                      {1024, 1, 14e9}};
  for (const Row& r : rows) {
    INFO(r.ranks << " ranks");
    const CollectiveCost c = collective_cost(hw, placement(hw, r.ranks, 1), Collective::send_recv, n);
    CHECK(c.p2p_channels_used == r.channels);
    CHECK(c.bandwidth_s == Approx(n / r.bw).epsilon(kRel));
  }
  // One GPU a node (stride 8): 80 ranks, 1 channel (4 a peer x 10 rounds > 4).
  CHECK(collective_cost(hw, placement(hw, 80, 8), Collective::send_recv, n).p2p_channels_used == 1);
}

// The communicator's p2p channels follow its GPUs a node (src/graph/paths.cc
// ncclTopoComputeP2pChannels: pow2Up of comm->nChannels, the ring search's
// CTAs): DGX H100, 1 GPU a node 4 CTAs, 2 a node 8, 4 or 8 a node 16 (capped by
// the profile's 16). Worked by hand: 4 channels a peer (ceil(50 / 14)), halved
// while 4 x ceil(ranks / 8) exceeds the communicator's channels.
//   10 x 1: 4 x 2 = 8 > 4 -> 2 channels, 28 GB/s (xxrjun 10 x 1 sendrecv: 24.9)
//   10 x 2: 4 x 3 = 12 > 8 -> 2;  10 x 4: 4 x 5 = 20 > 16 -> 2
//   2 x 1: 4 x 1 = 4 -> 4 channels, 56 GB/s > the NIC's share: the NIC limits.
TEST_CASE("send/recv: the communicator's GPUs a node set its p2p channels", "[collectives]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const double n = 1e9;
  const struct {
    std::int64_t ranks, stride;
    int channels;  // 0: the NIC limits
    double bw;
  } rows[] = {{10, 8, 2, 28e9}, {20, 4, 2, 28e9}, {40, 2, 2, 28e9}, {2, 8, 0, nic_share(hw)}};
  for (const auto& r : rows) {
    INFO(r.ranks << " ranks, stride " << r.stride);
    const CollectiveCost c = collective_cost(hw, placement(hw, r.ranks, r.stride), Collective::send_recv, n);
    CHECK(c.p2p_channels_used == r.channels);
    CHECK(c.bandwidth_s == Approx(n / r.bw).epsilon(kRel));
  }
  // A pipeline hop (two ranks) sending on the PP group's communicator: PP 16 at
  // one GPU a node (TP x CP = 16) has 4 p2p channels, 2 a peer (4 x 2 rounds > 4),
  // so the hop gets 2 channels, as the whole PP group priced as one ring does;
  // priced as its own 2-rank communicator it would get the NIC.
  GroupPlacement hop = placement(hw, 2, 16);
  REQUIRE(collective_cost(hw, hop, Collective::send_recv, n).p2p_channels_used == 0);
  hop.comm_size = 16;
  hop.comm_members_per_domain = 1;
  const CollectiveCost on_pp = collective_cost(hw, hop, Collective::send_recv, n);
  CHECK(on_pp.p2p_channels_used == 2);
  CHECK(on_pp.bandwidth_s == Approx(n / 28e9).epsilon(kRel));
  CHECK(collective_cost(hw, placement(hw, 16, 16), Collective::send_recv, n).bandwidth_s == Approx(on_pp.bandwidth_s));
  // PP 8 at two GPUs a node (TP x CP = 4): 8 channels, 4 a peer in one round: the NIC.
  hop = placement(hw, 2, 4);
  hop.stride = 8;  // the hop that crosses nodes
  hop.comm_size = 8;
  hop.comm_members_per_domain = 2;
  CHECK(collective_cost(hw, hop, Collective::send_recv, n).p2p_channels_used == 0);
  // Inside a node, 8 ranks: 32 p2p channels (pow2Up of 24), 4 a peer while every rank gets its own
  // (4 x 8 = 32); a part may grow to 32 x 512 KiB = 16 MiB, so 32 and 64 MiB take 4 channels, 128 MiB 8,
  // 256 MiB 16, 1 GB 32 (then NVLink limits). One channel: NCCL's Hopper NVLink, 20.6 GB/s.
  // xxrjun_cluster01_1x8_h100.log sendrecv: 79.5, 81.8, 162.5, 299.5 GB/s at 32, 64, 128, 256 MiB.
  const struct {
    double bytes;
    int channels;
  } local_rows[] = {{32.0 * (1 << 20), 4}, {64.0 * (1 << 20), 4}, {128.0 * (1 << 20), 8}, {256.0 * (1 << 20), 16}};
  for (const auto& r : local_rows) {
    INFO(r.bytes << " B in a node");
    const CollectiveCost c = collective_cost(hw, placement(hw, 8, 1), Collective::send_recv, r.bytes);
    CHECK(c.p2p_channels_used == r.channels);
    CHECK(c.bandwidth_s == Approx(r.bytes / (r.channels * 20.6e9)).epsilon(kRel));
  }
  const CollectiveCost local = collective_cost(hw, placement(hw, 8, 1), Collective::send_recv, n);
  CHECK(local.p2p_channels_used == 0);
  CHECK(local.bandwidth_s == Approx(n / hw.tiers[0].bandwidth_achieved_bytes_per_s).epsilon(kRel));
  // No NCCL tuning in the profile: the NIC share, as before.
  CHECK(collective_cost(alpha_beta(hw), placement(hw, 80, 1), Collective::send_recv, n).bandwidth_s ==
        Approx(n / nic_share(hw)).epsilon(kRel));
  CHECK(describe(collective_cost(hw, placement(hw, 80, 1), Collective::send_recv, n)) == "direct (1 p2p channel)");
}

TEST_CASE("trivial groups and empty messages cost nothing", "[collectives]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  CHECK(collective_cost(hw, placement(hw, 1, 1), Collective::all_reduce, 1e9).total_s() == 0.0);
  CHECK(collective_cost(hw, placement(hw, 8, 1), Collective::all_gather, 0.0).total_s() == 0.0);
}

TEST_CASE("TPU v5e torus: wrap-around axes and 2D all-reduce", "[collectives]") {
  const HardwareProfile tpu = find_hardware("tpu-v5e-256", kDir);
  const InterconnectTier& ici = tpu.tiers.at(0);
  REQUIRE(ici.topology == Topology::torus);
  REQUIRE(ici.torus_dims == std::vector<std::int64_t>{16, 16});
  const double B = ici.bandwidth_achieved_bytes_per_s, a = ici.latency_s, a0 = tpu.collective_base_latency_s;
  const double n = 1e8;

  SECTION("a full 16-wide axis wraps: (k-1)/k n/B, 2 ceil((k-1)/2) alpha") {
    for (std::int64_t stride : {1, 16}) {  // axis 0 (a row), axis 1 (a column)
      INFO("stride " << stride);
      const GroupPlacement g = placement(tpu, 16, stride);
      const std::size_t axis = stride == 1 ? 0 : 1;
      CHECK(g.domains == 1);
      CHECK(g.torus_extent[axis] == 16);
      CHECK(g.torus_extent[1 - axis] == 1);
      CHECK(g.torus_wrap[axis]);
      const CollectiveCost c = collective_cost(tpu, g, Collective::all_reduce, n);
      CHECK(c.algorithm == Algorithm::torus);
      CHECK(c.bandwidth_s == Approx(15.0 / 16.0 * n / B).epsilon(kRel));
      CHECK(c.latency_s == Approx(a0 + 2.0 * std::ceil(15.0 / 2.0) * a).epsilon(kRel));
    }
  }
  SECTION("a partial axis does not wrap") {
    const GroupPlacement g = placement(tpu, 8, 1);
    CHECK(g.torus_extent[0] == 8);
    CHECK_FALSE(g.torus_wrap[0]);
    // Open line: one direction's worth of link bandwidth, e-1 hops per pass.
    const CollectiveCost c = collective_cost(tpu, g, Collective::all_reduce, n);
    CHECK(c.bandwidth_s == Approx(2.0 * 7.0 / 8.0 * n / B).epsilon(kRel));
    CHECK(c.latency_s == Approx(a0 + 2.0 * 7.0 * a).epsilon(kRel));
  }
  SECTION("the full 2D torus halves the dimension-by-dimension term") {
    const GroupPlacement g = placement(tpu, 256, 1);
    CHECK(g.torus_extent[0] == 16);
    CHECK(g.torus_extent[1] == 16);
    CHECK(g.torus_wrap[0]);
    CHECK(g.torus_wrap[1]);
    const double p = 256;
    const double dim_by_dim = (p - 1) / p * n / B;  // JAX scaling book, part 3 (sharding)
    const CollectiveCost c = collective_cost(tpu, g, Collective::all_reduce, n);
    CHECK(c.bandwidth_s == Approx(dim_by_dim / 2.0).epsilon(kRel));
  }
}

// NCCL's tuner (src/graph/tuning.cc, NCCL 2.30.7; model/nccl_tables.h) on the
// stock profiles. Hand-derived from the tables: latencies in us, bandwidths
// in GB/s; ring bus bandwidth 370 (NVLink) = min(370, 8 x 47 NICs) across
// nodes; NVLS 480 on H100; 24 channels in a node, 16 across.
TEST_CASE("NCCL tuner: algorithm and protocol on 8x H100 in one node", "[collectives][nccl]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const GroupPlacement g = placement(hw, 8, 1);
  // 1 KiB: ring LL, 6.6 + 14 steps x 0.6 = 15.0 us (tree LL 6.8 + 2*7*0.6 = 15.2, NVLS 25).
  CollectiveCost c = collective_cost(hw, g, Collective::all_reduce, 1024);
  CHECK(c.algorithm == Algorithm::ring);
  CHECK(c.protocol == Protocol::ll);
  CHECK(c.latency_s == Approx(15.0e-6).epsilon(1e-9));
  // One channel for 1 KiB (LL ring: 512 threads x 8 x 8 ranks = 32 KiB per
  // channel): 185 GB/s x 8/14 / 24 channels.
  CHECK(c.bandwidth_s == Approx(1024 / (185e9 * 8.0 / 14.0 / 24.0)).epsilon(1e-9));
  // 1 MiB: ring LL 15.0 + 2^20 / (141 x 8/14) = 28.01 beats NVLS 25 + 2^20 / (480 x 8/14) = 28.82.
  c = collective_cost(hw, g, Collective::all_reduce, 1 << 20);
  CHECK(c.algorithm == Algorithm::ring);
  CHECK(c.protocol == Protocol::ll);
  CHECK(c.total_s() == Approx(15.0e-6 + double(1 << 20) / (141e9 * 8.0 / 14.0)).epsilon(1e-9));
  // 1 GiB: NVLS 25 + 2^30 / (480 x 8/14) = 3939.6 us (ring Simple 56 + 2^30 / (370 x 8/14) = 5134.5).
  c = collective_cost(hw, g, Collective::all_reduce, double(1 << 30));
  CHECK(c.algorithm == Algorithm::nvls);
  CHECK(c.protocol == Protocol::simple);
  CHECK(c.total_s() == Approx(25e-6 + double(1 << 30) / (480e9 * 8.0 / 14.0)).epsilon(1e-9));
  CHECK(c.bus_bandwidth_bytes_per_s == Approx(480e9));
  // All-gather: NVLS moves only (ppn-1)/(2 ppn) of that, so the ring wins: 8.4 + 7 x 3.4 + 2^30 / (370 x 8/7).
  c = collective_cost(hw, g, Collective::all_gather, double(1 << 30));
  CHECK(c.algorithm == Algorithm::ring);
  CHECK(c.protocol == Protocol::simple);
  CHECK(c.total_s() == Approx(32.2e-6 + double(1 << 30) / (370e9 * 8.0 / 7.0)).epsilon(1e-9));
  // A forced algorithm (NCCL_ALGO=RING) is priced as such.
  c = collective_cost(hw, g, Collective::all_reduce, double(1 << 30), Algorithm::ring);
  CHECK(c.algorithm == Algorithm::ring);
  CHECK(c.protocol == Protocol::simple);
  CHECK(c.total_s() == Approx(56e-6 + double(1 << 30) / (370e9 * 8.0 / 14.0)).epsilon(1e-9));
  CHECK(describe(c) == "ring/Simple");
}

TEST_CASE("NCCL tuner: algorithm and protocol on 16 x 8 H100", "[collectives][nccl]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const GroupPlacement g = placement(hw, 128, 1);
  REQUIRE(g.domains == 16);
  // 1 KiB: tree LL, 6.8 + 2 x (7 x 0.6 + log2(16) x 5.0) = 55.2 us
  // (ring LL 6.6 + 224 x 1.0 + 30 x 2.7 = 311.6; NVLS tree 25 + 2 x 4 x 20.9 = 192.2).
  CollectiveCost c = collective_cost(hw, g, Collective::all_reduce, 1024);
  CHECK(c.algorithm == Algorithm::tree);
  CHECK(c.protocol == Protocol::ll);
  CHECK(c.latency_s == Approx(55.2e-6).epsilon(1e-9));
  // 1 MiB: tree LL128, 14 + 2 x (7 x 1.25 + 4 x 8.5) = 99.5 us, bandwidth
  // min(329.6 x 0.92 x 120/128, 16 x 29.0) x 0.5 x 0.6 (size correction) = 85.3 GB/s,
  // where 329.6 = 8 NICs x 2 CTAs x 20.6 GB/s (the CTA cap, ring_channels).
  c = collective_cost(hw, g, Collective::all_reduce, 1 << 20);
  CHECK(c.algorithm == Algorithm::tree);
  CHECK(c.protocol == Protocol::ll128);
  CHECK(c.latency_s == Approx(99.5e-6).epsilon(1e-9));
  CHECK(c.bandwidth_s == Approx(double(1 << 20) / (329.6e9 * 0.92 * 120.0 / 128.0 * 0.5 * 0.6)).epsilon(1e-9));
  // 1 GiB: NVLS tree, 25 + 2 x 4 x 20.9 = 192.2 us, bus bandwidth
  // min(480, 8 NICs x 2 CTAs x 20.6, 16 x 45.5) = 329.6 GB/s, x 128/254.
  c = collective_cost(hw, g, Collective::all_reduce, double(1 << 30));
  CHECK(c.algorithm == Algorithm::nvls_tree);
  CHECK(c.protocol == Protocol::simple);
  CHECK(c.total_s() == Approx(192.2e-6 + double(1 << 30) / (329.6e9 * 128.0 / 254.0)).epsilon(1e-9));
}

TEST_CASE("NCCL tuner: 10 x 8 H100 all-gather, LL128 capped by the ring graph's 8 channels", "[collectives][nccl]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const GroupPlacement g = placement(hw, 80, 1);
  REQUIRE(g.domains == 10);
  // The tuner's latencies (tuning.cc, 79 steps, 9 across nodes), which choose: LL128 14 + 70 x 1.9 + 9 x 4.0 =
  // 183 us; Simple 8.4 + 70 x max(3.4, 3 x 1.0) + 9 x 14 = 372.4 us.
  // Bus bandwidths: Simple 8 NICs x 2 CTAs x 20.6 = 329.6 GB/s; LL128 min(0.92 x 329.6, 8 rings x 36.7) = 293.6
  // (tuning.cc multiplies perChMaxRingLL128Bw by the ring graph's 8 searched channels, not the 16 CTAs,
  // which would give 303.2).
  // 128 MiB: LL128 183 + B / (293.6 x 80/79) = 634 us < Simple 372.4 + B / (329.6 x 80/79) = 774 us.
  // The run pays every step at the network hop's latency (steps x max_latency, NVIDIA/nccl-tests#123):
  // LL128 14 + 79 x 4.0 = 330 us.
  const double m = 128.0 * (1 << 20);
  CollectiveCost c = collective_cost(hw, g, Collective::all_gather, m);
  CHECK(c.algorithm == Algorithm::ring);
  CHECK(c.protocol == Protocol::ll128);
  CHECK(c.total_s() == Approx(330e-6 + m / (293.6e9 * 80.0 / 79.0)).epsilon(1e-9));
  // 1 GiB: NCCL picks Simple by its estimate, 372.4 + B / (329.6 x 80/79) = 3589 us < LL128's 3794 us (the
  // tuner's figures: LL128 at its run latency, 330 us, would cost 3941); Simple's run keeps the tuner's sum.
  const double b = double(1 << 30);
  c = collective_cost(hw, g, Collective::all_gather, b);
  CHECK(c.protocol == Protocol::simple);
  CHECK(c.total_s() == Approx(372.4e-6 + b / (329.6e9 * 80.0 / 79.0)).epsilon(1e-9));
}

TEST_CASE("NCCL ring latency: the tuner's inside one node, steps x the network hop's across nodes",
          "[collectives][nccl]") {
  // One node: every hop is NVLink, steps x max_latency equals the tuner's sum. 8 x H100 all-gather,
  // LL at 64 KiB: 6.6 + 7 x 0.6 = 10.8 us of latency.
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const auto ll_ring_latency = [&](std::int64_t gpus, std::int64_t nodes) {
    const GroupPlacement g = placement(hw, gpus, 1);
    REQUIRE(g.domains == nodes);
    const CollectiveCost c = collective_cost(hw, g, Collective::all_gather, 65536.0);
    CHECK(c.algorithm == Algorithm::ring);
    CHECK(c.protocol == Protocol::ll);
    return c.latency_s;
  };
  CHECK(ll_ring_latency(8, 1) == Approx(10.8e-6).epsilon(1e-9));
  // Two nodes: the tuner counts one network step, 6.6 + 14 x max(0.6, 1.0 post overhead) + 2.7 = 23.3 us;
  // the run pays all 15 steps at the network hop's 2.7 us: 6.6 + 15 x 2.7 = 47.1 us.
  CHECK(ll_ring_latency(16, 2) == Approx(47.1e-6).epsilon(1e-9));
}

TEST_CASE("NCCL tuner: NVLS tree at medium sizes takes NCCL's tree correction", "[collectives][nccl]") {
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const GroupPlacement g = placement(hw, 16, 1);
  REQUIRE(g.domains == 2);
  // 16 MiB on 2 x 8: NVLS tree, 25 + 2 x 1 x 20.9 = 66.8 us; bus min(480, 2 x 8 NICs x 47, 16 x 57.7) = 480 GB/s,
  // x 16/30; x 0.7, treeCorrectionFactor Simple at log2(16 MiB / 64) = 18 (tuning.cc).
  const double t = 66.8e-6 + double(1 << 24) / (480e9 * 16.0 / 30.0 * 0.7);
  CollectiveCost c = collective_cost(hw, g, Collective::all_reduce, double(1 << 24));
  CHECK(c.algorithm == Algorithm::nvls_tree);
  CHECK(c.total_s() == Approx(t).epsilon(1e-9));
  // From 1 GiB (log2 = 24) the table ends: uncorrected.
  c = collective_cost(hw, g, Collective::all_reduce, double(1 << 30));
  CHECK(c.algorithm == Algorithm::nvls_tree);
  CHECK(c.total_s() == Approx(66.8e-6 + double(1 << 30) / (480e9 * 16.0 / 30.0)).epsilon(1e-9));
  // Blackwell: NCCL's own choice corrects it (NCCL 2.29.2+); same price here, where NVLS tree still wins.
  hw.nccl_generation = NcclGeneration::blackwell;
  c = collective_cost(hw, g, Collective::all_reduce, double(1 << 24));
  CHECK(c.algorithm == Algorithm::nvls_tree);
  CHECK(c.total_s() == Approx(t).epsilon(1e-9));
}

TEST_CASE("NCCL tuner: no NVLS without NVLink SHARP (A100)", "[collectives][nccl]") {
  const HardwareProfile hw = find_hardware("dgx-a100-80gb", kDir);
  REQUIRE(hw.tiers.at(0).nvls_bus_bandwidth_bytes_per_s == 0);
  for (std::int64_t size : {8, 16, 128})
    for (double n : {1e3, 1e6, 1e9}) {
      const CollectiveCost c = collective_cost(hw, placement(hw, size, 1), Collective::all_reduce, n);
      INFO("size " << size << " bytes " << n);
      CHECK(c.algorithm != Algorithm::nvls);
      CHECK(c.algorithm != Algorithm::nvls_tree);
      CHECK(c.protocol != Protocol::none);
    }
  // 1 GiB in one node: ring Simple, 8.4 + 14 x 3.4 + 2^30 / (achieved x 8/14).
  const CollectiveCost c = collective_cost(hw, placement(hw, 8, 1), Collective::all_reduce, double(1 << 30));
  CHECK(c.algorithm == Algorithm::ring);
  CHECK(c.protocol == Protocol::simple);
  CHECK(c.total_s() ==
        Approx(56e-6 + double(1 << 30) / (hw.tiers[0].bandwidth_achieved_bytes_per_s * 8.0 / 14.0)).epsilon(1e-9));
}
