// nccl-tests' text output -> measurements: the result tables read by the
// tokens of their own header line (see nccl_tests_tables.cpp), the devices
// listed above them, and nccl-tests' own verdicts (#wrong, out of bounds).
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "calibrate/nccl_tests_tables.h"
#include "planner/calibrate/nccl_tests_import.h"
#include "planner/spec/input_error.h"

namespace planner {

using namespace nccl_tests_detail;

namespace {

// The text layout's parser: one line at a time, with the state a log carries
// between lines (the devices listed, the current test, the open table and its
// header's column positions).
class TextLogParser {
 public:
  TextLogParser(const std::string& origin, const NcclTestsImportOptions& opt, NcclTestsImport& out)
      : origin_(origin), opt_(opt), out_(out) {}

  void line(std::string_view raw, std::size_t line_no) {
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string plain;  // a runner that colours its labels (SkyPilot): the escapes dropped
    if (raw.find('\x1b') != std::string_view::npos) plain = without_ansi_escapes(raw), raw = plain;
    std::string_view line = strip_prefix(raw);
    // A log pasted into a Markdown table (rows "1024 | 512 | half | sum | ...",
    // a "-- | -- | ..." rule under the first, '#' escaped as "\#": the stored
    // text of GitHub threads such as microsoft/mscclpp#736): the pipes are
    // column separators, the rule is not a line of the log.
    std::string unpiped;
    if (line.find('|') != std::string_view::npos) {
      unpiped.assign(line);
      std::replace(unpiped.begin(), unpiped.end(), '|', ' ');
      line = unpiped;
    }
    std::vector<std::string> tok = split(line);
    if (tok.empty()) return;
    if (!unpiped.empty() && std::all_of(tok.begin(), tok.end(), [](const std::string& x) {
          return x.find_first_not_of("-:") == std::string::npos;
        }))
      return;
    if (tok[0].rfind("\\#", 0) == 0) tok[0].erase(0, 1);
    const std::string where = fmt::format("{}:{}", origin_, line_no);
    if (failure(line, where)) return;
    const bool comment = tok[0][0] == '#';
    const std::vector<std::string> ct = comment_tokens(tok);
    read_versions(line, ct);
    if (ct.size() >= 4 && ct[0] == "Collective" && ct[1] == "test" && ct[2] == "starting:") {
      test_name_ = ct[3];
      return;
    }
    // "Collective test concluded: X" closes a test; a table whose log lost the
    // "starting" line (or its '#': logs pasted into Markdown) takes its name
    // from here. A different name than the one the table opened under is a
    // log spliced from two runs.
    if (ct.size() >= 4 && ct[0] == "Collective" && ct[1] == "test" && ct[2] == "concluded:") {
      if (table_ && table_->test_name.empty()) table_->test_name = ct[3];
      if (table_ && table_->test_name != ct[3])
        throw InputError(where, fmt::format("the table (line {}) is of {} but the log concludes {}", header_line_,
                                            table_->test_name, ct[3]));
      test_name_.clear();
      return;
    }
    command_line(tok, line_no);
    if (device_line(ct)) return;
    // The list ends at a comment that says something else (the header, the
    // next test's preamble) or at a row; not at lines the processes print
    // between their device lines (NCCL INFO/WARN lines, OpenMPI's
    // "[host:pid] ..." chatter), which start with neither '#' nor a size.
    if (comment ? !ct.empty() : all_digits(tok[0])) in_devices_ = false;
    if (header(ct, where, line_no)) return;
    if (units_only_header(ct, where, line_no)) return;
    if (!table_) {
      // A row after its table closed (a comment line between rows, as
      // rccl-tests' "# Testing 2 cycle." between --stress_cycles repeats):
      // not read; finish() says how many.
      if (tables_ > 0 && !comment && all_digits(tok[0]) && tok.size() >= 8) {
        if (orphan_rows_++ == 0) orphan_where_ = where;
      }
      return;
    }
    if (comment) {
      comment_in_table(ct, where);
      return;
    }
    // Only a row ends the wait for the units line: an NCCL INFO/WARN line
    // printed between the column names and the units line is not one (nor
    // part of the table; result_row skips it).
    if (all_digits(tok[0])) units_pending_ = false;
    result_row(tok, where);
  }

