// Unit sanity checks on a parsed hardware profile: a peak, capacity, bandwidth
// or latency off by a unit prefix (989 typed for 989e12 FLOP/s, 80 for 80 GiB,
// 6.6 for 6.6e-6 s) is a problem naming the field, the plausible range and the
// value it most likely meant. Internal to io/: hardware_from_json (json_io.cpp)
// runs it once the fields themselves parsed. Ranges: docs/hardware_profiles.md,
// "Unit sanity checks".
#pragma once

#include <string>
#include <vector>

#include "planner/spec/specs.h"

namespace planner::detail {

// Appends "field: message" for every implausible value of `h` to `problems`.
// Zero values are left to the parser (they mean "absent" or were already
// reported); fitted per-collective values (tiers[i].collectives) are not checked:
// `planner calibrate fit` writes them, nobody types them.
void check_profile_units(const HardwareProfile& h, std::vector<std::string>& problems);

}  // namespace planner::detail
