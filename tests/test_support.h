// Helpers shared by the unit tests: the message of an expected InputError, a
// scratch directory, the source tree's data, a training-run builder and the
// PricedPlan of a configuration on a given layout.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "planner/model/evaluate.h"
#include "planner/model/layer_cost.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/input_error.h"
#include "planner/spec/specs.h"

namespace planner::testing {

// The message of the InputError `f` throws, or "" if it throws none (any other
// exception propagates and fails the test).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A fresh directory under the system temp directory (mkdtemp), removed with
// everything in it at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "planner_test_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
    path = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// The plan of `pc` (normalised) priced as evaluate() prices it, but on
// `layout` instead of the balanced one: cost functions on a layout held fixed.
inline PricedPlan plan_on(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc_in,
                          const TrainingSpec& ts, const StageLayout& layout) {
  const ParallelConfig pc = normalized(pc_in);
  return price_plan(model, hw, pc, ts, layer_time(model, hw, pc, ts), head_time(model, hw, pc, ts), layout);
}

// The source tree: its models/, hardware_profiles/ and tests/ data.
inline const std::string kSourceDir = PLANNER_SOURCE_DIR;

// A training run of `gpus` GPUs, `global_batch` sequences of `seq` tokens,
// every other field at its default (bf16, flash attention, overlapped DP).
inline TrainingSpec training_run(std::int64_t gpus, std::int64_t global_batch, std::int64_t seq = 8192) {
  TrainingSpec ts;
  ts.num_gpus = gpus;
  ts.seq_len = seq;
  ts.global_batch_sequences = global_batch;
  return ts;
}

}  // namespace planner::testing
