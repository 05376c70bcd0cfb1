// Where a measured series sits on a profile: which tier it calibrates and the
// placement collective_cost prices it with, from the log's nodes and the
// profile's NVLink domain (which spans several nodes on GB200/GB300 NVL72).
// Read by calibrate fit and check (calibration.cpp, fit_quality.cpp) and the
// fit report.
#pragma once

#include <cstdint>

#include "planner/calibrate/measurements.h"
#include "planner/model/collectives.h"
#include "planner/spec/specs.h"

namespace planner {

// The hosts (nodes of the logs) one tier-0 domain holds: 1 where a node is
// the NVLink domain (DGX); tier 0's size over tier 1's GPUs a node where the
// domain spans several hosts (GB200/GB300 NVL72: 72 GPUs in 18 trays of 4).
[[nodiscard]] std::int64_t hosts_per_domain(const HardwareProfile& hw);
// A series' own: its nodes_per_nvlink_domain where the file says it (an
// InputError where that domain would hold more ranks than the profile's),
// else the profile's.
[[nodiscard]] std::int64_t hosts_per_domain(const HardwareProfile& hw, const MeasuredSeries& s);

// Which tier a measured group calibrates: every member in one tier-0 domain
// (one node, or up to hosts_per_domain hosts) -> tier 0; one member per node
// where a node is the domain -> tier 1; anything else (several per domain on
// several domains) is predicted from both and only validates the composition.
enum class GroupTier { tier0, tier1, mixed };
[[nodiscard]] GroupTier group_tier(const HardwareProfile& hw, const MeasuredSeries& s);

// The placement collective_cost sees for a measured group: members_per_domain
// and domains from the series, stride past a node for one-per-node groups;
// where a domain spans several hosts, consecutive hosts fill it, hosts_per_domain nodes a domain.
[[nodiscard]] GroupPlacement placement_of(const HardwareProfile& hw, const MeasuredSeries& s);

}  // namespace planner
