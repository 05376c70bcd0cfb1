// The profile `planner calibrate fit --base` starts from, as a file: the fit
// carries the base file's "sources" (how each field was obtained) into the
// fitted profile. Sits between the catalog (io/) and render_fitted_profile.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "planner/io/catalog.h"
#include "planner/spec/specs.h"

namespace planner {

// The file `base_arg` names: itself when it looks like a path
// (looks_like_path), else the stock file <dir>/hardware_profiles/<name>.json
// of `base`, the profile it resolved to (so an alias finds the canonical file).
[[nodiscard]] std::string base_profile_path(const std::string& base_arg, const HardwareProfile& base,
                                            const std::string& dir = data_dir());

// That file's "sources" object; an empty object when the file does not exist
// or has none. Malformed JSON is an InputError naming the file.
[[nodiscard]] nlohmann::json base_profile_sources(const std::string& base_arg, const HardwareProfile& base,
                                                  const std::string& dir = data_dir());

}  // namespace planner
