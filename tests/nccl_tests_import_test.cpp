// nccl_tests_import: real nccl-tests logs of both layouts (current: root and
// #wrong; older: no root, error), launcher prefixes, the -J JSON, and
// malformed logs as file:line errors (fixtures and their sources:
// tests/data/nccl_tests/README.md). Expected numbers are read off the logs.
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "planner/calibrate/nccl_tests_import.h"
#include "planner/spec/input_error.h"
#include "test_support.h"

using namespace planner;

using planner::testing::error_of;

namespace {

const std::string kData = std::string(PLANNER_SOURCE_DIR) + "/tests/data/nccl_tests/";

NcclTestsImportOptions flags(Collective c, std::int64_t ranks, std::int64_t per_node) {
  NcclTestsImportOptions o;
  o.collective = c;
  o.ranks = ranks;
  o.ranks_per_node = per_node;
  return o;
}

const MeasuredSeries& only_series(const NcclTestsImport& imp) {
  REQUIRE(imp.measurements.series.size() == 1);
  return imp.measurements.series.front();
}

}  // namespace

TEST_CASE("current layout gives test name and hosts and NCCL version from the log", "[nccl_tests]") {
  const NcclTestsImport imp = import_nccl_tests_files({kData + "spark_playbooks_103_all_reduce.log"}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.collective == Collective::all_reduce);
  CHECK(s.group_size == 2);
  CHECK(s.ranks_per_node == 1);  // spark-d708 and spark-dbf4: one GPU each
  CHECK(s.nodes == 2);
  CHECK(s.dtype == "float");
  CHECK(s.time_statistic == "mean");
  REQUIRE(s.points.size() == 4);
  CHECK(s.points[0].bytes == 8192);
  CHECK(s.points[0].time_s == Approx(35.15e-6));
  CHECK(s.points[3].bytes == 65536);
  CHECK(s.points[3].time_s == Approx(67.93e-6));
  // busbw recomputed: 2(p-1)/p = 1 at p = 2; the log prints 0.96 GB/s for 65536 B.
  CHECK(s.points[3].busbw_bytes_per_s / 1e9 == Approx(0.96).margin(0.005));
  const MeasurementSet& m = imp.measurements;
  CHECK(m.hosts == std::vector<std::string>{"spark-d708", "spark-dbf4"});
  CHECK(m.device == "NVIDIA GB10");
  CHECK(m.versions.at("nccl") == "2.31.2");  // nccl-library=23102
  CHECK(m.versions.at("nccl_tests") == "2.20.0");
  CHECK(m.world_size == 2);
  CHECK(m.nodes == 2);
  CHECK(m.ranks_per_node == 1);
}

TEST_CASE("current layout all-gather with footer and busbw per nccl-tests", "[nccl_tests]") {
  const NcclTestsImport imp = import_nccl_tests_files({kData + "spark_playbooks_25_all_gather.log"}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.collective == Collective::all_gather);
  REQUIRE(s.points.size() == 1);
  CHECK(s.points[0].bytes == 17179869184.0);
  CHECK(s.points[0].algbw_bytes_per_s / 1e9 == Approx(37.87).margin(0.005));  // as printed
  CHECK(s.points[0].busbw_bytes_per_s / 1e9 == Approx(18.94).margin(0.005));
}

