// calibration of send/recv on NCCL's p2p channels (issue 14): the fit recovers
// what one channel moves from runs whose communicators have their own channel
// counts, and the fitted profile prices a communicator of another size with
// its channels. Synthetic times come from collective_cost on a "truth"
// profile, without noise, so the tolerance is numerical (1e-6).
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "planner/calibrate/calibration.h"
#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/simulate/simulate.h"

using namespace planner;

namespace {

const std::string kDir = PLANNER_SOURCE_DIR;
constexpr double kNumerical = 1e-6;

MeasuredSeries sendrecv_series(std::int64_t ranks, std::int64_t per_node) {
  MeasuredSeries s;
  s.collective = Collective::send_recv;
  s.group = per_node == ranks ? GroupKind::intra_node : per_node == 1 ? GroupKind::inter_node : GroupKind::world;
  s.group_size = ranks;
  s.ranks_per_node = per_node;
  s.nodes = ranks / per_node;
  s.dtype = "float";
  return s;
}

// nccl-tests' sendrecv ring over `ranks` ranks, 8 B to 16 GiB by x4, timed on `hw`.
MeasurementSet sendrecv_run(const HardwareProfile& hw, std::int64_t ranks, std::int64_t per_node) {
  MeasurementSet m;
  m.tool = "synthetic";
  m.backend = "nccl";
  m.device = "synthetic";
  m.world_size = ranks;
  m.nodes = ranks / per_node;
  m.ranks_per_node = per_node;
  MeasuredSeries s = sendrecv_series(ranks, per_node);
  const GroupPlacement g = placement_of(hw, s);
  for (double n = 8; n <= 16.0 * double(1 << 30); n *= 4)
    s.points.push_back(make_point(s.collective, s.group_size, n, collective_cost(hw, g, s.collective, n).total_s()));
  m.series.push_back(s);
  return m;
}

// dgx-h100 whose send/recv moves 12 GB/s a p2p channel across nodes (NCCL's
// P2P_PER_CHANNEL_NET_BW is 14) and 19 GB/s a channel over NVLink, 300 GB/s
// at most over NVLink, with its own latencies.
HardwareProfile truth() {
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  constexpr auto sr = std::size_t(Collective::send_recv);
  hw.tiers[0].collective_fits[sr] = {.fitted = true,
                                     .base_latency_s = 8e-6,
                                     .latency_per_step_s = 2e-6,
                                     .bandwidth_bytes_per_s = 300e9,
                                     .p2p_channel_bandwidth_bytes_per_s = 19e9};
  hw.tiers[1].collective_fits[sr] = {.fitted = true,
                                     .base_latency_s = 9e-6,
                                     .latency_per_step_s = 3e-6,
                                     .bandwidth_bytes_per_s = 46e9,
                                     .p2p_channel_bandwidth_bytes_per_s = 12e9};
  return hw;
}

}  // namespace

