// nccl-tests output -> measurements: which of a finished table's rows become
// the series (one data type and reduction op of a -d all / -o all table), and
// its time column checked against the algbw printed beside it, the part of
// finish_table (nccl_tests_tables.cpp) that reads the rows themselves.
#include "calibrate/nccl_tests_tables.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner::nccl_tests_detail {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A table of several data types or reduction ops (nccl-tests -d all, -o all)
// keeps one series: bfloat16 rows where it has them (what training moves),
// else half, else float, else the first type printed; sum where it has it.
void pick_rows(Table& t) {
  if (t.rows.empty()) return;
  auto has = [&](const std::string& dtype, const std::string& redop) {
    return std::any_of(t.rows.begin(), t.rows.end(), [&](const Row& r) {
      return (dtype.empty() || r.dtype == dtype) && (redop.empty() || r.redop == redop);
    });
  };
  std::string dtype = t.rows.front().dtype;
  for (const char* d : {"bfloat16", "half", "float"})
    if (has(d, "")) {
      dtype = d;
      break;
    }
  const std::string redop = has(dtype, "sum") ? "sum" : [&] {
    for (const Row& r : t.rows)
      if (r.dtype == dtype) return r.redop;
    return std::string("none");
  }();
  t.dtype = dtype, t.redop = redop;
  const std::size_t before = t.rows.size();
  t.rows.erase(
      std::remove_if(t.rows.begin(), t.rows.end(), [&](const Row& r) { return r.dtype != dtype || r.redop != redop; }),
      t.rows.end());
  t.skipped_other_type += before - t.rows.size();
}

namespace {

// nccl-tests' algbw in GB/s from a size and a time of `seconds_per_unit` (its
// GetBw: size / 1e9 / seconds), times the factor `f` old all-gathers folded in.
double algbw_of(double bytes, double time, double seconds_per_unit, double f) {
  return time > 0 ? f * bytes / 1e9 / (time * seconds_per_unit) : std::numeric_limits<double>::infinity();
}

// Every row's printed time against its printed algbw, each only as exact as
// its digits (half a unit of the last one: "71.93" us to 0.005 us, "11812" to
// 0.5, "14.58" GB/s to 0.005): some time within the time's rounding must give
// an algbw within the algbw's. A row that no such pair reconciles was edited
// or spliced, whatever the table's median says.
void check_every_row(const Table& t, double seconds_per_unit, const char* unit, double f, const std::string& fold) {
  for (const Row& r : t.rows) {
    const auto time = parse_double(r.time_text), algbw = parse_double(r.algbw_text);
    if (!time || !algbw) continue;
    const double ht = half_unit(r.time_text), ha = half_unit(r.algbw_text);
    const double lo = algbw_of(r.bytes, *time + ht, seconds_per_unit, f);
    const double hi = algbw_of(r.bytes, *time - ht, seconds_per_unit, f);
    // 1e-9: the doubles' own rounding, far below any printed digit.
    if (lo <= (*algbw + ha) * (1 + 1e-9) && hi * (1 + 1e-9) >= *algbw - ha) continue;
    const double implied = algbw_of(r.bytes, *time, seconds_per_unit, f);
    throw InputError(r.where,
                     fmt::format("size {} B{} / time {} {} = {:.4g} GB/s, but the row prints algbw {} GB/s ({:.3g} "
                                 "times that; within their printed digits the time gives {:.6g} to {:.6g} GB/s, the "
                                 "algbw {:.6g} to {:.6g}): nccl-tests computes algbw from the time it prints",
                                 r.bytes, fold, r.time_text, unit, implied, r.algbw_text, *algbw / implied, lo, hi,
                                 std::max(0.0, *algbw - ha), *algbw + ha));
  }
}

}  // namespace

void check_zero_size_row(const std::string& algbw_text, const std::string& where) {
  const auto algbw = parse_double(algbw_text);
  if (algbw && *algbw - half_unit(algbw_text) > 0)
    throw InputError(where, fmt::format("size 0 B, but the row prints algbw {} GB/s (nccl-tests prints 0.00 for a "
                                        "size of 0: size / time)",
                                        algbw_text));
}

