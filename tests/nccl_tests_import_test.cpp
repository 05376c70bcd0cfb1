// nccl_tests_import: real nccl-tests logs of both layouts (current: root and
// #wrong; older: no root, error), launcher prefixes, the -J JSON, and
// malformed logs as file:line errors (fixtures and their sources:
// tests/data/nccl_tests/README.md). Expected numbers are read off the logs.
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "calibrate/nccl_tests_tables.h"
#include "planner/calibrate/nccl_tests_import.h"
#include "planner/io/read_file.h"
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
  // No device list: busbw/algbw pins the 2 ranks, but not how they sit on nodes.
  CHECK(error_of([&] {
          NcclTestsImportOptions o;
          o.collective = Collective::all_gather;
          (void)import_nccl_tests_files({kData + "nccl_1435_all_gather_bf16.log"}, o);
        }) == kData +
                  "nccl_1435_all_gather_bf16.log:2: the log does not list its ranks (no '# Using devices' lines); "
                  "busbw/algbw of 14 columns (77.10/154.20 on " +
                  kData + "nccl_1435_all_gather_bf16.log:4 and the rest) pins 2 ranks, give --ranks-per-node");
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

// ---- item 2 of issue 14: the rank count is cross-checked against busbw/algbw
// (constructed logs: tests/data/nccl_tests/constructed/README.md).

namespace {
const std::string kCons = kData + "constructed/";
}

namespace {
bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}
}  // namespace

TEST_CASE("busbw/algbw pins the rank count of a device list cut short with '...'", "[nccl_tests]") {
  const std::string f = kCons + "all_reduce_128_ranks_dots.log";
  SECTION("--ranks-per-node only: 128 ranks from the ratio, with a warning") {
    NcclTestsImportOptions o;
    o.ranks_per_node = 8;
    const auto imp = import_nccl_tests_files({f}, o);
    const MeasuredSeries& s = only_series(imp);
    CHECK(s.group_size == 128);
    CHECK(s.nodes == 16);
    // busbw with 2 * 127/128, as the log prints it: 186.13 GB/s at 512 MiB.
    CHECK(s.points[4].busbw_bytes_per_s / 1e9 == Approx(186.13).margin(0.02));
    REQUIRE(imp.warnings.size() == 1);
    CHECK(imp.warnings[0] ==
          f + ":14: the device list is cut short (5 rank lines shown, the highest rank 4, then '...'); 128 ranks "
              "from busbw/algbw of 20 columns (186.13/93.80 on " +
              f + ":20 and the rest) (2(n-1)/n)");
    CHECK(imp.measurements.world_size == 128);
    CHECK(imp.measurements.nodes == 16);  // not the one host the excerpt shows
  }
  SECTION("an explicit --ranks wins over the cut list, with a warning") {
    const auto imp = import_nccl_tests_files({f}, flags(Collective::all_reduce, 128, 8));
    CHECK(only_series(imp).group_size == 128);
    REQUIRE(imp.warnings.size() == 1);
    CHECK(imp.warnings[0] == f +
                                 ":14: --ranks 128 wins over the device list, which is cut short (5 rank lines shown, "
                                 "the highest rank 4, then '...')");
  }
  SECTION("--ranks that contradicts the ratio is an error naming both") {
    CHECK(error_of([&] { (void)import_nccl_tests_files({f}, flags(Collective::all_reduce, 64, 8)); }) ==
          f + ":14: --ranks 64, but busbw/algbw of 20 columns (186.13/93.80 on " + f +
              ":20 and the rest) means 128 ranks for all_reduce (2(n-1)/n)");
  }
  SECTION("--ranks fewer than the list shows") {
    CHECK(error_of([&] { (void)import_nccl_tests_files({f}, flags(Collective::all_reduce, 4, 4)); }) ==
          f + ":14: --ranks 4 is fewer than the device list shows (5 rank lines shown, the highest rank 4, then '...')");
  }
  SECTION("without --ranks-per-node: the 5 GPUs shown are a lower bound, 8 the smallest count above that divides 128") {
    const auto imp = import_nccl_tests_files({f}, {});
    CHECK(only_series(imp).ranks_per_node == 8);
    CHECK(only_series(imp).nodes == 16);
    CHECK(any_contains(imp.warnings,
                       "8 ranks per node from the highest device index shown, at least 5, and the "
                       "smallest such count that divides 128"));
  }
}

TEST_CASE("a list showing only the last rank gives the count from its index", "[nccl_tests]") {
  const std::string f = kCons + "all_reduce_nvl72_last_rank.log";
  const auto imp = import_nccl_tests_files({f}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.group_size == 72);       // Rank 71
  CHECK(s.ranks_per_node == 4);    // device 3: four GPUs per GB200 tray
  CHECK(s.nodes == 18);
  CHECK(imp.measurements.device == "NVIDIA GB200");
  REQUIRE(imp.warnings.size() == 2);
  CHECK(imp.warnings[0].find("72 ranks from the highest rank, as busbw/algbw") != std::string::npos);
  CHECK(imp.warnings[1] == f + ":9: 4 ranks per node from the highest device index shown (give --ranks-per-node "
                               "if the nodes ran more)");
  // busbw recomputed with 2 * 71/72 agrees with the printed one.
  CHECK(s.points.back().busbw_bytes_per_s / s.points.back().algbw_bytes_per_s == Approx(2.0 * 71 / 72));
}

TEST_CASE("the same rank listed twice is a log of separate jobs, one per process", "[nccl_tests]") {
  // nccl-tests built without MPI and started by mpirun: every process is rank
  // 0 of a job of its own (NVIDIA/nccl-tests#107, #306).
  SECTION("one-rank jobs are refused, saying why and what to do") {
    const std::string f = kCons + "all_reduce_two_one_rank_jobs.log";
    NcclTestsImportOptions o;
    o.collective = Collective::all_reduce;
    CHECK(error_of([&] { (void)import_nccl_tests_files({f}, o); }) ==
          f + ":14: rank 0 is listed 2 times (on host-a and host-b): every process ran a one-rank job of its own, "
              "which measures no communication (nccl-tests built without MPI and started by mpirun or srun); "
              "rebuild it with `make MPI=1`");
  }
  const std::string f = kCons + "all_reduce_two_8_rank_jobs.log";
  SECTION("8-rank jobs on two nodes import as one 8-rank job on one node, with a warning") {
    NcclTestsImportOptions o;
    o.collective = Collective::all_reduce;
    const auto imp = import_nccl_tests_files({f}, o);
    const MeasuredSeries& s = only_series(imp);
    CHECK(s.group_size == 8);
    CHECK(s.nodes == 1);
    CHECK(imp.measurements.hosts == std::vector<std::string>{"node3"});
    REQUIRE(imp.warnings.size() == 1);
    CHECK(imp.warnings[0] == f + ":28: rank 0 is listed 2 times (on node3 and node2): the log is of 2 separate "
                                 "8-rank jobs, one per process (nccl-tests built without MPI and started by mpirun "
                                 "or srun; `make MPI=1` makes them one job); imported as one 8-rank job");
  }
  SECTION("--ranks 16 (what the user meant) disagrees, and the error says why") {
    CHECK(error_of([&] { (void)import_nccl_tests_files({f}, flags(Collective::all_reduce, 16, 8)); }) ==
          f + ":28: --ranks 16 disagrees with the log's device list (8 ranks per group; rank 0 is listed 2 times, "
              "on node3 and node2: 2 separate jobs, one per process, as nccl-tests built without MPI runs them)");
  }
}

