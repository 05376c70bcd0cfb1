// Fitting collective alpha-beta and compute efficiencies to measurements.
//
// Model (the one collective_cost prices, collectives.cpp): a group wholly
// inside tier t (all members on one node -> tier 0; one member per node ->
// tier 1) takes, for collective c over p ranks and n bytes,
//     time = base_latency + steps_c(p) * latency_per_step + factor_c(p) * n / B
// with steps/factor of the algorithm NCCL's tuner would pick (ring, or for
// all-reduce across nodes the double binary tree when cheaper: steps 2*lg p,
// factor 2). For a fixed algorithm that is linear in (base, per_step, 1/B), so
// each (tier, collective) is a weighted least-squares problem (Eigen):
//   - weights 1/time: the relative error counts, so 8 B and 1 GiB points both
//     matter (an absolute fit would ignore every latency-bound point);
//   - iteratively reweighted on the relative residuals, scaled by their MAD:
//     Huber weights to convergence, then Tukey's biweight from there
//     (Huber 1964; Beaton & Tukey 1974; Holland & Welsch 1977), so a few
//     outliers (a preempted iteration, a congested size) lose their pull and
//     gross ones none at all;
//   - each point's algorithm is re-chosen as the cheaper under the current
//     parameters, as the tuner does, until the choice is stable;
//   - base and per-step latency are separated only when the data has at least
//     two step counts (several group sizes, or ring and tree points); with one
//     group size their sum is fitted and split in the base profile's ratio;
//   - parameters stay non-negative (a negative one is fixed at 0 and the rest
//     refitted); sizes too small to show bandwidth keep the base's bandwidth.
#include "planner/calibrate/calibration.h"

#include "calibrate/alpha_beta_fit.h"
#include "calibrate/compute_fit.h"
#include "calibrate/fit_inputs.h"
#include "calibrate/fit_quality.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"

