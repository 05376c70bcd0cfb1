#include "pin_parse.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include <fmt/format.h>

#include "planner/spec/input_error.h"
#include "planner/spec/names.h"

namespace planner::cli {

namespace {

std::vector<std::string> split_items(const std::string& text) {
  std::vector<std::string> out;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::optional<std::int64_t> to_int(const std::string& s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// The items of a flag's text; one item unless lists are allowed.
std::vector<std::string> items_of(const char* flag, const std::string& text, const std::string& expected) {
  if (text.empty()) throw InputError(flag, fmt::format("expected {}, got an empty value", expected));
  std::vector<std::string> items = split_items(text);
  for (const std::string& item : items)
    if (item.empty()) throw InputError(flag, fmt::format("expected {}, got '{}' (an empty item)", expected, text));
  return items;
}

void refuse_list(const PinParse& p, const char* flag, const std::string& text) {
  throw InputError(flag, fmt::format("{} prices one configuration: expected one value, got '{}' (lists and ranges "
                                     "are for planner search)",
                                     p.command, text));
}

template <typename T>
Pin<T> sorted_pin(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return Pin<T>(std::move(values));
}

}  // namespace

Pin<std::int64_t> PinParse::integers(const char* flag, const std::optional<std::string>& text, std::int64_t lo,
                                     std::int64_t hi) const {
  if (!text) return {};
  const std::string expected =
      lists ? fmt::format("integers from {} to {}: one (8), a list (4,8) or a range (1-16)", lo, hi)
            : fmt::format("an integer from {} to {}", lo, hi);
  const std::vector<std::string> items = items_of(flag, *text, expected);
  std::vector<std::int64_t> values;
  for (const std::string& item : items) {
    // A range a-b; a leading '-' is a sign, not a range.
    const auto dash = item.find('-', 1);
    if (dash != std::string::npos) {
      const auto a = to_int(item.substr(0, dash)), b = to_int(item.substr(dash + 1));
      if (!a || !b) throw InputError(flag, fmt::format("expected {}, got '{}'", expected, *text));
      if (!lists) refuse_list(*this, flag, *text);
      if (*a > *b) throw InputError(flag, fmt::format("range {}: expected the smaller value first", item));
      if (*a < lo || *b > hi)
        throw InputError(flag, fmt::format("range {}: expected values from {} to {}", item, lo, hi));
      if (*b - *a >= kMaxRangeValues)
        throw InputError(flag, fmt::format("range {}: expected at most {} values", item, kMaxRangeValues));
      for (std::int64_t v = *a; v <= *b; ++v) values.push_back(v);
      continue;
    }
    const auto v = to_int(item);
    if (!v) throw InputError(flag, fmt::format("expected {}, got '{}'", expected, *text));
    if (*v < lo || *v > hi) throw InputError(flag, fmt::format("expected {}, got {}", expected, *v));
    values.push_back(*v);
  }
  if (!lists && items.size() > 1) refuse_list(*this, flag, *text);
  return sorted_pin(std::move(values));
}

Pin<bool> PinParse::booleans(const char* flag, const std::optional<std::string>& text) const {
  if (!text) return {};
  const std::string expected = lists ? "true or false, or both (true,false)" : "true or false";
  const std::vector<std::string> items = items_of(flag, *text, expected);
  if (!lists && items.size() > 1) refuse_list(*this, flag, *text);
  std::vector<bool> values;
  for (const std::string& item : items) {
    std::string l = item;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    if (l == "true" || l == "on" || l == "yes" || l == "1")
      values.push_back(true);
    else if (l == "false" || l == "off" || l == "no" || l == "0")
      values.push_back(false);
    else
      throw InputError(flag, fmt::format("expected {}, got '{}'", expected, item));
  }
  return sorted_pin(std::move(values));
}

template <typename E>
Pin<E> PinParse::names(const char* flag, const std::optional<std::string>& text) const {
  if (!text) return {};
  std::string all;
  for (const std::string& n : name_list<E>()) all += (all.empty() ? "" : ", ") + n;
  const std::string expected = lists ? "one of " + all + ", or a list of them" : "one of " + all;
  const std::vector<std::string> items = items_of(flag, *text, expected);
  if (!lists && items.size() > 1) refuse_list(*this, flag, *text);
  std::vector<E> values;
  for (const std::string& item : items) {
    const auto v = parse_name<E>(item);
    if (!v) throw InputError(flag, fmt::format("expected {}, got '{}'", expected, item));
    values.push_back(*v);
  }
  return sorted_pin(std::move(values));
}

template Pin<Recompute> PinParse::names<Recompute>(const char*, const std::optional<std::string>&) const;

}  // namespace planner::cli