TEST_CASE("rows with a root rank are a rooted test, never a planner collective", "[nccl_tests]") {
  // nccl-tests prints root -1 for every test but broadcast and reduce (src/util.cu).
  // The fixture's first line is the command that ran it, which names the
  // test (broadcast_perf); without it only the root says so.
  const std::string named = kCons + "broadcast_old_layout_root0.log";
  const std::string fixture_text = read_input_file(named);
  const std::string f = (std::filesystem::temp_directory_path() / "planner_rooted_text_test.log").string();
  std::ofstream(f) << fixture_text.substr(fixture_text.find('\n') + 1);
  SECTION("the command line above the table names the test, which is skipped, with or without --collective") {
    const std::string why = named + ": no series of a planner collective in the given logs (" + named +
                            ":9: broadcast_perf is not a collective the planner prices, skipped)";
    CHECK(error_of([&] { (void)import_nccl_tests_files({named}, {}); }) == why);
    NcclTestsImportOptions o;
    o.collective = Collective::all_reduce;
    CHECK(error_of([&] { (void)import_nccl_tests_files({named}, o); }) == why);
  }
  SECTION("--collective all_reduce on a broadcast table is refused") {
    NcclTestsImportOptions o;
    o.collective = Collective::all_reduce;
    CHECK(error_of([&] { (void)import_nccl_tests_files({f}, o); }) ==
          f + ":10: the rows print root 0: a rooted test (broadcast_perf or reduce_perf), not all_reduce, for which "
              "nccl-tests prints root -1");
  }
  SECTION("without --collective the table is skipped, and the error says why nothing was imported") {
    CHECK(error_of([&] { (void)import_nccl_tests_files({f}, {}); }) ==
          f + ": no series of a planner collective in the given logs (" + f +
              ":8: the rows print root 0: a rooted test (broadcast_perf or reduce_perf), which the planner does not "
              "price; skipped)");
  }
  SECTION("the -J JSON's root field says the same") {
    std::string text = read_input_file(kData + "constructed_json_all_reduce.json");
    for (std::size_t at = text.find("\"    -1\""); at != std::string::npos; at = text.find("\"    -1\"", at))
      text.replace(at, 8, "\"     2\"");
    const std::string g = (std::filesystem::temp_directory_path() / "planner_rooted_json_test.json").string();
    std::ofstream(g) << text;
    CHECK(error_of([&] { (void)import_nccl_tests_files({g}, {}); }) ==
          g + ": results[0].root: the rows print root 2: a rooted test (broadcast_perf or reduce_perf), not "
              "all_reduce, for which nccl-tests prints root -1");
    std::filesystem::remove(g);
  }
}

TEST_CASE("a log pasted into a Markdown table: pipes, a rule row and an escaped hash", "[nccl_tests]") {
  NcclTestsImportOptions o;
  o.collective = Collective::all_reduce;
  o.ranks_per_node = 8;
  const auto imp = import_nccl_tests_files({kData + "mscclpp_736_all_reduce_markdown_pipes.log"}, o);
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.group_size == 8);  // busbw/algbw 1.75 in 18 columns
  CHECK(s.dtype == "half");
  REQUIRE(s.points.size() == 9);
  CHECK(s.points.front().bytes == 1024);
  CHECK(s.points.front().time_s == Approx(5.39e-6));
  CHECK(s.points.back().bytes == 262144);
  CHECK(s.points.back().time_s == Approx(11.68e-6));
}

TEST_CASE("Intel MPI rank tags, CRLF, indentation and NCCL INFO lines between rows", "[nccl_tests]") {
  const auto imp = import_nccl_tests_files({kCons + "all_gather_2x8_rank_tags_crlf.log"}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.collective == Collective::all_gather);
  CHECK(s.group_size == 16);
  CHECK(s.ranks_per_node == 8);
  CHECK(s.nodes == 2);
  CHECK(s.points.size() == 11);
  CHECK(s.points.front().bytes == 1048576);
  CHECK(imp.warnings.empty());
  CHECK(imp.measurements.hosts == std::vector<std::string>{"node-a", "node-b"});
}

TEST_CASE("nccl-tests 2.19 with -I 1: per-iteration columns and timestamps after the row", "[nccl_tests]") {
  // Each half gains i_min, i_max, i_p99 and i_cv% after #wrong, and the row a
  // two-token timestamp: the measurement is still the time column, the mean.
  const auto imp = import_nccl_tests_files({kCons + "reduce_scatter_2x8_per_iteration.log"}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.collective == Collective::reduce_scatter);
  CHECK(s.group_size == 16);
  CHECK(s.ranks_per_node == 8);
  REQUIRE(s.points.size() == 11);
  CHECK(s.points[0].time_s == Approx(44.71e-6));  // not i_min 43.37 or i_p99 47.84
  CHECK(s.points[0].busbw_bytes_per_s / 1e9 == Approx(21.99).margin(0.01));
  CHECK(imp.measurements.versions.at("nccl_tests") == "2.19.6");
  CHECK(imp.warnings.empty());
}

TEST_CASE("a units-only header imports with --collective and the ratio's rank count", "[nccl_tests]") {
  const std::string f = kCons + "reduce_scatter_units_only.log";
  NcclTestsImportOptions o;
  o.collective = Collective::reduce_scatter;
  o.ranks_per_node = 8;
  const auto imp = import_nccl_tests_files({f}, o);
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.group_size == 8);
  CHECK(s.nodes == 1);
  CHECK(s.points.size() == 15);
  CHECK(s.points.front().bytes == 65536);
  o.ranks = 4;  // (n-1)/n = 0.875 at 8 ranks, 0.75 at 4
  CHECK(error_of([&] { (void)import_nccl_tests_files({f}, o); }).find(":3: --ranks 4, but busbw/algbw") !=
        std::string::npos);
  // A units line over rows of a width nccl-tests never printed.
  CHECK(error_of([&] {
          import_nccl_tests_text("#  (B)  (elements)  (us)  (GB/s)  (GB/s)\n1024 256 float sum 10.0 0.10 0.18\n", "t.log",
                                 o, *std::make_unique<NcclTestsImport>());
        }).rfind("t.log:2: a table with a units line but no column names (line 1) and a row of 7 columns", 0) == 0);
}

