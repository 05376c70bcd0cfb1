// nccl-tests' text output -> measurements: the result tables read by the
// tokens of their own header line (see nccl_tests_tables.cpp), the devices
// listed above them, and nccl-tests' own verdicts (#wrong, out of bounds).
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
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
    const std::string_view line = strip_prefix(raw);
    const std::vector<std::string> tok = split(line);
    if (tok.empty()) return;
    const std::string where = fmt::format("{}:{}", origin_, line_no);
    const bool comment = tok[0][0] == '#';
    const std::vector<std::string> ct = comment_tokens(tok);
    read_versions(line, ct);
    if (ct.size() >= 4 && ct[0] == "Collective" && ct[1] == "test" && ct[2] == "starting:") {
      test_name_ = ct[3];
      return;
    }
    if (device_line(ct)) return;
    in_devices_ = in_devices_ && comment && ct.empty();
    if (header(ct, where, line_no)) return;
    if (!table_) return;
    if (comment) {
      comment_in_table(ct, where);
      return;
    }
    units_pending_ = false;
    result_row(tok, where);
  }

  void finish() {
    if (table_) finish_table(*table_, opt_, out_);
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
    if (ct.size() >= 3 && ct[0] == "nccl-tests" && ct[1] == "version") {
      out_.measurements.versions["nccl_tests"] = ct[2];
      for (const std::string& x : ct)
        if (x.rfind("nccl-library=", 0) == 0)
          if (auto code = parse_int(std::string_view(x).substr(13)); code && !out_.measurements.versions.count("nccl"))
            out_.measurements.versions["nccl"] = nccl_version_from_code(*code);
    }
  }

  // "# Using devices" and the device lines under it.
  bool device_line(const std::vector<std::string>& ct) {
    if (ct.size() >= 2 && ct[0] == "Using" && ct[1] == "devices") {
      devices_.clear();
      in_devices_ = true;
      return true;
    }
    if (auto d = parse_device(ct)) {
      if (!in_devices_) devices_.clear();
      in_devices_ = true;
      devices_.push_back(*d);
      return true;
    }
    return false;
  }

  // A header: its first token is size (or bytes), and it has algbw and busbw.
  bool header(const std::vector<std::string>& ct, const std::string& where, std::size_t line_no) {
    if (ct.empty() || (ct[0] != "size" && ct[0] != "bytes") || !std::count(ct.begin(), ct.end(), "algbw") ||
        !std::count(ct.begin(), ct.end(), "busbw"))
      return false;
    if (table_) finish_table(*table_, opt_, out_);
    table_.emplace();
    ++tables_;
    table_->origin = where;
    table_->test_name = test_name_;
    table_->devices = devices_;
    header_ = ct;
    header_line_ = line_no;
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
      if (header_[i] == "#wrong" || header_[i] == "error" || header_[i] == "res") idx_wrong_.push_back(i);
    if (!type || !time || idx_wrong_.empty() || idx_wrong_.front() < *time)
      throw InputError(where, "a result header without the type, time and #wrong/error columns nccl-tests prints");
    idx_type_ = *type;
    idx_time_ = *time;
    idx_redop_ = find({"redop", "op"});
    wrong_is_count_ = header_[idx_wrong_.front()] == "#wrong";
    units_pending_ = true;
    return true;
  }

  // A comment inside a table: the units line, nccl-tests' verdict, or the end of the table.
  void comment_in_table(const std::vector<std::string>& ct, const std::string& where) {
    if (units_pending_ && !ct.empty() && ct[0] == "(B)") {
      units_pending_ = false;
      return;
    }
    // "# Out of bounds values : 3 FAILED": nccl-tests' own verdict on the run.
    if (ct.size() >= 6 && ct[0] == "Out" && ct[2] == "bounds") {
      const auto n = parse_int(ct[5]);
      if (ct.size() >= 7 && ct[6] == "FAILED")
        throw InputError(
            where,
            fmt::format("nccl-tests reported {} out-of-bounds values (FAILED); a failed run is not a measurement",
                        n ? std::to_string(*n) : ct[5]));
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
      if (wrong_is_count_ && *w > 0)
        throw InputError(
            where, fmt::format("nccl-tests counted {} wrong elements ({}); a failed run is not a measurement", wrong,
                               k == 0 ? "out-of-place" : "in-place"));
    }
  }

  void result_row(const std::vector<std::string>& tok, const std::string& where) {
    // Without '#', nccl-tests prints only result rows; NCCL's INFO/WARN lines
    // ("host:pid:tid [0] NCCL INFO ...") and launcher chatter do not start with a number.
    if (!all_digits(tok[0])) return;
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
    const std::string& dtype = tok[idx_type_];
    const std::string redop = idx_redop_ ? tok[*idx_redop_] : "none";
    if (table_->dtype.empty()) {
      table_->dtype = dtype;
      table_->redop = redop;
    }
    if (dtype != table_->dtype || redop != table_->redop) {
      ++table_->skipped_other_type;
      return;
    }
    if (*bytes == 0 || *time_us == 0) {
      ++table_->skipped_zero;
      return;
    }
    table_->rows.push_back(Row{double(*bytes), *time_us / 1e6});
  }

  const std::string& origin_;
  const NcclTestsImportOptions& opt_;
  NcclTestsImport& out_;
  std::vector<Device> devices_;
  bool in_devices_ = false;
  std::string test_name_;
  std::optional<Table> table_;
  std::vector<std::string> header_;
  std::size_t idx_type_ = 0, idx_time_ = 0, n_columns_ = 0;
  std::vector<std::size_t> idx_wrong_;  // out-of-place and in-place
  std::optional<std::size_t> idx_redop_;
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
