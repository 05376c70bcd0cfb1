// What the nccl-tests importer's text and JSON readers share: a result table
// as read, the token helpers, and turning a finished table into a series
// (nccl_tests_tables.cpp). Private to calibrate/.
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
  std::string host;
  std::string model;
};

struct Row {
  double bytes = 0;
  double time_s = 0;
};

// What one result table measured, before it becomes a series.
struct Table {
  std::string origin;     // "file:line" of the header
  std::string test_name;  // e.g. "all_reduce_perf"; empty when the log does not say
  std::vector<Device> devices;
  std::vector<Row> rows;
  std::string dtype, redop;
  std::size_t skipped_other_type = 0;
  std::size_t skipped_zero = 0;
};

std::vector<std::string> split(std::string_view s);
bool all_digits(std::string_view s);
std::optional<std::int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(const std::string& s);
std::string_view strip_prefix(std::string_view line);
std::vector<std::string> comment_tokens(std::vector<std::string> t);
std::string nccl_version_from_code(std::int64_t code);
std::optional<Device> parse_device(const std::vector<std::string>& t);
void finish_table(Table& t, const NcclTestsImportOptions& opt, NcclTestsImport& out);

}  // namespace planner::nccl_tests_detail
