// calibrate fit / check: the checks of their inputs (fit_inputs.h).
#include "calibrate/fit_inputs.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/alpha_beta_fit.h"
#include "planner/spec/input_error.h"

namespace planner::calibrate_detail {

namespace {

// The fitted series of rep's (tier, collective), as "file: series" labels.
std::vector<std::string> fitted_series(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms,
                                       const CollectiveFitReport& rep) {
  std::vector<std::string> out;
  for (const auto& m : ms)
    for (const MeasuredSeries& s : m.set.series)
      if (s.collective == rep.collective && group_tier(hw, s) == (rep.tier == 0 ? GroupTier::tier0 : GroupTier::tier1))
        out.push_back(fmt::format("{}: {}", m.origin, describe(s)));
  return out;
}

}  // namespace

// Whether the fit's model can run `algo` for collective c on `tier`: one of
// its candidate algorithms (ring and tree for all-reduce between nodes; one
// for the rest: ring, or direct for all-to-all and send/recv).
bool algorithm_runs(std::size_t tier, Collective c, Algorithm algo) {
  for (const calibrate_detail::Term& t : candidate_terms(tier, c, 2))
    if (t.algorithm == algo) return true;
  return false;
}

// --algo says which algorithm the runs forced. A fitted (tier, collective)
// whose model cannot run it (tree inside a node, or for an all-gather) keeps
// its own algorithm, with a note; where it can run none of the fitted series
// the flag cannot apply, and that is an error naming them (it used to fit
// ring and record "algorithm forced: tree").
void check_forced_algorithm(const std::vector<NamedMeasurements>& ms, const FitOptions& opt, FitResult& out) {
  if (!opt.algorithm) return;
  const char* algo = to_string(*opt.algorithm);
  std::vector<std::string> unforced;
  bool applied = false;
  for (const CollectiveFitReport& rep : out.collectives) {
    if (algorithm_runs(rep.tier, rep.collective, *opt.algorithm)) {
      applied = true;
      continue;
    }
    const std::vector<std::string> series = fitted_series(out.profile, ms, rep);
    unforced.insert(unforced.end(), series.begin(), series.end());
    out.notes.push_back(
        fmt::format("tier {} {}: --algo {} does not apply (the fit's model runs {} for it there), so "
                    "it is fitted with that",
                    rep.tier, collective_key(rep.collective), algo,
                    to_string(candidate_terms(rep.tier, rep.collective, 2).front().algorithm)));
  }
  if (applied) return;
  if (unforced.empty())
    throw InputError("--algo", fmt::format("{}: no collective series to apply it to (only compute is fitted)", algo));
  throw InputError("--algo",
                   fmt::format("the fit's model cannot run {} for any fitted series (it has ring and tree for "
                               "all-reduce between nodes, tier 1, and one algorithm for everything else): {}",
                               algo, fmt::join(unforced, "; ")));
}

// A log's device against the base profile's chip: a warning naming both.
void check_device(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, FitResult& out) {
  const std::string chip = device_key(base.chip_name);
  for (const auto& m : ms) {
    const std::string& d = m.set.device;
    if (d.rfind("CPU:", 0) == 0 || d.rfind("unknown", 0) == 0 || chip.empty()) continue;
    const std::string key = device_key(d);
    if (key.empty()) continue;
    // Form factor only when both say it (SXM, PCIe, NVL: "NVIDIA H100 PCIe" is not dgx-h100's SXM5 part).
    const std::string form = device_form_factor(d), chip_form = device_form_factor(base.chip_name);
    const bool form_differs = !form.empty() && !chip_form.empty() && form != chip_form;
    // Memory size only when both say it ("A100" against "A100 80GB" matches).
    const auto family = [](const std::string& k) { return k.substr(0, k.find(' ')); };
    const bool same_chip = key == chip || (family(key) == family(chip) &&
                                           (key.find(' ') == std::string::npos || chip.find(' ') == std::string::npos));
    if (same_chip && !form_differs) continue;
    out.warnings.push_back(fmt::format(
        "{}: the device is {}, but the base profile {} is for {}{}; the fit keeps the "
        "base's compute and memory figures",
        m.origin, d, base.name, base.chip_name, form_differs ? fmt::format(" ({}, not {})", form, chip_form) : ""));
  }
}

// Node size (tiers[0].size), from the file that shows it, never from one that
// cannot: a run on several nodes with several ranks on each says how many
// GPUs a node has (all such runs must agree); a single-node run says a node
// has at least that many; a run with one rank per node says nothing (the
// 10 x 1 file of "1 x 8 plus N x 1" must not make the node one GPU). The
// answer depends only on the series and shapes, not on how they are split
// into files. A change is a note naming the file; a contradiction an error.
void adopt_node_size(const std::vector<NamedMeasurements>& ms, FitResult& out) {
  HardwareProfile& hw = out.profile;
  // Where an NVLink domain spans hosts (NVL72), the logs' nodes are trays, not
  // the domain: nothing in them says tier 0's size.
  if (hosts_per_domain(hw) > 1) return;
  std::int64_t node_size = 0, at_least = 0;
  std::string node_size_from, at_least_from;
  for (const auto& m : ms) {
    std::int64_t exact = m.set.nodes > 1 && m.set.ranks_per_node > 1 ? m.set.ranks_per_node : 0;
    std::int64_t lower = m.set.nodes == 1 ? m.set.world_size : 0;
    for (const MeasuredSeries& s : m.set.series) {
      if (s.nodes > 1 && s.ranks_per_node > 1) exact = std::max(exact, s.ranks_per_node);
      if (s.nodes == 1) lower = std::max(lower, s.group_size);
    }
    if (exact) {
      if (node_size && exact != node_size)
        throw InputError(m.origin, fmt::format("{} ranks per node, but {} has {}; fit runs of one node size together",
                                               exact, node_size_from, node_size));
      node_size = exact;
      node_size_from = m.origin;
    }
    if (lower > at_least) at_least = lower, at_least_from = m.origin;
  }
  if (node_size && at_least > node_size)
    throw InputError(at_least_from,
                     fmt::format("{} ranks ran on one node, but {} ran {} per node on several nodes; a node cannot "
                                 "have both sizes (fit runs of one cluster together)",
                                 at_least, node_size_from, node_size));
  std::string why;
  if (node_size) {
    why =
        fmt::format("the measurements ran {} rank{} per node on several nodes ({}{})", node_size,
                    node_size == 1 ? "" : "s", node_size_from, ms.front().set.emulated_nodes ? ", emulated nodes" : "");
  } else if (at_least > hw.tiers[0].size) {
    node_size = at_least;
    why = fmt::format("{} ranks ran on one node ({})", at_least, at_least_from);
  }
  if (node_size == 0 || node_size == hw.tiers[0].size) return;
  out.notes.push_back(fmt::format("tiers[0].size {} -> {}: {}", hw.tiers[0].size, node_size, why));
  out.sources["tiers[0].size"] = fmt::format("{} (planner calibrate fit)", why);
  if (hw.tiers.size() > 1) {
    InterconnectTier& t1 = hw.tiers[1];
    // Keep the NICs per GPU, so a NIC keeps its meaning.
    const double per_gpu = double(t1.nics_per_node) / double(std::max<std::int64_t>(t1.gpus_per_node, 1));
    t1.gpus_per_node = node_size;
    t1.nics_per_node = std::max<std::int64_t>(1, std::llround(per_gpu * double(node_size)));
    out.notes.push_back(
        fmt::format("tiers[1]: {} NICs per {} GPUs (the base's NICs per GPU)", t1.nics_per_node, t1.gpus_per_node));
    out.sources["tiers[1].gpus_per_node"] = out.sources["tiers[0].size"];
    out.sources["tiers[1].nics_per_node"] =
        "the base profile's NICs per GPU times tiers[1].gpus_per_node (planner calibrate fit)";
  }
  hw.tiers[0].size = node_size;
}

// Each series' NVLink domain against the profile's, naming the file and series.
void check_domains(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms) {
  for (const auto& m : ms)
    for (std::size_t i = 0; i < m.set.series.size(); ++i) try {
        (void)hosts_per_domain(hw, m.set.series[i]);
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: series[{}].{}", m.origin, i, e.where()), e.message());
      }
}

// One series per collective and group shape, however the points were split
// into files (issue 14: the same measurements give the same fit): a series
// of a later file whose shape and settings match an earlier file's, with
// none of its sizes, is merged into it, points in ascending size, with a
// note. A size measured in both would weigh twice in the fit, as would a
// file given twice: both are errors naming the files.
std::vector<NamedMeasurements> merge_split_series(const std::vector<NamedMeasurements>& ms,
                                                  std::vector<std::string>& notes) {
  for (std::size_t a = 0; a < ms.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (ms[a].origin == ms[b].origin)
        throw InputError("--measurements", fmt::format("{} is given twice (its measurements would count twice in the "
                                                       "fit)",
                                                       ms[a].origin));
  std::vector<NamedMeasurements> out = ms;
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;
  std::map<Key, std::pair<std::size_t, std::size_t>> first;  // shape -> (file, series) it is kept in
  for (std::size_t f = 0; f < out.size(); ++f) {
    std::vector<MeasuredSeries>& list = out[f].set.series;
    for (std::size_t i = 0, at = 0; i < list.size(); ++at) {  // at: the series' index in its file
      const MeasuredSeries& s = list[i];
      const auto [it, fresh] = first.try_emplace({int(s.collective), s.group_size, s.ranks_per_node, s.nodes}, f, i);
      if (fresh) {
        ++i;
        continue;
      }
      const auto [kf, ki] = it->second;
      MeasuredSeries& kept = out[kf].set.series[ki];
      const std::string where = fmt::format("{}: series[{}]", out[f].origin, at);
      const std::string after = fmt::format("series[{}] of {}", ki, out[kf].origin);
      if (kept.group != s.group || kept.concurrent_groups != s.concurrent_groups ||
          kept.nodes_per_nvlink_domain != s.nodes_per_nvlink_domain || kept.dtype != s.dtype ||
          kept.time_statistic != s.time_statistic)
        throw InputError(where, fmt::format("a second series for {} measured otherwise (group, concurrent groups, "
                                            "NVLink domains, element type or time statistic) than {}",
                                            describe(s), after));
      for (const MeasuredPoint& p : s.points)
        for (const MeasuredPoint& q : kept.points)
          if (p.bytes == q.bytes)
            throw InputError(where, fmt::format("{} bytes of {} are also measured in {} (the size would count twice "
                                                "in the fit)",
                                                p.bytes, describe(s), after));
      notes.push_back(fmt::format("{} merged into {}: {} sizes of {} split over two files", where, after,
                                  s.points.size() + kept.points.size(), describe(s)));
      kept.points.insert(kept.points.end(), s.points.begin(), s.points.end());
      std::sort(kept.points.begin(), kept.points.end(),
                [](const MeasuredPoint& x, const MeasuredPoint& y) { return x.bytes < y.bytes; });
      list.erase(list.begin() + std::ptrdiff_t(i));
    }
  }
  return out;
}

}  // namespace planner::calibrate_detail
