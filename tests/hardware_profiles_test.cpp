// The shipped hardware profiles: each loads by name and alias with the values
// its cited sources give (docs/hardware_profiles.md), every number in it is
// cited, and the unit sanity checks (src/io/unit_checks.cpp) reject values off
// by a unit prefix with the value that was meant.
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "test_support.h"

using namespace planner;
using nlohmann::json;
using planner::testing::error_of;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Key numbers of each profile as its sources state them (per GPU; bandwidths per
// direction; peaks dense; 0 = the chip has no FP8).
struct Expected {
  const char* name;
  const char* alias;
  double bf16_flops, fp8_flops, hbm_bytes, hbm_bytes_per_s;
  std::int64_t domain;
  double scale_up_bytes_per_s;
  std::int64_t nics_per_node, chips_per_node;
  double nic_bytes_per_s;
};

const Expected kExpected[] = {
    // DGX B200 datasheet: 2.25/4.5 PFLOP/s dense, 8 TB/s, NVLink5 900 GB/s, 8x CX-7 400G;
    // 183359 MiB per GPU as nvidia-smi reports it.
    {"dgx-b200", "b200", 2.25e15, 4.5e15, 183359.0 * 1024 * 1024, 8e12, 8, 9e11, 8, 8, 5e10},
    // DGX B300 datasheet: same BF16/FP8 as B200, CX-8 800G; 270 GB usable (MLPerf names it B300-SXM-270GB).
    {"dgx-b300", "b300", 2.25e15, 4.5e15, 270 * kGiB, 8e12, 8, 9e11, 8, 8, 1e11},
    // GB200/GB300 NVL72: 72 GPUs in one NVLink domain, 2.5/5 PFLOP/s dense per GPU, 4 GPUs a tray.
    {"gb200-nvl72", "gb200", 2.5e15, 5e15, 186 * kGiB, 8e12, 72, 9e11, 4, 4, 5e10},
    {"gb300-nvl72", "gb300", 2.5e15, 5e15, 270 * kGiB, 8e12, 72, 9e11, 4, 4, 1e11},
    // H800: H100 compute, 400 GB/s bidirectional NVLink (200 per direction).
    {"hgx-h800", "h800", 9.894e14, 1.9789e15, 80 * kGiB, 3.35e12, 8, 2e11, 8, 8, 5e10},
    // H100 PCIe / NVL: NVIDIA's sparse figures halved; PCIe Gen5 x16 (64 GB/s per direction).
    {"h100-pcie", "h100-pcie", 7.56e14, 1.513e15, 80 * kGiB, 2e12, 8, 6.4e10, 4, 8, 5e10},
    {"h100-nvl", "h100-nvl", 8.355e14, 1.671e15, 94 * kGiB, 3.9e12, 8, 6.4e10, 4, 8, 5e10},
    // Meta Grand Teton (torchtitan benchmarks/llama3_h100_202412_torchtitan.md): 96 GB HBM2e at 2.4 TB/s,
    // 500 W; peak "between SXM and NVL", taken as the midpoint; 400 Gb/s a GPU.
    {"grand-teton-h100", "h100-96gb-hbm2e", 9.1245e14, 1.8249e15, 96 * kGiB, 2.4e12, 8, 4.5e11, 8, 8, 5e10},
    // A100 40GB: 312 TFLOP/s, 1,555 GB/s, NVLink3 300 GB/s, 8x HDR 200G.
    {"dgx-a100-40gb", "a100-40gb", 3.12e14, 0, 40 * kGiB, 1.555e12, 8, 3e11, 8, 8, 2.5e10},
    // A800: the A100 with NVLink at 400 GB/s bidirectional (8 links), 8x HDR 200G assumed.
    {"hgx-a800", "a800", 3.12e14, 0, 80 * kGiB, 2.039e12, 8, 2e11, 8, 8, 2.5e10},
    // MI300X: 1307.4/2614.9 TFLOP/s dense, 5.3 TB/s, 7 xGMI links of 64 GB/s; rocm-smi capacity.
    {"mi300x", "MI300X", 1.3074e15, 2.6149e15, 206141652992.0, 5.3e12, 8, 4.48e11, 8, 8, 5e10},
    // TPU v5p: 459 TFLOP/s, 95 GiB, 2765 GB/s, 6 ICI ports of 100 GB/s; 6144-chip largest slice.
    {"tpu-v5p", "v5p", 4.59e14, 0, 95 * kGiB, 2.765e12, 6144, 1e11, 1, 4, 2.5e10},
    // TPU v6e: 918 TFLOP/s, 32 GB, 1638 GB/s, 4 ICI ports of 100 GB/s; 256-chip pod.
    {"tpu-v6e", "trillium", 9.18e14, 0, 32 * kGiB, 1.638e12, 256, 1e11, 2, 8, 1.25e10},
};

// Every numeric leaf of a profile's JSON ("chip.hbm_capacity_bytes",
// "tiers[0].torus_dims"), sources and notes excluded.
void numeric_paths(const json& j, const std::string& path, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "sources" && it.key() != "notes" && it.key() != "schema_version")
        numeric_paths(*it, path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (j.is_array()) {
    if (!j.empty() && j[0].is_number()) {
      out.push_back(path);
      return;
    }
    for (std::size_t i = 0; i < j.size(); ++i) numeric_paths(j[i], path + "[" + std::to_string(i) + "]", out);
  } else if (j.is_number()) {
    out.push_back(path);
  }
}

json stock_json(const std::string& name) { return read_json_file(kDir + "/hardware_profiles/" + name + ".json"); }
}  // namespace

