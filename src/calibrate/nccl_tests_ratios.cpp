// nccl-tests output -> measurements: the rank count a finished table's
// busbw/algbw ratios allow, and the errors of a table whose ratios no group
// gives (another test's table) or that disagree with a rank count from a flag
// or the device list; the part of finish_table (nccl_tests_tables.cpp) that
// reads the ratios.
#include "calibrate/nccl_tests_tables.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner::nccl_tests_detail {

bool RankRange::pins() const { return known && lo == hi; }

bool RankRange::allows(std::int64_t n) const { return !known || (n >= lo && n <= hi); }

std::string RankRange::text() const {
  if (lo == hi) return fmt::format("{} rank{}", lo, lo == 1 ? "" : "s");
  if (hi >= kNoBound) return fmt::format("at least {} ranks", lo);
  return fmt::format("{} to {} ranks", lo, hi);
}

const char* factor_text(Collective c) { return c == Collective::all_reduce ? "2(n-1)/n" : "(n-1)/n"; }

namespace {

// A row whose ratio no rank count gives: the table is of another test (or its
// busbw was not computed as nccl-tests does).
[[noreturn]] void no_group_fits(Collective c, const RatioObs& r, bool collective_from_flag) {
  const double mid = 0.5 * (r.lo + r.hi);
  const bool below = c == Collective::all_reduce && r.hi < 1.0;  // 2(n-1)/n >= 1 from 2 ranks
  const bool above = c != Collective::all_reduce && r.lo > 1.0;  // (n-1)/n < 1
  throw InputError(
      r.where,
      fmt::format("busbw/algbw {}/{} (about {:.3f}) fits no {} group ({} {}){}", r.busbw, r.algbw, mid,
                  collective_key(c), factor_text(c),
                  below   ? "is at least 1 from 2 ranks: the table is of a (n-1)/n test (all_gather, "
                            "reduce_scatter, all_to_all)"
                  : above ? "is below 1: the table is of all_reduce (2(n-1)/n)"
                          : "gives no rank count in that interval",
                  collective_from_flag ? fmt::format("; --collective {} applies to every table of the file, and the "
                                                     "log does not name this table's test",
                                                     collective_key(c))
                                       : ""));
}

// What a ratio interval means for the tests of factor k (n-1)/n: "16 ranks",
// "at least 200 ranks", or that no group gives it.
std::string ranks_of_ratio(double k, const RatioObs& r) {
  if (r.lo >= k) return fmt::format("but it reaches {:g}, which no group gives", k);
  RankRange n;
  n.lo = std::max<std::int64_t>(2, std::int64_t(std::ceil(k / (k - r.lo) - 1e-9)));
  n.hi = r.hi >= k ? kNoBound : std::int64_t(std::floor(k / (k - r.hi) + 1e-9));
  if (n.lo > n.hi) return "but of no whole rank count";
  return fmt::format("which means {}", n.text());
}

// send/recv: nccl-tests prints busbw = algbw (src/sendrecv.cu GetBw, factor
// 1) at every n, so a row whose ratio excludes 1 is another test's table.
// The error names the row that says so most precisely and what its ratio
// means for the tests that print it.
void check_send_recv_ratios(const std::vector<RatioObs>& ratios, bool collective_from_flag) {
  const RatioObs* worst = nullptr;
  for (const RatioObs& r : ratios)
    if ((r.lo > 1.0 || r.hi < 1.0) && (!worst || r.hi - r.lo < worst->hi - worst->lo)) worst = &r;
  if (!worst) return;
  const RatioObs& r = *worst;
  const bool above = r.lo > 1.0;
  const std::string n = ranks_of_ratio(above ? 2.0 : 1.0, r);
  throw InputError(
      r.where,
      fmt::format("busbw/algbw {}/{} (about {:.3f}) fits no send_recv group (nccl-tests prints busbw = algbw for "
                  "send/recv, a ratio of 1 at every n); {}{}",
                  r.busbw, r.algbw, 0.5 * (r.lo + r.hi),
                  above ? fmt::format("above 1 it is all_reduce's 2(n-1)/n, {}", n)
                        : fmt::format("below 1 it is the (n-1)/n of all_gather, reduce_scatter or all_to_all, {}", n),
                  collective_from_flag ? "; --collective send_recv applies to every table of the file, and the log "
                                         "does not name this table's test"
                                       : ""));
}

}  // namespace

RankRange ranks_from_ratios(Collective c, const std::vector<RatioObs>& ratios, bool collective_from_flag) {
  RankRange out;
  if (c == Collective::send_recv) {
    check_send_recv_ratios(ratios, collective_from_flag);
    return out;
  }
  const double k = c == Collective::all_reduce ? 2.0 : 1.0;  // r = k (n-1)/n -> n = k / (k - r)
  auto n_of = [&](double r) { return r >= k ? std::numeric_limits<double>::infinity() : k / (k - r); };
  std::int64_t tightest = kNoBound + 1;
  std::size_t used = 0;
  std::string example;
  for (const RatioObs& r : ratios) {
    // A ratio that may reach k bounds n from below only: a huge group, or an
    // old all-gather log that folded (p-1)/p into algbw (ratio 1,
    // NVIDIA/nccl-tests#45). Neither pins n; such rows are not used.
    if (r.hi >= k) {
      if (r.lo > k) no_group_fits(c, r, collective_from_flag);
      continue;
    }
    const double nlo = n_of(r.lo), nhi = n_of(r.hi);
    const std::int64_t lo = std::max<std::int64_t>(1, std::int64_t(std::ceil(nlo - 1e-9)));
    const std::int64_t hi = std::int64_t(std::floor(nhi + 1e-9));
    if (lo > hi) no_group_fits(c, r, collective_from_flag);
    if (out.known && (lo > out.hi || hi < out.lo)) {
      RankRange one;
      one.lo = lo, one.hi = hi;
      throw InputError(
          r.where, fmt::format("busbw/algbw {}/{} means {} for {} ({}), but {} means {}; the rows contradict "
                               "each other",
                               r.busbw, r.algbw, one.text(), collective_key(c), factor_text(c), out.why, out.text()));
    }
    if (hi - lo < tightest) {
      tightest = hi - lo;
      example = fmt::format("{}/{} on {}", r.busbw, r.algbw, r.where);
    }
    ++used;
    out.why = used == 1 ? fmt::format("busbw/algbw {}", example)
                        : fmt::format("busbw/algbw of {} columns ({} and the rest)", used, example);
    out.lo = out.known ? std::max(out.lo, lo) : lo;  // 1 where busbw is 0: a one-rank run, refused by the caller
    out.hi = out.known ? std::min(out.hi, hi) : hi;
    out.known = true;
  }
  return out;
}

void check_ratio(const RankRange& rr, std::int64_t n, Collective c, const std::string& source,
                 const std::string& where) {
  if (rr.allows(n)) return;
  throw InputError(where, fmt::format("{}, but {} means {} for {} ({})", source, rr.why, rr.text(), collective_key(c),
                                      factor_text(c)));
}

}  // namespace planner::nccl_tests_detail
