// The tokens of an nccl-tests log line, which the text and JSON readers share
// (nccl_tests_tables.h): words and numbers, the launcher / host / time-stamp
// prefixes stripped from a line, a device line ("# Rank r Group g Pid p on
// HOST device d [bus] MODEL"), and the busbw/algbw ratio a row prints with the
// rounding of its digits.
#include "calibrate/nccl_tests_tables.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace planner::nccl_tests_detail {

std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string count_of(std::int64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

double half_unit(const std::string& printed) {
  const std::size_t e = printed.find_first_of("eE");
  const std::string mantissa = printed.substr(0, e);
  const std::size_t dot = mantissa.find('.');
  const int decimals = dot == std::string::npos ? 0 : int(mantissa.size() - dot - 1);
  const int exponent = e == std::string::npos ? 0 : std::atoi(printed.c_str() + e + 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

namespace {

// The length of a "host: " (pdsh, clush) or ISO-8601 time stamp
// ("2024-05-01T12:00:00.123Z ", `kubectl logs --timestamps`) prefix, with the
// blanks after it; 0 when there is none, or when what follows is neither a
// comment nor a row (so "Warning: Permanently added ..." stays a line of chatter).
std::size_t host_or_time_prefix(std::string_view rest) {
  std::size_t k = 0;
  while (k < rest.size() && rest[k] != ' ' && rest[k] != '\t') ++k;
  const std::string_view word = rest.substr(0, k);
  auto is_host = [&] {
    if (word.size() < 2 || word.back() != ':') return false;
    const std::string_view name = word.substr(0, word.size() - 1);
    return std::any_of(name.begin(), name.end(), [](char ch) { return std::isalpha((unsigned char)ch); }) &&
           std::all_of(name.begin(), name.end(),
                       [](char ch) { return std::isalnum((unsigned char)ch) || ch == '-' || ch == '_' || ch == '.'; });
  };
  auto is_time = [&] {
    // YYYY-MM-DDTHH:MM:SS, then anything (fraction, Z, offset)
    if (word.size() < 19 || word[4] != '-' || word[7] != '-' || word[10] != 'T' || word[13] != ':' || word[16] != ':')
      return false;
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})
      if (word[i] < '0' || word[i] > '9') return false;
    return true;
  };
  if (k == rest.size() || (!is_host() && !is_time())) return 0;
  std::size_t after = k;
  while (after < rest.size() && (rest[after] == ' ' || rest[after] == '\t')) ++after;
  // A CRI container log (/var/log/pods/...): "<time> stdout F <line>".
  if (is_time())
    for (std::string_view stream : {"stdout ", "stderr "})
      if (rest.substr(after, stream.size()) == stream && after + stream.size() + 1 < rest.size() &&
          (rest[after + stream.size()] == 'F' || rest[after + stream.size()] == 'P') &&
          rest[after + stream.size() + 1] == ' ') {
        after += stream.size() + 2;
        while (after < rest.size() && (rest[after] == ' ' || rest[after] == '\t')) ++after;
        return after;  // the stream marker says it is a prefix, whatever follows
      }
  if (after == rest.size()) return 0;
  const char next = rest[after];
  return next == '#' || (next >= '0' && next <= '9') ? after : 0;
}

// The length of a job runner's label before a line, with the blanks after
// it: SkyPilot's "(head, rank=0, pid=3808) " / "(worker1, rank=1, pid=2769,
// ip=10.0.0.2) ", `kubectl logs --prefix`'s "[pod/NAME/CONTAINER] ",
// torchrun's "[rank0]: ", docker compose's "NAME  | "; 0 when there is none.
std::size_t runner_prefix(std::string_view rest) {
  auto blanks_after = [&](std::size_t k) {
    while (k < rest.size() && (rest[k] == ' ' || rest[k] == '\t')) ++k;
    return k;
  };
  if (rest.size() > 2 && rest[0] == '(') {
    const std::size_t close = rest.find(") ");
    if (close != std::string_view::npos && rest.substr(0, close).find(", rank=") != std::string_view::npos &&
        rest.substr(0, close).find("pid=") != std::string_view::npos)
      return blanks_after(close + 2);
  }
  if (rest.rfind("[pod/", 0) == 0) {
    const std::size_t close = rest.find("] ");
    if (close != std::string_view::npos) return blanks_after(close + 2);
  }
  if (rest.rfind("[rank", 0) == 0) {
    std::size_t k = 5;
    while (k < rest.size() && rest[k] >= '0' && rest[k] <= '9') ++k;
    if (k > 5 && rest.substr(k, 3) == "]: ") return blanks_after(k + 3);
  }
  // "NAME  | ": a name (no blanks), blanks, one pipe, a blank; a nccl-tests row
  // starts with a number and a Markdown-table row with a pipe, so neither is one.
  std::size_t k = 0;
  while (k < rest.size() &&
         (std::isalnum((unsigned char)rest[k]) || rest[k] == '_' || rest[k] == '-' || rest[k] == '.'))
    ++k;
  if (k > 0 && !std::isdigit((unsigned char)rest[0])) {
    const std::size_t bar = blanks_after(k);
    // One pipe on the line: a Markdown table row ("size | count | ...") has more.
    if (bar > k && bar + 1 < rest.size() && rest[bar] == '|' && rest[bar + 1] == ' ' &&
        rest.find('|', bar + 1) == std::string_view::npos)
      return blanks_after(bar + 1);
  }
  return 0;
}

}  // namespace

std::string without_ansi_escapes(std::string_view line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && ((line[j] >= '0' && line[j] <= '9') || line[j] == ';')) ++j;
      if (j < line.size()) {
        i = j;  // the final letter (m, K, ...)
        continue;
      }
    }
    out.push_back(line[i]);
  }
  return out;
}

