#include "planner/calibrate/measurements.h"

#include "io/field_reader.h"

#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"

namespace planner {

using detail::FieldReader;
using detail::throw_if_problems;
using nlohmann::json;

namespace {

constexpr EnumName<GroupKind> kGroupNames[] = {
    {GroupKind::world, "world"}, {GroupKind::intra_node, "intra_node"}, {GroupKind::inter_node, "inter_node"}};
constexpr EnumName<int> kStatistics[] = {{0, "median"}, {1, "mean"}};

// Relative tolerance for algbw/busbw against bytes/time: the writers compute
// them from the same doubles, nccl-tests prints 2 decimals (import recomputes).
constexpr double kBandwidthRtol = 1e-6;

bool close(double a, double b) { return std::abs(a - b) <= kBandwidthRtol * std::max(std::abs(a), std::abs(b)); }

const json* list_field(FieldReader& r, const std::string& key, bool required) {
  const json* v = r.get(key, required, "a list");
  if (v && !v->is_array()) {
    r.problem(key, fmt::format("expected a list, got {}", detail::describe(*v)));
    return nullptr;
  }
  return v;
}

MeasuredSeries read_series(const json& sj, const std::string& path, std::vector<std::string>& problems) {
  MeasuredSeries s;
  FieldReader r(sj, path, problems);
  const std::size_t before = problems.size();
  s.collective = r.choice("collective", kCollectiveKeyNames, Collective::all_reduce);
  s.group = r.choice("group", kGroupNames, GroupKind::world);
  const std::size_t before_shape = problems.size();
  s.group_size = r.integer_in("group_size", 2, 1 << 24, true, 2);
  s.ranks_per_node = r.integer_in("ranks_per_node", 1, 1 << 24, true, 1);
  s.nodes = r.integer_in("nodes", 1, 1 << 24, true, 1);
  // A field already refused holds its fallback, which the checks below would
  // then hold against the others (group_size 16.0: "got 2").
  const bool shape_read = problems.size() == before_shape;
  s.concurrent_groups = r.integer_in("concurrent_groups", 1, 1 << 24, false, 1);
  s.nodes_per_nvlink_domain = r.integer_in("nodes_per_nvlink_domain", 1, 1 << 24, false, 0);
  s.dtype = r.string("dtype");
  const int stat = r.choice("time_statistic", kStatistics, 0);
  s.time_statistic = stat == 0 ? "median" : "mean";
  if (shape_read && s.group_size != s.ranks_per_node * s.nodes)
    r.problem("group_size",
              fmt::format("expected ranks_per_node * nodes = {}, got {}", s.ranks_per_node * s.nodes, s.group_size));
  if (shape_read && s.group == GroupKind::intra_node && s.nodes != 1)
    r.problem("nodes", fmt::format("expected 1 for an intra_node group, got {}", s.nodes));
  if (shape_read && s.group == GroupKind::inter_node && s.ranks_per_node != 1)
    r.problem("ranks_per_node", fmt::format("expected 1 for an inter_node group, got {}", s.ranks_per_node));
  if (!fills_nvlink_domains(s))
    r.problem("nodes_per_nvlink_domain",
              fmt::format("expected a divisor of the series' nodes ({}) or at least {}, got {}", s.nodes, s.nodes,
                          s.nodes_per_nvlink_domain));
  const bool shape_ok = problems.size() == before;  // else the bandwidth checks would repeat the problem
  if (const json* pts = list_field(r, "points", true)) {
    if (pts->empty()) r.problem("points", "expected at least one point");
    for (std::size_t i = 0; i < pts->size(); ++i) {
      const std::string pp = fmt::format("{}.points[{}]", path, i);
      const json& pj = (*pts)[i];
      if (!pj.is_object()) {
        problems.push_back(pp + ": expected an object");
        continue;
      }
      FieldReader q(pj, pp, problems);
      MeasuredPoint p;
      p.bytes = q.number("bytes", 0, 1e15);
      p.time_s = q.number("time_s", 0, 1e5);
      p.time_min_s = q.number("time_min_s", 0, 1e5, false, 0);
      p.algbw_bytes_per_s = q.number("algbw_bytes_per_s", 0, 1e18);
      p.busbw_bytes_per_s = q.number("busbw_bytes_per_s", 0, 1e18);
      q.reject_unknown();
      if (p.bytes > 0 && p.time_s > 0 && p.algbw_bytes_per_s > 0 && p.busbw_bytes_per_s > 0 && shape_ok) {
        if (p.bytes != std::floor(p.bytes))
          q.problem("bytes", fmt::format("expected a whole number of bytes, got {}", p.bytes));
        if (p.time_min_s > p.time_s * (1 + 1e-12))
          q.problem("time_min_s", fmt::format("expected at most time_s {:g}, got {:g}", p.time_s, p.time_min_s));
        const MeasuredPoint want = make_point(s.collective, s.group_size, p.bytes, p.time_s);
        if (!close(p.algbw_bytes_per_s, want.algbw_bytes_per_s))
          q.problem("algbw_bytes_per_s", fmt::format("expected bytes / time_s = {:.9g}, got {:.9g}",
                                                     want.algbw_bytes_per_s, p.algbw_bytes_per_s));
        if (!close(p.busbw_bytes_per_s, want.busbw_bytes_per_s))
          q.problem("busbw_bytes_per_s",
                    fmt::format("expected algbw * {:g} (nccl-tests factor for {} ranks) = {:.9g}, got {:.9g}",
                                bus_bandwidth_factor(s.collective, s.group_size), s.group_size, want.busbw_bytes_per_s,
                                p.busbw_bytes_per_s));
        if (!s.points.empty() && p.bytes <= s.points.back().bytes)
          q.problem("bytes", fmt::format("expected sizes in ascending order without repeats, got {} after {}", p.bytes,
                                         s.points.back().bytes));
      }
      s.points.push_back(p);
    }
  }
  r.reject_unknown();
  return s;
}

std::map<std::string, std::string> read_versions(FieldReader& r, std::vector<std::string>& problems) {
  std::map<std::string, std::string> out;
  const json* v = r.object("versions", false);
  if (!v) return out;
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it->is_string())
      out[it.key()] = it->get<std::string>();
    else
      problems.push_back(
          fmt::format("{}: expected a string, got {}", r.field("versions") + "." + it.key(), detail::describe(*it)));
  }
  return out;
}

}  // namespace

