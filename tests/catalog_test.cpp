// The catalog lookups (io/catalog.h) that `planner show` and the --model /
// --hardware flags use: names, aliases, JSON paths and the unknown-name error.
#include <catch2/catch.hpp>

#include <fstream>
#include <variant>

#include "planner/io/catalog.h"
#include "test_support.h"

using namespace planner;
using planner::testing::error_of;
using planner::testing::kSourceDir;
using planner::testing::TempDir;

TEST_CASE("looks_like_path: a '/' or a .json ending", "[catalog]") {
  CHECK(looks_like_path("models/llama3.1-8b.json"));
  CHECK(looks_like_path("x.json"));
  CHECK(looks_like_path("dir/name"));
  CHECK_FALSE(looks_like_path("llama8b"));
  CHECK_FALSE(looks_like_path(".json"));  // nothing before the extension
  CHECK_FALSE(looks_like_path("a.json.bak"));
}

TEST_CASE("find_model_or_hardware: models first, then hardware, then a JSON file", "[catalog]") {
  const CatalogEntry model = find_model_or_hardware("llama405b", kSourceDir);
  REQUIRE(std::holds_alternative<ModelSpec>(model));
  CHECK(std::get<ModelSpec>(model).name == "llama3.1-405b");

  const CatalogEntry hw = find_model_or_hardware("h100", kSourceDir);  // an alias
  REQUIRE(std::holds_alternative<HardwareProfile>(hw));
  CHECK(std::get<HardwareProfile>(hw).name == "dgx-h100");

  const CatalogEntry hw_file = find_model_or_hardware(kSourceDir + "/hardware_profiles/dgx-h100.json", kSourceDir);
  REQUIRE(std::holds_alternative<HardwareProfile>(hw_file));
  CHECK(std::get<HardwareProfile>(hw_file) == std::get<HardwareProfile>(hw));

  const CatalogEntry model_file = find_model_or_hardware(kSourceDir + "/models/llama3.1-8b.json", kSourceDir);
  REQUIRE(std::holds_alternative<ModelSpec>(model_file));
  CHECK(std::get<ModelSpec>(model_file).name == "llama3.1-8b");
}

TEST_CASE("find_model_or_hardware: unknown names list every model and profile", "[catalog]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "models");
  std::filesystem::create_directories(dir.path / "hardware_profiles");
  for (const char* f : {"models/llama3.1-8b.json", "models/llama3.1-70b.json", "hardware_profiles/dgx-h100.json"})
    std::filesystem::copy_file(kSourceDir + "/" + f, dir.path / f);
  CHECK(error_of([&] { (void)find_model_or_hardware("nosuch", dir.path.string()); }) ==
        "show: unknown model or hardware 'nosuch'; known: llama3.1-70b, llama3.1-8b, dgx-h100");
  CHECK(error_of([&] { (void)find_model_or_hardware("nosuch.json", dir.path.string()); }) ==
        "nosuch.json: cannot open file");
}

TEST_CASE("names match in any case, did-you-mean ignores case and stays close", "[catalog]") {
  CHECK(find_hardware("H100", kSourceDir).name == "dgx-h100");
  CHECK(find_model("LLAMA8B", kSourceDir).name == "llama3.1-8b");
  CHECK(std::holds_alternative<HardwareProfile>(find_model_or_hardware("DGX-H100", kSourceDir)));
  const std::vector<std::string> subcommands = {"list", "show", "evaluate", "search", "simulate"};
  CHECK(closest_name("serach", subcommands) == "search");
  CHECK(closest_name("EVALUTE", subcommands) == "evaluate");
  CHECK(closest_name("frobnicate", subcommands).empty());
  CHECK(closest_name("x", subcommands).empty());  // one letter is no typo of a word
  CHECK(error_of([] { (void)find_model("lama8b", kSourceDir); }).find("did you mean 'llama8b'?") != std::string::npos);
}
