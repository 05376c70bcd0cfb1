// The Mixture-of-Experts, MLA and MTP part of `planner show <model>`: lines of
// the text view and fields of the JSON view's "derived" object. Private to
// views/ (report.cpp's render_model); nothing is added for a dense model.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/model/model_math.h"
#include "planner/spec/specs.h"

namespace planner::views {

// Text lines after the parameter count (each ends in '\n'; empty for a dense model without QKV bias/QK-norm).
[[nodiscard]] std::string moe_model_lines(const ModelSpec& model, const ParamCounts& p);
// Adds the MoE/MTP counts to `derived` (nothing for a dense model).
void add_moe_derived(const ModelSpec& model, const ParamCounts& p, nlohmann::json& derived);

}  // namespace planner::views