TEST_CASE("a complete-looking device list that the ratio contradicts is an error", "[nccl_tests]") {
  const std::string f = kCons + "all_reduce_list_contradicts_ratio.log";
  CHECK(error_of([&] { (void)import_nccl_tests_files({f}, {}); }) ==
        f + ":16: the device list shows 8 ranks, but busbw/algbw of 12 columns (166.72/88.91 on " + f +
            ":18 and the rest) means 16 ranks for all_reduce (2(n-1)/n)");
}

TEST_CASE("a real one-GPU log (busbw 0.00 on every row) is refused as a one-rank run", "[nccl_tests]") {
  // all_reduce_perf -g 1 on a lent H100 (hardware_profiles/measured/): busbw
  // is 0 for one rank, which once read as "2 to 1 ranks" and a contradiction.
  const std::string f =
      std::string(PLANNER_SOURCE_DIR) + "/hardware_profiles/measured/h100-sxm-2026-11-27/nccl_tests_all_reduce_g1.log";
  CHECK(error_of([&] { (void)import_nccl_tests_files({f}, {}); }) ==
        f + ":9: a one-rank run measures no communication");
}

TEST_CASE("ratio intervals from printed precision", "[nccl_tests]") {
  using namespace planner::nccl_tests_detail;
  const auto r = ratio_of("22.72", "42.61", "x");
  REQUIRE(r);
  CHECK(r->lo == Approx(42.605 / 22.725));
  CHECK(r->hi == Approx(42.615 / 22.715));
  CHECK(!ratio_of("0.00", "0.00", "x"));
  CHECK(strip_prefix("[0]     8192   2048  float") == "     8192   2048  float");
  CHECK(strip_prefix("[3,1]: # Rank 0") == " # Rank 0");
  CHECK(strip_prefix("[0x5a] x") == "[0x5a] x");
}

TEST_CASE("the closing 'Collective test concluded:' line names a table the log did not open", "[nccl_tests]") {
  // The Nebius log of tests/data/nccl_logs (dstack docs) lost every '#': its
  // only test name is the closing line. Rows: 2 ranks, all-gather (n-1)/n = 0.5.
  const std::string body =
      "size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "(B) (elements) (us) (GB/s) (GB/s) (us) (GB/s) (GB/s)\n"
      "1048576 131072 float none -1 100.0 10.49 5.24 0 100.0 10.49 5.24 0\n"
      "2097152 262144 float none -1 150.0 13.98 6.99 0 150.0 13.98 6.99 0\n";
  NcclTestsImportOptions o;
  o.ranks_per_node = 2;
  NcclTestsImport imp;
  import_nccl_tests_text(body + "Collective test concluded: all_gather_perf\n", "t.log", o, imp);
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.collective == Collective::all_gather);
  CHECK(s.group_size == 2);
  // Without the closing line the log names no test.
  CHECK(error_of([&] { import_nccl_tests_text(body, "t.log", o, *std::make_unique<NcclTestsImport>()); })
            .find("t.log:1: the log does not name its test") != std::string::npos);
  // A closing name that contradicts the opening one is a spliced log.
  CHECK(error_of([&] {
          import_nccl_tests_text("# Collective test starting: all_reduce_perf\n" + body +
                                     "# Collective test concluded: all_gather_perf\n",
                                 "t.log", o, *std::make_unique<NcclTestsImport>());
        }) == "t.log:6: the table (line 2) is of all_reduce_perf but the log concludes all_gather_perf");
}

TEST_CASE("older all-to-all rows with a blank redop under a header that has one", "[nccl_tests]") {
  // NVIDIA/nccl-tests#78 (tests/data/nccl_logs/nccl_tests_78_8x8_v100_alltoall.log): 11 tokens under 12 names.
  const std::string header =
      "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n";
  NcclTestsImportOptions o = flags(Collective::all_to_all, 64, 8);
  NcclTestsImport imp;
  import_nccl_tests_text(header + "   268435456       1048576     float           520935    0.52    0.51  0e+00   519562    "
                                  "0.52    0.51  1e+00\n",
                         "t.log", o, imp);
  const MeasuredSeries& s = only_series(imp);
  REQUIRE(s.points.size() == 1);
  CHECK(s.points[0].time_s == Approx(520935e-6));
  // One column short with no number where the redop goes is still a malformed row.
  CHECK(error_of([&] {
          import_nccl_tests_text(header + "   268435456       1048576     float     sum   520935    0.52    0.51  0e+00   "
                                          "519562    0.52    0.51\n",
                                 "t.log", o, *std::make_unique<NcclTestsImport>());
        }).rfind("t.log:2: expected 12 columns as in the header on line 1", 0) == 0);
}

TEST_CASE("pdsh host prefixes and log-collector time stamps are stripped like launcher tags", "[nccl_tests]") {
  const std::string plain = read_input_file(kCons + "all_reduce_1x8_from_32MiB.log");
  auto prefixed = [&](const std::string& prefix) {
    std::string out;
    for (std::size_t pos = 0; pos < plain.size();) {
      const std::size_t eol = std::min(plain.find('\n', pos), plain.size());
      out += prefix + plain.substr(pos, eol - pos) + "\n";
      pos = eol + 1;
    }
    return out;
  };
  NcclTestsImport want;
  import_nccl_tests_text(plain, "t.log", {}, want);
  for (const std::string prefix :
       {"dgx-b07: ", "node-01.cluster:\t", "2024-05-01T12:00:00.123456789Z ", "2025-02-20T08:15:42+00:00  "}) {
    INFO(prefix);
    NcclTestsImport got;
    import_nccl_tests_text(prefixed(prefix) + "Warning: Permanently added 'dgx-b07' to the list of known hosts.\n",
                           "t.log", {}, got);
    const MeasuredSeries& s = only_series(got);
    CHECK(s.group_size == 8);
    REQUIRE(s.points.size() == only_series(want).points.size());
    CHECK(s.points.back().time_s == only_series(want).points.back().time_s);
    CHECK(got.measurements.hosts == want.measurements.hosts);
  }
}

TEST_CASE("a log quoted in Markdown ('> ') reads as the log, its echoed command naming the test", "[nccl_tests]") {
  const auto imp = import_nccl_tests_files({kCons + "all_reduce_1x8_blockquote.log"}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.collective == Collective::all_reduce);
  CHECK(s.group_size == 8);
  CHECK(s.nodes == 1);
  CHECK(s.points.size() == 8);
  CHECK(imp.warnings.empty());
}

