// The NCCL backend (nccl_backend.cpp) and the GPU compute measurements
// (gpu_compute.cpp); compiled only when CMake finds CUDA and NCCL.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend.h"

namespace planner::bench {

// use_mpi: one process per GPU under mpirun/srun; rank 0's ncclUniqueId is
// broadcast with MPI_Bcast, the GPU is the rank's index among the ranks on its
// host. Otherwise one process drives every visible GPU (ncclCommInitAll) and
// MPI is not touched. Throws std::runtime_error on CUDA/NCCL/MPI failures.
[[nodiscard]] std::unique_ptr<Backend> make_nccl_backend(int& argc, char**& argv, std::int64_t ranks_per_node,
                                                         bool use_mpi);

// cuBLASLt GEMMs (bf16, and fp8 e4m3 on compute capability 8.9+) at the GEMM
// shapes of Llama 3.1 layers, and device-to-device copy bandwidth, on `device`.
// Appends to out.gemm / out.hbm; `notes` says what was skipped.
void measure_gemms(int device, MeasurementSet& out, int warmup, int iters, std::vector<std::string>& notes);
void measure_hbm(int device, MeasurementSet& out, int warmup, int iters);
// The largest BF16 shape run back to back for `seconds` after a 5 s idle
// pause: its burst rate (10 calls) and the median rate over the second half
// of the run, when the power limit has settled the clock. Appends to
// out.gemm_sustained.
void measure_sustained_gemm(int device, MeasurementSet& out, double seconds, std::vector<std::string>& notes);

}  // namespace planner::bench
