// `planner validate`'s report: renders a ValidationReport (validate/validate.h)
// as a table, JSON or CSV.
#pragma once

#include <string>

#include "planner/validate/validate.h"
#include "planner/views/report.h"

namespace planner {

[[nodiscard]] std::string render_validation(const ValidationReport& r, Format f);

}  // namespace planner
