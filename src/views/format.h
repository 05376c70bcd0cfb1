// Number formatting shared by the views (private to src/views/).
#pragma once

#include <cmath>

namespace planner {

// Rounds |x| < 0.005 (what "%.2f" prints as 0.00) to +0 so no "-0.00" appears.
inline double clean_zero(double x) { return std::abs(x) < 0.005 ? 0.0 : x; }

}  // namespace planner
