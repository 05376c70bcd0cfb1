// FieldReader: reads the fields of one JSON object strictly (types, ranges,
// unknown keys), collecting every problem as "path.field: message" so one
// InputError can name them all. Internal to the library: used by json_io.cpp
// (models, hardware profiles) and regress.cpp (suite and golden files).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/spec/input_error.h"

namespace planner::detail {

using nlohmann::json;

// A JSON value shortened for an error message.
inline std::string describe(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// Reads fields of one JSON object, recording every problem as "path: message".
class FieldReader {
 public:
  FieldReader(const json& obj, std::string path, std::vector<std::string>& problems)
      : obj_(obj), path_(std::move(path)), problems_(problems) {}

  [[nodiscard]] bool ok_object() const { return obj_.is_object(); }

  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  void problem(const std::string& key, const std::string& msg) { problems_.push_back(field(key) + ": " + msg); }

  const json* get(const std::string& key, bool required, const char* expected) {
    seen_.insert(key);
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) problem(key, fmt::format("missing (expected {})", expected));
      return nullptr;
    }
    return &*it;
  }

  std::int64_t integer(const std::string& key, std::int64_t min_value, bool required = true,
                       std::int64_t fallback = 0) {
    const char* expected = min_value > 0 ? "a positive integer" : "a non-negative integer";
    const json* v = get(key, required, expected);
    if (!v) return fallback;
    if (v->is_number_integer() || v->is_number_unsigned()) {
      std::int64_t x =
          v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())
              ? -1
              : v->get<std::int64_t>();
      if (x >= min_value) return x;
    } else if (v->is_number_float()) {
      double d = v->get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= double(min_value) && d < 9.2e18) return std::int64_t(d);
    }
    problem(key, fmt::format("expected {}, got {}", expected, describe(*v)));
    return fallback;
  }

  double number(const std::string& key, double min_value, double max_value, bool required = true, double fallback = 0,
                bool exclusive_min = true) {
    std::string expected = fmt::format("a number {} {:g}{}", exclusive_min ? ">" : ">=", min_value,
                                       std::isfinite(max_value) ? fmt::format(" and <= {:g}", max_value) : "");
    const json* v = get(key, required, expected.c_str());
    if (!v) return fallback;
    if (v->is_number()) {
      double d = v->get<double>();
      bool above = exclusive_min ? d > min_value : d >= min_value;
      if (std::isfinite(d) && above && d <= max_value) return d;
    }
    problem(key, fmt::format("expected {}, got {}", expected, describe(*v)));
    return fallback;
  }

  bool boolean(const std::string& key, bool required = true, bool fallback = false) {
    const json* v = get(key, required, "true or false");
    if (!v) return fallback;
    if (v->is_boolean()) return v->get<bool>();
    problem(key, fmt::format("expected true or false, got {}", describe(*v)));
    return fallback;
  }

  std::string string(const std::string& key, bool required = true) {
    const json* v = get(key, required, "a non-empty string");
    if (!v) return {};
    if (v->is_string() && !v->get<std::string>().empty()) return v->get<std::string>();
    problem(key, fmt::format("expected a non-empty string, got {}", describe(*v)));
    return {};
  }

  std::vector<std::string> string_list(const std::string& key) {
    std::vector<std::string> out;
    const json* v = get(key, false, "a list of strings");
    if (!v) return out;
    if (!v->is_array()) {
      problem(key, fmt::format("expected a list of strings, got {}", describe(*v)));
      return out;
    }
    for (const auto& e : *v) {
      if (!e.is_string() || e.get<std::string>().empty()) {
        problem(key, fmt::format("expected a list of non-empty strings, got element {}", describe(e)));
        return {};
      }
      out.push_back(e.get<std::string>());
    }
    return out;
  }

  // One of the names of `table` (a name table of planner/spec/names.h, or a
  // subset of one from names_for), as its enum value.
  template <typename Table, typename Enum>
  Enum choice(const std::string& key, const Table& table, Enum fallback, bool required = true) {
    std::string names;
    for (const auto& n : table) names += (names.empty() ? "" : " | ") + std::string(n.name);
    std::string expected = "one of " + names;
    const json* v = get(key, required, expected.c_str());
    if (!v) return fallback;
    if (v->is_string()) {
      for (const auto& n : table)
        if (v->get<std::string>() == n.name) return n.value;
    }
    problem(key, fmt::format("expected {}, got {}", expected, describe(*v)));
    return fallback;
  }

  const json* object(const std::string& key, bool required = true) {
    const json* v = get(key, required, "an object");
    if (v && !v->is_object()) {
      problem(key, fmt::format("expected an object, got {}", describe(*v)));
      return nullptr;
    }
    return v;
  }

  // An integer in [min_value, max_value] (bounds that keep 64-bit products exact).
  std::int64_t integer_in(const std::string& key, std::int64_t min_value, std::int64_t max_value, bool required,
                          std::int64_t fallback) {
    const std::string expected = fmt::format("an integer from {} to {}", min_value, max_value);
    const json* v = get(key, required, expected.c_str());
    if (!v) return fallback;
    if (v->is_number_integer() && !(v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(max_value))) {
      const std::int64_t x = v->get<std::int64_t>();
      if (x >= min_value && x <= max_value) return x;
    }
    problem(key, fmt::format("expected {}, got {}", expected, describe(*v)));
    return fallback;
  }

  // Changes the prefix of later problems (e.g. once a list element's name is known).
  void set_path(std::string path) { path_ = std::move(path); }

  void allow(const std::string& key) { seen_.insert(key); }

  // Unknown keys are errors: a typo must not silently fall back to a default.
  void reject_unknown() {
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!seen_.count(it.key())) problem(it.key(), "unknown field");
  }

 private:
  const json& obj_;
  std::string path_;
  std::vector<std::string>& problems_;
  std::set<std::string> seen_;
};

inline void throw_if_problems(const std::string& origin, const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::string msg;
  for (const auto& p : problems) msg += (msg.empty() ? "" : "; ") + p;
  throw InputError(origin, msg);
}

}  // namespace planner::detail