TEST_CASE("a command line names a test only as the command, not as make's output or an ls listing", "[nccl_tests]") {
  std::string text = read_input_file(kCons + "two_tests_named_by_commands.log");
  const std::string f = (std::filesystem::temp_directory_path() / "planner_command_lines.log").string();
  // The all-reduce table alone, after a build log and a directory listing.
  const std::string first = text.substr(0, text.find("user@box", 10));
  std::ofstream(f) << "Linking  build/hypercube.o > build/hypercube_perf\n"
                   << first.substr(0, first.find('\n') + 1)
                   << "all_gather_perf  all_reduce_perf  alltoall_perf  sendrecv_perf\n"
                   << first.substr(first.find('\n') + 1);
  CHECK(only_series(import_nccl_tests_files({f}, {})).collective == Collective::all_reduce);
}

TEST_CASE("tests named only by their command lines: every table its own test, --collective picks", "[nccl_tests]") {
  const std::string f = kCons + "two_tests_named_by_commands.log";
  const auto both = import_nccl_tests_files({f}, {});
  REQUIRE(both.measurements.series.size() == 2);
  CHECK(both.measurements.series[0].collective == Collective::all_reduce);
  CHECK(both.measurements.series[1].collective == Collective::all_gather);
  NcclTestsImportOptions o;
  o.collective = Collective::all_gather;
  const auto one = import_nccl_tests_files({f}, o);
  CHECK(only_series(one).collective == Collective::all_gather);
  CHECK(any_contains(one.notes,
                     "a table of all_reduce_perf (the command line on line 1); --collective all_gather: "
                     "skipped"));
  SECTION("a real session of five tests (Anthony-Hoo's AutoDL post): the rooted ones skipped") {
    const auto real = import_nccl_tests_files({kData + "anthonyhoo_autodl_2x2080ti_five_tests.log"}, {});
    REQUIRE(real.measurements.series.size() == 3);
    CHECK(real.measurements.series[0].collective == Collective::all_reduce);
    CHECK(real.measurements.series[1].collective == Collective::all_gather);
    CHECK(real.measurements.series[2].collective == Collective::all_to_all);
    for (const MeasuredSeries& s : real.measurements.series) CHECK(s.group_size == 2);
    CHECK(any_contains(real.notes, "broadcast_perf is not a collective the planner prices, skipped"));
    CHECK(any_contains(real.notes, "reduce_perf is not a collective the planner prices, skipped"));
  }
}

TEST_CASE("a --collective naming another test: the redop or the ratio says which kind the table is", "[nccl_tests]") {
  // Logs without the command line that names their test.
  auto unnamed = [](const std::string& fixture, const char* name) {
    std::string text = read_input_file(kCons + fixture);
    const std::string f = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream(f) << text.substr(text.find('\n') + 1);
    return f;
  };
  const std::string ar = unnamed("all_reduce_1x8_blockquote.log", "planner_unnamed_all_reduce.log");
  NcclTestsImportOptions o;
  o.collective = Collective::all_gather;
  CHECK(error_of([&] { (void)import_nccl_tests_files({ar}, o); }) ==
        ar + ":14: the rows print redop 'sum', which nccl-tests prints for reducing (all_reduce, reduce_scatter, "
             "reduce) tests: the table is not all_gather; --collective all_gather applies to every table of the "
             "file, and the log does not name this table's test");
  o.collective = Collective::all_reduce;
  CHECK(only_series(import_nccl_tests_files({ar}, o)).group_size == 8);
  // A reduce-scatter read as an all-reduce: both reduce, the ratio (0.875) tells them apart.
  const std::string rs = unnamed("reduce_scatter_units_only.log", "planner_unnamed_reduce_scatter.log");
  o.ranks_per_node = 8;
  const std::string e = error_of([&] { (void)import_nccl_tests_files({rs}, o); });
  CHECK_THAT(e, Catch::Contains("fits no all_reduce group (2(n-1)/n is at least 1 from 2 ranks: the "
                                "table is of a (n-1)/n test (all_gather, reduce_scatter, all_to_all))"));
  o.collective = Collective::reduce_scatter;
  CHECK(only_series(import_nccl_tests_files({rs}, o)).group_size == 8);
}

TEST_CASE("a run that failed: the sizes it finished are kept, a table without one is refused", "[nccl_tests]") {
  const std::string f = kCons + "all_to_all_2x8_failed_at_512MiB.log";
  const auto imp = import_nccl_tests_files({f}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.group_size == 16);
  CHECK(s.points.size() == 4);  // 32-256 MiB; the 512 MiB row is where it failed
  REQUIRE(imp.warnings.size() == 1);
  CHECK(imp.warnings[0] == f + ":30: nccl-tests failed here (Test CUDA failure common.cu:389 'an illegal memory access "
                               "was encountered'); the 4 sizes of the table on line 24 finished before it are kept");
  const std::string real = kData + "nccl_tests_355_alltoall_failed.log";
  CHECK(error_of([&] { (void)import_nccl_tests_files({real}, {}); }) ==
        real + ": no series of a planner collective in the given logs (" + real +
            ":27: nccl-tests failed (Test CUDA failure common.cu:389 'an illegal memory access was encountered') "
            "before the first size of the table on line 25 finished: skipped, a run that did not finish a size is "
            "not a measurement)");
  SECTION("a failed test among good ones skips only itself, and words quoted in prose are not a failure") {
    std::string text = read_input_file(kCons + "two_tests_named_by_commands.log");
    const std::string g = (std::filesystem::temp_directory_path() / "planner_failed_among_good.log").string();
    std::ofstream(g) << "Note: a line such as 'Test NCCL failure' below means NCCL_SOCKET_IFNAME is wrong.\n"
                     << "user@box:~/nccl-tests$ ./build/alltoall_perf -b 1M -e 64M -f 2 -g 2\n"
                     << "box: Test NCCL failure common.cu:393 'unhandled system error'\n"
                     << " .. box pid 4100: Test failure common.cu:1110\n"
                     << text;
    const auto imp2 = import_nccl_tests_files({g}, {});
    REQUIRE(imp2.measurements.series.size() == 2);  // both good tables
    CHECK(any_contains(imp2.notes,
                       "nccl-tests failed (Test NCCL failure common.cu:393 'unhandled system error') "
                       "before printing a result table: skipped"));
  }
}

