// nccl-tests output -> measurements: which of a finished table's rows become
// the series (one data type and reduction op of a -d all / -o all table), and
// its time column checked against the algbw printed beside it, the part of
// finish_table (nccl_tests_tables.cpp) that reads the rows themselves.
#include "calibrate/nccl_tests_tables.h"

#include <algorithm>
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

// The time column against the algbw printed beside it: nccl-tests computes
// algbw = size / 1e9 / seconds from the GPU time it prints (src/common.cu
// BenchTime, GetBw), so time x algbw = size, or (n-1)/n of it where an old
// all-gather folded that factor into algbw (NVIDIA/nccl-tests#45). Two
// layouts break it: nccl-tests before 2019-03 (cbe7f65) printed milliseconds
// (deltaSec * 1e3) under a `time` column; -C 1 prints the host's enqueue time
// (cputimeSec, read before the collectives complete) as `cputime`, while
// algbw still comes from the GPU time. Rows whose algbw prints with fewer than
// three significant digits (below 1 GB/s) do not say.
void check_time_column(Table& t, NcclTestsImport& out) {
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
        before > t.rows.size()
            ? fmt::format(" ({} rows below 1 GB/s, too coarse for that, skipped)", before - t.rows.size())
            : ""));
    return;
  }
  if (q.empty()) return;
  const double m = median(q);
  if (m > 0.45 && m < 1.12) return;
  if (m > 0.45e-3 && m < 1.12e-3) {  // (n-1)/n of it for the all-gathers of that era (NVIDIA/nccl-tests#45)
    for (Row& r : t.rows) r.time_s *= 1e3;
    out.notes.push_back(
        fmt::format("{}: the times are milliseconds (size / time gives the printed algbw only so, "
                    "as nccl-tests before 2019-03 printed them); read as such",
                    t.origin));
    return;
  }
  throw InputError(t.origin, fmt::format("the time column does not give the algbw printed beside it (time x algbw / "
                                         "size is {:.3g} at the median of {} rows, 1 in nccl-tests' layouts, "
                                         "1e-3 in its millisecond one); not a table nccl-tests prints",
                                         m, q.size()));
}

}  // namespace planner::nccl_tests_detail