TEST_CASE("each new profile loads by name and alias with its cited values", "[hardware_profiles]") {
  for (const Expected& e : kExpected) {
    INFO(e.name);
    const HardwareProfile h = find_hardware(e.alias, kDir);
    CHECK(h.name == e.name);
    CHECK(find_hardware(e.name, kDir) == h);
    CHECK(h.peak_flops_per_s[std::size_t(DType::bf16)] == Approx(e.bf16_flops).epsilon(1e-9));
    CHECK(h.peak_flops_per_s[std::size_t(DType::fp8)] == Approx(e.fp8_flops).epsilon(1e-9));
    CHECK(h.hbm_capacity_bytes == Approx(e.hbm_bytes).epsilon(1e-9));
    CHECK(h.hbm_bandwidth_bytes_per_s == Approx(e.hbm_bytes_per_s).epsilon(1e-9));
    REQUIRE(h.tiers.size() == 2);
    CHECK(h.tiers[0].size == e.domain);
    CHECK(h.tiers[0].bandwidth_nominal_bytes_per_s == Approx(e.scale_up_bytes_per_s).epsilon(1e-9));
    CHECK(h.tiers[1].nics_per_node == e.nics_per_node);
    CHECK(h.tiers[1].gpus_per_node == e.chips_per_node);
    CHECK(h.tiers[1].bandwidth_nominal_bytes_per_s == Approx(e.nic_bytes_per_s).epsilon(1e-9));
  }
}

TEST_CASE("the new profiles' generation-dependent choices", "[hardware_profiles]") {
  // Blackwell NVLink domains use NCCL's Blackwell tables; NVL72 is one domain of 72.
  for (const char* n : {"dgx-b200", "dgx-b300", "gb200-nvl72", "gb300-nvl72"})
    CHECK(find_hardware(n, kDir).nccl_generation == NcclGeneration::blackwell);
  CHECK(find_hardware("h800", kDir).nccl_generation == NcclGeneration::hopper);
  CHECK(find_hardware("a100-40gb", kDir).nccl_generation == NcclGeneration::ampere);
  // RCCL (MI300X) and PCIe tier 0 (no NVLink rows in planner's NCCL tables): alpha-beta.
  for (const char* n : {"mi300x", "h100-pcie", "h100-nvl"})
    CHECK(find_hardware(n, kDir).nccl_generation == NcclGeneration::none);
  const HardwareProfile v5p = find_hardware("tpu-v5p", kDir);
  CHECK(v5p.tiers[0].topology == Topology::torus);
  CHECK(v5p.tiers[0].torus_dims == std::vector<std::int64_t>{16, 16, 24});
  CHECK(find_hardware("tpu-v6e", kDir).tiers[0].torus_dims == std::vector<std::int64_t>{16, 16});
}

TEST_CASE("every number in every shipped profile has a source", "[hardware_profiles]") {
  for (const HardwareProfile& h : list_hardware(kDir)) {
    const json j = stock_json(h.name);
    REQUIRE(j.contains("sources"));
    std::vector<std::string> paths;
    numeric_paths(j, "", paths);
    CHECK(paths.size() > 20);
    for (const std::string& p : paths) {
      INFO(h.name << ": " << p);
      CHECK(j["sources"].contains(p));
    }
  }
}

