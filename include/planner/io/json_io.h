// JSON <-> spec conversion: the only place that knows the file formats of
// models/*.json and hardware_profiles/*.json (docs/models.md,
// docs/hardware_profiles.md). Every problem is collected with its JSON path and
// reported in one InputError naming the file.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "planner/spec/names.h"  // to_string of the spec enums
#include "planner/spec/specs.h"

namespace planner {

inline constexpr int kSpecSchemaVersion = 1;

// `origin` names the file (or "<string>") in error messages.
[[nodiscard]] ModelSpec model_from_json(const nlohmann::json& j, const std::string& origin);
[[nodiscard]] HardwareProfile hardware_from_json(const nlohmann::json& j, const std::string& origin);
[[nodiscard]] nlohmann::json to_json(const ModelSpec& model);
[[nodiscard]] nlohmann::json to_json(const HardwareProfile& h);

// Parses JSON text; malformed JSON (including numbers out of range) is an
// InputError naming `origin` and, for syntax errors, the line.
[[nodiscard]] nlohmann::json parse_json_text(std::string_view text, const std::string& origin);
// Reads and parses a file; a missing file or malformed JSON is an InputError.
[[nodiscard]] nlohmann::json read_json_file(const std::string& path);
[[nodiscard]] ModelSpec load_model_file(const std::string& path);
[[nodiscard]] HardwareProfile load_hardware_file(const std::string& path);

}  // namespace planner
