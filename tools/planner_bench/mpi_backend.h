// The MPI backend (mpi_backend.cpp) and the MPI abort used on internal errors.
#pragma once

#include <cstdint>
#include <memory>

#include "backend.h"

namespace planner::bench {

// Calls MPI_Init; nodes from host names, or blocks of `ranks_per_node` (> 0);
// then exchanges barriers for `settle_s` seconds before anything is timed.
// Throws std::runtime_error for an inconsistent layout.
[[nodiscard]] std::unique_ptr<Backend> make_mpi_backend(int& argc, char**& argv, std::int64_t ranks_per_node,
                                                        double settle_s);

// MPI_Abort when MPI is up: one rank's failure must not leave the others waiting.
void abort_mpi(int code);

}  // namespace planner::bench