  void finish() {
    if (table_) finish_table(*table_, opt_, out_);
    if (orphan_rows_ > 0)
      out_.notes.push_back(
          fmt::format("{}: {} result row{} after a comment line closed the table above, with no "
                      "header of their own: not read",
                      orphan_where_, orphan_rows_, orphan_rows_ == 1 ? "" : "s"));
    if (tables_ == 0 && !first_failure_.empty())
      throw InputError(first_failure_where_, fmt::format("nccl-tests failed ({}) before printing a result table: a "
                                                         "run that did not finish a size is not a measurement",
                                                         first_failure_));
    if (tables_ == 0)
      throw InputError(origin_,
                       "no nccl-tests result table (expected a header line with size, time, algbw and busbw columns)");
  }

 private:
  void read_versions(std::string_view line, const std::vector<std::string>& ct) {
    if (const std::size_t at = line.find("NCCL version "); at != std::string_view::npos) {
      const auto v = split(line.substr(at + 13));
      if (!v.empty()) out_.measurements.versions["nccl"] = v[0];
    }
    // ROCm's rccl-tests: "# rccl-tests version 2.17.9-develop:... rccl-library=22707",
    // "rccl-tests: Version develop:a7809b3", "RCCL version : 2.22.3-HEAD:7d8d67c".
    const std::string lib = !ct.empty() && ct[0] == "rccl-tests" ? "rccl" : "nccl";
    if (ct.size() >= 3 && (ct[0] == "nccl-tests" || ct[0] == "rccl-tests") && ct[1] == "version") {
      out_.measurements.versions[lib + "_tests"] = ct[2];
      for (const std::string& x : ct)
        if (x.rfind(lib + "-library=", 0) == 0)
          if (auto code = parse_int(std::string_view(x).substr(lib.size() + 9));
              code && !out_.measurements.versions.count(lib))
            out_.measurements.versions[lib] = nccl_version_from_code(*code);
    }
    if (ct.size() >= 3 && ct[0] == "rccl-tests:" && ct[1] == "Version" &&
        !out_.measurements.versions.count("rccl_tests"))
      out_.measurements.versions["rccl_tests"] = ct[2];
    if (ct.size() >= 4 && ct[0] == "RCCL" && ct[1] == "version" && ct[2] == ":")
      out_.measurements.versions["rccl"] = ct[3];
  }

  // A command line echoed above a table ("$ ./build/all_gather_perf -b 8 ...",
  // "mpirun -np 16 .../all_reduce_perf_mpi ...", a shell prompt before it):
  // names the next table's test where the log has no '# Collective test
  // starting:' line (nccl-tests before 2.14, or logs pasted without it).
  // Only a line naming one test, and not as a redirect target (`make`'s
  // "Linking ... > build/all_reduce_perf"); an `ls build/` listing names several.
  void command_line(const std::vector<std::string>& tok, std::size_t line_no) {
    static const char* const kTests[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                         "alltoallv",  "sendrecv",   "broadcast",      "reduce",
                                         "gather",     "scatter",    "hypercube"};
    std::string found;
    for (std::size_t i = 0; i < tok.size(); ++i) {
      std::string_view name = tok[i];
      const bool redirected = name.front() == '>' || (i > 0 && tok[i - 1] == ">");
      if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
      if (name.size() > 4 && name.substr(name.size() - 4) == "_mpi") name.remove_suffix(4);
      if (name.size() <= 5 || name.substr(name.size() - 5) != "_perf") continue;
      name.remove_suffix(5);
      if (std::none_of(std::begin(kTests), std::end(kTests), [&](const char* t) { return name == t; })) continue;
      if (redirected) return;
      const std::string test = std::string(name) + "_perf";
      if (!found.empty() && found != test) return;
      found = test;
    }
    if (found.empty()) return;
    command_test_ = found;
    command_line_ = line_no;
  }

