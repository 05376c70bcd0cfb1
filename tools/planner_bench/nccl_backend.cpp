// NCCL backend: the collectives nccl-tests measures, on GPU buffers.
// Bootstrap as nccl-tests does under MPI: MPI_Init, the GPU is the rank's index
// among the ranks on its host, member 0 of every group calls ncclGetUniqueId
// and MPI_Bcast-s it, each rank calls ncclCommInitRank. Without MPI, one
// process opens every visible GPU with ncclCommInitAll per group.
// Timing: CUDA events around each operation on its stream (no host
// synchronisation between iterations, as nccl-tests), the slowest GPU of all
// concurrent groups per iteration.
#include "nccl_backend.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <mpi.h>
#include <nccl.h>
#include <unistd.h>

#include "driver_version.h"

namespace planner::bench {

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}
void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("{} failed (MPI error {})", what, rc));
}
#define CUDA_CHECK(x) check_cuda((x), #x)
#define NCCL_CHECK(x) check_nccl((x), #x)

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// The driver version from /proc/driver/nvidia/version (driver_version.h).
std::string driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return {};
  return parse_driver_version(line);
}

// One GPU this process drives.
struct LocalRank {
  std::int64_t global = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  std::int64_t member = -1;
  std::int32_t* in = nullptr;
  std::int32_t* out = nullptr;
  std::size_t capacity = 0;  // elements in each of in / out
  std::vector<cudaEvent_t> start, stop;
};

LocalRank make_local(std::int64_t global, int device) {
  LocalRank l;
  l.global = global;
  l.device = device;
  return l;
}

