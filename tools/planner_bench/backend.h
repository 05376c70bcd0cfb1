// planner-bench's seam between the sweep (sweep.cpp: sizes, groups,
// statistics, the measurement file) and what runs the collectives: MPI on CPUs
// (mpi_backend.cpp) or NCCL on GPUs (nccl_backend.cpp, one process per GPU
// under mpirun/srun, or one process driving every local GPU).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "planner/calibrate/measurements.h"
#include "planner/model/collectives.h"

namespace planner::bench {

// Where the ranks are. Nodes come from host names, or from --ranks-per-node
// (consecutive ranks), which lets one machine stand in for several nodes.
struct NodeLayout {
  std::int64_t world_size = 1;
  std::int64_t nodes = 1;
  std::int64_t ranks_per_node = 1;
  std::vector<std::string> hosts;  // distinct host names, in rank order
  bool emulated = false;
  std::vector<std::int64_t> node_of, local_of;  // per global rank: its node and its index on that node
};

// Nodes from each rank's host name (ranks_per_node_override == 0) or from
// consecutive blocks of ranks; throws std::runtime_error when hosts run
// different numbers of ranks.
[[nodiscard]] NodeLayout make_layout(const std::vector<std::string>& host_of_rank,
                                     std::int64_t ranks_per_node_override);

// The process groups of one measurement: every rank is in at most one group;
// all groups of the configuration run at the same time.
struct GroupConfig {
  GroupKind kind = GroupKind::world;
  std::int64_t size = 0;            // ranks per group
  std::int64_t ranks_per_node = 0;  // members of a group on one node
  std::int64_t nodes = 0;           // nodes one group spans
  std::int64_t concurrent = 1;      // groups at once
  // Per global rank: its group (-1: idle) and its index inside that group.
  std::vector<std::int64_t> color, member;
};

// World, intra-node and one-rank-per-node group configurations (sizes 2, 4,
// ... up to the node / node count when all_sizes, else only the largest).
[[nodiscard]] std::vector<GroupConfig> make_group_configs(const NodeLayout& layout, bool world, bool intra, bool inter,
                                                          bool all_sizes);

// Elements (int32) each collective moves per rank for `count`, and the size in
// nccl-tests' convention: all-reduce count per rank; all-gather count per rank
// in, count*p out (size = out); reduce-scatter count*p in, count out (size =
// in); all-to-all count to each peer (size = count*p); send/recv count.
[[nodiscard]] std::int64_t size_multiplier(Collective c, std::int64_t p);
[[nodiscard]] std::int64_t send_elements(Collective c, std::int64_t count, std::int64_t p);
[[nodiscard]] std::int64_t recv_elements(Collective c, std::int64_t count, std::int64_t p);

// Exact int32 patterns (sums stay below 2^31 for groups up to 4096 ranks):
// input of member r of p, and the result member r must hold.
void fill_input(Collective c, std::int64_t count, std::int64_t r, std::int64_t p, std::int32_t* in);
// Empty when `out` is right; otherwise where and what differs.
[[nodiscard]] std::string check_output(Collective c, std::int64_t count, std::int64_t r, std::int64_t p,
                                       const std::int32_t* out);

struct PointResult {
  std::vector<double> times_s;  // per timed iteration: the slowest rank of all groups
  std::string error;            // empty: every rank's result was right
};

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string name() const = 0;  // "mpi", "nccl", "nccl-local"
  [[nodiscard]] virtual std::string device() const = 0;
  [[nodiscard]] virtual std::map<std::string, std::string> versions() const = 0;
  [[nodiscard]] virtual const NodeLayout& layout() const = 0;
  [[nodiscard]] virtual bool is_root() const = 0;  // writes the file and prints
  // Largest per-rank buffer (bytes) worth trying, from free memory.
  [[nodiscard]] virtual double memory_limit_bytes() const = 0;
  // Builds the communicators of `g` (collective over all ranks).
  virtual void use_groups(const GroupConfig& g) = 0;
  // warmup + iters operations of `c` with `count` elements (see send_elements)
  // on the current groups; every rank gets the same result. `corrupt`
  // perturbs one output element before the check (a self-test of the check).
  [[nodiscard]] virtual PointResult measure(Collective c, std::int64_t count, int warmup, int iters, bool corrupt) = 0;
  // GEMM and HBM throughput where the backend has a GPU, and a GEMM sustained
  // for `sustain_s` seconds (0: none); nothing otherwise.
  virtual void measure_compute(MeasurementSet& out, int warmup, int iters, double sustain_s) {
    (void)out, (void)warmup, (void)iters, (void)sustain_s;
  }
  // Every rank stops here; for failures the root has reported.
  virtual void barrier() = 0;
};

}  // namespace planner::bench
