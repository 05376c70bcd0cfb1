// nccl-tests output -> measurements, the part the text and JSON readers
// share: tokens, devices, and a finished table -> a series. The text layouts differ between versions
// only in which columns exist, so every table is read by the tokens of its own
// header line (nccl-tests src/common.cu and src/util.cu, writeResultHeader):
//   2.14+  size count type redop root time algbw busbw #wrong time algbw busbw #wrong
//   ~2019  size count type redop time algbw busbw error time algbw busbw error
//   ~2018  size count type time algbw busbw error ...   (all_gather, no redop)
// Only size and the out-of-place time are used; algbw/busbw are recomputed
// (measurements.cpp) because old all-gather logs folded (p-1)/p into algbw
// (NVIDIA/nccl-tests#45).
#include "calibrate/nccl_tests_tables.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

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

// Launchers prefix every line: `mpirun --tag-output` "[1,0]<stdout>:",
// `srun --label` " 0: ". Strip them so the table reads the same.
std::string_view strip_prefix(std::string_view line) {
  for (;;) {
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string_view rest = line.substr(i);
    if (!rest.empty() && rest[0] == '[') {
      const std::size_t close = rest.find("]<std");
      const std::size_t colon = rest.find(">:");
      if (close != std::string_view::npos && colon != std::string_view::npos && colon > close) {
        line = rest.substr(colon + 2);
        continue;
      }
    }
    std::size_t j = 0;
    while (j < rest.size() && rest[j] >= '0' && rest[j] <= '9') ++j;
    if (j > 0 && j < rest.size() && rest[j] == ':' &&
        (j + 1 == rest.size() || rest[j + 1] == ' ' || rest[j + 1] == '\t')) {
      line = rest.substr(j + 1);
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
  i += 2;
  if (i < t.size() && t[i].front() == '[') {
    while (i < t.size() && t[i].back() != ']') ++i;
    ++i;
  }
  for (; i < t.size(); ++i) d.model += (d.model.empty() ? "" : " ") + t[i];
  return d;
}

namespace {

struct Shape {
  std::int64_t group_size = 0, ranks_per_node = 0, nodes = 0, concurrent = 1;
  GroupKind kind = GroupKind::world;
  std::vector<std::string> hosts;
};

Shape shape_of(const std::vector<Device>& devices, const NcclTestsImportOptions& opt, const std::string& where) {
  Shape s;
  if (devices.empty()) {
    if (!opt.ranks || !opt.ranks_per_node)
      throw InputError(
          where, "the log does not list its ranks (no '# Using devices' lines); give --ranks and --ranks-per-node");
    if (*opt.ranks < 2 || *opt.ranks_per_node < 1 || *opt.ranks % *opt.ranks_per_node != 0)
      throw InputError(where, fmt::format("--ranks {} must be at least 2 and a multiple of --ranks-per-node {}",
                                          *opt.ranks, *opt.ranks_per_node));
    s.group_size = *opt.ranks;
    s.ranks_per_node = *opt.ranks_per_node;
    s.nodes = s.group_size / s.ranks_per_node;
    return s;
  }
  // NCCL_TESTS_SPLIT runs several groups at once; "Group" is each rank's group.
  std::map<std::int64_t, std::vector<const Device*>> groups;
  for (const Device& d : devices) groups[d.group].push_back(&d);
  const auto& first = groups.begin()->second;
  for (const auto& [id, members] : groups)
    if (members.size() != first.size())
      throw InputError(
          where,
          fmt::format("groups of different sizes ({} has {} ranks, {} has {}); not a supported NCCL_TESTS_SPLIT layout",
                      groups.begin()->first, first.size(), id, members.size()));
  std::map<std::string, std::int64_t> per_host;
  for (const Device* d : first) {
    if (!per_host.count(d->host)) s.hosts.push_back(d->host);
    ++per_host[d->host];
  }
  for (const auto& [host, n] : per_host)
    if (n != per_host.begin()->second)
      throw InputError(
          where, fmt::format("hosts run different numbers of ranks ({}: {}, {}: {}); give one rank count per node",
                             per_host.begin()->first, per_host.begin()->second, host, n));
  s.group_size = std::int64_t(first.size());
  s.ranks_per_node = per_host.begin()->second;
  s.nodes = std::int64_t(per_host.size());
  s.concurrent = std::int64_t(groups.size());
  if (s.concurrent > 1)
    s.kind = s.nodes == 1 ? GroupKind::intra_node : s.ranks_per_node == 1 ? GroupKind::inter_node : GroupKind::world;
  for (const Device& d : devices)
    if (std::find(s.hosts.begin(), s.hosts.end(), d.host) == s.hosts.end()) s.hosts.push_back(d.host);
  if (opt.ranks && *opt.ranks != s.group_size)
    throw InputError(where, fmt::format("--ranks {} disagrees with the log's device list ({} ranks per group)",
                                        *opt.ranks, s.group_size));
  if (opt.ranks_per_node && *opt.ranks_per_node != s.ranks_per_node)
    throw InputError(where, fmt::format("--ranks-per-node {} disagrees with the log's device list ({} per node)",
                                        *opt.ranks_per_node, s.ranks_per_node));
  if (s.group_size < 2) throw InputError(where, "a one-rank run measures no communication");
  return s;
}

std::optional<Collective> resolve_collective(const std::string& test_name, const NcclTestsImportOptions& opt,
                                             const std::string& where, bool& unsupported) {
  unsupported = false;
  if (test_name.empty()) {
    if (!opt.collective)
      throw InputError(where,
                       "the log does not name its test (no '# Collective test starting:' line, which older nccl-tests "
                       "do not print); "
                       "give --collective");
    return opt.collective;
  }
  const auto c = collective_from_nccl_test_name(test_name);
  if (!c) {
    unsupported = true;
    return std::nullopt;
  }
  if (opt.collective && *opt.collective != *c)
    throw InputError(where, fmt::format("the log names {} but --collective {} was given", test_name,
                                        collective_key(*opt.collective)));
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Adds a table's rows as a series of `out`, merging with an existing series of
// the same collective and shape (several logs of one test); repeated sizes
// keep the median time.
void add_series(Collective c, const Shape& shape, const std::string& dtype, const std::vector<Row>& rows,
                const std::string& where, NcclTestsImport& out) {
  MeasurementSet& m = out.measurements;
  MeasuredSeries* s = nullptr;
  for (MeasuredSeries& x : m.series)
    if (x.collective == c && x.group_size == shape.group_size && x.ranks_per_node == shape.ranks_per_node &&
        x.nodes == shape.nodes)
      s = &x;
  std::map<double, std::vector<double>> times;
  if (s) {
    out.notes.push_back(fmt::format("{}: merged into the earlier {} series", where, describe(*s)));
    for (const MeasuredPoint& p : s->points) times[p.bytes].push_back(p.time_s);
  } else {
    m.series.emplace_back();
    s = &m.series.back();
    s->collective = c;
    s->group = shape.kind;
    s->group_size = shape.group_size;
    s->ranks_per_node = shape.ranks_per_node;
    s->nodes = shape.nodes;
    s->concurrent_groups = shape.concurrent;
    s->dtype = dtype;
    s->time_statistic = "mean";
  }
  for (const Row& r : rows) times[r.bytes].push_back(r.time_s);
  s->points.clear();
  std::size_t repeated = 0;
  for (const auto& [bytes, ts] : times) {
    repeated += ts.size() - 1;
    s->points.push_back(make_point(c, shape.group_size, bytes, median(ts)));
  }
  if (repeated) out.notes.push_back(fmt::format("{}: {} repeated sizes, median time kept", where, repeated));
  for (const std::string& h : shape.hosts)
    if (std::find(m.hosts.begin(), m.hosts.end(), h) == m.hosts.end()) m.hosts.push_back(h);
}

}  // namespace

void finish_table(Table& t, const NcclTestsImportOptions& opt, NcclTestsImport& out) {
  if (t.skipped_other_type)
    out.notes.push_back(fmt::format("{}: {} rows of other data types or reduction ops skipped (kept {} {})", t.origin,
                                    t.skipped_other_type, t.dtype, t.redop));
  if (t.rows.empty()) {
    out.notes.push_back(fmt::format("{}: table without rows of a non-zero size, skipped", t.origin));
    return;
  }
  bool unsupported = false;
  const auto c = resolve_collective(t.test_name, opt, t.origin, unsupported);
  if (unsupported) {
    out.notes.push_back(fmt::format("{}: {} is not a collective the planner prices, skipped", t.origin, t.test_name));
    return;
  }
  const Shape shape = shape_of(t.devices, opt, t.origin);
  if (out.measurements.device.empty() && !t.devices.empty()) out.measurements.device = t.devices.front().model;
  add_series(*c, shape, t.dtype, t.rows, t.origin, out);
}

}  // namespace planner::nccl_tests_detail