  // nccl-tests' own error report, as src/common.h prints it: "<host>: Test
  // CUDA failure <file>:<line> '...'", "<host>: Test NCCL failure ...",
  // " .. <host> pid <n>: Test failure <file>:<line>" (CUDACHECK, NCCLCHECK,
  // TESTCHECK), where the run stopped: inside a row or after the last. The
  // sizes finished before it are measurements (a warning says the sweep
  // stopped there); a table without one is skipped with a note, so a file
  // whose every table failed is refused naming the failure.
  bool failure(std::string_view line, const std::string& where) {
    std::size_t at = std::string_view::npos, after = 0;
    for (std::string_view m : {"Test CUDA failure ", "Test NCCL failure ", "Test failure "})
      if (const std::size_t i = line.find(m); i < at) at = i, after = i + m.size();
    if (at == std::string_view::npos) return false;
    // The source location nccl-tests prints next: "common.cu:389".
    const auto loc = split(line.substr(after));
    const std::size_t colon = loc.empty() ? std::string::npos : loc[0].rfind(':');
    if (colon == std::string::npos || colon == 0 || !all_digits(std::string_view(loc[0]).substr(colon + 1)) ||
        loc[0].find('.') == std::string::npos)
      return false;
    std::string what(line.substr(at));
    while (!what.empty() && (what.back() == ' ' || what.back() == '\t')) what.pop_back();
    if (first_failure_.empty()) first_failure_ = what, first_failure_where_ = where;
    if (table_ && !table_->rows.empty()) {
      out_.warnings.push_back(
          fmt::format("{}: nccl-tests failed here ({}); the {} size{} of the table on line {} "
                      "finished before it are kept",
                      where, what, table_->rows.size(), table_->rows.size() == 1 ? "" : "s", header_line_));
      finish_table(*table_, opt_, out_);
    } else if (!failed_) {
      out_.notes.push_back(
          fmt::format("{}: nccl-tests failed ({}) before {}: skipped, a run that did not finish a "
                      "size is not a measurement",
                      where, what,
                      table_ ? fmt::format("the first size of the table on line {} finished", header_line_)
                             : "printing a result table"));
    }
    table_.reset();
    failed_ = true;
    return true;
  }

  // "# Using devices" and the device lines under it.
  bool device_line(const std::vector<std::string>& ct) {
    if (ct.size() >= 2 && ct[0] == "Using" && ct[1] == "devices") {
      devices_.clear();
      in_devices_ = true;
      cut_ = cut_at_end_ = false;
      return true;
    }
    // "#  ..." (or "# Rank ...") inside the list: a README excerpt cut it short.
    if (in_devices_ && !ct.empty() && std::all_of(ct.begin(), ct.end(), [](const std::string& x) {
          return x == "Rank" || x.find_first_not_of(".") == std::string::npos || x == "\u2026";
        }) && std::any_of(ct.begin(), ct.end(), [](const std::string& x) { return x.find("..") != std::string::npos || x == "\u2026"; })) {
      cut_ = cut_at_end_ = true;
      return true;
    }
    if (auto d = parse_device(ct)) {
      if (!in_devices_) {
        devices_.clear();
        cut_ = cut_at_end_ = false;
      }
      in_devices_ = true;
      cut_at_end_ = false;
      devices_.push_back(*d);
      return true;
    }
    return false;
  }

  // Starts a table: its devices (and whether the list was cut short) and test name.
  void open_table(const std::string& where) {
    if (table_) finish_table(*table_, opt_, out_);
    table_.emplace();
    ++tables_;
    failed_ = false;  // a failure report after this table is this table's
    table_->origin = where;
    table_->test_name = test_name_;
    if (test_name_.empty() && !command_test_.empty()) {
      table_->test_name = command_test_;
      table_->test_named_by = fmt::format("the command line on line {}", command_line_);
    }
    command_test_.clear();
    set_devices(*table_, devices_, cut_, cut_at_end_);
  }

