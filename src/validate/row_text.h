// Matching the free text of measured-runs rows: lower-casing and substring
// tests (published_runs.cpp, flop_convention.cpp). Private to validate/.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace planner::row_text {

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

inline bool contains(const std::string& haystack_lower, const char* needle) {
  return haystack_lower.find(needle) != std::string::npos;
}

}  // namespace planner::row_text