TEST_CASE("a device list cut inside its last host is a cut list, not hosts of different sizes", "[nccl_tests]") {
  const auto imp = import_nccl_tests_files({kCons + "all_reduce_4x8_list_cut_in_host.log"}, {});
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.group_size == 32);  // busbw/algbw pins it
  CHECK(s.ranks_per_node == 8);
  CHECK(s.nodes == 4);
  CHECK(any_contains(imp.warnings,
                     "(20 rank lines shown, the highest rank 19; its host hca-3 lists 4 ranks, the "
                     "others 8); 32 ranks from busbw/algbw"));
  SECTION("the real 1024-rank list of NVIDIA/nccl-tests#322, cut at rank 99") {
    const std::string f = kData + "nccl_tests_322_all_reduce_1024_list_cut.log";
    NcclTestsImportOptions o;
    o.collective = Collective::all_reduce;
    CHECK_THAT(error_of([&] { (void)import_nccl_tests_files({f}, o); }),
               Catch::Contains("its host HCA-12 lists 4 ranks, the others 8) and busbw/algbw of 10 columns") &&
                   Catch::Contains("only says 1011 to 1035 ranks; give --ranks and --ranks-per-node"));
    o.ranks = 1024;
    const auto cut = import_nccl_tests_files({f}, o);
    CHECK(only_series(cut).group_size == 1024);
    CHECK(only_series(cut).nodes == 128);
    CHECK(only_series(cut).points.size() == 5);  // then NCCL failed: the finished sizes are kept
    CHECK(any_contains(cut.warnings, "--ranks 1024 wins over the device list"));
    CHECK(any_contains(cut.warnings, "nccl-tests failed here (Test NCCL failure common.cu:1204"));
  }
}

TEST_CASE("rccl-tests versions and device lines without a model name", "[nccl_tests]") {
  NcclTestsImportOptions o;
  o.collective = Collective::all_reduce;
  const auto imp = import_nccl_tests_files(
      {std::string(PLANNER_SOURCE_DIR) + "/tests/data/nccl_logs/oci_oke_mi300x_2x8_all_reduce.log"}, o);
  CHECK(imp.measurements.versions.at("rccl_tests") == "develop:a52452e");
  CHECK(imp.measurements.device == "unknown (the device lines name no model)");
}

TEST_CASE("the time column is checked against the algbw printed beside it", "[nccl_tests]") {
  SECTION("NCCL 1's README: milliseconds, every type x op in one table, half/sum kept") {
    const std::string f = kData + "nccl1_readme_4x_titanx_all_reduce_types_ops.log";
    NcclTestsImportOptions o;
    o.collective = Collective::all_reduce;
    o.ranks_per_node = 4;
    const auto imp = import_nccl_tests_files({f}, o);
    const MeasuredSeries& s = only_series(imp);
    CHECK(s.group_size == 4);
    CHECK(s.dtype == "half");  // bfloat16 absent: half, as training moves, not the first printed (char)
    REQUIRE(s.points.size() == 1);
    CHECK(s.points[0].time_s == Approx(1.617e-3));  // "1.617" ms, not us
    CHECK(s.points[0].algbw_bytes_per_s / 1e9 == Approx(6.18).margin(0.01));
    CHECK(any_contains(imp.notes, "the times are milliseconds"));
    CHECK(any_contains(imp.notes, "19 rows of other data types or reduction ops skipped (kept half sum)"));
  }
  SECTION("-C 1: cputime is the host's enqueue time; the collective's time comes from algbw") {
    const std::string f = kCons + "all_reduce_2x8_cputime.log";
    const auto imp = import_nccl_tests_files({f}, {});
    const MeasuredSeries& s = only_series(imp);
    REQUIRE(s.points.size() == 6);
    CHECK(s.points[0].busbw_bytes_per_s / 1e9 == Approx(177.06).margin(0.1));  // printed beside "6.80" us
    CHECK(any_contains(imp.warnings, "the time column is cputime (nccl-tests -C 1"));
  }
  SECTION("a time column no layout of nccl-tests gives is refused") {
    std::string text = read_input_file(kCons + "all_reduce_1x8_from_32MiB.log");
    // Every out-of-place time x 7: size / time no longer gives the printed algbw.
    std::istringstream in(text);
    std::string line, edited;
    while (std::getline(in, line)) {
      std::istringstream w(line);
      std::vector<std::string> t;
      for (std::string x; w >> x;) t.push_back(x);
      if (t.size() == 13 && std::isdigit(static_cast<unsigned char>(t[0][0])))
        t[5] = fmt::format("{:.2f}", std::stod(t[5]) * 7), line = fmt::format("{}", fmt::join(t, "  "));
      edited += line + "\n";
    }
    const std::string f = (std::filesystem::temp_directory_path() / "planner_time_column_test.log").string();
    std::ofstream(f) << edited;
    CHECK_THAT(error_of([&] { (void)import_nccl_tests_files({f}, {}); }),
               Catch::Contains("the time column does not give the algbw printed beside it (time x algbw / size is 7"));
  }
}

TEST_CASE("rows after a comment closed their table are not read, and a note says so", "[nccl_tests]") {
  // rccl-tests --stress_cycles 2 prints "# Testing 2 cycle." and the rows again, without a header.
  std::string text = read_input_file(kCons + "all_reduce_1x8_from_32MiB.log");
  std::string rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == ' ') rows += line + "\n";
  const std::string f = (std::filesystem::temp_directory_path() / "planner_stress_cycles_test.log").string();
  std::ofstream(f) << text << "\n# Testing 2 cycle.\n" << rows;
  const auto imp = import_nccl_tests_files({f}, {});
  CHECK(only_series(imp).points.size() == 10);
  CHECK(any_contains(imp.notes,
                     "10 result rows after a comment line closed the table above, with no header of "
                     "their own: not read"));
}

TEST_CASE("a table whose rows were all commented out says so", "[nccl_tests]") {
  std::string text = read_input_file(kCons + "all_reduce_1x8_from_32MiB.log");
  std::istringstream in(text);
  std::string edited;
  for (std::string line; std::getline(in, line);) edited += (!line.empty() && line[0] == ' ' ? "#" : "") + line + "\n";
  const std::string f = (std::filesystem::temp_directory_path() / "planner_commented_rows.log").string();
  std::ofstream(f) << edited;
  CHECK_THAT(error_of([&] { (void)import_nccl_tests_files({f}, {}); }),
             Catch::Contains("table whose 10 rows all start with '#' (commented out in the paste), skipped; remove "
                             "the '#' before them to import them"));
}

TEST_CASE("a log that failed before any table names the failure", "[nccl_tests]") {
  const std::string f = (std::filesystem::temp_directory_path() / "planner_failed_before_tables.log").string();
  std::ofstream(f) << "user@box$ ./build/all_reduce_perf -b 1M -e 1M -g 2\n"
                   << "box: Test NCCL failure common.cu:393 'unhandled system error'\n"
                   << " .. box pid 1: Test failure common.cu:1110\n";
  CHECK(error_of([&] { (void)import_nccl_tests_files({f}, {}); }) ==
        f + ":2: nccl-tests failed (Test NCCL failure common.cu:393 'unhandled system error') before printing a result "
            "table: a run that did not finish a size is not a measurement");
}

