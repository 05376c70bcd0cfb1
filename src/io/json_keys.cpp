#include "io/json_keys.h"

#include <algorithm>

#include <fmt/format.h>

namespace planner::detail {

std::string RepeatedKeyFinder::path() const {
  std::string out;
  for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
    const Frame& f = stack_[i];
    out += f.array ? fmt::format("[{}]", f.index) : (out.empty() ? "" : ".") + f.key;
  }
  return out;
}

void RepeatedKeyFinder::element_done() {
  if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
}

bool RepeatedKeyFinder::operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
  using E = nlohmann::json::parse_event_t;
  switch (event) {
    case E::object_start:
      stack_.push_back({});
      break;
    case E::array_start:
      stack_.push_back({.array = true});
      break;
    case E::key: {
      if (stack_.empty() || !parsed.is_string()) break;
      Frame& f = stack_.back();
      std::string k = parsed.get<std::string>();
      if (repeated_.empty() && std::find(f.keys.begin(), f.keys.end(), k) != f.keys.end()) {
        const std::string where = path();  // the object holding the key
        repeated_ = where.empty() ? k : where + "." + k;
      }
      f.keys.push_back(k);
      f.key = std::move(k);
      break;
    }
    case E::object_end:
    case E::array_end:
      if (!stack_.empty()) stack_.pop_back();
      element_done();
      break;
    case E::value:
      element_done();
      break;
  }
  return true;
}

}  // namespace planner::detail
