#include "planner/io/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"

namespace planner {

namespace fs = std::filesystem;

// $PLANNER_DATA_DIR first; then an installed tree (`cmake --install`), found
// from the running executable as <prefix>/bin/planner -> <prefix>/share/planner;
// then the source tree the build came from (a build that was not installed).
std::string data_dir() {
  if (const char* env = std::getenv("PLANNER_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / PLANNER_INSTALL_DATA_SUBDIR;
    if (fs::is_directory(installed / "models", ec)) return installed.string();
  }
  return PLANNER_SOURCE_DATA_DIR;
}

namespace {

std::vector<std::string> json_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(dir, "directory not found (set PLANNER_DATA_DIR to the planner source tree)");
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Names match whatever their case ("H100" is h100).
template <typename Spec>
bool is_named(const Spec& s, const std::string& key) {
  const std::string k = lower(key);
  if (lower(s.name) == k) return true;
  return std::any_of(s.aliases.begin(), s.aliases.end(), [&](const std::string& a) { return lower(a) == k; });
}

template <typename Spec>
std::vector<std::string> names_and_aliases(const std::vector<Spec>& all) {
  std::vector<std::string> out;
  for (const auto& s : all) {
    out.push_back(s.name);
    out.insert(out.end(), s.aliases.begin(), s.aliases.end());
  }
  return out;
}

std::string hint_for(const std::string& key, const std::vector<std::string>& candidates) {
  const std::string best = closest_name(key, candidates);
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

template <typename Spec>
Spec find(const std::string& key, const std::vector<Spec>& all, const char* what, const char* flag) {
  for (const auto& s : all)
    if (is_named(s, key)) return s;
  std::string names;
  for (const auto& s : all) names += (names.empty() ? "" : ", ") + s.name;
  throw InputError(flag,
                   fmt::format("unknown {} '{}'{}; known: {}", what, key, hint_for(key, names_and_aliases(all)), names));
}

}  // namespace

std::string closest_name(const std::string& key, const std::vector<std::string>& candidates) {
  // At most about a third of the name may differ, and never more than 3 edits:
  // a long name with one typo is suggested, a short unrelated word is not.
  const std::string k = lower(key);
  std::string best;
  std::size_t best_d = std::min<std::size_t>(4, k.size() / 3 + 1);
  for (const auto& c : candidates)
    if (const std::size_t d = edit_distance(k, lower(c)); d < best_d) best_d = d, best = c;
  return best;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

std::vector<ModelSpec> list_models(const std::string& dir) {
  std::vector<ModelSpec> out;
  for (const auto& f : json_files(dir + "/models")) out.push_back(load_model_file(f));
  return out;
}

std::vector<HardwareProfile> list_hardware(const std::string& dir) {
  std::vector<HardwareProfile> out;
  for (const auto& f : json_files(dir + "/hardware_profiles")) out.push_back(load_hardware_file(f));
  return out;
}

ModelSpec find_model(const std::string& name_or_path, const std::string& dir) {
  if (looks_like_path(name_or_path)) return load_model_file(name_or_path);
  return find(name_or_path, list_models(dir), "model", "--model");
}

HardwareProfile find_hardware(const std::string& name_or_path, const std::string& dir, const char* flag) {
  if (looks_like_path(name_or_path)) return load_hardware_file(name_or_path);
  return find(name_or_path, list_hardware(dir), "hardware profile", flag);
}

CatalogEntry find_model_or_hardware(const std::string& name, const std::string& dir) {
  const std::vector<ModelSpec> models = list_models(dir);
  for (const auto& m : models)
    if (is_named(m, name)) return m;
  const std::vector<HardwareProfile> hardware = list_hardware(dir);
  for (const auto& h : hardware)
    if (is_named(h, name)) return h;
  if (name.find(".json") != std::string::npos) {
    const auto j = read_json_file(name);
    if (j.is_object() && j.contains("tiers")) return hardware_from_json(j, name);
    return model_from_json(j, name);
  }
  std::string names;
  for (const auto& m : models) names += (names.empty() ? "" : ", ") + m.name;
  for (const auto& h : hardware) names += ", " + h.name;
  std::vector<std::string> candidates = names_and_aliases(models);
  for (const auto& c : names_and_aliases(hardware)) candidates.push_back(c);
  throw InputError("show",
                   fmt::format("unknown model or hardware '{}'{}; known: {}", name, hint_for(name, candidates), names));
}

}  // namespace planner
