// Import of nccl-tests results (github.com/NVIDIA/nccl-tests) into the
// measurement format (measurements.h): the stdout tables of every layout
// (current: `size count type redop root time algbw busbw #wrong`; older:
// no `root`, `error` instead of `#wrong`; oldest: no `redop`), found by their
// header tokens, and the `-J` JSON file. Sits before calibration.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/calibrate/measurements.h"

namespace planner {

struct NcclTestsImportOptions {
  // For logs that do not name their test (no "# Collective test starting:"
  // line, as before nccl-tests 2.14) or do not list their ranks
  // ("# Using devices"); where a complete device list says it, a different
  // value is an error; over a list cut short ('...', or only some rank lines)
  // the flag wins with a warning. Every value is checked against the
  // busbw/algbw ratio of the rows, which pins the rank count.
  std::optional<Collective> collective;
  std::optional<std::int64_t> ranks;           // group size
  std::optional<std::int64_t> ranks_per_node;  // members of the group per node
};

struct NcclTestsImport {
  MeasurementSet measurements;
  std::vector<std::string> notes;     // rows skipped and why, e.g. other data types
  std::vector<std::string> warnings;  // a flag that overrode a cut-short device list, a rank count inferred
  bool devices_listed = false;        // some table had device lines (with or without a model name)
};

// One log's text; `origin` names it in errors ("file:line: message").
// Appends its series to `out`.
void import_nccl_tests_text(std::string_view text, const std::string& origin, const NcclTestsImportOptions& opt,
                            NcclTestsImport& out);
// One `-J` JSON document (nccl-tests src/util.cu, JSON_FILE_VERSION 2).
void import_nccl_tests_json(std::string_view text, const std::string& origin, const NcclTestsImportOptions& opt,
                            NcclTestsImport& out);

// Reads each file (JSON when its first non-blank character is '{', text
// otherwise) and merges them into one measurement set. Times are nccl-tests'
// out-of-place means; algbw and busbw are recomputed with today's conventions
// (old all-gather logs folded (p-1)/p into algbw).
[[nodiscard]] NcclTestsImport import_nccl_tests_files(const std::vector<std::string>& paths,
                                                      const NcclTestsImportOptions& opt);

// "all_reduce_perf", "all_reduce_perf_mpi", "./build/alltoall_perf" -> the
// collective; nullopt for tests that are not planner collectives (broadcast, reduce, ...).
[[nodiscard]] std::optional<Collective> collective_from_nccl_test_name(std::string_view name);

}  // namespace planner
