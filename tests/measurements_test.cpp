// measurements: the file planner-bench writes and calibrate reads. It
// round-trips exactly, carries nccl-tests' bandwidth conventions, and a bad
// field is one InputError naming the file and the field (checked verbatim).
#include <functional>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/calibrate/measurements.h"
#include "planner/spec/input_error.h"
#include "test_support.h"

using namespace planner;
using nlohmann::json;

using planner::testing::error_of;

namespace {

MeasurementSet sample() {
  MeasurementSet m;
  m.tool = "planner-bench 0.1.0";
  m.backend = "mpi";
  m.device = "CPU: test";
  m.hosts = {"a", "b"};
  m.world_size = 4;
  m.nodes = 2;
  m.ranks_per_node = 2;
  m.emulated_nodes = true;
  m.versions = {{"mpi", "Open MPI v4.1.4"}};
  m.command = "planner-bench -o x.json";
  MeasuredSeries s;
  s.collective = Collective::all_gather;
  s.group = GroupKind::inter_node;
  s.group_size = 2;
  s.ranks_per_node = 1;
  s.nodes = 2;
  s.concurrent_groups = 2;
  s.dtype = "int32";
  s.points = {make_point(Collective::all_gather, 2, 8, 1.5e-6, 1.25e-6),
              make_point(Collective::all_gather, 2, 1024, 2.5e-6)};
  m.series.push_back(s);
  GemmMeasurement g{"llama3.1-8b tp1 qkv", "bf16", 8192, 6144, 4096, 1e-3, 0.9e-3, 2.0 * 8192 * 6144 * 4096 / 1e-3};
  m.gemm.push_back(g);
  HbmMeasurement h{"cudaMemcpyAsync device-to-device", 1 << 30, 1e-3, 0.9e-3, 2.0 * double(1 << 30) / 1e-3};
  m.hbm.push_back(h);
  m.gemm_sustained.push_back({"llama3.1-8b tp1 gate-up", "bf16", 8192, 28672, 4096, 30.2, 8.1e14, 6.9e14});
  return m;
}

}  // namespace

