// Typed fields of measured-runs rows: integers (also written as digit
// strings), positive bounded integers, positive numbers and booleans (also
// "False (TP=1)"), each refusing a value of the wrong kind with a RowError
// that names the field (published_runs.cpp). Private to validate/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/spec/names.h"
#include "validate/row_text.h"

namespace planner::row_fields {

// A problem in one row: the row is skipped with this message.
struct RowError {
  std::string message;
};

// An integer field: a JSON integer, an integral number, or a string that is
// only digits. Text such as "unknown (likely interleaved)" counts as unknown
// when text_means_unknown, else it is a RowError.
[[nodiscard]] std::optional<std::int64_t> integer(const nlohmann::json& row, const char* key,
                                                  bool text_means_unknown = false);

// A required integer from 1 to max. Bounds as for the CLI flags: they keep
// every 64-bit product in the cost model exact.
[[nodiscard]] std::int64_t required_positive(const nlohmann::json& row, const char* key,
                                             std::int64_t max = std::int64_t(1) << 30);

// A positive finite number.
[[nodiscard]] std::optional<double> number(const nlohmann::json& row, const char* key);

// true/false, or text that starts with true/false/yes/no/on/off ("False (TP=1)");
// other text: nullopt.
[[nodiscard]] std::optional<bool> boolean(const nlohmann::json& row, const char* key);

// An optional override the row states exactly: a JSON true/false into
// `into`; absent: `into` kept; anything else a RowError.
void override_flag(const nlohmann::json& row, const char* key, bool& into);

// An optional override by name from an enum's names table ("flash2",
// "flash-attn"); absent: `into` kept; another value a RowError listing the names.
template <typename Enum>
void override_name(const nlohmann::json& row, const char* key, Enum& into) {
  const nlohmann::json* v = row_text::field(row, key);
  if (!v) return;
  const auto e = parse_name<Enum>(v->is_string() ? v->get<std::string>() : "");
  if (!e) {
    std::string names;
    const auto table = name_table(Enum{});
    for (std::size_t i = 0; i < table.size(); ++i)
      names += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == table.size() ? " or " : ", ", table[i].name);
    throw RowError{fmt::format("{}: expected {}, got {}", key, names, v->dump())};
  }
  into = *e;
}

}  // namespace planner::row_fields