  // A table whose column names were lost (a README that kept only the units
  // line "#  (B)  (elements)  (us)  (GB/s)  (GB/s) ..."): the columns are
  // nccl-tests' layout of the first row's width (see the file comment of
  // nccl_tests_tables.cpp).
  bool units_only_header(const std::vector<std::string>& ct, const std::string& where, std::size_t line_no) {
    if ((table_ && units_pending_) || ct.empty() || ct[0] != "(B)" || !std::count(ct.begin(), ct.end(), "(GB/s)"))
      return false;
    open_table(where);
    header_.clear();
    header_line_ = line_no;
    units_only_ = true;
    units_pending_ = false;
    return true;
  }

  // The columns of a units-only table, from its first row.
  void columns_from_row(const std::vector<std::string>& tok, const std::string& where) {
    const bool has_redop = tok.size() >= 4 && !parse_double(tok[3]);
    if (tok.size() == 13 && has_redop)
      header_ = {"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"};
    else if (tok.size() == 12 && has_redop)
      header_ = {"size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"};
    else if (tok.size() == 11 && !has_redop)
      header_ = {"size", "count", "type", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"};
    else
      throw InputError(where, fmt::format("a table with a units line but no column names (line {}) and a row of {} "
                                          "columns, which is not a layout nccl-tests prints (13: size count type redop "
                                          "root time algbw busbw #wrong ..., 12: without root, 11: without redop)",
                                          header_line_, tok.size()));
    units_only_ = false;
    index_columns(where);
  }

  // A header: its first token is size (or bytes), and it has algbw and busbw.
  bool header(const std::vector<std::string>& ct, const std::string& where, std::size_t line_no) {
    if (ct.empty() || (ct[0] != "size" && ct[0] != "bytes") || !std::count(ct.begin(), ct.end(), "algbw") ||
        !std::count(ct.begin(), ct.end(), "busbw"))
      return false;
    open_table(where);
    header_ = ct;
    header_line_ = line_no;
    units_only_ = false;
    index_columns(where);
    units_pending_ = true;
    return true;
  }

  void index_columns(const std::string& where) {
    n_columns_ = header_.size() + (std::count(header_.begin(), header_.end(), "timestamp") ? 1 : 0);
    auto find = [&](std::initializer_list<const char*> names) -> std::optional<std::size_t> {
      for (std::size_t i = 0; i < header_.size(); ++i)
        for (const char* n : names)
          if (header_[i] == n) return i;
      return std::nullopt;
    };
    const auto type = find({"type"});
    const auto time = find({"time", "cputime"});
    idx_wrong_.clear();
    for (std::size_t i = 0; i < header_.size(); ++i)
      // "wrong" without its '#': logs pasted into Markdown lose it (dstack's GCP A4 log).
      if (header_[i] == "#wrong" || header_[i] == "wrong" || header_[i] == "error" || header_[i] == "res")
        idx_wrong_.push_back(i);
    if (!type || !time || idx_wrong_.empty() || idx_wrong_.front() < *time) {
      std::vector<std::string> missing;
      if (!type) missing.push_back("type");
      if (!time) missing.push_back("time");
      if (idx_wrong_.empty()) missing.push_back("#wrong (or error)");
      throw InputError(where, missing.empty()
                                  ? std::string("a result header whose #wrong/error column comes before its time "
                                                "column, which is not a layout nccl-tests prints (out-of-place "
                                                "time ... #wrong, then in-place)")
                                  : fmt::format("a result header without the {} column{} nccl-tests prints",
                                                fmt::join(missing, " and "), missing.size() == 1 ? "" : "s"));
    }
    idx_type_ = *type;
    idx_time_ = *time;
    table_->cputime = header_[*time] == "cputime";
    idx_redop_ = find({"redop", "op"});
    idx_root_ = find({"root"});
    wrong_is_count_ = header_[idx_wrong_.front()] == "#wrong" || header_[idx_wrong_.front()] == "wrong";
    idx_algbw_.clear();
    idx_busbw_.clear();
    for (std::size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == "algbw") idx_algbw_.push_back(i);
      if (header_[i] == "busbw") idx_busbw_.push_back(i);
    }
  }