// The time column against the algbw printed beside it: nccl-tests computes
// algbw = size / 1e9 / seconds from the GPU time it prints (src/common.cu
// BenchTime, GetBw), so time x algbw = size, or (n-1)/n of it where an old
// all-gather folded that factor into algbw (NVIDIA/nccl-tests#45). Two
// layouts break it: nccl-tests before 2019-03 (cbe7f65) printed milliseconds
// (deltaSec * 1e3) under a `time` column; -C 1 prints the host's enqueue time
// (cputimeSec, read before the collectives complete) as `cputime`, while
// algbw still comes from the GPU time. The median of the rows whose algbw
// prints with three significant digits (1 GB/s and up) tells which layout the
// table has; then every row must agree within its printed rounding.
void check_time_column(Table& t, Collective c, std::int64_t n, NcclTestsImport& out) {
  const double least = t.algbw_exact ? 1e-12 : 1.0;  // GB/s: three significant digits when printed
  std::vector<double> q;
  for (const Row& r : t.rows)
    if (r.algbw_gbs >= least) q.push_back(r.time_s * r.algbw_gbs * 1e9 / r.bytes);
  if (t.cputime) {
    const std::size_t before = t.rows.size();
    t.rows.erase(std::remove_if(t.rows.begin(), t.rows.end(), [&](const Row& r) { return r.algbw_gbs < least; }),
                 t.rows.end());
    for (Row& r : t.rows) r.time_s = r.bytes / (r.algbw_gbs * 1e9);
    if (t.rows.empty())
      throw InputError(t.origin,
                       "the time column is cputime (nccl-tests -C 1: the host's enqueue time, not the "
                       "collective's) and no row's algbw prints with three significant digits to recover "
                       "the collective's time from; rerun without -C 1");
    out.warnings.push_back(fmt::format(
        "{}: the time column is cputime (nccl-tests -C 1: the host's enqueue time, not the collective's); each time "
        "is taken as size / algbw, which nccl-tests computes from the collective's time{}",
        t.origin,
        before > t.rows.size() ? fmt::format(" ({} below 1 GB/s, too coarse for that, skipped)",
                                             count_of(std::int64_t(before - t.rows.size()), "row"))
                               : ""));
    return;
  }
  double m = q.empty() ? 1.0 : median(q);
  double seconds_per_unit = 1e-6;
  const char* unit = "us";
  if (m > 0.45e-3 && m < 1.12e-3) {  // (n-1)/n of it for the all-gathers of that era (NVIDIA/nccl-tests#45)
    for (Row& r : t.rows) r.time_s *= 1e3;
    out.notes.push_back(
        fmt::format("{}: the times are milliseconds (size / time gives the printed algbw only so, "
                    "as nccl-tests before 2019-03 printed them); read as such",
                    t.origin));
    seconds_per_unit = 1e-3, unit = "ms", m *= 1e3;
  } else if (!(m > 0.45 && m < 1.12)) {
    throw InputError(t.origin, fmt::format("the time column does not give the algbw printed beside it (time x algbw / "
                                           "size is {:.3g} at the median of {}, 1 in nccl-tests' layouts, "
                                           "1e-3 in its millisecond one); not a table nccl-tests prints",
                                           m, count_of(std::int64_t(q.size()), "row")));
  }
  // Old all-gathers printed algbw x (n-1)/n (NVIDIA/nccl-tests#45), allowed
  // for the (n-1)/n tests; all-reduce and send/recv never did.
  const double folded = n > 1 ? double(n - 1) / double(n) : 1.0;
  const bool may_fold = c == Collective::all_gather || c == Collective::reduce_scatter || c == Collective::all_to_all;
  const bool fold = may_fold && std::abs(m - folded) < std::abs(m - 1.0);
  check_every_row(t, seconds_per_unit, unit, fold ? folded : 1.0,
                  fold ? fmt::format(" x {}/{} (the (n-1)/n old all-gathers fold into algbw)", n - 1, n) : "");
}

}  // namespace planner::nccl_tests_detail