namespace planner {

using calibrate_detail::adopt_node_size;
using calibrate_detail::algorithm_runs;
using calibrate_detail::candidate_terms;
using calibrate_detail::check_device;
using calibrate_detail::check_domains;
using calibrate_detail::check_forced_algorithm;
using calibrate_detail::choose_nccl_tuner_or_alpha_beta;
using calibrate_detail::EngineResult;
using calibrate_detail::fill_residuals;
using calibrate_detail::fit_compute;
using calibrate_detail::fit_engine;
using calibrate_detail::gate;
using calibrate_detail::median_of;
using calibrate_detail::merge_split_series;
using calibrate_detail::Obs;
using calibrate_detail::Params;
using nlohmann::json;

namespace {

// The alpha-beta a profile prices collective c on tier t with: its fit, else
// the generic tier values (base latency: the profile's NCCL baseLat).
Params current_params(const HardwareProfile& hw, std::size_t tier, Collective c) {
  const InterconnectTier& t = hw.tiers[tier];
  const CollectiveFit& f = t.collective_fits[std::size_t(c)];
  const double bw = f.fitted ? f.bandwidth_bytes_per_s : t.bandwidth_achieved_bytes_per_s;
  Params p;
  p.l0 = f.fitted ? f.base_latency_s : hw.collective_base_latency_s;
  p.l1 = f.fitted ? f.latency_per_step_s : t.latency_s;
  const double per_gpu =
      tier == 0 ? bw : bw * double(t.nics_per_node) / double(std::max<std::int64_t>(t.gpus_per_node, 1));
  p.beta = per_gpu > 0 ? 1.0 / per_gpu : 0.0;
  return p;
}

// The algorithms a point may use: NCCL's choice, or the one --algo forced
// (all-reduce only has two here; the others keep their one).
std::vector<calibrate_detail::Term> forced_terms(std::size_t tier, Collective c, std::int64_t p,
                                                 std::optional<Algorithm> algo) {
  std::vector<calibrate_detail::Term> t = candidate_terms(tier, c, p);
  if (!algo || t.size() < 2) return t;
  std::erase_if(t, [&](const calibrate_detail::Term& x) { return x.algorithm != *algo; });
  return t;
}

SeriesCheck check_series(const HardwareProfile& hw, const std::string& origin, const MeasuredSeries& s,
                         std::optional<Algorithm> algo = std::nullopt) {
  // A measured node with more ranks than the profile's node has GPUs ran on
  // other hardware: placed, it would overfill the profile's NVLink domains.
  // (A fit grows the node instead, from a single-node run: fit_profile.)
  if (hw.tiers.size() >= 2 && hw.tiers[1].gpus_per_node > 0 && s.ranks_per_node > hw.tiers[1].gpus_per_node)
    throw InputError(origin, fmt::format("{}: {} ranks a node were measured, but a node of the profile {} has {} GPUs "
                                         "(check against the profile of the machine that ran it)",
                                         describe(s), s.ranks_per_node, hw.name, hw.tiers[1].gpus_per_node));
  SeriesCheck out;
  out.origin = origin;
  out.label = describe(s);
  out.collective = s.collective;
  out.tier = group_tier(hw, s);
  const std::size_t tier = out.tier == GroupTier::tier1 ? 1 : 0;
  out.fitted = out.tier != GroupTier::mixed && tier < hw.tiers.size() &&
               hw.tiers[tier].collective_fits[std::size_t(s.collective)].fitted;
  const GroupPlacement g = placement_of(hw, s);
  // Where a domain spans hosts, say how the nodes were laid into domains.
  if (hosts_per_domain(hw) > 1 || s.nodes_per_nvlink_domain > 0)
    out.label += fmt::format(
        ", {} NVLink domain{} of {} ranks ({})", g.domains, g.domains == 1 ? "" : "s", g.members_per_domain,
        s.nodes_per_nvlink_domain > 0 ? fmt::format("{} node{} a domain, as the file says", s.nodes_per_nvlink_domain,
                                                    s.nodes_per_nvlink_domain == 1 ? "" : "s")
                                      : "nodes fill domains in order; import-nccl-tests --nodes-per-nvlink-domain says "
                                        "otherwise");
  std::vector<double> errs;
  for (const MeasuredPoint& p : s.points) {
    // --algo: the algorithm the run forced, priced as NCCL runs it (its
    // protocol chosen by the tuner among that algorithm's) on whatever tiers
    // the group crosses; an algorithm that cannot run this collective is
    // marked, never silently replaced.
    const CollectiveCost cost = collective_cost(hw, g, s.collective, p.bytes, algo);
    CheckPoint c;
    c.bytes = p.bytes;
    c.measured_s = p.time_s;
    c.predicted_s = cost.total_s();
    c.algorithm = cost.algorithm;
    c.protocol = cost.protocol;
    c.p2p_channels_used = cost.p2p_channels_used;
    // (NCCL_ALGO chooses among collective algorithms; all-to-all and send/recv have none.)
    c.not_forced = algo && cost.algorithm != *algo && s.collective != Collective::all_to_all &&
                   s.collective != Collective::send_recv;
    c.rel_error = (c.predicted_s - c.measured_s) / c.measured_s;
    errs.push_back(std::abs(c.rel_error));
    out.points.push_back(c);
  }
  out.median_abs_error = median_of(errs);
  out.max_abs_error = errs.empty() ? 0 : *std::max_element(errs.begin(), errs.end());
  return out;
}

// send/recv with NCCL's p2p channels (send_recv_bandwidth): a point moves at
// the link's rate or at its channels x a channel's rate, whichever is less,
// with the channels of the communicator it was measured on (a 10 x 1 run: 2
// a peer across DGX H100 nodes; an 80-rank ring: 1). Both are bounds of the
// point (Obs::slowest); the fit recovers a channel's rate from the points the
// channels pace and the link's from the others, and a rate no point shows
// stays the base's. What generalises is the per-channel rate: any other
// communicator is priced with its own channel count.
void add_p2p_bounds(const SendRecvBandwidth& b, Obs& o) {
  if (b.channels <= 0) return;
  o.slowest = true;
  o.terms = {o.terms.front(), o.terms.front()};
  o.terms[1].per_channel = true;
  o.terms[1].factor /= double(b.channels);
}

// A fitted 1 / bandwidth as the tier states bandwidth: per GPU (tier 0) or
// per NIC (tier 1), as bandwidth_achieved_bytes_per_s.
double tier_bandwidth(const InterconnectTier& t, std::size_t tier, double beta) {
  const double per_gpu = 1.0 / beta;
  return std::min(1e15, tier == 0
                            ? per_gpu
                            : per_gpu * double(t.gpus_per_node) / double(std::max<std::int64_t>(t.nics_per_node, 1)));
}

// The same fit of the base profile's own prices of the points
// (CollectiveFit::stock): what the fit would find on a cluster equal to the base.
CollectiveFit::Stock stock_fit(const std::vector<Obs>& stock_obs, const Params& base_p, const FitOptions& opt,
                               bool keep_latency, const InterconnectTier& t, std::size_t tier) {
  const EngineResult st = fit_engine(stock_obs, base_p, opt, keep_latency);
  CollectiveFit::Stock out;
  out.base_latency_s = std::min(st.params.l0, 1.0);
  out.latency_per_step_s = std::min(st.params.l1, 1.0);
  out.bandwidth_bytes_per_s = tier_bandwidth(t, tier, st.params.beta);
  return out;
}

// The profile's source text for one fit: what was fitted to what, and which
// of its values are the base's.
std::string fit_source(const CollectiveFitReport& rep, const std::set<std::string>& origins, const FitOptions& opt) {
  std::string from;
  for (const auto& o : origins) from += (from.empty() ? "" : ", ") + o;
  return fmt::format(
      "fitted by planner calibrate fit to {}: {} series, group sizes {}, {} points {}-{}; weighted least squares "
      "in relative "
      "error with Huber reweighting{}{}{}{}{}",
      from, rep.series, join_sizes(rep.group_sizes), rep.points, human_bytes(rep.min_bytes), human_bytes(rep.max_bytes),
      opt.algorithm && algorithm_runs(rep.tier, rep.collective, *opt.algorithm)
          ? fmt::format("; algorithm forced: {}", to_string(*opt.algorithm))
          : "",
      rep.latency_kept    ? "; no size below 1 MiB, so the base profile's latency kept"
      : rep.growth_fitted ? ""
                          : "; one step count, so base and per-step latency split in the base profile's ratio",
      !rep.p2p_channels ? ""
      : rep.channel_bandwidth_fitted
          ? "; p2p_channel_bandwidth_bytes_per_s: what one NCCL p2p channel moved, given each measured "
            "communicator's channel count (NVIDIA/nccl src/graph/paths.cc ncclTopoComputeP2pChannels, "
            "src/enqueue.cc addP2pToPlan)"
          : "; no point paced by NCCL's p2p channels, so the base's per-channel rate kept",
      rep.bandwidth_fitted ? ""
      : rep.p2p_channels   ? "; every point paced by NCCL's p2p channels, so the base's link bandwidth kept"
                           : "; sizes too small to show bandwidth, the base's bandwidth kept",
      opt.command.empty() ? "" : fmt::format("; command: {}", opt.command));
}

// The first series of collective c on `tier` whose time at its largest size
// is below its time at its smallest ("SERIES: 250 us at 8 B, 100 us at 1 GiB"),
// or "".
std::string falling_series(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms, std::size_t tier,
                           Collective c) {
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series) {
      if (s.collective != c || group_tier(hw, s) != (tier == 0 ? GroupTier::tier0 : GroupTier::tier1)) continue;
      if (s.points.size() >= 2 && s.points.back().time_s < s.points.front().time_s)
        return fmt::format("{}: {:.4g} us at {}, {:.4g} us at {}", describe(s), s.points.front().time_s * 1e6,
                           human_bytes(s.points.front().bytes), s.points.back().time_s * 1e6,
                           human_bytes(s.points.back().bytes));
    }
  return "";
}

// fit_engine's error where the points determine no latency and bandwidth,
// with the files, tier and collective named (it named none of them), and the
// reason where times fall as the size grows.
InputError unfittable(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms, std::size_t tier,
                      Collective c, const std::set<std::string>& origins, const InputError& e) {
  const std::string falling = falling_series(hw, ms, tier, c);
  return InputError(fmt::format("{}", fmt::join(origins, ", ")),
                    falling.empty() ? fmt::format("tier {} {}: {}", tier, collective_key(c), e.message())
                                    : fmt::format("tier {} {}: times fall as the size grows ({}), which no latency "
                                                  "and bandwidth describe (a mixed-up size or time column?)",
                                                  tier, collective_key(c), falling));
}

// Fits collective c on `tier` to every series wholly inside that tier, and
// records the fit, its report and its source. Returns why series of it were
// not fitted (too few points, no tier 1), as notes also say.
std::vector<std::string> fit_collective(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms,
                                        const FitOptions& opt, std::size_t tier, Collective c, FitResult& out) {
  HardwareProfile& hw = out.profile;
  std::vector<Obs> obs;
  double base_per_channel = 0;  // send/recv: the base's p2p channel rate where it has channels on this tier
  std::set<std::int64_t> sizes;
  std::size_t nseries = 0;
  std::set<std::string> origins;
  double min_bytes = std::numeric_limits<double>::infinity(), max_bytes = 0;
  bool all_nccl_runs = true;
  std::vector<GroupPlacement> groups;  // each point's, for CollectiveFit::stock
  std::vector<std::string> skipped;
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series) {
      if (s.collective != c || group_tier(hw, s) != (tier == 0 ? GroupTier::tier0 : GroupTier::tier1)) continue;
      if (tier >= hw.tiers.size()) {
        skipped.push_back(fmt::format("{}: {} skipped: the base profile has no tier 1", m.origin, describe(s)));
        out.notes.push_back(skipped.back());
        continue;
      }
      ++nseries;
      origins.insert(m.origin);
      sizes.insert(s.group_size);
      const GroupPlacement g = placement_of(hw, s);
      // NCCL's p2p channels pace NCCL runs only (backend nccl, nccl-local,
      // nccl-tests); an MPI run's send/recv is fitted on its link alone.
      const bool nccl_run = m.set.backend.rfind("nccl", 0) == 0;
      all_nccl_runs = all_nccl_runs && nccl_run;
      for (const MeasuredPoint& p : s.points) {
        obs.push_back(Obs{p.bytes, p.time_s, forced_terms(tier, c, s.group_size, opt.algorithm)});
        groups.push_back(g);
        if (c == Collective::send_recv && nccl_run) {
          const SendRecvBandwidth b = send_recv_bandwidth(hw, g, p.bytes);
          add_p2p_bounds(b, obs.back());
          if (b.channels > 0) base_per_channel = b.per_channel_bytes_per_s;
        }
        min_bytes = std::min(min_bytes, p.bytes);
        max_bytes = std::max(max_bytes, p.bytes);
      }
    }
  if (obs.empty()) return skipped;
  if (obs.size() < 3) {
    skipped.push_back(fmt::format("tier {} {}: {} point{} too few to fit (need 3)", tier, collective_key(c), obs.size(),
                                  obs.size() == 1 ? " is" : "s are"));
    out.notes.push_back(skipped.back() + ", kept the base's values");
    return skipped;
  }
  Params base_p = current_params(base, tier, c);
  if (base_per_channel > 0) base_p.beta_ch = 1.0 / base_per_channel;
  // Latency is only seen in small messages; a sweep from 32 MiB would
  // extrapolate it (issue 14: 3-5x off at small sizes), so the base's stays.
  const bool no_small = min_bytes >= kSmallMessageBytes;
  const std::string what = fmt::format("tier {} {}", tier, collective_key(c));
  if (no_small && opt.force)
    out.warnings.push_back(fmt::format("{}: latency fitted without sizes below {} (smallest {}); --force keeps it, "
                                       "expect it to be off at small sizes",
                                       what, human_bytes(kSmallMessageBytes), human_bytes(min_bytes)));
  else if (no_small)
    out.warnings.push_back(fmt::format("{}: no size below {} (smallest {}), so latency cannot be fitted; kept the "
                                       "base's, fitted bandwidth only (--force fits it anyway)",
                                       what, human_bytes(kSmallMessageBytes), human_bytes(min_bytes)));
  const bool keep_latency = no_small && !opt.force;
  EngineResult e;
  try {
    e = fit_engine(obs, base_p, opt, keep_latency);
  } catch (const InputError& err) {
    throw unfittable(hw, ms, tier, c, origins, err);
  }
  InterconnectTier& t = hw.tiers[tier];
  CollectiveFit f;
  f.fitted = true;
  f.base_latency_s = std::min(e.params.l0, 1.0);
  f.latency_per_step_s = std::min(e.params.l1, 1.0);
  if (base_per_channel > 0) f.p2p_channel_bandwidth_bytes_per_s = std::min(1e15, 1.0 / e.params.beta_ch);
  f.bandwidth_bytes_per_s = tier_bandwidth(t, tier, e.params.beta);
  // NCCL's runs of a collective NCCL's tuner prices on this profile: the fit
  // calibrates the tier against the same fit of the base's own prices, and the
  // tuner keeps composing it (CollectiveFit::nccl_tuner, nccl_curve.cpp
  // build_nccl_fitted); other runs (MPI, synthetic) price the alpha-beta they fitted.
  f.nccl_tuner = all_nccl_runs && hw.nccl_generation != NcclGeneration::none &&
                 (c == Collective::all_reduce || c == Collective::all_gather || c == Collective::reduce_scatter);
  if (f.nccl_tuner) {
    // The base's own prices of every point (c's fits left out), with the
    // algorithm the runs forced (--algo), so fitted and stock compare alike.
    HardwareProfile stock_hw = hw;
    for (InterconnectTier& st : stock_hw.tiers) st.collective_fits[std::size_t(c)] = {};
    std::vector<Obs> stock_obs = obs;
    for (std::size_t i = 0; i < obs.size(); ++i)
      stock_obs[i].t = collective_cost(stock_hw, groups[i], c, obs[i].n, opt.algorithm).total_s();
    f.stock = stock_fit(stock_obs, base_p, opt, keep_latency, t, tier);
  }
  t.collective_fits[std::size_t(c)] = f;