  // A comment inside a table: the units line, nccl-tests' verdict, or the end of the table.
  void comment_in_table(const std::vector<std::string>& ct, const std::string& where) {
    if (units_pending_ && !ct.empty() && ct[0] == "(B)") {
      units_pending_ = false;
      return;
    }
    // A result row behind '#' (a paste that commented the whole table out):
    // not read, but finish_table says so if the table ends up empty.
    if (table_->rows.empty() && ct.size() + 1 >= n_columns_ && !ct.empty() && all_digits(ct[0])) {
      ++table_->commented_rows;
      return;
    }
    // "# Out of bounds values : 3 FAILED": nccl-tests' own verdict on the run.
    if (ct.size() >= 6 && ct[0] == "Out" && ct[2] == "bounds") {
      const auto n = parse_int(ct[5]);
      if (ct.size() >= 7 && ct[6] == "FAILED")
        throw InputError(
            where,
            fmt::format("nccl-tests reported {} out-of-bounds value{} (FAILED); a failed run is not a measurement",
                        n ? std::to_string(*n) : ct[5], n && *n == 1 ? "" : "s"));
    }
    if (!table_->rows.empty() || table_->skipped_zero || table_->skipped_other_type) {
      finish_table(*table_, opt_, out_);
      table_.reset();
    }
  }

  // Refuses a row whose out-of-place or in-place check counted wrong elements.
  void check_wrong(const std::vector<std::string>& tok, const std::string& where) const {
    for (std::size_t k = 0; k < idx_wrong_.size(); ++k) {
      const std::string& wrong = tok[idx_wrong_[k]];
      if (wrong == "N/A") continue;
      const auto w = parse_double(wrong);
      if (!w)
        throw InputError(where, fmt::format("{}: expected a number or N/A, got '{}'", header_[idx_wrong_[k]], wrong));
      if (wrong_is_count_ && (*w < 0 || *w != std::floor(*w)))
        throw InputError(where, fmt::format("{}: expected a count of wrong elements (0 or more), got '{}'",
                                            header_[idx_wrong_[k]], wrong));
      if (wrong_is_count_ && *w > 0)
        throw InputError(
            where, fmt::format("nccl-tests counted {} wrong element{} ({}); a failed run is not a measurement", wrong,
                               *w == 1 ? "" : "s", k == 0 ? "out-of-place" : "in-place"));
    }
  }

