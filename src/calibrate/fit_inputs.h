// What calibrate fit and check check of their inputs before fitting: the
// files' series (one per shape across files, NVLink domains), the device
// against the base profile's chip, the node size the files show, and whether
// --algo can apply. Private to calibrate/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "planner/calibrate/calibration.h"

namespace planner::calibrate_detail {

// Each series' NVLink domain against the profile's, naming the file and series.
void check_domains(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms);

// One series per collective and group shape across the files: a series split
// over files (disjoint sizes) merged into the first, with a note; a size in
// two files, or a file given twice, is an InputError.
[[nodiscard]] std::vector<NamedMeasurements> merge_split_series(const std::vector<NamedMeasurements>& ms,
                                                                std::vector<std::string>& notes);

// A log's device against the base profile's chip: a warning naming both.
void check_device(const HardwareProfile& base, const std::vector<NamedMeasurements>& ms, FitResult& out);

// tiers[0].size from the files that show it (a note on a change).
void adopt_node_size(const std::vector<NamedMeasurements>& ms, FitResult& out);

// Whether the fit's model can run `algo` for collective c on `tier` (one of
// its candidate algorithms).
[[nodiscard]] bool algorithm_runs(std::size_t tier, Collective c, Algorithm algo);

// --algo against the fitted (tier, collective)s: notes where it cannot run,
// an InputError where it runs for none.
void check_forced_algorithm(const std::vector<NamedMeasurements>& ms, const FitOptions& opt, FitResult& out);

}  // namespace planner::calibrate_detail