TEST_CASE("a job runner's label before every line is stripped, colours too", "[nccl_tests]") {
  const std::string f = kData + "skypilot_gke_h200_2x8_all_gather_runner_prefix.log";
  NcclTestsImportOptions o;
  o.collective = Collective::all_gather;
  const auto imp = import_nccl_tests_files({f}, o);
  const MeasuredSeries& s = only_series(imp);
  CHECK(s.group_size == 16);
  CHECK(s.ranks_per_node == 8);
  CHECK(s.points.size() == 24);
  // The same lines as SkyPilot colours its labels, and behind other runners' labels.
  const std::string text = read_input_file(f);
  for (const std::string& label :
       {std::string("\x1b[36m(head, rank=0, pid=3808)\x1b[0m "), std::string("[pod/nccl-launcher-x7k2/mpi] "),
        std::string("[rank0]: "), std::string("nccl-launcher_1  | "),
        std::string("2026-11-27T10:00:00.123456789Z stdout F ")}) {
    std::istringstream in(text);
    std::string wrapped;
    for (std::string line; std::getline(in, line);) wrapped += label + line + "\n";
    const std::string g = (std::filesystem::temp_directory_path() / "planner_runner_label.log").string();
    std::ofstream(g) << wrapped;
    const auto wrapped_imp = import_nccl_tests_files({g}, o);
    CHECK(only_series(wrapped_imp).group_size == 16);
  }
}

TEST_CASE("busbw above algbw names all_reduce where nothing else names the test", "[nccl_tests]") {
  const std::string f = kData + "skypilot_nebius_2x8_h100_all_reduce_bare.log";
  NcclTestsImportOptions o;
  o.ranks_per_node = 8;
  const auto imp = import_nccl_tests_files({f}, o);
  CHECK(only_series(imp).collective == Collective::all_reduce);
  CHECK(only_series(imp).group_size == 16);
  CHECK(any_contains(imp.notes, "is above 1, which only all_reduce prints (2(n-1)/n): read as all_reduce"));
}

TEST_CASE("a --ranks-per-node picks the one multiple the ratios allow over a cut list", "[nccl_tests]") {
  // 128 ranks, 5 rank lines then '...': the 20 columns say 128 exactly, so take a coarser log: the first 3 rows.
  std::string text = read_input_file(kCons + "all_reduce_128_ranks_dots.log");
  std::istringstream in(text);
  std::string kept;
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    const bool row = !line.empty() && line[0] == ' ';
    if (!row || ++rows <= 1) kept += line + "\n";
  }
  const std::string f = (std::filesystem::temp_directory_path() / "planner_one_multiple.log").string();
  std::ofstream(f) << kept;
  NcclTestsImportOptions o;
  o.ranks_per_node = 8;
  const auto imp = import_nccl_tests_files({f}, o);
  CHECK(only_series(imp).group_size == 128);
}

// ---- the importer's fixes of QA's mutated inputs: each case edits the real
// 2 x 8 H100 all-reduce log of NVIDIA/nccl-tests#309 (16 ranks listed, 32 rows
// 8 B-16 GiB; its table header is line 25 and the 1 MiB row line 44).

namespace {

const std::string kXe9680 =
    std::string(PLANNER_SOURCE_DIR) + "/tests/data/nccl_logs/nccl_tests_309_xe9680_2x8_h100_all_reduce.log";

// The log with `edit` applied to every line (1-based line numbers); lines it
// returns empty for are dropped.
std::string xe9680_edited(const std::function<std::string(const std::string&, int)>& edit) {
  std::istringstream in(read_input_file(kXe9680));
  std::string out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    std::string e = edit(line, ++n);
    if (!e.empty()) out += e + "\n";
  }
  return out;
}

// The log with column `col` of the row of size `bytes` replaced by `value`.
std::string xe9680_row_edited(const std::string& bytes, std::size_t col, const std::string& value) {
  return xe9680_edited([&](const std::string& line, int) {
    std::istringstream w(line);
    std::vector<std::string> t;
    for (std::string x; w >> x;) t.push_back(x);
    if (t.size() != 13 || t[0] != bytes) return line;
    t[col] = value;
    return fmt::format("{}", fmt::join(t, "  "));
  });
}

std::string import_error(const std::string& text, const NcclTestsImportOptions& o = {}) {
  return error_of([&] { import_nccl_tests_text(text, "x.log", o, *std::make_unique<NcclTestsImport>()); });
}

}  // namespace

TEST_CASE("a send/recv table prints busbw = algbw: --collective send_recv over another test is refused",
          "[nccl_tests]") {
  NcclTestsImportOptions o;
  o.collective = Collective::send_recv;
  CHECK(error_of([&] { (void)import_nccl_tests_files({kXe9680}, o); }) ==
        kXe9680 +
            ":58: busbw/algbw 469.21/250.24 (about 1.875) fits no send_recv group (nccl-tests prints busbw = algbw for "
            "send/recv, a ratio of 1 at every n); above 1 it is all_reduce's 2(n-1)/n, which means 16 ranks; "
            "--collective send_recv applies to every table of the file, and the log does not name this table's test");
  // An all-gather's (n-1)/n, below 1.
  const std::string ag = kData + "spark_playbooks_25_all_gather.log";
  std::string text = read_input_file(ag);
  text.replace(text.find("all_gather_perf"), 15, "sendrecv_perf");
  CHECK_THAT(import_error(text),
             Catch::Contains("(about 0.500) fits no send_recv group (nccl-tests prints busbw = algbw for send/recv, "
                             "a ratio of 1 at every n); below 1 it is the (n-1)/n of all_gather, reduce_scatter or "
                             "all_to_all, which means 2 ranks"));
  // A real send/recv log (busbw = algbw on every row) still imports.
  o.ranks = 8;
  o.ranks_per_node = 8;
  CHECK(only_series(import_nccl_tests_files({std::string(PLANNER_SOURCE_DIR) +
                                             "/tests/data/nccl_logs/li_plus_playground_1x8_a100_sendrecv.log"},
                                            o))
            .collective == Collective::send_recv);
}

namespace {

// The log without its lines first..last (of the device list, lines 6-21: a list cut short).
std::string xe9680_without_lines(int first, int last) {
  return xe9680_edited([=](const std::string& l, int n) { return n >= first && n <= last ? "" : l; });
}

// Imported as all_reduce with --ranks-per-node k (and no --ranks).
NcclTestsImportOptions all_reduce_per_node(std::int64_t k) {
  NcclTestsImportOptions o;
  o.collective = Collective::all_reduce;
  o.ranks_per_node = k;
  return o;
}

}  // namespace

