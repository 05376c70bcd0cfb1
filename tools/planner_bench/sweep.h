// The measurement plan of planner-bench: for every group configuration and
// collective, sizes from min to max bytes by x2 (nccl-tests' size
// convention), warm-up and timed iterations, median and fastest iteration,
// results checked; then one measurement file written atomically by the root.
#pragma once

#include <string>
#include <vector>

#include "backend.h"

namespace planner::bench {

struct SweepOptions {
  double min_bytes = 8;
  double max_bytes = 64.0 * 1024 * 1024;
  int warmup = 5;
  int iters = 20;
  std::vector<Collective> collectives;  // empty: all five
  bool world = true, intra = true, inter = true;
  bool all_group_sizes = true;  // 2, 4, ... per node / node count, not only the largest
  bool compute = true;          // GEMM and HBM where the backend has a GPU
  double sustain_s = 30;        // a GEMM back to back this long for the sustained clock (0: skip)
  bool corrupt = false;         // self-test: a wrong result must fail the run
  bool quiet = false;
  std::string output;
  std::string command;
};

// Runs the plan; returns the exit code (0, or 1 when a result was wrong or the
// file could not be written). Every rank calls it.
[[nodiscard]] int run_sweep(Backend& backend, const SweepOptions& opt);

}  // namespace planner::bench
