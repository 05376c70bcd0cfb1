// Reading the fields and free text of measured-runs rows: a field that may be
// absent or null, a field as text, lower-casing and substring tests
// (published_runs.cpp, moe_runs.cpp, flop_convention.cpp). Private to validate/.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

namespace planner::row_text {

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

inline bool contains(const std::string& haystack_lower, const char* needle) {
  return haystack_lower.find(needle) != std::string::npos;
}

// The row's `key`, or nullptr when it is absent or null.
inline const nlohmann::json* field(const nlohmann::json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return nullptr;
  return &*it;
}

// The row's `key` as text: a string as it is, any other value as JSON; "" when absent.
inline std::string text(const nlohmann::json& row, const char* key) {
  const nlohmann::json* v = field(row, key);
  if (!v) return "";
  return v->is_string() ? v->get<std::string>() : v->dump();
}

}  // namespace planner::row_text