TEST_CASE("what a cut-short device list shows of a node bounds --ranks-per-node from below", "[nccl_tests]") {
  SECTION("ranks 0-11 shown, 8 of them on one host") {
    const std::string first12 = xe9680_without_lines(18, 21);
    CHECK(import_error(first12, all_reduce_per_node(2)) ==
          "x.log:21: --ranks-per-node 2 is fewer than the device list shows on one node (host bm-h100-01 lists 8 "
          "ranks)");
    NcclTestsImport imp;
    import_nccl_tests_text(first12, "x.log", all_reduce_per_node(8), imp);
    CHECK(only_series(imp).group_size == 16);
    CHECK(only_series(imp).nodes == 2);
  }
  SECTION("only rank 15 shown, on device 7") {
    CHECK(import_error(xe9680_without_lines(6, 20), all_reduce_per_node(4)) ==
          "x.log:10: --ranks-per-node 4 is fewer than the device list shows on one node (rank 15 on bm-h100-02 is "
          "device 7: at least 8 ranks a node)");
  }
}

TEST_CASE("NCCL INFO lines and MPI chatter inside the device list do not cut it", "[nccl_tests]") {
  // nccl-tests' processes print their device lines while NCCL and OpenMPI
  // print theirs: the list read is all 16 ranks, not the part after the last INFO line.
  const std::string text = xe9680_edited([](const std::string& l, int n) {
    if (n == 9) return l + "\nbm-h100-01:29262:29262 [0] NCCL INFO Bootstrap : Using eth0";
    if (n == 13) return l + "\n[bm-h100-02:26633] MCA btl: none";
    if (n == 17) return l + "\nbm-h100-02:26634:26634 [1] NCCL WARN NET/IB : no device found";
    return l;
  });
  NcclTestsImportOptions o;
  o.collective = Collective::all_reduce;
  NcclTestsImport imp;
  import_nccl_tests_text(text, "x.log", o, imp);
  CHECK(only_series(imp).group_size == 16);
  CHECK(only_series(imp).ranks_per_node == 8);
  CHECK(imp.measurements.hosts == std::vector<std::string>{"bm-h100-01", "bm-h100-02"});
  CHECK(imp.warnings.empty());  // no "device list is cut short"
  // The complete list's checks run on it.
  o.ranks_per_node = 4;
  CHECK(import_error(text, o) == "x.log:28: --ranks-per-node 4 disagrees with the log's device list (8 per node)");
}

TEST_CASE("NCCL INFO and WARN lines inside a table's header lines leave the table as it is", "[nccl_tests]") {
  // NCCL prints while nccl-tests prints its header (lines 24-26: out-of-place,
  // the column names, the units): a line between the column names and the
  // units line does not end the header, so the units line opens no second,
  // units-only table (nor is the first skipped as a table without rows).
  // `cut_row`: the 1 MiB row (line 44) loses its last column.
  auto with_info = [](bool cut_row) {
    return xe9680_edited([cut_row](const std::string& l, int n) {
      if (n == 24) return l + "\nbm-h100-01:29262:29262 [0] NCCL INFO comm 0x55 rank 0 nranks 16 - Init COMPLETE";
      if (n == 25)
        return l + "\nbm-h100-01:29262:29262 [0] NCCL INFO comm 0x55 rank 0 nranks 16 - Init COMPLETE" +
               "\nbm-h100-02:26634:26634 [1] NCCL WARN NET/IB : no device found";
      if (cut_row && n == 44) return l.substr(0, l.size() - 1);
      return l;
    });
  };
  NcclTestsImportOptions o;
  o.collective = Collective::all_reduce;
  NcclTestsImport plain, imp;
  import_nccl_tests_text(read_input_file(kXe9680), "x.log", o, plain);
  import_nccl_tests_text(with_info(false), "x.log", o, imp);
  CHECK(imp.notes == plain.notes);
  CHECK(imp.warnings == plain.warnings);
  const MeasuredSeries& s = only_series(imp);
  const MeasuredSeries& p = only_series(plain);
  CHECK(s.group_size == 16);
  REQUIRE(s.points.size() == p.points.size());
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    CHECK(s.points[i].bytes == p.points[i].bytes);
    CHECK(s.points[i].time_s == p.points[i].time_s);
  }
  // The table's header is still the column names' line (25 + 1 inserted above it).
  CHECK(import_error(with_info(true), o) ==
        "x.log:47: expected 13 columns as in the header on line 26 (size count type redop root time algbw busbw "
        "#wrong time algbw busbw #wrong), got 12");
}

TEST_CASE("every row's time must give the algbw printed beside it, within their printed digits", "[nccl_tests]") {
  // 1 MiB in 71.93 us is 14.58 GB/s, as printed: the time's digits (+-0.005 us) give 14.5767 to 14.5787 GB/s.
  CHECK(import_error(xe9680_row_edited("1048576", 5, "719.30")) ==
        "x.log:44: size 1048576 B / time 719.30 us = 1.458 GB/s, but the row prints algbw 14.58 GB/s (10 times that; "
        "within their printed digits the time gives 1.45776 to 1.45778 GB/s, the algbw 14.575 to 14.585): nccl-tests "
        "computes algbw from the time it prints");
  CHECK_THAT(import_error(xe9680_row_edited("1048576", 5, "71930")),
             Catch::StartsWith("x.log:44: size 1048576 B / time 71930 us = 0.01458 GB/s, but the row prints algbw "
                               "14.58 GB/s (1e+03 times that;"));
  CHECK_THAT(import_error(xe9680_row_edited("1048576", 5, "1e300")),
             Catch::StartsWith("x.log:44: size 1048576 B / time 1e300 us = 1.049e-297 GB/s"));
  // Every time x 0.8, printed with nccl-tests' digits: the median (0.8) once passed for all_reduce.
  const std::string scaled = xe9680_edited([](const std::string& l, int) {
    std::istringstream w(l);
    std::vector<std::string> t;
    for (std::string x; w >> x;) t.push_back(x);
    if (t.size() != 13 || !std::isdigit(static_cast<unsigned char>(t[0][0]))) return l;
    t[5] = fmt::format("{:.2f}", std::stod(t[5]) * 0.8);
    return fmt::format("{}", fmt::join(t, "  "));
  });
  CHECK_THAT(import_error(scaled), Catch::Contains("but the row prints algbw") &&
                                       Catch::Contains("nccl-tests computes algbw from the time it prints"));
  // A row whose algbw is not a number cannot be checked.
  CHECK(import_error(xe9680_row_edited("1048576", 6, "nan")) ==
        "x.log:44: algbw: expected a bandwidth in GB/s, got 'nan'");
}

