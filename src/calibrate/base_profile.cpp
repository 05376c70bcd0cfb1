// The base profile's file and its sources (base_profile.h).
#include "planner/calibrate/base_profile.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"

namespace planner {

std::string base_profile_path(const std::string& base_arg, const HardwareProfile& base, const std::string& dir) {
  return looks_like_path(base_arg) ? base_arg : dir + "/hardware_profiles/" + base.name + ".json";
}

nlohmann::json base_profile_sources(const std::string& base_arg, const HardwareProfile& base, const std::string& dir) {
  const std::string path = base_profile_path(base_arg, base, dir);
  if (!std::filesystem::exists(path)) return nlohmann::json::object();
  const auto j = read_json_file(path);
  if (j.is_object() && j.contains("sources")) return j["sources"];
  return nlohmann::json::object();
}

}  // namespace planner