  CollectiveFitReport rep;
  rep.tier = tier;
  rep.collective = c;
  rep.group_sizes.assign(sizes.begin(), sizes.end());
  rep.series = nseries;
  rep.points = obs.size();
  rep.downweighted = e.downweighted;
  rep.fit = f;
  rep.growth_fitted = e.growth;
  rep.bandwidth_fitted = e.bandwidth;
  rep.p2p_channels = base_per_channel > 0;
  rep.channel_bandwidth_fitted = e.channel_bandwidth;
  rep.latency_kept = keep_latency;
  rep.min_bytes = min_bytes;
  rep.max_bytes = max_bytes;
  rep.iterations = e.iterations;
  out.collectives.push_back(rep);
  out.sources[fmt::format("tiers[{}].collectives.{}", tier, collective_key(c))] = fit_source(rep, origins, opt);
  return skipped;
}

}  // namespace

double CheckReport::worst_median_abs_error() const {
  double w = 0;
  for (const auto& s : series) w = std::max(w, s.median_abs_error);
  return w;
}

double CheckReport::max_abs_error() const {
  double w = 0;
  for (const auto& s : series) w = std::max(w, s.max_abs_error);
  return w;
}

std::size_t CheckReport::points() const {
  std::size_t n = 0;
  for (const auto& s : series) n += s.points.size();
  return n;
}

