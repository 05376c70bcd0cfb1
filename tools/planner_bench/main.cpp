// planner-bench: measures collectives (and, on GPUs, GEMM and HBM throughput)
// and writes one measurement file for `planner calibrate fit`
// (docs/calibration.md). Lives in tools/ as its own executable, as llvm-mca's
// tool lives beside its library: it needs MPI (and CUDA/NCCL for the GPU
// backend), which the planner library and CLI must not depend on.
//
//   mpirun -np 16 planner-bench --backend nccl -o cluster.json      # one process per GPU
//   planner-bench --backend nccl-local -o node.json                 # one process, every local GPU
//   mpirun -np 4 planner-bench --ranks-per-node 2 --max-bytes 1M -o cpu.json   # MPI on CPUs
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "mpi_backend.h"
#include "sweep.h"
#ifdef PLANNER_BENCH_HAVE_NCCL
#include "nccl_backend.h"
#endif

using namespace planner;
using namespace planner::bench;

namespace {

// "8", "64K", "1M", "4G" (binary multiples) -> bytes.
double parse_size(const std::string& s, const char* flag) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    throw CLI::ValidationError(flag, fmt::format("expected a size such as 8, 64K, 1M or 4G, got '{}'", s));
  }
  std::string unit = s.substr(used);
  double mult = 1;
  if (unit == "K" || unit == "k" || unit == "KiB")
    mult = 1024.0;
  else if (unit == "M" || unit == "MiB")
    mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    throw CLI::ValidationError(flag, fmt::format("unknown unit in '{}' (use K, M or G)", s));
  if (!(v * mult >= 4)) throw CLI::ValidationError(flag, fmt::format("expected at least 4 bytes, got '{}'", s));
  return v * mult;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"planner-bench: collective (and GPU compute) measurements for planner calibrate fit"};
  SweepOptions opt;
  std::string backend = "mpi", min_bytes = "8", max_bytes = "64M";
  std::vector<std::string> collectives, groups{"world", "intra", "inter"};
  std::int64_t ranks_per_node = 0;
  double settle_s = 1.0;
  bool largest_groups = false, no_compute = false;
  app.add_option("--backend", backend,
                 "mpi (CPU), nccl (one process per GPU, under mpirun/srun) or nccl-local (one process, all local GPUs)")
      ->check(CLI::IsMember({"mpi", "nccl", "nccl-local"}));
  app.add_option("-o,--output", opt.output, "measurement file to write (atomically, by rank 0)")->required();
  app.add_option("--min-bytes,-b", min_bytes, "smallest size (nccl-tests convention), e.g. 8 (default 8)");
  app.add_option("--max-bytes,-e", max_bytes,
                 "largest size, e.g. 4G (default 64M; stops earlier when memory runs out)");
  app.add_option("--warmup,-w", opt.warmup, "untimed iterations per size (default 5)")->check(CLI::Range(0, 100000));
  app.add_option("--iters,-n", opt.iters, "timed iterations per size (default 20)")->check(CLI::Range(1, 100000));
  app.add_option("--collectives", collectives,
                 "subset of all_reduce all_gather reduce_scatter all_to_all send_recv (default all)")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}))
      ->delimiter(',');
  app.add_option("--groups", groups, "subset of world intra inter (default all three)")
      ->check(CLI::IsMember({"world", "intra", "inter"}))
      ->delimiter(',');
  app.add_option("--ranks-per-node", ranks_per_node,
                 "treat each block of N consecutive ranks as one node instead of grouping by host name "
                 "(one machine standing in for several nodes)")
      ->check(CLI::PositiveNumber);
  app.add_option("--settle-seconds", settle_s, "MPI backend: untimed barriers before the first measurement (default 1)")
      ->check(CLI::Range(0.0, 600.0));
  app.add_flag("--largest-groups-only", largest_groups,
               "intra/inter groups of the whole node / all nodes only, not 2, 4, ...");
  app.add_flag("--no-compute", no_compute, "skip the GEMM and HBM measurements of the NCCL backends");
  CLI::Option* sustain =
      app.add_option("--sustain-seconds", opt.sustain_s,
                     "NCCL backends: run one GEMM back to back this long after the others, for the clock the power "
                     "limit settles at (calibrates efficiency.sustained_clock_fraction; default 30, 0 skips)")
          ->check(CLI::Range(0.0, 3600.0));
  app.add_flag("--quiet,-q", opt.quiet, "print nothing but errors");
  app.add_flag("--inject-wrong-result", opt.corrupt,
               "self-test of the result check: perturb one result element; the run must fail and write no file");
  try {
    app.parse(argc, argv);
    opt.min_bytes = parse_size(min_bytes, "--min-bytes");
    opt.max_bytes = parse_size(max_bytes, "--max-bytes");
    if (opt.min_bytes > opt.max_bytes) throw CLI::ValidationError("--min-bytes", "expected at most --max-bytes");
    if (sustain->count() > 0 && (backend == "mpi" || no_compute))
      throw CLI::ValidationError("--sustain-seconds", backend == "mpi" ? "needs a GPU backend (nccl or nccl-local)"
                                                                       : "cannot apply with --no-compute");
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "planner-bench: error: %s\n", e.what());
    return 2;
  }
  for (const auto& c : collectives) opt.collectives.push_back(*collective_from_key(c));
  opt.world = std::find(groups.begin(), groups.end(), "world") != groups.end();
  opt.intra = std::find(groups.begin(), groups.end(), "intra") != groups.end();
  opt.inter = std::find(groups.begin(), groups.end(), "inter") != groups.end();
  opt.all_group_sizes = !largest_groups;
  opt.compute = !no_compute;
  opt.command = std::filesystem::path(argv[0]).filename().string();
  for (int i = 1; i < argc; ++i) opt.command += std::string(" ") + argv[i];

  std::unique_ptr<Backend> b;
  try {
    if (backend == "mpi") {
      b = make_mpi_backend(argc, argv, ranks_per_node, settle_s);
    } else {
#ifdef PLANNER_BENCH_HAVE_NCCL
      b = make_nccl_backend(argc, argv, ranks_per_node, backend == "nccl");
#else
      std::fprintf(stderr,
                   "planner-bench: error: built without the NCCL backend (CMake found no CUDA toolkit with NCCL); use "
                   "--backend mpi\n");
      return 1;
#endif
    }
    const int rc = run_sweep(*b, opt);
    b.reset();  // MPI_Finalize
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "planner-bench: error: %s\n", e.what());
    abort_mpi(1);
    return 1;
  }
}