// Launchers prefix every line: `mpirun --tag-output` "[1,0]<stdout>:",
// `srun --label` " 0: ", pdsh "host: ", log collectors a time stamp; a log
// quoted in Markdown starts every line with "> " (nested: "> > "). Strip them
// so the table reads the same.
std::string_view strip_prefix(std::string_view line) {
  for (;;) {
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string_view rest = line.substr(i);
    if (!rest.empty() && rest[0] == '>' && (rest.size() == 1 || rest[1] == ' ' || rest[1] == '\t' || rest[1] == '>')) {
      line = rest.substr(1);
      continue;
    }
    if (!rest.empty() && rest[0] == '[') {
      const std::size_t close = rest.find("]<std");
      const std::size_t colon = rest.find(">:");
      if (close != std::string_view::npos && colon != std::string_view::npos && colon > close) {
        line = rest.substr(colon + 2);
        continue;
      }
      // "[0] " or "[1,0]: " (Intel MPI / hydra `-prepend-rank`, `mpirun -l`).
      std::size_t k = 1;
      while (k < rest.size() && ((rest[k] >= '0' && rest[k] <= '9') || rest[k] == ',')) ++k;
      if (k > 1 && k < rest.size() && rest[k] == ']') {
        std::size_t after = k + 1;
        if (after < rest.size() && rest[after] == ':') ++after;
        if (after == rest.size() || rest[after] == ' ' || rest[after] == '\t') {
          line = rest.substr(after);
          continue;
        }
      }
    }
    std::size_t j = 0;
    while (j < rest.size() && rest[j] >= '0' && rest[j] <= '9') ++j;
    if (j > 0 && j < rest.size() && rest[j] == ':' &&
        (j + 1 == rest.size() || rest[j + 1] == ' ' || rest[j + 1] == '\t')) {
      line = rest.substr(j + 1);
      continue;
    }
    if (const std::size_t n = host_or_time_prefix(rest)) {
      line = rest.substr(n);
      continue;
    }
    if (const std::size_t n = runner_prefix(rest)) {
      line = rest.substr(n);
      continue;
    }
    return line;
  }
}

// Tokens of a comment line with the leading '#' removed ("#  size" or "#size").
std::vector<std::string> comment_tokens(std::vector<std::string> t) {
  if (!t.empty() && t[0][0] == '#') {
    if (t[0] == "#")
      t.erase(t.begin());
    else
      t[0] = t[0].substr(1);
  }
  return t;
}

std::string nccl_version_from_code(std::int64_t code) {
  // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9 (major*1000 + minor*100 + patch before).
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

// "#  Rank  3 Group  0 Pid 1234 on host-a device  3 [0x5a] NVIDIA H100 80GB HBM3"
// (Group and Pid are missing in some versions).
std::optional<Device> parse_device(const std::vector<std::string>& t) {
  if (t.size() < 6 || t[0] != "Rank") return std::nullopt;
  Device d;
  auto r = parse_int(t[1]);
  if (!r) return std::nullopt;
  d.rank = *r;
  std::size_t i = 2;
  if (i + 1 < t.size() && t[i] == "Group") {
    auto g = parse_int(t[i + 1]);
    if (!g) return std::nullopt;
    d.group = *g;
    i += 2;
  }
  if (i + 1 < t.size() && t[i] == "Pid") i += 2;
  if (i + 1 >= t.size() || t[i] != "on") return std::nullopt;
  d.host = t[i + 1];
  i += 2;
  if (i + 1 >= t.size() || t[i] != "device") return std::nullopt;
  if (auto gpu = parse_int(t[i + 1])) d.gpu = *gpu;
  i += 2;
  if (i < t.size() && t[i].front() == '[') {
    while (i < t.size() && t[i].back() != ']') ++i;
    ++i;
  }
  for (; i < t.size(); ++i) d.model += (d.model.empty() ? "" : " ") + t[i];
  return d;
}

std::optional<RatioObs> ratio_of(const std::string& algbw, const std::string& busbw, const std::string& where) {
  const auto a = parse_double(algbw), b = parse_double(busbw);
  if (!a || !b || *a < 0 || *b < 0) return std::nullopt;
  // Half a unit of the last printed digit: "22.72" -> 0.005, "11812" -> 0.5.
  auto half_ulp = [](const std::string& x) {
    const std::size_t dot = x.find('.');
    if (x.find_first_of("eE") != std::string::npos) return std::abs(parse_double(x).value_or(0)) * 5e-7;
    const int decimals = dot == std::string::npos ? 0 : int(x.size() - dot - 1);
    return 0.5 * std::pow(10.0, -decimals);
  };
  const double ha = half_ulp(algbw), hb = half_ulp(busbw);
  if (*a - ha <= 0) return std::nullopt;
  RatioObs r;
  r.where = where;
  r.algbw = algbw;
  r.busbw = busbw;
  r.lo = std::max(0.0, *b - hb) / (*a + ha);
  r.hi = (*b + hb) / (*a - ha);
  return r;
}

}  // namespace planner::nccl_tests_detail