  void result_row(const std::vector<std::string>& printed, const std::string& where) {
    // Without '#', nccl-tests prints only result rows; NCCL's INFO/WARN lines
    // ("host:pid:tid [0] NCCL INFO ...") and launcher chatter do not start with
    // a number. A line of the table's width that starts with one that is not
    // a byte count ("-1048576", "1048576.5", "0x100000") is a row gone bad.
    if (!all_digits(printed[0])) {
      const std::size_t w = printed.size();
      const bool row_wide =
          units_only_ ? (w >= 11 && w <= 13) : (w == n_columns_ || (idx_redop_ && w + 1 == n_columns_));
      if (row_wide && parse_double(printed[0]))
        throw InputError(where,
                         fmt::format("size: expected a byte count (a whole number of bytes), got '{}'", printed[0]));
      return;
    }
    if (units_only_) columns_from_row(printed, where);
    // Older nccl-tests print a blank reduction for tests without one (all-to-all
    // under a header with "redop": NVIDIA/nccl-tests#78): one column short, a
    // number where the redop goes. Read as redop "none".
    std::vector<std::string> blank_redop;
    if (idx_redop_ && printed.size() + 1 == n_columns_ && *idx_redop_ < printed.size() &&
        parse_double(printed[*idx_redop_])) {
      blank_redop = printed;
      blank_redop.insert(blank_redop.begin() + std::ptrdiff_t(*idx_redop_), "none");
    }
    const std::vector<std::string>& tok = blank_redop.empty() ? printed : blank_redop;
    if (tok.size() != n_columns_)
      throw InputError(where, fmt::format("expected {} columns as in the header on line {} ({}), got {}", n_columns_,
                                          header_line_, fmt::join(header_, " "), tok.size()));
    const auto bytes = parse_int(tok[0]);
    const auto time_us = parse_double(tok[idx_time_]);
    if (!bytes) throw InputError(where, fmt::format("size: expected a byte count, got '{}'", tok[0]));
    if (!time_us || *time_us < 0)
      throw InputError(
          where, fmt::format("{}: expected a time in microseconds, got '{}'", header_[idx_time_], tok[idx_time_]));
    check_wrong(tok, where);
    if (idx_root_ && table_->root < 0)
      if (const auto root = parse_int(tok[*idx_root_]); root && *root >= 0)
        table_->root = *root, table_->root_where = where;
    for (std::size_t k = 0; k < std::min(idx_algbw_.size(), idx_busbw_.size()); ++k)
      if (auto r = ratio_of(tok[idx_algbw_[k]], tok[idx_busbw_[k]], where)) table_->ratios.push_back(*r);
    const std::string& dtype = tok[idx_type_];
    const std::string redop = idx_redop_ ? tok[*idx_redop_] : "none";
    const std::string algbw_text = idx_algbw_.empty() ? std::string() : tok[idx_algbw_.front()];
    const auto algbw = parse_double(algbw_text);
    if (!idx_algbw_.empty() && (!algbw || *algbw < 0))
      throw InputError(where, fmt::format("algbw: expected a bandwidth in GB/s, got '{}'", algbw_text));
    if (*bytes == 0) {  // a sweep from -b 0
      check_zero_size_row(algbw_text, where);
      ++table_->skipped_zero;
      return;
    }
    if (*time_us == 0 && !table_->cputime)
      throw InputError(where, fmt::format("{}: expected a time above 0 for a size of {} B, got '{}'",
                                          header_[idx_time_], *bytes, tok[idx_time_]));
    table_->rows.push_back(
        Row{double(*bytes), *time_us / 1e6, algbw.value_or(-1), dtype, redop, tok[idx_time_], algbw_text, where});
  }

  const std::string& origin_;
  const NcclTestsImportOptions& opt_;
  NcclTestsImport& out_;
  std::vector<Device> devices_;
  bool in_devices_ = false, cut_ = false, cut_at_end_ = false, units_only_ = false;
  bool failed_ = false;       // nccl-tests reported a failure: later failure lines repeat it
  std::string command_test_;  // the test of the last command line seen (command_line)
  std::size_t orphan_rows_ = 0;
  std::string first_failure_, first_failure_where_;  // nccl-tests' first failure report, for finish()
  std::string orphan_where_;
  std::size_t command_line_ = 0;
  std::vector<std::size_t> idx_algbw_, idx_busbw_;
  std::string test_name_;
  std::optional<Table> table_;
  std::vector<std::string> header_;
  std::size_t idx_type_ = 0, idx_time_ = 0, n_columns_ = 0;
  std::vector<std::size_t> idx_wrong_;  // out-of-place and in-place
  std::optional<std::size_t> idx_redop_, idx_root_;
  bool wrong_is_count_ = false, units_pending_ = false;
  std::size_t header_line_ = 0, tables_ = 0;
};

}  // namespace

void import_nccl_tests_text(std::string_view text, const std::string& origin, const NcclTestsImportOptions& opt,
                            NcclTestsImport& out) {
  TextLogParser parser(origin, opt, out);
  std::size_t line_no = 0, pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    parser.line(raw, ++line_no);
    if (eol == text.size()) break;
  }
  parser.finish();
}

}  // namespace planner