class NcclBackend final : public Backend {
 public:
  NcclBackend(int& argc, char**& argv, std::int64_t ranks_per_node, bool use_mpi) : use_mpi_(use_mpi) {
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (devices < 1) throw std::runtime_error("no CUDA device visible");
    std::vector<std::string> hosts;
    if (use_mpi_) {
      check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
      mpi_up_ = true;
      int rank = 0, size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      rank_ = rank;
      char name[MPI_MAX_PROCESSOR_NAME] = {};
      std::strncpy(name, host_name().c_str(), sizeof name - 1);
      std::vector<char> all(std::size_t(size) * MPI_MAX_PROCESSOR_NAME);
      check_mpi(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                              MPI_COMM_WORLD),
                "MPI_Allgather of host names");
      int on_host = 0;  // the GPU: this rank's index among the ranks on its host
      for (int r = 0; r < size; ++r) {
        hosts.emplace_back(&all[std::size_t(r) * MPI_MAX_PROCESSOR_NAME]);
        if (r < rank && hosts.back() == name) ++on_host;
      }
      if (on_host >= devices)
        throw std::runtime_error(
            fmt::format("rank {} is rank {} on host {}, which has {} GPUs", rank, on_host, name, devices));
      locals_.push_back(make_local(rank, on_host));
      char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
      int len = 0;
      MPI_Get_library_version(version, &len);
      std::string v(version, std::size_t(len));
      versions_["mpi"] = v.substr(0, v.find_first_of("\n,"));
    } else {
      for (int d = 0; d < devices; ++d) {
        hosts.push_back(host_name());
        locals_.push_back(make_local(d, d));
      }
    }
    layout_ = make_layout(hosts, ranks_per_node);
    for (LocalRank& l : locals_) {
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    }
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, locals_.front().device));
    device_ = prop.name;
    int v = 0;
    NCCL_CHECK(ncclGetVersion(&v));
    versions_["nccl"] = v >= 10000 ? fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)
                                   : fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
    CUDA_CHECK(cudaDriverGetVersion(&v));
    versions_["cuda_driver_api"] = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
    CUDA_CHECK(cudaRuntimeGetVersion(&v));
    versions_["cuda_runtime"] = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
    if (const std::string d = driver_version(); !d.empty()) versions_["nvidia_driver"] = d;
  }

  ~NcclBackend() override {
    for (LocalRank& l : locals_) {
      cudaSetDevice(l.device);
      if (l.comm) ncclCommDestroy(l.comm);
      for (auto e : l.start) cudaEventDestroy(e);
      for (auto e : l.stop) cudaEventDestroy(e);
      cudaFree(l.in);
      cudaFree(l.out);
      if (l.stream) cudaStreamDestroy(l.stream);
    }
    if (mpi_up_) MPI_Finalize();
  }

  std::string name() const override { return use_mpi_ ? "nccl" : "nccl-local"; }
  std::string device() const override { return device_; }
  std::map<std::string, std::string> versions() const override { return versions_; }
  const NodeLayout& layout() const override { return layout_; }
  bool is_root() const override { return rank_ == 0; }
  void barrier() override {
    for (LocalRank& l : locals_) {
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaStreamSynchronize(l.stream));
    }
    if (use_mpi_) MPI_Barrier(MPI_COMM_WORLD);
  }

  double memory_limit_bytes() const override {
    double limit = 0;
    for (const LocalRank& l : locals_) {
      std::size_t free = 0, total = 0;
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaMemGetInfo(&free, &total));
      // NCCL's own buffers grow with new communicators; leave it a quarter.
      const double mine = 0.75 * double(free);
      limit = limit == 0 ? mine : std::min(limit, mine);
    }
    if (use_mpi_) MPI_Allreduce(MPI_IN_PLACE, &limit, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return limit;
  }

  void use_groups(const GroupConfig& g) override {
    for (LocalRank& l : locals_) {
      if (l.comm) {
        CUDA_CHECK(cudaSetDevice(l.device));
        NCCL_CHECK(ncclCommDestroy(l.comm));
      }
      l.comm = nullptr;
      l.member = g.member[std::size_t(l.global)];
    }
    size_ = g.size;
    if (use_mpi_) {
      LocalRank& l = locals_.front();
      const std::int64_t color = g.color[std::size_t(l.global)];
      MPI_Comm sub = MPI_COMM_NULL;
      check_mpi(MPI_Comm_split(MPI_COMM_WORLD, color < 0 ? MPI_UNDEFINED : int(color), int(l.member), &sub),
                "MPI_Comm_split");
      if (sub != MPI_COMM_NULL) {
        ncclUniqueId id;
        if (l.member == 0) NCCL_CHECK(ncclGetUniqueId(&id));
        check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, sub), "MPI_Bcast of the ncclUniqueId");
        CUDA_CHECK(cudaSetDevice(l.device));
        NCCL_CHECK(ncclCommInitRank(&l.comm, int(g.size), id, int(l.member)));
        MPI_Comm_free(&sub);
      }
      return;
    }
    std::map<std::int64_t, std::vector<LocalRank*>> groups;
    for (LocalRank& l : locals_)
      if (g.color[std::size_t(l.global)] >= 0) groups[g.color[std::size_t(l.global)]].push_back(&l);
    for (auto& [color, members] : groups) {
      std::sort(members.begin(), members.end(),
                [](const LocalRank* a, const LocalRank* b) { return a->member < b->member; });
      std::vector<int> devs;
      for (const LocalRank* m : members) devs.push_back(m->device);
      std::vector<ncclComm_t> comms(members.size());
      NCCL_CHECK(ncclCommInitAll(comms.data(), int(devs.size()), devs.data()));
      for (std::size_t i = 0; i < members.size(); ++i) members[i]->comm = comms[i];
    }
  }

  PointResult measure(Collective c, std::int64_t count, int warmup, int iters, bool corrupt) override {
    const std::int64_t p = size_;
    const std::size_t n_in = std::size_t(send_elements(c, count, p)), n_out = std::size_t(recv_elements(c, count, p));
    std::vector<std::int32_t> host;
    for (LocalRank& l : locals_) {
      if (!l.comm) continue;
      CUDA_CHECK(cudaSetDevice(l.device));
      const std::size_t need = std::max(n_in, n_out);
      if (l.capacity < need) {
        CUDA_CHECK(cudaFree(l.in));
        CUDA_CHECK(cudaFree(l.out));
        l.in = l.out = nullptr;
        CUDA_CHECK(cudaMalloc(&l.in, need * sizeof(std::int32_t)));
        CUDA_CHECK(cudaMalloc(&l.out, need * sizeof(std::int32_t)));
        l.capacity = need;
      }
      host.assign(n_in, 0);
      fill_input(c, count, l.member, p, host.data());
      CUDA_CHECK(cudaMemcpy(l.in, host.data(), n_in * sizeof(std::int32_t), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemset(l.out, 0xff, n_out * sizeof(std::int32_t)));
      while (l.start.size() < std::size_t(iters)) {
        cudaEvent_t a, b;
        CUDA_CHECK(cudaEventCreate(&a));
        CUDA_CHECK(cudaEventCreate(&b));
        l.start.push_back(a);
        l.stop.push_back(b);
      }
    }
    for (int it = 0; it < warmup + iters; ++it) {
      if (it == warmup) barrier();  // start the timed iterations together
      const bool timed = it >= warmup;
      for (LocalRank& l : locals_)
        if (l.comm && timed) {
          CUDA_CHECK(cudaSetDevice(l.device));
          CUDA_CHECK(cudaEventRecord(l.start[std::size_t(it - warmup)], l.stream));
        }
      NCCL_CHECK(ncclGroupStart());
      for (LocalRank& l : locals_)
        if (l.comm) run(c, count, l);
      NCCL_CHECK(ncclGroupEnd());
      for (LocalRank& l : locals_)
        if (l.comm && timed) {
          CUDA_CHECK(cudaSetDevice(l.device));
          CUDA_CHECK(cudaEventRecord(l.stop[std::size_t(it - warmup)], l.stream));
        }
    }
    std::vector<double> times(std::size_t(iters), 0.0);
    std::string error;
    for (LocalRank& l : locals_) {
      if (!l.comm) continue;
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaStreamSynchronize(l.stream));
      for (int i = 0; i < iters; ++i) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, l.start[std::size_t(i)], l.stop[std::size_t(i)]));
        times[std::size_t(i)] = std::max(times[std::size_t(i)], double(ms) * 1e-3);
      }
      host.assign(n_out, 0);
      CUDA_CHECK(cudaMemcpy(host.data(), l.out, n_out * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
      if (corrupt && l.member == 0) host[0] += 1;
      if (error.empty()) {
        const std::string e = check_output(c, count, l.member, p, host.data());
        if (!e.empty())
          error = fmt::format("rank {} (GPU {}, member {} of its group): {}", l.global, l.device, l.member, e);
      }
    }
    PointResult r;
    r.times_s = times;
    if (use_mpi_) {
      check_mpi(MPI_Allreduce(times.data(), r.times_s.data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                "MPI_Allreduce of times");
      int world = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &world);
      const int me = error.empty() ? world : int(rank_);
      int first = world;
      MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (first < world) {
        char buf[512] = {};
        if (first == int(rank_)) std::strncpy(buf, error.c_str(), sizeof buf - 1);
        MPI_Bcast(buf, sizeof buf, MPI_CHAR, first, MPI_COMM_WORLD);
        error = buf;
      }
    }
    r.error = error;
    return r;
  }

  void measure_compute(MeasurementSet& out, int warmup, int iters, double sustain_s) override {
    if (!is_root()) return;  // one GPU is enough; the others wait at the sweep's barrier
    std::vector<std::string> notes;
    measure_hbm(locals_.front().device, out, warmup, iters);
    measure_gemms(locals_.front().device, out, warmup, iters, notes);
    if (sustain_s > 0) measure_sustained_gemm(locals_.front().device, out, sustain_s, notes);
    for (const auto& n : notes) std::printf("# %s\n", n.c_str());
  }

 private:
  void run(Collective c, std::int64_t count, LocalRank& l) {
    const std::size_t n = std::size_t(count);
    switch (c) {
      case Collective::all_reduce:
        NCCL_CHECK(ncclAllReduce(l.in, l.out, n, ncclInt32, ncclSum, l.comm, l.stream));
        break;
      case Collective::all_gather:
        NCCL_CHECK(ncclAllGather(l.in, l.out, n, ncclInt32, l.comm, l.stream));
        break;
      case Collective::reduce_scatter:
        NCCL_CHECK(ncclReduceScatter(l.in, l.out, n, ncclInt32, ncclSum, l.comm, l.stream));
        break;
      case Collective::all_to_all:
        // As nccl-tests' alltoall: a send and a receive of `count` to and from every peer.
        NCCL_CHECK(ncclGroupStart());
        for (std::int64_t r = 0; r < size_; ++r) {
          NCCL_CHECK(ncclSend(l.in + std::size_t(r) * n, n, ncclInt32, int(r), l.comm, l.stream));
          NCCL_CHECK(ncclRecv(l.out + std::size_t(r) * n, n, ncclInt32, int(r), l.comm, l.stream));
        }
        NCCL_CHECK(ncclGroupEnd());
        break;
      case Collective::send_recv: {
        const int p = int(size_), me = int(l.member);
        NCCL_CHECK(ncclGroupStart());
        NCCL_CHECK(ncclSend(l.in, n, ncclInt32, (me + 1) % p, l.comm, l.stream));
        NCCL_CHECK(ncclRecv(l.out, n, ncclInt32, (me + p - 1) % p, l.comm, l.stream));
        NCCL_CHECK(ncclGroupEnd());
        break;
      }
    }
  }

  bool use_mpi_ = false, mpi_up_ = false;
  std::int64_t rank_ = 0, size_ = 0;
  std::vector<LocalRank> locals_;
  NodeLayout layout_;
  std::string device_;
  std::map<std::string, std::string> versions_;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(int& argc, char**& argv, std::int64_t ranks_per_node, bool use_mpi) {
  return std::make_unique<NcclBackend>(argc, argv, ranks_per_node, use_mpi);
}

}  // namespace planner::bench
