// Typed fields of measured-runs rows (row_fields.h).
#include "validate/row_fields.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "validate/row_text.h"

namespace planner::row_fields {

using nlohmann::json;
using row_text::field;
using row_text::lower;

// An integer field: a JSON integer, an integral number, or a string that is
// only digits. Text such as "unknown (likely interleaved)" counts as unknown.
std::optional<std::int64_t> integer(const json& row, const char* key, bool text_means_unknown) {
  const json* v = field(row, key);
  if (!v) return std::nullopt;
  // Above 2^63 - 1 nlohmann keeps the value unsigned; reading it signed would wrap.
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
    throw RowError{fmt::format("{}: expected an integer below 2^63, got {}", key, v->dump())};
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9e15) return std::int64_t(d);
    throw RowError{fmt::format("{}: expected an integer, got {}", key, v->dump())};
  }
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    if (!s.empty() && s.size() < 16 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
      return std::stoll(s);
    if (text_means_unknown) return std::nullopt;
  }
  throw RowError{fmt::format("{}: expected an integer, got {}", key, v->dump())};
}

// Bounds as for the CLI flags: they keep every 64-bit product in the cost model exact.
std::int64_t required_positive(const json& row, const char* key, std::int64_t max) {
  const auto v = integer(row, key);
  if (!v) throw RowError{fmt::format("{}: missing", key)};
  if (*v < 1 || *v > max) throw RowError{fmt::format("{}: expected an integer from 1 to {}, got {}", key, max, *v)};
  return *v;
}

std::optional<double> number(const json& row, const char* key) {
  const json* v = field(row, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw RowError{fmt::format("{}: expected a number, got {}", key, v->dump())};
  const double d = v->get<double>();
  if (!std::isfinite(d) || d <= 0)
    throw RowError{fmt::format("{}: expected a positive number, got {}", key, v->dump())};
  return d;
}

// true/false, or text that starts with true/false/yes/no/on/off ("False (TP=1)").
void override_flag(const json& row, const char* key, bool& into) {
  const json* v = field(row, key);
  if (!v) return;
  if (!v->is_boolean()) throw RowError{fmt::format("{}: expected true or false, got {}", key, v->dump())};
  into = v->get<bool>();
}

std::optional<bool> boolean(const json& row, const char* key) {
  const json* v = field(row, key);
  if (!v) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_string()) {
    const std::string s = lower(v->get<std::string>());
    for (const char* t : {"true", "yes", "on"})
      if (s.rfind(t, 0) == 0) return true;
    for (const char* f : {"false", "no", "off", "none"})
      if (s.rfind(f, 0) == 0) return false;
    return std::nullopt;
  }
  throw RowError{fmt::format("{}: expected true or false, got {}", key, v->dump())};
}

}  // namespace planner::row_fields
