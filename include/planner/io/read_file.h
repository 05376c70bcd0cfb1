// The one way the program reads an input file: a regular file of at most
// kMaxInputFileBytes, read whole. Directories, devices (/dev/zero, a FIFO)
// and oversized files are InputErrors naming the path, never a hang.
#pragma once

#include <cstdint>
#include <string>

namespace planner {

inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t(256) << 20;  // 256 MiB

[[nodiscard]] std::string read_input_file(const std::string& path);

}  // namespace planner