TEST_CASE("send/recv: a 10 x 1 fit prices an 80-rank ring with its own p2p channels", "[calibration][p2p]") {
  const HardwareProfile base = find_hardware("dgx-h100", kDir);
  const HardwareProfile want = truth();
  const FitResult r = fit_profile(base, {{"10x1.json", sendrecv_run(want, 10, 1)}});
  REQUIRE(r.collectives.size() == 1);
  const CollectiveFitReport& rep = r.collectives[0];
  CHECK(rep.tier == 1);
  CHECK(rep.p2p_channels);
  CHECK(rep.channel_bandwidth_fitted);
  CHECK(!rep.bandwidth_fitted);  // every point paced by its channels: the NIC is never seen
  const CollectiveFit& f = r.profile.tiers[1].collective_fits[std::size_t(Collective::send_recv)];
  CHECK(f.p2p_channel_bandwidth_bytes_per_s == Approx(12e9).epsilon(kNumerical));
  // One step count: the latency sum is identified.
  CHECK(f.base_latency_s + f.latency_per_step_s == Approx(12e-6).epsilon(kNumerical));

  // Hand-worked, 1 GiB: a 10 x 1 communicator gives a peer 2 channels (4
  // CTAs, 4 channels a peer halved once for ceil(10/8) = 2 rounds), an 80 x 1
  // ring of 8 GPUs a node 1 (16 CTAs, 4 a peer halved twice for 10 rounds):
  // 12 us + 2^30 B / (2 x 12 GB/s) and 12 us + 2^30 B / 12 GB/s.
  const double n = double(1 << 30);
  const MeasuredSeries ten = sendrecv_series(10, 1), eighty = sendrecv_series(80, 8);
  const CollectiveCost c10 = collective_cost(r.profile, placement_of(r.profile, ten), Collective::send_recv, n);
  const CollectiveCost c80 = collective_cost(r.profile, placement_of(r.profile, eighty), Collective::send_recv, n);
  CHECK(c10.p2p_channels_used == 2);
  CHECK(c80.p2p_channels_used == 1);
  CHECK(c10.total_s() == Approx(12e-6 + n / 24e9).epsilon(kNumerical));
  CHECK(c80.total_s() == Approx(12e-6 + n / 12e9).epsilon(kNumerical));

  // The whole 80-rank sweep, against the truth's times.
  const MeasurementSet ring = sendrecv_run(want, 80, 8);
  const CheckReport check = check_profile(r.profile, {{"80x.json", ring}});
  REQUIRE(check.series.size() == 1);
  for (const CheckPoint& p : check.series[0].points) {
    INFO(p.bytes << " B: " << p.predicted_s << " s predicted, " << p.measured_s << " s truth");
    CHECK(std::abs(p.rel_error) < kNumerical);
  }
}

TEST_CASE("send/recv in a node: the link and the channel rate both come back", "[calibration][p2p]") {
  // An 8-GPU ring is paced by its channels up to 256 MiB (4, 8, 16 x 19 GB/s)
  // and by the 300 GB/s link above: both bounds are seen, both are fitted.
  const HardwareProfile base = find_hardware("dgx-h100", kDir);
  const HardwareProfile want = truth();
  const FitResult r = fit_profile(base, {{"1x8.json", sendrecv_run(want, 8, 8)}});
  REQUIRE(r.collectives.size() == 1);
  const CollectiveFitReport& rep = r.collectives[0];
  CHECK(rep.tier == 0);
  CHECK(rep.bandwidth_fitted);
  CHECK(rep.channel_bandwidth_fitted);
  const CollectiveFit& f = r.profile.tiers[0].collective_fits[std::size_t(Collective::send_recv)];
  CHECK(f.bandwidth_bytes_per_s == Approx(300e9).epsilon(kNumerical));
  CHECK(f.p2p_channel_bandwidth_bytes_per_s == Approx(19e9).epsilon(kNumerical));
  CHECK(rep.median_abs_error < kNumerical);
  // A pair (2 ranks: more channels a peer at small sizes) priced as the truth prices it.
  const CheckReport pair = check_profile(r.profile, {{"1x2.json", sendrecv_run(want, 2, 2)}});
  for (const CheckPoint& p : pair.series[0].points) {
    INFO(p.bytes << " B");
    CHECK(std::abs(p.rel_error) < kNumerical);
  }
}