double bus_bandwidth_factor(Collective c, std::int64_t group_size) {
  const double p = double(std::max<std::int64_t>(group_size, 1));
  switch (c) {
    case Collective::all_reduce:
      return 2.0 * (p - 1.0) / p;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all:
      return (p - 1.0) / p;
    case Collective::send_recv:
      return 1.0;
  }
  return 1.0;
}

MeasuredPoint make_point(Collective c, std::int64_t group_size, double bytes, double time_s, double time_min_s) {
  MeasuredPoint p;
  p.bytes = bytes;
  p.time_s = time_s;
  p.time_min_s = time_min_s;
  p.algbw_bytes_per_s = bytes / time_s;
  p.busbw_bytes_per_s = p.algbw_bytes_per_s * bus_bandwidth_factor(c, group_size);
  return p;
}

bool fills_nvlink_domains(const MeasuredSeries& s) {
  const std::int64_t d = s.nodes_per_nvlink_domain;
  return d <= 1 || d >= s.nodes || s.nodes % d == 0;
}

const char* to_string(GroupKind g) {
  for (const auto& n : kGroupNames)
    if (n.value == g) return n.name.data();  // string literals: null-terminated
  return "?";
}

std::string describe(const MeasuredSeries& s) {
  return fmt::format("{} {} {} ranks ({} per node x {} node{})", collective_key(s.collective), to_string(s.group),
                     s.group_size, s.ranks_per_node, s.nodes, s.nodes == 1 ? "" : "s");
}

