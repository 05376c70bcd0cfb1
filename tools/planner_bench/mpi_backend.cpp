// MPI backend: the collectives of MPI on host memory, one process per rank.
// Timing: a world barrier, MPI_Wtime around one operation, the slowest rank
// of all concurrent groups per iteration (an MPI_MAX reduction afterwards, not
// timed). The same pipeline as on GPUs, so it runs and is tested without one.
#include "mpi_backend.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <mpi.h>

namespace planner::bench {

namespace {

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw std::runtime_error(fmt::format("{} failed: {}", what, std::string(msg, std::size_t(len))));
  }
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return "CPU: " + line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "CPU";
}

class MpiBackend final : public Backend {
 public:
  MpiBackend(int& argc, char**& argv, std::int64_t ranks_per_node, double settle_s) {
    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank_ = rank;
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    std::vector<char> all(std::size_t(size) * MPI_MAX_PROCESSOR_NAME);
    check_mpi(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                            MPI_COMM_WORLD),
              "MPI_Allgather of host names");
    std::vector<std::string> hosts;
    for (int r = 0; r < size; ++r) hosts.emplace_back(&all[std::size_t(r) * MPI_MAX_PROCESSOR_NAME]);
    layout_ = make_layout(hosts, ranks_per_node);
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    MPI_Get_library_version(version, &len);
    std::string v(version, std::size_t(len));
    if (auto nl = v.find_first_of("\n,"); nl != std::string::npos) v = v.substr(0, nl);
    versions_["mpi"] = v;
    settle(settle_s);
  }

  // Right after start-up the launcher's daemons still compete with the ranks
  // for cores; on a small machine the first sizes then time scheduler ticks.
  // Exchange barriers until `seconds` have passed on rank 0 (rank 0 decides,
  // so every rank runs the same number of barriers).
  void settle(double seconds) {
    const double t0 = MPI_Wtime();
    for (int done = 0; !done;) {
      MPI_Barrier(MPI_COMM_WORLD);
      done = rank_ == 0 && MPI_Wtime() - t0 >= seconds;
      MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
  }

  ~MpiBackend() override {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    MPI_Finalize();
  }

  std::string name() const override { return "mpi"; }
  std::string device() const override { return cpu_model(); }
  std::map<std::string, std::string> versions() const override { return versions_; }
  const NodeLayout& layout() const override { return layout_; }
  bool is_root() const override { return rank_ == 0; }
  double memory_limit_bytes() const override { return 4.0 * 1024 * 1024 * 1024; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  void use_groups(const GroupConfig& g) override {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    const std::int64_t color = g.color[std::size_t(rank_)];
    member_ = g.member[std::size_t(rank_)];
    size_ = g.size;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, color < 0 ? MPI_UNDEFINED : int(color), int(member_), &comm_),
              "MPI_Comm_split");
  }

  PointResult measure(Collective c, std::int64_t count, int warmup, int iters, bool corrupt) override {
    const bool active = comm_ != MPI_COMM_NULL;
    const std::int64_t p = size_;
    std::vector<std::int32_t> in, out;
    if (active) {
      in.resize(std::size_t(send_elements(c, count, p)));
      out.assign(std::size_t(recv_elements(c, count, p)), -1);
      fill_input(c, count, member_, p, in.data());
    }
    std::vector<double> times(std::size_t(iters), 0.0);
    for (int it = 0; it < warmup + iters; ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (active) run(c, count, in.data(), out.data());
      const double t1 = MPI_Wtime();
      if (it >= warmup) times[std::size_t(it - warmup)] = active ? t1 - t0 : 0.0;
    }
    PointResult r;
    r.times_s.resize(times.size());
    check_mpi(MPI_Allreduce(times.data(), r.times_s.data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
              "MPI_Allreduce of times");
    std::string error;
    if (active) {
      if (corrupt && member_ == 0) out[0] += 1;
      error = check_output(c, count, member_, p, out.data());
      if (!error.empty()) error = fmt::format("rank {} (member {} of its group): {}", rank_, member_, error);
    }
    r.error = agree_on_error(error);
    return r;
  }

 private:
  void run(Collective c, std::int64_t count, const std::int32_t* in, std::int32_t* out) {
    const int n = int(count);
    switch (c) {
      case Collective::all_reduce:
        check_mpi(MPI_Allreduce(in, out, n, MPI_INT32_T, MPI_SUM, comm_), "MPI_Allreduce");
        break;
      case Collective::all_gather:
        check_mpi(MPI_Allgather(in, n, MPI_INT32_T, out, n, MPI_INT32_T, comm_), "MPI_Allgather");
        break;
      case Collective::reduce_scatter:
        check_mpi(MPI_Reduce_scatter_block(in, out, n, MPI_INT32_T, MPI_SUM, comm_), "MPI_Reduce_scatter_block");
        break;
      case Collective::all_to_all:
        check_mpi(MPI_Alltoall(in, n, MPI_INT32_T, out, n, MPI_INT32_T, comm_), "MPI_Alltoall");
        break;
      case Collective::send_recv: {
        // A ring shift, as nccl-tests' sendrecv: every member sends to the next.
        const int p = int(size_), me = int(member_);
        check_mpi(MPI_Sendrecv(in, n, MPI_INT32_T, (me + 1) % p, 7, out, n, MPI_INT32_T, (me + p - 1) % p, 7, comm_,
                               MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
        break;
      }
    }
  }

  // Every rank learns the lowest failing rank's message.
  std::string agree_on_error(const std::string& mine) {
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const int me = mine.empty() ? world : int(rank_);
    int first = world;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == world) return {};
    char buf[512] = {};
    if (int(rank_) == first) std::strncpy(buf, mine.c_str(), sizeof buf - 1);
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, first, MPI_COMM_WORLD);
    return buf;
  }

  std::int64_t rank_ = 0, member_ = -1, size_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  NodeLayout layout_;
  std::map<std::string, std::string> versions_;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(int& argc, char**& argv, std::int64_t ranks_per_node, double settle_s) {
  return std::make_unique<MpiBackend>(argc, argv, ranks_per_node, settle_s);
}

void abort_mpi(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace planner::bench
