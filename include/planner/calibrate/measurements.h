// Measured collective times (and, from GPU runs, GEMM and HBM throughput): the
// file planner-bench writes and `planner calibrate import-nccl-tests` produces,
// read by `planner calibrate fit` and `calibrate check` (docs/calibration.md,
// schema_version 1). Sits before calibration.h in the data flow.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "planner/model/collectives.h"

namespace planner {

inline constexpr int kMeasurementSchemaVersion = 1;

// Which process groups a series measured. The fit reads the structure
// (group_size, ranks_per_node, nodes), not the label: one node -> tier 0,
// one rank per node -> tier 1, anything else validates the composition.
enum class GroupKind { world, intra_node, inter_node };

// One message size. `bytes` follows nccl-tests' size convention, which is also
// collective_cost's (collectives.h): all-reduce the per-rank buffer,
// all-gather the gathered output, reduce-scatter the input, all-to-all what
// one rank sends in total, send/recv the message.
struct MeasuredPoint {
  double bytes = 0;
  double time_s = 0;             // per operation: median over iterations (planner-bench) or mean (nccl-tests)
  double time_min_s = 0;         // fastest iteration; 0 = not recorded
  double algbw_bytes_per_s = 0;  // bytes / time_s
  double busbw_bytes_per_s = 0;  // algbw * bus_bandwidth_factor
  bool operator==(const MeasuredPoint&) const = default;
};

struct MeasuredSeries {
  Collective collective = Collective::all_reduce;
  GroupKind group = GroupKind::world;
  std::int64_t group_size = 0;            // ranks in one group
  std::int64_t ranks_per_node = 0;        // members of one group on each node
  std::int64_t nodes = 0;                 // nodes one group spans; group_size = ranks_per_node * nodes
  std::int64_t concurrent_groups = 1;     // groups of this shape running at the same time
  // Nodes (hosts of the log) that share one NVLink domain, where the domain
  // spans hosts (GB200/GB300 NVL72: up to 18 trays of 4 GPUs); 0 = not said:
  // the profile's (consecutive hosts fill its domains, calibration.h
  // hosts_per_domain); 1 = every node its own domain (trays in distinct racks).
  std::int64_t nodes_per_nvlink_domain = 0;
  std::string dtype;                      // element type, e.g. "int32", "float", "bfloat16"
  std::string time_statistic = "median";  // "median" or "mean"
  std::vector<MeasuredPoint> points;      // ascending, distinct bytes
  bool operator==(const MeasuredSeries&) const = default;
};

struct GemmMeasurement {
  std::string name;   // e.g. "llama3.1-8b tp1 qkv"
  std::string dtype;  // "bf16" or "fp8"
  std::int64_t m = 0, n = 0, k = 0;
  double time_s = 0, time_min_s = 0;  // median and fastest iteration
  double flops_per_s = 0;             // 2mnk / time_s
  bool operator==(const GemmMeasurement&) const = default;
};

// One GEMM run back to back for a while (planner-bench --sustain-seconds):
// its rate in a short burst on an idle GPU and once the power limit has
// settled the clock. sustained / burst calibrates
// efficiency.sustained_clock_fraction.
struct SustainedGemmMeasurement {
  std::string name;   // the shape, e.g. "llama3.1-8b tp1 gate-up"
  std::string dtype;  // "bf16" or "fp8"
  std::int64_t m = 0, n = 0, k = 0;
  double duration_s = 0;             // how long it ran back to back
  double burst_flops_per_s = 0;      // the first calls after an idle pause
  double sustained_flops_per_s = 0;  // median over the second half of the run
  bool operator==(const SustainedGemmMeasurement&) const = default;
};

struct HbmMeasurement {
  std::string method;  // e.g. "cudaMemcpy device-to-device"
  double bytes = 0;    // buffer size copied
  double time_s = 0, time_min_s = 0;
  double bandwidth_bytes_per_s = 0;  // bytes read + written (2 * bytes) / time_s
  bool operator==(const HbmMeasurement&) const = default;
};

struct MeasurementSet {
  std::string tool;     // what produced it, e.g. "planner-bench 0.1.0"
  std::string backend;  // "mpi", "nccl", "nccl-local" or "nccl-tests"
  std::string device;   // GPU model, or "CPU: <model>" for the MPI backend
  std::vector<std::string> hosts;
  std::int64_t world_size = 0;
  std::int64_t nodes = 0;
  std::int64_t ranks_per_node = 0;
  bool emulated_nodes = false;                  // nodes assigned by --ranks-per-node, not by host name
  std::map<std::string, std::string> versions;  // e.g. "mpi", "nccl", "cuda_driver"
  std::string command;                          // optional: how it was produced
  std::vector<MeasuredSeries> series;
  std::vector<GemmMeasurement> gemm;
  std::vector<HbmMeasurement> hbm;
  std::vector<SustainedGemmMeasurement> gemm_sustained;
  bool operator==(const MeasurementSet&) const = default;
};

// nccl-tests' busbw/algbw ratio (doc/PERFORMANCE.md; src/*.cu GetBw):
// all-reduce 2(p-1)/p, all-gather, reduce-scatter and all-to-all (p-1)/p,
// send/recv 1.
[[nodiscard]] double bus_bandwidth_factor(Collective c, std::int64_t group_size);

// A point with algbw and busbw derived from bytes and time (nccl-tests conventions).
[[nodiscard]] MeasuredPoint make_point(Collective c, std::int64_t group_size, double bytes, double time_s,
                                       double time_min_s = 0);

// Whether a series' nodes fill NVLink domains of nodes_per_nvlink_domain
// nodes each (or all sit in one; true where the file does not say): 8 nodes in
// domains of 3 cannot be priced (placement_of would say 3 domains of 3 ranks
// for 8 ranks), so such a value is refused.
[[nodiscard]] bool fills_nvlink_domains(const MeasuredSeries& s);

[[nodiscard]] const char* to_string(GroupKind g);  // "world", "intra_node", "inter_node"

// "all_reduce intra_node 4 ranks (4 per node x 1 node)"
[[nodiscard]] std::string describe(const MeasuredSeries& s);

// Strict reader: unknown keys, wrong types, inconsistent group shapes,
// unsorted or duplicate sizes, algbw/busbw that disagree with bytes/time are
// one InputError naming the file and every offending field.
[[nodiscard]] MeasurementSet measurements_from_json(const nlohmann::json& j, const std::string& origin);
// Keys in a fixed, readable order (schema_version first).
[[nodiscard]] nlohmann::ordered_json to_json(const MeasurementSet& m);
[[nodiscard]] MeasurementSet load_measurements_file(const std::string& path);
// The file's text: to_json(m) indented, with a trailing newline.
[[nodiscard]] std::string render_measurements(const MeasurementSet& m);

}  // namespace planner
