// The file `calibrate fit --base` starts from and the sources it carries into
// the fitted profile (calibrate/base_profile.h).
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "planner/calibrate/base_profile.h"
#include "planner/io/json_io.h"
#include "test_support.h"

using namespace planner;
using planner::testing::kSourceDir;
using planner::testing::TempDir;

TEST_CASE("base_profile_path: a path as given, a name or alias as its stock file", "[calibrate]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  const std::string stock = kSourceDir + "/hardware_profiles/dgx-h100.json";
  CHECK(base_profile_path("dgx-h100", hw, kSourceDir) == stock);
  CHECK(base_profile_path("h100", hw, kSourceDir) == stock);  // the alias finds the canonical file
  CHECK(base_profile_path("profiles/mine.json", hw, kSourceDir) == "profiles/mine.json");
  CHECK(base_profile_path("mine.json", hw, kSourceDir) == "mine.json");
}

TEST_CASE("base_profile_sources: the file's sources, or an empty object", "[calibrate]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kSourceDir);
  const nlohmann::json stock = read_json_file(kSourceDir + "/hardware_profiles/dgx-h100.json");
  REQUIRE(stock.contains("sources"));
  CHECK(base_profile_sources("h100", hw, kSourceDir) == stock["sources"]);

  TempDir dir;
  const std::string bare = (dir.path / "bare.json").string();
  nlohmann::json no_sources = stock;
  no_sources.erase("sources");
  std::ofstream(bare) << no_sources.dump();
  CHECK(base_profile_sources(bare, hw, kSourceDir) == nlohmann::json::object());
  CHECK(base_profile_sources((dir.path / "missing.json").string(), hw, kSourceDir) == nlohmann::json::object());
  // A name whose stock file is not in `dir` (a profile loaded from elsewhere).
  CHECK(base_profile_sources("dgx-h100", hw, dir.path.string()) == nlohmann::json::object());
}
