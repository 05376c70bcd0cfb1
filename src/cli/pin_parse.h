// Parsing of the layout flags' values: one value, or for search a list
// (`--tp 4,8`, `--recompute none,full`) or an integer range (`--pp 1-16`,
// every integer in it; the search keeps those that make a valid layout).
// Malformed text is an InputError naming the flag and what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "planner/search/search.h"

namespace planner::cli {

struct PinParse {
  bool lists = true;         // lists and ranges allowed (search)
  const char* command = "";  // the subcommand, named when lists are refused

  // Integers from lo to hi; a range lo-hi gives every integer in it.
  [[nodiscard]] Pin<std::int64_t> integers(const char* flag, const std::optional<std::string>& text, std::int64_t lo,
                                           std::int64_t hi) const;
  // true/false (also on/off, yes/no, 1/0).
  [[nodiscard]] Pin<bool> booleans(const char* flag, const std::optional<std::string>& text) const;
  // Names of a spec enum (names.h).
  template <typename E>
  [[nodiscard]] Pin<E> names(const char* flag, const std::optional<std::string>& text) const;
};

// The largest number of values one range may expand to.
inline constexpr std::int64_t kMaxRangeValues = 4096;

}  // namespace planner::cli