CheckReport check_profile(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms,
                          std::optional<Algorithm> algo) {
  if (hw.tiers.empty() || hw.tiers[0].topology != Topology::switched)
    throw InputError(hw.name, "calibrate works on profiles whose tier 0 is a switch (NVLink/NVSwitch), not a torus");
  check_domains(hw, ms);
  CheckReport r;
  std::vector<std::string> skipped;
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series) {
      if (group_tier(hw, s) != GroupTier::tier0 && hw.tiers.size() < 2) {
        // As fit_collective says it: never a series dropped without a word.
        skipped.push_back(fmt::format("{}: {}", m.origin, describe(s)));
        r.notes.push_back(fmt::format("{} skipped: the profile {} has no tier 1 (between nodes) to price it",
                                      skipped.back(), hw.name));
        continue;
      }
      r.series.push_back(check_series(hw, m.origin, s, algo));
    }
  if (r.series.empty())
    throw InputError("--measurements", skipped.empty()
                                           ? fmt::format("no series to check against the profile {}: the files hold no "
                                                         "collective series",
                                                         hw.name)
                                           : fmt::format("no series to check against the profile {}: it has no tier 1 "
                                                         "(between nodes) to price these, which span nodes: {}",
                                                         hw.name, fmt::join(skipped, "; ")));
  return r;
}