namespace {

// The shape every GEMM record carries: name, dtype and m x n x k.
template <class Gemm>
void read_gemm_shape(FieldReader& g, Gemm& x) {
  x.name = g.string("name");
  x.dtype = std::string(to_string(g.choice("dtype", kDTypeNames, DType::bf16)));
  x.m = g.integer_in("m", 1, 1 << 24, true, 1);
  x.n = g.integer_in("n", 1, 1 << 24, true, 1);
  x.k = g.integer_in("k", 1, 1 << 24, true, 1);
}

// One GEMM timing of planner-bench (docs/calibration.md); its FLOP/s must be 2mnk / time.
GemmMeasurement read_gemm(const json& j, const std::string& path, std::vector<std::string>& problems) {
  FieldReader g(j, path, problems);
  GemmMeasurement x;
  read_gemm_shape(g, x);
  x.time_s = g.number("time_s", 0, 1e5);
  x.time_min_s = g.number("time_min_s", 0, 1e5, false, 0);
  x.flops_per_s = g.number("flops_per_s", 0, 1e18);
  g.reject_unknown();
  if (x.time_s > 0 && x.flops_per_s > 0) {
    const double want = 2.0 * double(x.m) * double(x.n) * double(x.k) / x.time_s;
    if (!close(want, x.flops_per_s))
      g.problem("flops_per_s", fmt::format("expected 2*m*n*k / time_s = {:.9g}, got {:.9g}", want, x.flops_per_s));
  }
  return x;
}

// One HBM copy timing; its bandwidth counts the read and the write.
HbmMeasurement read_hbm(const json& j, const std::string& path, std::vector<std::string>& problems) {
  FieldReader h(j, path, problems);
  HbmMeasurement x;
  x.method = h.string("method");
  x.bytes = h.number("bytes", 0, 1e15);
  x.time_s = h.number("time_s", 0, 1e5);
  x.time_min_s = h.number("time_min_s", 0, 1e5, false, 0);
  x.bandwidth_bytes_per_s = h.number("bandwidth_bytes_per_s", 0, 1e18);
  h.reject_unknown();
  if (x.time_s > 0 && x.bandwidth_bytes_per_s > 0 && !close(2.0 * x.bytes / x.time_s, x.bandwidth_bytes_per_s))
    h.problem("bandwidth_bytes_per_s", fmt::format("expected 2 * bytes / time_s = {:.9g}, got {:.9g}",
                                                   2.0 * x.bytes / x.time_s, x.bandwidth_bytes_per_s));
  return x;
}

// One sustained GEMM run; the sustained rate may not exceed the burst rate by
// more than measurement noise.
SustainedGemmMeasurement read_sustained(const json& j, const std::string& path, std::vector<std::string>& problems) {
  FieldReader g(j, path, problems);
  SustainedGemmMeasurement x;
  read_gemm_shape(g, x);
  x.duration_s = g.number("duration_s", 0, 1e5);
  x.burst_flops_per_s = g.number("burst_flops_per_s", 0, 1e18);
  x.sustained_flops_per_s = g.number("sustained_flops_per_s", 0, 1e18);
  g.reject_unknown();
  if (x.burst_flops_per_s > 0 && x.sustained_flops_per_s > 1.1 * x.burst_flops_per_s)
    g.problem("sustained_flops_per_s", fmt::format("expected at most the burst rate ({:.4g}) plus noise, got {:.4g}",
                                                   x.burst_flops_per_s, x.sustained_flops_per_s));
  return x;
}

}  // namespace

