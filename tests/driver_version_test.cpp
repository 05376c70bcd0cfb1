// planner-bench's reading of the NVIDIA driver version
// (tools/planner_bench/driver_version.h): on a lent H100 the open kernel
// module's line made the old parser write "for".
#include <catch2/catch.hpp>

#include "../tools/planner_bench/driver_version.h"

using planner::bench::parse_driver_version;

TEST_CASE("planner-bench reads the driver version of the proprietary and the open kernel module", "[bench]") {
  CHECK(parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC "
                             "2023") == "535.104.05");
  // The open kernel module's form of the line (the lent H100 ran driver
  // 580.159.04, per nvidia-smi; the old parser took "for").
  CHECK(parse_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
                             "(...)") == "580.159.04");
  CHECK(parse_driver_version("NVRM version: something else") == "");
  CHECK(parse_driver_version("Kernel Module for x86_64 Release Build") == "");
}
