// Number formatting and axis ticks shared by the views (private to src/views/).
#pragma once

#include <cmath>

namespace planner {

// Rounds |x| < 0.005 (what "%.2f" prints as 0.00) to +0 so no "-0.00" appears.
inline double clean_zero(double x) { return std::abs(x) < 0.005 ? 0.0 : x; }

// Fixed precision in JSON outputs, so they are stable across platforms.
inline double round_to(double x, int digits) {
  const double sc = std::pow(10.0, digits);
  return std::round(x * sc) / sc;
}

// Axis ticks: 1, 2 or 5 times a power of ten, giving about `target` ticks over `span`.
inline double nice_step(double span, int target) {
  const double raw = span / double(target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * mag >= raw) return f * mag;
  return 10.0 * mag;
}

}  // namespace planner
