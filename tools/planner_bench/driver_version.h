// The NVIDIA driver version in the first line of /proc/driver/nvidia/version:
// the first token of digits and dots after "Kernel Module". Pure, so that
// tests/driver_version_test.cpp checks it without a GPU.
//   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..."      -> "535.104.05"
//   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release ..." -> "580.159.04"
//   (the open module's line, seen on a lent H100; the word after "Kernel Module" is "for")
#pragma once

#include <cctype>
#include <sstream>
#include <string>

namespace planner::bench {

inline std::string parse_driver_version(const std::string& line) {
  const auto at = line.find("Kernel Module");
  if (at == std::string::npos) return {};
  std::istringstream words(line.substr(at + 13));
  for (std::string w; words >> w;)
    if (std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos &&
        w.find_first_not_of("0123456789.") == std::string::npos)
      return w;
  return {};
}

}  // namespace planner::bench