TEST_CASE("a value off by a unit prefix is an error suggesting the unit meant", "[hardware_profiles]") {
  struct Row {
    const char* what;
    std::function<void(json&)> edit;
    const char* message;
  };
  const Row rows[] = {
      {"TFLOP/s typed for FLOP/s", [](json& j) { j["chip"]["peak_flops_per_s"]["bf16"] = 989; },
       "h.json: chip.peak_flops_per_s.bf16: 989 FLOP/s is implausible for an accelerator (expected 1e12 to 1e17 "
       "FLOP/s); did you mean 989e12 (989 TFLOP/s)?"},
      {"PFLOP/s typed for FLOP/s", [](json& j) { j["chip"]["peak_flops_per_s"]["fp8"] = 4.5; },
       "h.json: chip.peak_flops_per_s.fp8: 4.5 FLOP/s is implausible for an accelerator (expected 1e12 to 1e17 "
       "FLOP/s); did you mean 4.5e15 (4.5 PFLOP/s)?"},
      {"a peak too large has no suggestion", [](json& j) { j["chip"]["peak_flops_per_s"]["bf16"] = 9.894e17; },
       "h.json: chip.peak_flops_per_s.bf16: 9.894e+17 FLOP/s is implausible for an accelerator (expected 1e12 to "
       "1e17 FLOP/s)"},
      {"GiB typed for bytes", [](json& j) { j["chip"]["hbm_capacity_bytes"] = 80; },
       "h.json: chip.hbm_capacity_bytes: 80 bytes is implausible for accelerator memory (expected 1 GiB to 4 TiB); "
       "did you mean 85899345920 (80 GiB)?"},
      {"MiB typed for bytes", [](json& j) { j["chip"]["hbm_capacity_bytes"] = 81559; },
       "h.json: chip.hbm_capacity_bytes: 81559 bytes is implausible for accelerator memory (expected 1 GiB to 4 "
       "TiB); did you mean 85520809984 (81559 MiB)?"},
      {"TB/s typed for bytes/s", [](json& j) { j["chip"]["hbm_bandwidth_bytes_per_s"] = 3.35; },
       "h.json: chip.hbm_bandwidth_bytes_per_s: 3.35 bytes/s is implausible for a memory bandwidth (expected 1e10 "
       "to 1e14 bytes/s); did you mean 3.35e12 (3.35 TB/s)?"},
      {"GB/s typed for bytes/s (HBM)", [](json& j) { j["chip"]["hbm_bandwidth_bytes_per_s"] = 3350; },
       "h.json: chip.hbm_bandwidth_bytes_per_s: 3350 bytes/s is implausible for a memory bandwidth (expected 1e10 "
       "to 1e14 bytes/s); did you mean 3350e9 (3350 GB/s)?"},
      {"GB/s typed for bytes/s (link)", [](json& j) { j["tiers"][0]["bandwidth_achieved_bytes_per_s"] = 370; },
       "h.json: tiers[0].bandwidth_achieved_bytes_per_s: 370 bytes/s is implausible for a link bandwidth (expected "
       "1e8 to 1e13 bytes/s); did you mean 370e9 (370 GB/s)?"},
      {"GB/s typed for bytes/s (NVLS)", [](json& j) { j["tiers"][0]["nvls_bus_bandwidth_bytes_per_s"] = 480; },
       "h.json: tiers[0].nvls_bus_bandwidth_bytes_per_s: 480 bytes/s is implausible for a link bandwidth (expected "
       "1e8 to 1e13 bytes/s); did you mean 480e9 (480 GB/s)?"},
      {"us typed for s", [](json& j) { j["collective_base_latency_s"] = 6.6; },
       "h.json: collective_base_latency_s: 6.6 s is implausible for a latency (expected 0 to 1e-2 s); did you mean "
       "6.6e-6 (6.6 us)?"},
      {"ns typed for s", [](json& j) { j["tiers"][1]["latency_s"] = 4000; },
       "h.json: tiers[1].latency_s: 4000 s is implausible for a latency (expected 0 to 1e-2 s); did you mean "
       "4000e-9 (4000 ns)?"},
      {"GiB typed for the reserve", [](json& j) { j["memory_reserve_bytes"] = 5; },
       "h.json: memory_reserve_bytes: 5 bytes is implausible for a memory reserve (expected 0, or 1 KiB to 1e15 "
       "bytes); did you mean 5368709120 (5 GiB)?"},
      {"every problem in one line",
       [](json& j) {
         j["chip"]["hbm_capacity_bytes"] = 80;
         j["tiers"][0]["latency_s"] = 1;
       },
       "h.json: chip.hbm_capacity_bytes: 80 bytes is implausible for accelerator memory (expected 1 GiB to 4 TiB); "
       "did you mean 85899345920 (80 GiB)?; tiers[0].latency_s: 1 s is implausible for a latency (expected 0 to "
       "1e-2 s); did you mean 1e-6 (1 us)?"},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      json j = stock_json("dgx-h100");
      r.edit(j);
      CHECK(error_of([&] { (void)hardware_from_json(j, "h.json"); }) == r.message);
    }
  }
}