TEST_CASE("rows with a size or time nccl-tests never prints are refused, not dropped", "[nccl_tests]") {
  for (const std::string size : {"-1048576", "1048576.5", "0x100000"})
    CHECK(import_error(xe9680_row_edited("1048576", 0, size)) ==
          "x.log:44: size: expected a byte count (a whole number of bytes), got '" + size + "'");
  CHECK(import_error(xe9680_row_edited("1048576", 5, "0")) ==
        "x.log:44: time: expected a time above 0 for a size of 1048576 B, got '0'");
  CHECK(import_error(xe9680_row_edited("1048576", 5, "0.00")) ==
        "x.log:44: time: expected a time above 0 for a size of 1048576 B, got '0.00'");
  CHECK(import_error(xe9680_row_edited("1048576", 8, "-1")) ==
        "x.log:44: #wrong: expected a count of wrong elements (0 or more), got '-1'");
  CHECK(import_error(xe9680_row_edited("1048576", 8, "1")) ==
        "x.log:44: nccl-tests counted 1 wrong element (out-of-place); a failed run is not a measurement");
  // A size-0 row (-b 0) is skipped as before; one printing an algbw is not of size 0.
  const std::string zero = xe9680_edited([](const std::string& l, int n) {
    return n == 27 ? std::string(
                         "           0             0     float     sum      -1     0.12    0.00    0.00      0 "
                         "    0.11    0.00    0.00      0")
                   : l;
  });
  NcclTestsImportOptions o;
  o.collective = Collective::all_reduce;
  NcclTestsImport imp;
  import_nccl_tests_text(zero, "x.log", o, imp);
  CHECK(only_series(imp).points.size() == 31);
  std::string bad_zero = zero;
  bad_zero.replace(bad_zero.find("0.12    0.00"), 12, "0.12    0.52");
  CHECK(import_error(bad_zero, o) ==
        "x.log:27: size 0 B, but the row prints algbw 0.52 GB/s (nccl-tests prints 0.00 for a size of 0: size / time)");
}

namespace {

// The error of importing constructed_json_all_reduce.json (2 ranks on 2
// hosts, 4 rows 8-64 KiB) with `edit` applied.
std::string json_fixture_error(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(read_input_file(kData + "constructed_json_all_reduce.json"));
  edit(j);
  return error_of([&] { import_nccl_tests_json(j.dump(), "j.json", {}, *std::make_unique<NcclTestsImport>()); });
}

}  // namespace

TEST_CASE("nccl-tests -J JSON: results with a time, size or nwrong nccl-tests never prints are refused",
          "[nccl_tests]") {
  CHECK(json_fixture_error([](nlohmann::json& j) { j["results"][1]["out_of_place"]["time"] = 0; }) ==
        "j.json: results[1].out_of_place.time: expected a time above 0 for a size of 16384 B, got 0");
  CHECK(json_fixture_error([](nlohmann::json& j) { j["results"][1]["size"] = 0; }) ==
        "j.json: results[1].out_of_place.alg_bw: size 0 B, but the row prints algbw 0.517335 GB/s (nccl-tests prints "
        "0.00 for a size of 0: size / time)");
  CHECK(json_fixture_error([](nlohmann::json& j) { j["results"][1]["out_of_place"]["nwrong"] = -3; }) ==
        "j.json: results[1].out_of_place.nwrong: expected a count of wrong elements (0 or more), got -3");
  CHECK_THAT(json_fixture_error([](nlohmann::json& j) { j["results"][1]["out_of_place"]["time"] = 316.7; }),
             Catch::StartsWith("j.json: results[1]: size 16384 B / time 316.7 us = 0.05173 GB/s, but the row prints "
                               "algbw 0.517335 GB/s (10 times that;"));
}

TEST_CASE("nccl-tests -J JSON: config.devices is read by its rank numbers, as the text device list", "[nccl_tests]") {
  SECTION("a rank listed twice is a log of separate one-rank jobs") {
    CHECK(json_fixture_error([](nlohmann::json& j) {
            j["config"]["devices"][1]["rank"] = 0;
            j["config"]["devices"][1]["hostname"] = "spark-d708";
          }) ==
          "j.json: rank 0 is listed 2 times (on spark-d708 and spark-d708): every process ran a one-rank job of "
          "its own, which measures no communication (nccl-tests built without MPI and started by mpirun or "
          "srun); rebuild it with `make MPI=1`");
  }
  SECTION("ranks missing: the highest rank + 1, checked against busbw/algbw") {
    CHECK(json_fixture_error([](nlohmann::json& j) { j["config"]["devices"][1]["rank"] = 7; }) ==
          "j.json: the device list is cut short (2 rank lines shown, the highest rank 7), which means 8 ranks, but "
          "busbw/algbw of 4 columns (0.233058/0.233058 on j.json: results[0] and the rest) means 2 ranks for "
          "all_reduce (2(n-1)/n)");
    nlohmann::json j = nlohmann::json::parse(read_input_file(kData + "constructed_json_all_reduce.json"));
    j["config"]["devices"].erase(0);  // rank 1 alone, on device 0 of spark-dbf4
    NcclTestsImport imp;
    import_nccl_tests_json(j.dump(), "j.json", {}, imp);
    CHECK(only_series(imp).group_size == 2);
    CHECK(only_series(imp).ranks_per_node == 1);
    REQUIRE(imp.warnings.size() == 2);
    CHECK(imp.warnings[0] ==
          "j.json: the device list is cut short (1 rank line shown, the highest rank 1); 2 ranks from the highest "
          "rank, as busbw/algbw of 4 columns (0.233058/0.233058 on j.json: results[0] and the rest) says");
    CHECK(imp.warnings[1] ==
          "j.json: 1 rank per node from the highest device index shown (give --ranks-per-node if "
          "the nodes ran more)");
  }
}

TEST_CASE("importer messages read right: a subject for every verb, singular counts", "[nccl_tests]") {
  NcclTestsImportOptions o;
  o.collective = Collective::send_recv;
  o.ranks = 8;
  const std::string f =
      std::string(PLANNER_SOURCE_DIR) + "/tests/data/nccl_logs/li_plus_playground_1x8_a100_sendrecv.log";
  CHECK(error_of([&] { (void)import_nccl_tests_files({f}, o); }) ==
        f + ":4: the log does not list its ranks (no '# Using devices' lines); --ranks 8 gives their count but not how "
            "they sit on nodes, give --ranks-per-node");
  // xxrjun's 10 x 1 H100 log with only rank 9 of each device list shown: one rank a node, said so.
  std::istringstream in(
      read_input_file(std::string(PLANNER_SOURCE_DIR) + "/tests/data/nccl_logs/xxrjun_cluster01_10x1_h100.log"));
  std::string last_rank_only;
  for (std::string line; std::getline(in, line);)
    if (line.find("#  Rank ") != 0 || line.find("#  Rank  9 ") == 0) last_rank_only += line + "\n";
  NcclTestsImport imp;
  import_nccl_tests_text(last_rank_only, "x.log", {}, imp);
  CHECK(imp.measurements.series.size() == 5);
  CHECK(any_contains(imp.warnings,
                     "x.log:11: the device list is cut short (1 rank line shown, the highest rank 9); 10 "
                     "ranks from the highest rank"));
  CHECK(any_contains(imp.warnings,
                     "x.log:11: 1 rank per node from the highest device index shown (give "
                     "--ranks-per-node if the nodes ran more)"));
  CHECK_FALSE(any_contains(imp.warnings, "1 ranks"));
}