TEST_CASE("bus bandwidth factors are nccl-tests'", "[measurements]") {
  // nccl-tests doc/PERFORMANCE.md and src/*.cu GetBw, p = 8.
  CHECK(bus_bandwidth_factor(Collective::all_reduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(bus_bandwidth_factor(Collective::all_gather, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(Collective::reduce_scatter, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(Collective::all_to_all, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(Collective::send_recv, 8) == 1.0);
  // A row of aws/aws-ofi-nccl#65 (tests/data/nccl_tests): 256 MiB all-reduce on 16 ranks in 11812 us -> 22.72 / 42.61
  // GB/s.
  const MeasuredPoint p = make_point(Collective::all_reduce, 16, 268435456, 11812e-6);
  CHECK(p.algbw_bytes_per_s / 1e9 == Approx(22.72).margin(0.01));  // nccl-tests rounded the time it divides by
  CHECK(p.busbw_bytes_per_s / 1e9 == Approx(42.61).margin(0.005));
}

TEST_CASE("a measurement set round-trips through its JSON", "[measurements]") {
  MeasurementSet m = sample();
  const json j = json::parse(render_measurements(m));
  CHECK(j["schema_version"] == kMeasurementSchemaVersion);
  CHECK_FALSE(j["series"][0].contains("nodes_per_nvlink_domain"));  // written only where said
  CHECK(measurements_from_json(j, "x.json") == m);
  m.series[0].nodes_per_nvlink_domain = 1;
  const json k = json::parse(render_measurements(m));
  CHECK(k["series"][0]["nodes_per_nvlink_domain"] == 1);
  CHECK(measurements_from_json(k, "x.json") == m);
}

TEST_CASE("bad measurement fields are one InputError naming file and field", "[measurements]") {
  auto with = [](const std::function<void(json&)>& edit) {
    json j = json::parse(render_measurements(sample()));
    edit(j);
    return error_of([&] { (void)measurements_from_json(j, "m.json"); });
  };
  CHECK(with([](json&) {}) == "");
  CHECK(with([](json& j) { j["schema_version"] = 2; }) == "m.json: schema_version: expected 1, got 2");
  CHECK(with([](json& j) { j["sereis"] = 1; }) == "m.json: sereis: unknown field");
  CHECK(with([](json& j) { j["series"][0]["collective"] = "allreduce"; }) ==
        "m.json: series[0].collective: expected one of all_reduce | all_gather | reduce_scatter | all_to_all | "
        "send_recv, got \"allreduce\"");
  CHECK(with([](json& j) { j["series"][0]["group_size"] = 3; }) ==
        "m.json: series[0].group_size: expected ranks_per_node * nodes = 2, got 3");
  CHECK(with([](json& j) {
          j["series"][0]["ranks_per_node"] = 2;
          j["series"][0]["group_size"] = 4;
        }) == "m.json: series[0].ranks_per_node: expected 1 for an inter_node group, got 2");
  // A shape field refused as a non-integer is not then held against the others with its fallback
  // (a group_size of 16.0 added "expected ranks_per_node * nodes = 16, got 2").
  CHECK(with([](json& j) { j["series"][0]["nodes"] = 2.0; }) ==
        "m.json: series[0].nodes: expected an integer from 1 to 16777216, got 2.0");
  CHECK(with([](json& j) { j["series"][0]["group_size"] = 2.5; }) ==
        "m.json: series[0].group_size: expected an integer from 2 to 16777216, got 2.5");
  CHECK(with([](json& j) { j["series"][0]["points"][1]["bytes"] = 8; }) ==
        "m.json: series[0].points[1].algbw_bytes_per_s: expected bytes / time_s = 3200000, got 409600000; "
        "series[0].points[1].busbw_bytes_per_s: expected algbw * 0.5 (nccl-tests factor for 2 ranks) = 1600000, got "
        "204800000; "
        "series[0].points[1].bytes: expected sizes in ascending order without repeats, got 8 after 8");
  CHECK(with([](json& j) { j["series"][0]["nodes_per_nvlink_domain"] = 0; }) ==
        "m.json: series[0].nodes_per_nvlink_domain: expected an integer from 1 to 16777216, got 0");
  CHECK(with([](json& j) { j["series"][0]["points"][0]["time_s"] = -1; }) ==
        "m.json: series[0].points[0].time_s: expected a number > 0 and <= 100000, got -1");
  CHECK(with([](json& j) { j["series"][0]["points"][0]["time_min_s"] = 1; }) ==
        "m.json: series[0].points[0].time_min_s: expected at most time_s 1.5e-06, got 1");
  CHECK(with([](json& j) { j["series"].push_back(j["series"][0]); }) ==
        "m.json: series[1]: a second series for all_gather inter_node 2 ranks (1 per node x 2 nodes) (one series per "
        "collective and group shape)");
  CHECK(with([](json& j) { j["gemm"][0]["flops_per_s"] = 1e15; }) ==
        "m.json: gemm[0].flops_per_s: expected 2*m*n*k / time_s = 4.1231686e+14, got 1e+15");
  CHECK(with([](json& j) { j["gemm_sustained"][0]["sustained_flops_per_s"] = 9e14; }) ==
        "m.json: gemm_sustained[0].sustained_flops_per_s: expected at most the burst rate (8.1e+14) plus noise, got "
        "9e+14");
  CHECK(with([](json& j) { j["gemm_sustained"][0]["duration_s"] = 0; }) ==
        "m.json: gemm_sustained[0].duration_s: expected a number > 0 and <= 100000, got 0");
  CHECK(with([](json& j) { j["world_size"] = 1; }) ==
        "m.json: world_size: expected nodes * ranks_per_node = 2 * 2 = 4, got 1; world_size: expected at least the "
        "largest group (2), got 1");
  // Headers that contradict themselves or their series (/tmp/qa2/hdr_bad.json, m/inter16.json) were accepted.
  CHECK(with([](json& j) { j["world_size"] = 64; }) ==
        "m.json: world_size: expected nodes * ranks_per_node = 2 * 2 = 4, got 64");
  CHECK(with([](json& j) {
          j["series"][0]["nodes"] = 4;
          j["series"][0]["group_size"] = 4;
          for (json& p : j["series"][0]["points"]) p["busbw_bytes_per_s"] = p["algbw_bytes_per_s"].get<double>() * 0.75;
        }) == "m.json: series[0].nodes: expected at most the file's nodes (2), got 4");
  // NVLink domains of 3 nodes cannot hold 8 nodes (/tmp/qa2/npd3.json printed "3 NVLink domains of 3 ranks" for 8).
  auto with_domain = [&](std::int64_t nodes, std::int64_t per_domain) {
    return with([&](json& j) {
      j["nodes"] = nodes;
      j["world_size"] = nodes * 2;
      j["series"][0]["nodes"] = nodes;
      j["series"][0]["group_size"] = nodes;
      j["series"][0]["nodes_per_nvlink_domain"] = per_domain;
      const double factor = double(nodes - 1) / double(nodes);
      for (json& p : j["series"][0]["points"]) p["busbw_bytes_per_s"] = p["algbw_bytes_per_s"].get<double>() * factor;
    });
  };
  CHECK(with_domain(8, 3) ==
        "m.json: series[0].nodes_per_nvlink_domain: expected a divisor of the series' nodes (8) or at least 8, got 3");
  CHECK(with_domain(8, 4) == "");
  CHECK(with_domain(8, 18) == "");  // all in one domain
  CHECK(with_domain(8, 1) == "");
  CHECK(error_of([] { (void)measurements_from_json(json::array(), "m.json"); }) ==
        "m.json: expected a JSON object of collective measurements (docs/calibration.md)");
}
