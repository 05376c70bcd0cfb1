// What the nccl-tests importer's text and JSON readers share: a result table
// as read, the token helpers (nccl_tests_tokens.cpp), and turning a finished
// table into a series (nccl_tests_tables.cpp, with nccl_tests_rows.cpp and
// nccl_tests_ratios.cpp). Private to calibrate/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/calibrate/nccl_tests_import.h"

namespace planner::nccl_tests_detail {

struct Device {
  std::int64_t rank = 0;
  std::int64_t group = 0;
  std::int64_t gpu = -1;  // the "device d" index on its host; -1 when not printed
  std::string host;
  std::string model;
};

// One row's busbw/algbw as printed: the interval of ratios its rounding allows
// (half a unit of the last printed digit on each), which pins the rank count
// (nccl-tests GetBw: all-reduce 2(n-1)/n; all-gather, reduce-scatter,
// all-to-all (n-1)/n).
struct RatioObs {
  std::string where;  // "file:line"
  std::string algbw, busbw;
  double lo = 0, hi = 0;
};

struct Row {
  double bytes = 0;
  double time_s = 0;
  double algbw_gbs = -1;  // the printed out-of-place algbw; -1 when not printed
  std::string dtype, redop;
  // As printed, for the time x algbw check of every row (check_time_column):
  // their digits are their rounding.
  std::string time_text, algbw_text;
  std::string where;  // "file:line", or "file: results[i]" of a -J file
};

// What one result table measured, before it becomes a series.
struct Table {
  std::string origin;     // "file:line" of the header
  std::string test_name;  // e.g. "all_reduce_perf"; empty when the log does not say
  std::string test_named_by;  // "the command line on line 43" when no '# Collective test starting:' line named it
  std::vector<Device> devices;
  bool devices_cut = false;       // the list had a '...' line or misses ranks (README excerpts)
  bool devices_dots = false;        // ... by a '...' line
  bool devices_cut_at_end = false;  // ... and nothing after the '...': the highest rank shown is not the last
  bool devices_cut_in_host = false;  // ... inside the last host listed (fewer ranks than the others, no '...')
  // A rank listed more than once (in one NCCL_TESTS_SPLIT group): the log is
  // of this many separate jobs, one per process; `devices` keeps the first.
  std::int64_t separate_jobs = 1;
  std::int64_t repeated_rank = 0;
  std::string repeated_on;  // "host-a and host-b": where it is listed
  std::vector<Row> rows;
  // The first row's root when it is a rank (>= 0): nccl-tests prints -1 for
  // every test but the rooted ones, broadcast and reduce (src/util.cu).
  std::int64_t root = -1;
  std::string root_where;
  std::vector<RatioObs> ratios;
  std::string dtype, redop;  // of the rows kept (finish_table picks them: pick_rows)
  bool cputime = false;      // the time column is -C 1's cputime (host enqueue time)
  bool algbw_exact = false;  // algbw as a number (-J JSON), not rounded to two decimals
  std::size_t skipped_other_type = 0;
  std::size_t skipped_zero = 0;
  std::size_t commented_rows = 0;  // rows printed behind '#' before any plain row
};

std::vector<std::string> split(std::string_view s);
// "1 rank", "8 ranks": a count and its noun, singular or plural.
std::string count_of(std::int64_t n, std::string_view noun);
bool all_digits(std::string_view s);
std::optional<std::int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(const std::string& s);
// Half a unit of the last digit a number is printed with: "22.72" -> 0.005,
// "11812" -> 0.5, "7.193e1" -> 0.005: how far the printed value may be from
// the one it rounds.
double half_unit(const std::string& printed);
std::string_view strip_prefix(std::string_view line);
// The line without its ANSI colour / erase sequences ("\x1b[36m", "\x1b[0m").
std::string without_ansi_escapes(std::string_view line);
std::vector<std::string> comment_tokens(std::vector<std::string> t);
std::string nccl_version_from_code(std::int64_t code);
std::optional<Device> parse_device(const std::vector<std::string>& t);
// The ratio interval of a printed algbw/busbw pair; nullopt when algbw prints as 0.
std::optional<RatioObs> ratio_of(const std::string& algbw, const std::string& busbw, const std::string& where);
// A table's device list, as the text ('# Using devices' lines) and -J JSON
// (config.devices) list it: a rank listed twice is a log of separate jobs
// (the first kept); ranks missing from 0..n-1, or a '...' line (`dots`,
// `dots_at_end` when nothing follows it), make it a list cut short.
void set_devices(Table& t, std::vector<Device> devices, bool dots, bool dots_at_end);
void finish_table(Table& t, const NcclTestsImportOptions& opt, NcclTestsImport& out);

// nccl_tests_ratios.cpp: the rank counts the busbw/algbw ratios of a table
// allow, every row's interval intersected. all-reduce r = 2(n-1)/n -> n =
// 2/(2-r); all-gather, reduce-scatter, all-to-all r = (n-1)/n -> n = 1/(1-r)
// (nccl-tests doc/PERFORMANCE.md, GetBw in src/*.cu). send/recv's ratio is 1
// whatever n.
inline constexpr std::int64_t kNoBound = std::int64_t(1) << 40;  // RankRange::hi when no row bounds n from above
struct RankRange {
  bool known = false;  // some row constrained n
  std::int64_t lo = 2, hi = kNoBound;
  std::string why;                  // "busbw/algbw 42.61/22.72 on file:line"
  [[nodiscard]] bool pins() const;  // one rank count
  [[nodiscard]] bool allows(std::int64_t n) const;
  [[nodiscard]] std::string text() const;  // "8 ranks", "4 to 8 ranks", "at least 2 ranks"
};
// "2(n-1)/n" for all_reduce, else "(n-1)/n".
const char* factor_text(Collective c);
// The rank counts a table of `c` allows; refuses a row whose ratio no group
// gives, or rows that contradict each other (`collective_from_flag`: the
// error adds that --collective, not the log, named the test).
RankRange ranks_from_ratios(Collective c, const std::vector<RatioObs>& ratios, bool collective_from_flag);
// A rank count from a flag or the device list (`source` says which), checked against the ratios.
void check_ratio(const RankRange& rr, std::int64_t n, Collective c, const std::string& source,
                 const std::string& where);

// nccl_tests_rows.cpp: the median of `v` (not empty); the rows a table keeps
// (bfloat16, else half, else float; sum where present); its time column
// checked against the printed algbw (milliseconds and -C 1 cputime read right).
double median(std::vector<double> v);
void pick_rows(Table& t);
// For a table of `c` on n ranks; refuses a row whose time and algbw disagree.
void check_time_column(Table& t, Collective c, std::int64_t n, NcclTestsImport& out);
// A size-0 row (nccl-tests -b 0) must print algbw 0 within its digits.
void check_zero_size_row(const std::string& algbw_text, const std::string& where);

}  // namespace planner::nccl_tests_detail
