#include "planner/model/straggler.h"

#include <cmath>

namespace planner {

namespace {

// Inverse of the standard normal CDF (Acklam's rational approximation,
// relative error below 1.2e-9), enough for Blom's plotting positions.
double inverse_normal_cdf(double p) {
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                          1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                          6.680131188771972e+01,  -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                          -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                          3.754408661907416e+00};
  constexpr double lo = 0.02425;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - lo) return -inverse_normal_cdf(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

}  // namespace

double expected_max_standard_normal(std::int64_t n) {
  if (n <= 1) return 0.0;
  // One evaluation prices it several times for the same GPU count (each layer
  // kind, the head): remember the last one, per thread.
  thread_local std::int64_t last_n = 0;
  thread_local double last = 0.0;
  if (n == last_n) return last;
  const double nd = double(n);
  last = inverse_normal_cdf((nd - 0.375) / (nd + 0.25));
  last_n = n;
  return last;
}

double straggler_slowdown(const HardwareProfile& hw, std::int64_t gpus) {
  return hw.efficiency.chip_speed_sigma * expected_max_standard_normal(gpus);
}

}  // namespace planner