FitResult fit_profile(const HardwareProfile& base, const std::vector<NamedMeasurements>& inputs,
                      const FitOptions& opt) {
  if (base.tiers.empty() || base.tiers[0].topology != Topology::switched)
    throw InputError(base.name,
                     "calibrate fit works on profiles whose tier 0 is a switch (NVLink/NVSwitch), not a torus");
  if (inputs.empty()) throw InputError("--measurements", "expected at least one measurement file");
  check_domains(base, inputs);
  FitResult out;
  HardwareProfile& hw = out.profile;
  hw = base;
  hw.name = opt.name.empty() ? base.name + "-fitted" : opt.name;
  hw.aliases.clear();
  hw.display_name = base.display_name + ", fitted to measurements";

  adopt_node_size(inputs, out);
  // After the node sizes: files of two clusters are that error, not this one.
  const std::vector<NamedMeasurements> ms = merge_split_series(inputs, out.notes);
  check_device(base, ms, out);

  std::string files;
  for (const auto& m : ms) files += (files.empty() ? "" : ", ") + m.origin;

  std::vector<std::string> skipped;  // why series were not fitted: the error when nothing is
  for (std::size_t tier = 0; tier < 2; ++tier)
    for (Collective c : kAllCollectives) {
      const std::vector<std::string> why = fit_collective(base, ms, opt, tier, c, out);
      skipped.insert(skipped.end(), why.begin(), why.end());
    }
  bool compute = false;
  for (const auto& m : ms)
    compute = compute || !m.set.gemm.empty() || !m.set.hbm.empty() || !m.set.gemm_sustained.empty();
  if (out.collectives.empty() && !compute)
    throw InputError(files, skipped.empty() ? "nothing to fit: expected collective series of groups inside one node "
                                              "or with one rank per node, or GEMM/HBM measurements"
                                            : fmt::format("nothing to fit: {}", fmt::join(skipped, "; ")));
  // A one-GPU run (planner-bench on a single GPU measures no collective)
  // calibrates compute alone; the collectives stay the base profile's.
  check_forced_algorithm(ms, opt, out);
  if (out.collectives.empty())
    out.notes.push_back(fmt::format(
        "no collective series in {}: only compute is fitted; every collective keeps {}'s values", files, base.name));

  for (CollectiveFitReport& rep : out.collectives) fill_residuals(hw, ms, rep, opt.algorithm);
  for (Collective c : kAllCollectives) choose_nccl_tuner_or_alpha_beta(ms, c, opt.algorithm, out);
  for (const CollectiveFitReport& rep : out.collectives) gate(rep, out);
  // Groups with several ranks on each of several nodes: predicted, not fitted.
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series)
      if (group_tier(hw, s) == GroupTier::mixed && hw.tiers.size() > 1)
        out.validation.series.push_back(check_series(hw, m.origin, s, opt.algorithm));

  fit_compute(base, ms, out);  // its gates add to out.failures
  if (opt.force)
    for (const std::string& f : out.failures) out.warnings.push_back(f + "; written anyway (--force)");
  return out;
}

std::string render_fitted_profile(const FitResult& r, const json& base_sources) {
  json j = to_json(r.profile);
  json sources = base_sources.is_object() ? base_sources : json::object();
  for (const auto& [k, v] : r.sources) sources[k] = v;
  j["sources"] = sources;
  j["notes"] =
      "Fitted by planner calibrate fit (docs/calibration.md). Collectives without a fit on a tier keep that tier's "
      "generic "
      "latency_s and bandwidth_achieved_bytes_per_s.";
  return j.dump(2) + "\n";
}

}  // namespace planner
