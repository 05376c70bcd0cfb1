// Where a measured series sits on a profile (series_placement.h).
#include "planner/calibrate/series_placement.h"

#include <algorithm>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner {

std::int64_t hosts_per_domain(const HardwareProfile& hw) {
  if (hw.tiers.size() < 2 || hw.tiers[1].gpus_per_node <= 0) return 1;
  return std::max<std::int64_t>(1, hw.tiers[0].size / hw.tiers[1].gpus_per_node);
}

std::int64_t hosts_per_domain(const HardwareProfile& hw, const MeasuredSeries& s) {
  if (s.nodes_per_nvlink_domain <= 0) return hosts_per_domain(hw);
  const std::int64_t domain = hw.tiers.empty() ? 1 : hw.tiers[0].size;
  if (s.nodes_per_nvlink_domain > 1 && s.nodes_per_nvlink_domain * s.ranks_per_node > domain)
    throw InputError(
        "nodes_per_nvlink_domain",
        fmt::format(
            "{} nodes of {} ranks share an NVLink domain, {} ranks, but an NVLink domain of the profile {} holds {}",
            s.nodes_per_nvlink_domain, s.ranks_per_node, s.nodes_per_nvlink_domain * s.ranks_per_node, hw.name,
            domain));
  return s.nodes_per_nvlink_domain;
}

GroupTier group_tier(const HardwareProfile& hw, const MeasuredSeries& s) {
  const std::int64_t hosts = hosts_per_domain(hw, s);
  if (s.nodes <= hosts) return GroupTier::tier0;
  if (s.ranks_per_node == 1 && hosts == 1) return GroupTier::tier1;
  return GroupTier::mixed;
}

GroupPlacement placement_of(const HardwareProfile& hw, const MeasuredSeries& s) {
  GroupPlacement g;
  g.size = s.group_size;
  const std::int64_t hosts = hosts_per_domain(hw, s);
  if (hosts > 1) {
    // Hosts fill an NVLink domain in order (NVL72: 18 trays of 4), as
    // training places consecutive ranks: a domain holds `hosts` nodes' ranks.
    g.members_per_domain = std::min(s.group_size, hosts * s.ranks_per_node);
    g.domains = (g.size + g.members_per_domain - 1) / g.members_per_domain;
    return g;
  }
  g.members_per_domain = s.ranks_per_node;
  g.domains = s.nodes;
  // send/recv is remote when consecutive members are a node apart.
  g.stride =
      s.ranks_per_node == 1 && s.nodes > 1 ? std::max<std::int64_t>(1, hw.tiers.empty() ? 1 : hw.tiers[0].size) : 1;
  return g;
}

}  // namespace planner
