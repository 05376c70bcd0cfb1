// The stock models and hardware profiles shipped in models/ and
// hardware_profiles/, looked up by name or alias (or by a path to a JSON file).
// Sits between the files on disk and the specs the cost model reads.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "planner/spec/specs.h"

namespace planner {

// The directory holding models/ and hardware_profiles/: $PLANNER_DATA_DIR if
// set, else <prefix>/share/planner of an installed planner, else the source
// tree the binary was built from.
[[nodiscard]] std::string data_dir();

[[nodiscard]] std::vector<ModelSpec> list_models(const std::string& dir = data_dir());
[[nodiscard]] std::vector<HardwareProfile> list_hardware(const std::string& dir = data_dir());

// The candidate `key` most likely mistypes (case ignored, a few edits at
// most), or "" when none is close: the "did you mean" of every name lookup.
[[nodiscard]] std::string closest_name(const std::string& key, const std::vector<std::string>& candidates);

// Whether a name_or_path below is a path to a JSON file (it has a '/' or
// ends in ".json") rather than a name or alias.
[[nodiscard]] bool looks_like_path(const std::string& name_or_path);

// `name_or_path`: a canonical name or an alias (any case), or a path to a .json file.
// Unknown names throw InputError listing the known names, named after `flag`,
// the flag that gave the name (calibrate fit takes its profile as --base).
[[nodiscard]] ModelSpec find_model(const std::string& name_or_path, const std::string& dir = data_dir());
[[nodiscard]] HardwareProfile find_hardware(const std::string& name_or_path, const std::string& dir = data_dir(),
                                            const char* flag = "--hardware");

// A model or a hardware profile (`planner show`): by name or alias, models
// first; else a name containing ".json" is read as a file, a hardware profile
// when it has "tiers" and a model otherwise. An unknown name is
// InputError("show", ...) listing every model and hardware name.
using CatalogEntry = std::variant<ModelSpec, HardwareProfile>;
[[nodiscard]] CatalogEntry find_model_or_hardware(const std::string& name, const std::string& dir = data_dir());

}  // namespace planner