MeasurementSet measurements_from_json(const json& j, const std::string& origin) {
  if (!j.is_object())
    throw InputError(origin, "expected a JSON object of collective measurements (docs/calibration.md)");
  std::vector<std::string> problems;
  FieldReader r(j, "", problems);
  MeasurementSet m;
  const std::int64_t v = r.integer("schema_version", 1);
  if (v != 0 && v != kMeasurementSchemaVersion)
    r.problem("schema_version", fmt::format("expected {}, got {}", kMeasurementSchemaVersion, v));
  m.tool = r.string("tool");
  m.backend = r.string("backend");
  m.device = r.string("device");
  m.hosts = r.string_list("hosts");
  m.world_size = r.integer_in("world_size", 1, 1 << 24, true, 1);
  m.nodes = r.integer_in("nodes", 1, 1 << 24, true, 1);
  m.ranks_per_node = r.integer_in("ranks_per_node", 1, 1 << 24, true, 1);
  m.emulated_nodes = r.boolean("emulated_nodes", false, false);
  m.versions = read_versions(r, problems);
  m.command = r.string("command", false);
  if (const json* ss = list_field(r, "series", true)) {
    std::set<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>> seen;
    for (std::size_t i = 0; i < ss->size(); ++i) {
      const std::string path = fmt::format("series[{}]", i);
      if (!(*ss)[i].is_object()) {
        problems.push_back(path + ": expected an object");
        continue;
      }
      MeasuredSeries s = read_series((*ss)[i], path, problems);
      if (!seen.insert({int(s.collective), s.group_size, s.ranks_per_node, s.nodes}).second)
        problems.push_back(
            fmt::format("{}: a second series for {} (one series per collective and group shape)", path, describe(s)));
      m.series.push_back(std::move(s));
    }
  }
  if (const json* gs = list_field(r, "gemm", false)) {
    for (std::size_t i = 0; i < gs->size(); ++i) {
      const std::string path = fmt::format("gemm[{}]", i);
      if (!(*gs)[i].is_object()) {
        problems.push_back(path + ": expected an object");
        continue;
      }
      m.gemm.push_back(read_gemm((*gs)[i], path, problems));
    }
  }
  if (const json* hs = list_field(r, "hbm", false)) {
    for (std::size_t i = 0; i < hs->size(); ++i) {
      const std::string path = fmt::format("hbm[{}]", i);
      if (!(*hs)[i].is_object()) {
        problems.push_back(path + ": expected an object");
        continue;
      }
      m.hbm.push_back(read_hbm((*hs)[i], path, problems));
    }
  }
  if (const json* ss = list_field(r, "gemm_sustained", false)) {
    for (std::size_t i = 0; i < ss->size(); ++i) {
      const std::string path = fmt::format("gemm_sustained[{}]", i);
      if (!(*ss)[i].is_object()) {
        problems.push_back(path + ": expected an object");
        continue;
      }
      m.gemm_sustained.push_back(read_sustained((*ss)[i], path, problems));
    }
  }
  // The run's shape against itself and its series: contradictions are errors
  // (world_size 64 on 2 nodes x 8 ranks; a series on 16 nodes of a file on 8).
  if (problems.empty()) {
    if (m.world_size != m.nodes * m.ranks_per_node)
      problems.push_back(fmt::format("world_size: expected nodes * ranks_per_node = {} * {} = {}, got {}", m.nodes,
                                     m.ranks_per_node, m.nodes * m.ranks_per_node, m.world_size));
    for (std::size_t i = 0; i < m.series.size(); ++i) {
      const MeasuredSeries& s = m.series[i];
      if (s.group_size > m.world_size)
        problems.push_back(
            fmt::format("world_size: expected at least the largest group ({}), got {}", s.group_size, m.world_size));
      if (s.nodes > m.nodes)
        problems.push_back(
            fmt::format("series[{}].nodes: expected at most the file's nodes ({}), got {}", i, m.nodes, s.nodes));
    }
  }
  r.reject_unknown();
  throw_if_problems(origin, problems);
  return m;
}