TEST_CASE("logs without a test name or device list take flags", "[nccl_tests]") {
  SECTION("bfloat16 all-gather, linear steps") {
    const auto imp =
        import_nccl_tests_files({kData + "nccl_1435_all_gather_bf16.log"}, flags(Collective::all_gather, 2, 2));
    const MeasuredSeries& s = only_series(imp);
    CHECK(s.dtype == "bfloat16");
    CHECK(s.nodes == 1);
    REQUIRE(s.points.size() == 7);
    CHECK(s.points[6].bytes == 117440512);
    CHECK(s.points[6].time_s == Approx(490.8e-6));
    CHECK(s.points[6].busbw_bytes_per_s / 1e9 == Approx(119.64).margin(0.01));
  }
  SECTION("srun --label prefixes") {
    const auto imp =
        import_nccl_tests_files({kData + "rccl_1490_all_gather_srun_label.log"}, flags(Collective::all_gather, 32, 8));
    const MeasuredSeries& s = only_series(imp);
    CHECK(s.nodes == 4);
    REQUIRE(s.points.size() == 5);
    CHECK(s.points[0].bytes == 65536);
    CHECK(s.points[4].time_s == Approx(1456.6e-6));
    CHECK(s.points[0].busbw_bytes_per_s / 1e9 == Approx(0.59).margin(0.005));  // factor 31/32
  }
  SECTION("mpirun --tag-output prefixes") {
    const auto imp = import_nccl_tests_files({kData + "aws_k8s_tester_503_all_reduce_mpirun_tags.log"},
                                             flags(Collective::all_reduce, 16, 8));
    const MeasuredSeries& s = only_series(imp);
    REQUIRE(s.points.size() == 3);
    CHECK(s.points[2].bytes == 32);
    CHECK(s.points[2].time_s == Approx(22.25e-6));
  }
  SECTION("size-0 rows are skipped") {
    const auto imp = import_nccl_tests_files({kData + "nccl_tests_128_reduce_scatter_2x4.log"},
                                             flags(Collective::reduce_scatter, 8, 4));
    const MeasuredSeries& s = only_series(imp);
    CHECK(s.collective == Collective::reduce_scatter);
    CHECK(s.ranks_per_node == 4);
    CHECK(s.nodes == 2);
    REQUIRE(s.points.size() == 2);
    CHECK(s.points[0].bytes == 128);
    CHECK(s.points[0].time_s == Approx(32.31e-6));
  }
}

TEST_CASE("older layout without root and with error instead of #wrong", "[nccl_tests]") {
  SECTION("NCCL INFO lines inside the table, footer") {
    const auto imp = import_nccl_tests_files({kData + "aws_ofi_nccl_65_all_reduce_old_layout.log"},
                                             flags(Collective::all_reduce, 16, 8));
    const MeasuredSeries& s = only_series(imp);
    REQUIRE(s.points.size() == 6);
    CHECK(s.points[0].bytes == 8388608);
    CHECK(s.points[0].time_s == Approx(1321.5e-6));
    CHECK(s.points[5].bytes == 268435456);
    CHECK(s.points[5].time_s == Approx(11812e-6));
    CHECK(s.points[5].busbw_bytes_per_s / 1e9 == Approx(42.61).margin(0.01));  // 2 * 15/16 * 22.72
  }
  SECTION("device lines without Group") {
    NcclTestsImportOptions o;
    o.collective = Collective::all_reduce;
    const auto imp = import_nccl_tests_files({kData + "tensorflow_40027_all_reduce_old_layout.log"}, o);
    const MeasuredSeries& s = only_series(imp);
    CHECK(s.group_size == 2);
    CHECK(s.nodes == 1);  // both GPUs on w-system
    REQUIRE(s.points.size() == 3);
    CHECK(s.points[1].time_s == Approx(7.00e-6));
    CHECK(imp.measurements.device == "GeForce RTX 2080 Ti");
  }
}

TEST_CASE("nccl-tests -J JSON output", "[nccl_tests]") {
  const auto json = import_nccl_tests_files({kData + "constructed_json_all_reduce.json"}, {});
  const auto text = import_nccl_tests_files({kData + "spark_playbooks_103_all_reduce.log"}, {});
  const MeasuredSeries& s = only_series(json);
  CHECK(s.collective == Collective::all_reduce);  // from args[0] ./build/all_reduce_perf
  CHECK(s.nodes == 2);
  // The same run as the text fixture, so the same series.
  CHECK(s == only_series(text));
  CHECK(json.measurements.versions.at("nccl") == "2.31.2");
}