TEST_CASE("an efficiency below 1% of the peak is an error, not a step of 1e300 s", "[hardware_profiles]") {
  const std::pair<std::function<void(json&)>, const char*> rows[] = {
      {[](json& j) { j["efficiency"]["gemm_max"]["bf16"] = 1e-300; },
       "h.json: efficiency.gemm_max.bf16: 1e-300 is implausible for an efficiency (expected a fraction from 0.01 "
       "to 1)"},
      {[](json& j) { j["efficiency"]["attention_max"]["fp8"] = 0.005; },
       "h.json: efficiency.attention_max.fp8: 0.005 is implausible for an efficiency (expected a fraction from 0.01 "
       "to 1)"},
      {[](json& j) { j["efficiency"]["hbm_efficiency"] = 5e-324; },
       "h.json: efficiency.hbm_efficiency: 5e-324 is implausible for an efficiency (expected a fraction from 0.01 "
       "to 1)"},
      {[](json& j) { j["efficiency"]["sustained_clock_fraction"] = 1e-9; },
       "h.json: efficiency.sustained_clock_fraction: 1e-09 is implausible for an efficiency (expected a fraction "
       "from 0.01 to 1)"},
  };
  for (const auto& [edit, message] : rows) {
    json j = stock_json("dgx-h100");
    edit(j);
    CHECK(error_of([&] { (void)hardware_from_json(j, "h.json"); }) == message);
  }
  json edge = stock_json("dgx-h100");
  edge["efficiency"]["gemm_max"]["bf16"] = 0.01;
  edge["efficiency"]["unfused_attention_max"] = 0.01;
  CHECK_NOTHROW(hardware_from_json(edge, "h.json"));
}

TEST_CASE("the unit checks accept the edges of their ranges and every shipped profile", "[hardware_profiles]") {
  json j = stock_json("dgx-h100");
  j["chip"]["peak_flops_per_s"]["bf16"] = 1e12;
  j["chip"]["hbm_capacity_bytes"] = kGiB;
  j["chip"]["hbm_bandwidth_bytes_per_s"] = 1e10;
  j["memory_reserve_bytes"] = 0;
  j["collective_base_latency_s"] = 1e-2;
  j["tiers"][1]["bandwidth_nominal_bytes_per_s"] = 1.25e9;  // 10 GbE
  j["tiers"][1]["bandwidth_achieved_bytes_per_s"] = 1e8;
  CHECK(error_of([&] { (void)hardware_from_json(j, "h.json"); }).empty());
  // Loading checks every profile; a shipped one failing would throw here.
  const std::vector<HardwareProfile> all = list_hardware(kDir);
  CHECK(all.size() == 18);
  for (const HardwareProfile& h : all) {
    INFO(h.name);
    CHECK(error_of([&] { (void)hardware_from_json(stock_json(h.name), h.name); }).empty());
  }
}

TEST_CASE("a profile may name the public clusters it describes", "[hardware_profiles]") {
  const HardwareProfile jz = find_hardware("jean-zay", kDir);
  CHECK(jz.name == "jean-zay-a100");
  CHECK(jz.clusters == std::vector<std::string>{"Jean Zay"});
  CHECK(find_hardware("dgx-a100-80gb", kDir).clusters.empty());
  // Written back (calibrate fit writes profiles) and read again unchanged.
  CHECK(hardware_from_json(to_json(jz), "jz.json") == jz);
  json j = stock_json("dgx-h100");
  j["clusters"] = json::array({"Selene", 7});
  CHECK(error_of([&] { (void)hardware_from_json(j, "h.json"); }) ==
        "h.json: clusters: expected a list of non-empty strings, got element 7");
}

TEST_CASE("'did you mean' finds the new profiles", "[hardware_profiles]") {
  CHECK_THAT(error_of([] { (void)find_hardware("b20", kDir); }),
             Catch::StartsWith("--hardware: unknown hardware profile 'b20' (did you mean 'b200'?)"));
  CHECK_THAT(error_of([] { (void)find_hardware("gb30", kDir); }),
             Catch::StartsWith("--hardware: unknown hardware profile 'gb30' (did you mean 'gb300'?)"));
  CHECK_THAT(error_of([] { (void)find_hardware("mi300", kDir); }),
             Catch::StartsWith("--hardware: unknown hardware profile 'mi300' (did you mean 'mi300x'?)"));
}