nlohmann::ordered_json to_json(const MeasurementSet& m) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["schema_version"] = kMeasurementSchemaVersion;
  j["tool"] = m.tool;
  j["backend"] = m.backend;
  j["device"] = m.device;
  j["hosts"] = m.hosts;
  j["world_size"] = m.world_size;
  j["nodes"] = m.nodes;
  j["ranks_per_node"] = m.ranks_per_node;
  if (m.emulated_nodes) j["emulated_nodes"] = true;
  j["versions"] = ojson::object();
  for (const auto& [k, v] : m.versions) j["versions"][k] = v;
  if (!m.command.empty()) j["command"] = m.command;
  ojson series = ojson::array();
  for (const MeasuredSeries& s : m.series) {
    ojson pts = ojson::array();
    for (const MeasuredPoint& p : s.points) {
      ojson pj;
      // Sizes are whole bytes; write them as integers.
      if (p.bytes == std::floor(p.bytes) && p.bytes < 9e15)
        pj["bytes"] = std::int64_t(p.bytes);
      else
        pj["bytes"] = p.bytes;
      pj["time_s"] = p.time_s;
      if (p.time_min_s > 0) pj["time_min_s"] = p.time_min_s;
      pj["algbw_bytes_per_s"] = p.algbw_bytes_per_s;
      pj["busbw_bytes_per_s"] = p.busbw_bytes_per_s;
      pts.push_back(pj);
    }
    ojson sj = ojson::object();
    sj["collective"] = collective_key(s.collective);
    sj["group"] = to_string(s.group);
    sj["group_size"] = s.group_size;
    sj["ranks_per_node"] = s.ranks_per_node;
    sj["nodes"] = s.nodes;
    sj["concurrent_groups"] = s.concurrent_groups;
    if (s.nodes_per_nvlink_domain > 0) sj["nodes_per_nvlink_domain"] = s.nodes_per_nvlink_domain;
    sj["dtype"] = s.dtype;
    sj["time_statistic"] = s.time_statistic;
    sj["points"] = pts;
    series.push_back(sj);
  }
  j["series"] = series;
  if (!m.gemm.empty()) {
    ojson g = ojson::array();
    for (const GemmMeasurement& x : m.gemm) {
      ojson xj = {{"name", x.name}, {"dtype", x.dtype}, {"m", x.m}, {"n", x.n}, {"k", x.k}, {"time_s", x.time_s}};
      if (x.time_min_s > 0) xj["time_min_s"] = x.time_min_s;
      xj["flops_per_s"] = x.flops_per_s;
      g.push_back(xj);
    }
    j["gemm"] = g;
  }
  if (!m.hbm.empty()) {
    ojson h = ojson::array();
    for (const HbmMeasurement& x : m.hbm) {
      ojson xj = {{"method", x.method}, {"bytes", std::int64_t(x.bytes)}, {"time_s", x.time_s}};
      if (x.time_min_s > 0) xj["time_min_s"] = x.time_min_s;
      xj["bandwidth_bytes_per_s"] = x.bandwidth_bytes_per_s;
      h.push_back(xj);
    }
    j["hbm"] = h;
  }
  if (!m.gemm_sustained.empty()) {
    ojson g = ojson::array();
    for (const SustainedGemmMeasurement& x : m.gemm_sustained)
      g.push_back({{"name", x.name},
                   {"dtype", x.dtype},
                   {"m", x.m},
                   {"n", x.n},
                   {"k", x.k},
                   {"duration_s", x.duration_s},
                   {"burst_flops_per_s", x.burst_flops_per_s},
                   {"sustained_flops_per_s", x.sustained_flops_per_s}});
    j["gemm_sustained"] = g;
  }
  return j;
}

MeasurementSet load_measurements_file(const std::string& path) {
  return measurements_from_json(read_json_file(path), path);
}

std::string render_measurements(const MeasurementSet& m) { return to_json(m).dump(2) + "\n"; }

}  // namespace planner