TEST_CASE("malformed logs are errors naming file and line", "[nccl_tests]") {
  const std::string bad = kData + "malformed/";
  auto err = [&](const std::string& file, const NcclTestsImportOptions& o = {}) {
    return error_of([&] { (void)import_nccl_tests_files({bad + file}, o); });
  };
  CHECK(err("missing_column.log") ==
        bad +
            "missing_column.log:15: expected 13 columns as in the header on line 10 (size count type redop root "
            "time algbw busbw #wrong time algbw busbw #wrong), got 12");
  CHECK(err("bad_time.log") == bad + "bad_time.log:14: time: expected a time in microseconds, got '39.5x'");
  CHECK(err("wrong_elements.log") == bad +
                                         "wrong_elements.log:13: nccl-tests counted 3 wrong elements (out-of-place); a "
                                         "failed run is not a measurement");
  CHECK(err("out_of_bounds_failed.log") == bad +
                                               "out_of_bounds_failed.log:13: nccl-tests reported 2 out-of-bounds "
                                               "values (FAILED); a failed run is not a measurement");
  CHECK(err("no_header.log") == bad +
                                    "no_header.log: no nccl-tests result table (expected a header line with size, "
                                    "time, algbw and busbw columns)");
  CHECK(err("json_wrong_elements.json") == bad +
                                               "json_wrong_elements.json: results[1].out_of_place.nwrong: nccl-tests "
                                               "counted 4.0 wrong elements; a failed run is not a measurement");
  CHECK(err("json_truncated.json") ==
        bad + "json_truncated.json:1: malformed JSON (expected an nccl-tests -J output file)");
  // What the log says wins over nothing, but must not contradict a flag.
  CHECK(error_of([&] { (void)import_nccl_tests_files({kData + "nccl_1435_all_gather_bf16.log"}, {}); }) ==
        kData +
            "nccl_1435_all_gather_bf16.log:2: the log does not name its test (no '# Collective test starting:' line, "
            "which older "
            "nccl-tests do not print); give --collective");
  CHECK(error_of([&] {
          NcclTestsImportOptions o;
          o.collective = Collective::all_gather;
          (void)import_nccl_tests_files({kData + "nccl_1435_all_gather_bf16.log"}, o);
        }) == kData +
                  "nccl_1435_all_gather_bf16.log:2: the log does not list its ranks (no '# Using devices' lines); give "
                  "--ranks and "
                  "--ranks-per-node");
  CHECK(
      error_of([&] {
        (void)import_nccl_tests_files({kData + "spark_playbooks_103_all_reduce.log"},
                                      flags(Collective::all_gather, 2, 1));
      }) ==
      kData +
          "spark_playbooks_103_all_reduce.log:10: the log names all_reduce_perf but --collective all_gather was given");
  CHECK(error_of([&] {
          NcclTestsImportOptions o;
          o.ranks_per_node = 2;
          (void)import_nccl_tests_files({kData + "spark_playbooks_103_all_reduce.log"}, o);
        }) == kData +
                  "spark_playbooks_103_all_reduce.log:10: --ranks-per-node 2 disagrees with the log's device list (1 "
                  "per node)");
  CHECK(error_of([] { (void)import_nccl_tests_files({"/nonexistent.log"}, {}); }) ==
        "/nonexistent.log: cannot open file");
}

TEST_CASE("two logs of one test merge and repeated sizes keep the median", "[nccl_tests]") {
  const std::string f = kData + "spark_playbooks_103_all_reduce.log";
  const auto imp = import_nccl_tests_files({f, f, kData + "constructed_json_all_reduce.json"}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.points.size() == 4);
  CHECK(s.points[0].time_s == Approx(35.15e-6));
  CHECK(imp.notes.size() >= 2);
}

TEST_CASE("test names map to collectives", "[nccl_tests]") {
  CHECK(collective_from_nccl_test_name("all_reduce_perf") == Collective::all_reduce);
  CHECK(collective_from_nccl_test_name("./build/all_gather_perf_mpi") == Collective::all_gather);
  CHECK(collective_from_nccl_test_name("reduce_scatter_perf") == Collective::reduce_scatter);
  CHECK(collective_from_nccl_test_name("alltoall_perf") == Collective::all_to_all);
  CHECK(collective_from_nccl_test_name("sendrecv_perf") == Collective::send_recv);
  CHECK(!collective_from_nccl_test_name("broadcast_perf"));
}