TEST_CASE("send/recv: a fit without a channel rate keeps no channel cap, MPI runs fit none", "[calibration][p2p]") {
  // Fitted profiles written before the channel rate existed price the fitted
  // bandwidth alone, as they did.
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  hw.tiers[1].collective_fits[std::size_t(Collective::send_recv)] = {.fitted = true,
                                                                     .base_latency_s = 9e-6,
                                                                     .latency_per_step_s = 3e-6,
                                                                     .bandwidth_bytes_per_s = 25e9,
                                                                     .p2p_channel_bandwidth_bytes_per_s = 0};
  const GroupPlacement ring = placement_of(hw, sendrecv_series(80, 8));
  const SendRecvBandwidth b = send_recv_bandwidth(hw, ring, 1e9);
  CHECK(b.remote);
  CHECK(b.channels == 0);
  CHECK(b.bytes_per_s() == Approx(25e9));
  // An MPI run's send/recv does not move on NCCL's channels: fitted on its link alone, no channel rate.
  MeasurementSet mpi = sendrecv_run(truth(), 10, 1);
  mpi.backend = "mpi";
  const FitResult r = fit_profile(find_hardware("dgx-h100", kDir), {{"mpi.json", mpi}});
  REQUIRE(r.collectives.size() == 1);
  CHECK(!r.collectives[0].p2p_channels);
  CHECK(r.profile.tiers[1].collective_fits[std::size_t(Collective::send_recv)].p2p_channel_bandwidth_bytes_per_s == 0);
  // The stock profile: NCCL's 14 GB/s a channel, one channel a peer on 80 ranks.
  const HardwareProfile stock = find_hardware("dgx-h100", kDir);
  const SendRecvBandwidth s = send_recv_bandwidth(stock, placement_of(stock, sendrecv_series(80, 8)), 1e9);
  CHECK(s.channels == 1);
  CHECK(s.bytes_per_s() == Approx(14e9));
}

TEST_CASE("evaluate and the simulator price a pipeline hop with the fitted channel rate", "[calibration][p2p]") {
  // TP 8, PP 4: one stage a node, so every hop crosses the network on the PP
  // group's communicator (4 ranks, one GPU a node: 4 p2p channels a peer, as
  // the stock rule gives). A fitted rate of 5 GB/s a channel makes the hop
  // 12 us + bytes / 20 GB/s; halving the rate doubles the bandwidth part, in
  // the simulator's per-hop costs and in evaluate's exposed p2p term alike.
  const ModelSpec m = find_model("llama70b", kDir);
  auto fitted = [](double rate) {
    HardwareProfile hw = find_hardware("dgx-h100", kDir);
    hw.tiers[1].collective_fits[std::size_t(Collective::send_recv)] = {.fitted = true,
                                                                       .base_latency_s = 9e-6,
                                                                       .latency_per_step_s = 3e-6,
                                                                       .bandwidth_bytes_per_s = 47e9,
                                                                       .p2p_channel_bandwidth_bytes_per_s = rate};
    return hw;
  };
  TrainingSpec ts;
  ts.num_gpus = 64;
  ts.seq_len = 8192;
  ts.global_batch_sequences = 64;
  ParallelConfig pc;
  pc.tp = 8;
  pc.pp = 4;
  pc.dp = 2;
  pc.sequence_parallel = true;
  pc.recompute = Recompute::full;
  const HardwareProfile fast = fitted(5e9), slow = fitted(2.5e9);
  const Evaluation ev_fast = evaluate(m, fast, pc, ts), ev_slow = evaluate(m, slow, pc, ts);
  const PipelineProblem p_fast = pipeline_problem(m, fast, pc, ts, ev_fast, Schedule::one_f_one_b);
  const PipelineProblem p_slow = pipeline_problem(m, slow, pc, ts, ev_slow, Schedule::one_f_one_b);
  constexpr double latency_s = 12e-6;
  REQUIRE(p_fast.send_s.size() == 4);
  for (std::size_t s = 0; s < 4; ++s) {
    INFO("stage " << s);
    const double bw_fast = p_fast.send_s[s] - latency_s, bw_slow = p_slow.send_s[s] - latency_s;
    REQUIRE(bw_fast > 0);
    CHECK(bw_slow == Approx(2 * bw_fast).epsilon(1e-9));
  }
  // The closed form's hop: the same bytes over 4 channels x 5 GB/s.
  const double bytes = (p_fast.send_s[0] - latency_s) * 4 * 5e9;
  const GroupPlacement pp = placement(fast, pc.pp, pc.tp);
  const CollectiveCost hop = collective_cost(fast, pp, Collective::send_recv, bytes);
  CHECK(hop.p2p_channels_used == 4);
  CHECK(hop.total_s() == Approx(p_fast.send_s[0]).epsilon(1e-9));
  CHECK(ev_slow.time.pp_p2p_s > ev_fast.time.pp_p2p_s);
}
