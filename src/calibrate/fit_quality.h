// A fit's quality as the fitted profile prices it: residuals, the quality
// gates, and the choice between NCCL's tuner and the fitted alpha-beta for the
// collectives NCCL's tuner would price. Private to calibrate/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/calibrate/calibration.h"

namespace planner::calibrate_detail {

// The residuals of rep's (tier, collective) series through collective_cost on
// `hw`: overall, by regime, and R^2 of log time. `algo` (--algo) prices every
// point with the algorithm the runs forced, as calibrate check does.
void fill_residuals(const HardwareProfile& hw, const std::vector<NamedMeasurements>& ms, CollectiveFitReport& rep,
                    std::optional<Algorithm> algo);

// Why a fit fails the quality gates (empty: it passes).
[[nodiscard]] std::vector<std::string> gate_reasons(const CollectiveFitReport& rep);

// Records rep in out.failures when it fails the gates (exit 1 unless --force).
void gate(const CollectiveFitReport& rep, FitResult& out);

// Collective c's fits priced by NCCL's tuner (CollectiveFit::nccl_tuner) keep
// it or fall back to their alpha-beta on both tiers; the reports and sources follow.
void choose_nccl_tuner_or_alpha_beta(const std::vector<NamedMeasurements>& ms, Collective c,
                                     std::optional<Algorithm> algo, FitResult& out);

}  // namespace planner::calibrate_detail
