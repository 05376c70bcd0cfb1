// nccl-tests output -> measurements. The text layouts differ between versions
// only in which columns exist, so every table is read by the tokens of its own
// header line (nccl-tests src/common.cu and src/util.cu, writeResultHeader):
//   2.14+  size count type redop root time algbw busbw #wrong time algbw busbw #wrong
//   ~2019  size count type redop time algbw busbw error time algbw busbw error
//   ~2018  size count type time algbw busbw error ...   (all_gather, no redop)
// Only size and the out-of-place time are used; algbw/busbw are recomputed
// (measurements.cpp) because old all-gather logs folded (p-1)/p into algbw
// (NVIDIA/nccl-tests#45).
#include "planner/calibrate/nccl_tests_import.h"
#include "planner/io/read_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/spec/input_error.h"

namespace planner {

using nlohmann::json;

namespace {

struct Device {
  std::int64_t rank = 0;
  std::int64_t group = 0;
  std::string host;
  std::string model;
};

struct Row {
  double bytes = 0;
  double time_s = 0;
};

// What one result table measured, before it becomes a series.
struct Table {
  std::string origin;     // "file:line" of the header
  std::string test_name;  // e.g. "all_reduce_perf"; empty when the log does not say
  std::vector<Device> devices;
  std::vector<Row> rows;
  std::string dtype, redop;
  std::size_t skipped_other_type = 0;
  std::size_t skipped_zero = 0;
};

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

}  // namespace

std::optional<Collective> collective_from_nccl_test_name(std::string_view name) {
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
  // all_reduce_perf, or all_reduce_perf_mpi as some packages name the MPI build.
  for (std::string_view suffix : {"_mpi", "_perf"})
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
      name.remove_suffix(suffix.size());
  if (name == "all_reduce") return Collective::all_reduce;
  if (name == "all_gather") return Collective::all_gather;
  if (name == "reduce_scatter") return Collective::reduce_scatter;
  if (name == "alltoall") return Collective::all_to_all;
  if (name == "sendrecv") return Collective::send_recv;
  return std::nullopt;
}

void import_nccl_tests_text(std::string_view text, const std::string& origin, const NcclTestsImportOptions& opt,
                            NcclTestsImport& out) {
  std::vector<Device> devices;
  bool in_devices = false;
  std::string test_name;
  std::optional<Table> table;
  std::vector<std::string> header;
  std::size_t idx_type = 0, idx_time = 0, n_columns = 0;
  std::vector<std::size_t> idx_wrong;  // out-of-place and in-place
  std::optional<std::size_t> idx_redop;
  bool wrong_is_count = false, units_pending = false;
  std::size_t header_line = 0, tables = 0;

  std::size_t line_no = 0, pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const std::string_view line = strip_prefix(raw);
    const std::vector<std::string> tok = split(line);
    const std::string where = fmt::format("{}:{}", origin, line_no);
    if (tok.empty()) {
      if (eol == text.size()) break;
      continue;
    }
    const bool comment = tok[0][0] == '#';
    const std::vector<std::string> ct = comment_tokens(tok);

    if (const std::size_t at = line.find("NCCL version "); at != std::string_view::npos) {
      const auto v = split(line.substr(at + 13));
      if (!v.empty()) out.measurements.versions["nccl"] = v[0];
    }
    if (ct.size() >= 3 && ct[0] == "nccl-tests" && ct[1] == "version") {
      out.measurements.versions["nccl_tests"] = ct[2];
      for (const std::string& x : ct)
        if (x.rfind("nccl-library=", 0) == 0)
          if (auto code = parse_int(std::string_view(x).substr(13)); code && !out.measurements.versions.count("nccl"))
            out.measurements.versions["nccl"] = nccl_version_from_code(*code);
    }
    if (ct.size() >= 4 && ct[0] == "Collective" && ct[1] == "test" && ct[2] == "starting:") {
      test_name = ct[3];
      continue;
    }
    if (ct.size() >= 2 && ct[0] == "Using" && ct[1] == "devices") {
      devices.clear();
      in_devices = true;
      continue;
    }
    if (auto d = parse_device(ct)) {
      if (!in_devices) devices.clear();
      in_devices = true;
      devices.push_back(*d);
      continue;
    }
    in_devices = in_devices && comment && ct.empty();

    // A header: its first token is size (or bytes), and it has algbw and busbw.
    if (!ct.empty() && (ct[0] == "size" || ct[0] == "bytes") && std::count(ct.begin(), ct.end(), "algbw") &&
        std::count(ct.begin(), ct.end(), "busbw")) {
      if (table) finish_table(*table, opt, out);
      table.emplace();
      ++tables;
      table->origin = where;
      table->test_name = test_name;
      table->devices = devices;
      header = ct;
      header_line = line_no;
      n_columns = header.size() + (std::count(header.begin(), header.end(), "timestamp") ? 1 : 0);
      auto find = [&](std::initializer_list<const char*> names) -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < header.size(); ++i)
          for (const char* n : names)
            if (header[i] == n) return i;
        return std::nullopt;
      };
      const auto type = find({"type"});
      const auto time = find({"time", "cputime"});
      idx_wrong.clear();
      for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == "#wrong" || header[i] == "error" || header[i] == "res") idx_wrong.push_back(i);
      if (!type || !time || idx_wrong.empty() || idx_wrong.front() < *time)
        throw InputError(where, "a result header without the type, time and #wrong/error columns nccl-tests prints");
      idx_type = *type;
      idx_time = *time;
      idx_redop = find({"redop", "op"});
      wrong_is_count = header[idx_wrong.front()] == "#wrong";
      units_pending = true;
      continue;
    }
    if (!table) continue;
    if (comment) {
      if (units_pending && !ct.empty() && ct[0] == "(B)") {
        units_pending = false;
        continue;
      }
      // "# Out of bounds values : 3 FAILED": nccl-tests' own verdict on the run.
      if (ct.size() >= 6 && ct[0] == "Out" && ct[2] == "bounds") {
        const auto n = parse_int(ct[5]);
        if (ct.size() >= 7 && ct[6] == "FAILED")
          throw InputError(
              where,
              fmt::format("nccl-tests reported {} out-of-bounds values (FAILED); a failed run is not a measurement",
                          n ? std::to_string(*n) : ct[5]));
      }
      if (!table->rows.empty() || table->skipped_zero || table->skipped_other_type) {
        finish_table(*table, opt, out);
        table.reset();
      }
      continue;
    }
    units_pending = false;
    // Without '#', nccl-tests prints only result rows; NCCL's INFO/WARN lines
    // ("host:pid:tid [0] NCCL INFO ...") and launcher chatter do not start with a number.
    if (!all_digits(tok[0])) continue;
    if (tok.size() != n_columns)
      throw InputError(where, fmt::format("expected {} columns as in the header on line {} ({}), got {}", n_columns,
                                          header_line, fmt::join(header, " "), tok.size()));
    const auto bytes = parse_int(tok[0]);
    const auto time_us = parse_double(tok[idx_time]);
    if (!bytes) throw InputError(where, fmt::format("size: expected a byte count, got '{}'", tok[0]));
    if (!time_us || *time_us < 0)
      throw InputError(where,
                       fmt::format("{}: expected a time in microseconds, got '{}'", header[idx_time], tok[idx_time]));
    for (std::size_t k = 0; k < idx_wrong.size(); ++k) {
      const std::string& wrong = tok[idx_wrong[k]];
      if (wrong == "N/A") continue;
      const auto w = parse_double(wrong);
      if (!w)
        throw InputError(where, fmt::format("{}: expected a number or N/A, got '{}'", header[idx_wrong[k]], wrong));
      if (wrong_is_count && *w > 0)
        throw InputError(
            where, fmt::format("nccl-tests counted {} wrong elements ({}); a failed run is not a measurement", wrong,
                               k == 0 ? "out-of-place" : "in-place"));
    }
    const std::string& dtype = tok[idx_type];
    const std::string redop = idx_redop ? tok[*idx_redop] : "none";
    if (table->dtype.empty()) {
      table->dtype = dtype;
      table->redop = redop;
    }
    if (dtype != table->dtype || redop != table->redop) {
      ++table->skipped_other_type;
      continue;
    }
    if (*bytes == 0 || *time_us == 0) {
      ++table->skipped_zero;
      continue;
    }
    table->rows.push_back(Row{double(*bytes), *time_us / 1e6});
  }
  if (table) finish_table(*table, opt, out);
  if (tables == 0)
    throw InputError(origin,
                     "no nccl-tests result table (expected a header line with size, time, algbw and busbw columns)");
}

void import_nccl_tests_json(std::string_view text, const std::string& origin, const NcclTestsImportOptions& opt,
                            NcclTestsImport& out) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::size_t at = std::min<std::size_t>(e.byte, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n');
    throw InputError(fmt::format("{}:{}", origin, line), "malformed JSON (expected an nccl-tests -J output file)");
  } catch (const json::exception&) {
    // out_of_range 406: a number too large for a double (found by fuzz_nccl_tests_log).
    throw InputError(origin, "malformed JSON: a number out of range (expected an nccl-tests -J output file)");
  }
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
    throw InputError(origin, "results: missing (expected an nccl-tests -J output file with a results list)");
  std::string test_name;
  if (j.contains("args") && j["args"].is_array() && !j["args"].empty() && j["args"][0].is_string())
    test_name = j["args"][0].get<std::string>();
  if (j.contains("nccl_version") && j["nccl_version"].is_number_integer())
    out.measurements.versions["nccl"] = nccl_version_from_code(j["nccl_version"].get<std::int64_t>());
  std::vector<Device> devices;
  if (j.contains("config") && j["config"].is_object() && j["config"].contains("devices") &&
      j["config"]["devices"].is_array()) {
    const json& ds = j["config"]["devices"];
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const json& d = ds[i];
      if (!d.is_object() || !d.contains("hostname") || !d["hostname"].is_string())
        throw InputError(fmt::format("{}: config.devices[{}].hostname", origin, i), "missing (expected a string)");
      Device dev;
      dev.host = d["hostname"].get<std::string>();
      if (d.contains("rank") && d["rank"].is_number_integer()) dev.rank = d["rank"].get<std::int64_t>();
      if (d.contains("group") && d["group"].is_number_integer()) dev.group = d["group"].get<std::int64_t>();
      if (d.contains("device_info") && d["device_info"].is_string()) dev.model = d["device_info"].get<std::string>();
      devices.push_back(dev);
    }
  }
  if (j.contains("out_of_bounds") && j["out_of_bounds"].is_object() && j["out_of_bounds"].contains("count") &&
      j["out_of_bounds"]["count"].is_number() && j["out_of_bounds"]["count"].get<double>() > 0)
    throw InputError(origin + ": out_of_bounds.count",
                     fmt::format("nccl-tests reported {} out-of-bounds values; a failed run is not a measurement",
                                 j["out_of_bounds"]["count"].dump()));
  Table t;
  t.origin = origin;
  t.test_name = test_name;
  t.devices = devices;
  const json& results = j["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string path = fmt::format("{}: results[{}]", origin, i);
    const json& r = results[i];
    if (!r.is_object()) throw InputError(path, "expected an object");
    if (!r.contains("size") || !r["size"].is_number_unsigned())
      throw InputError(path + ".size", "expected a byte count");
    const json* body = r.contains("out_of_place") && r["out_of_place"].is_object() ? &r["out_of_place"] : nullptr;
    std::string which = "out_of_place";
    if (!body && r.contains("in_place") && r["in_place"].is_object()) body = &r["in_place"], which = "in_place";
    if (!body)
      throw InputError(path + ".out_of_place", "missing (expected an object with time, alg_bw, bus_bw, nwrong)");
    const json* time = body->contains("time")       ? &(*body)["time"]
                       : body->contains("cpu_time") ? &(*body)["cpu_time"]
                                                    : nullptr;
    if (!time || !time->is_number() || !std::isfinite(time->get<double>()) || time->get<double>() < 0)
      throw InputError(fmt::format("{}.{}.time", path, which),
                       fmt::format("expected a time in microseconds, got {}", time ? time->dump() : "nothing"));
    for (const char* part : {"out_of_place", "in_place"})
      if (r.contains(part) && r[part].is_object() && r[part].contains("nwrong") && r[part]["nwrong"].is_number() &&
          r[part]["nwrong"].get<double>() > 0)
        throw InputError(fmt::format("{}.{}.nwrong", path, part),
                         fmt::format("nccl-tests counted {} wrong elements; a failed run is not a measurement",
                                     r[part]["nwrong"].dump()));
    const std::string dtype = r.contains("type") && r["type"].is_string() ? r["type"].get<std::string>() : "unknown";
    const std::string redop = r.contains("redop") && r["redop"].is_string() ? r["redop"].get<std::string>() : "none";
    if (t.dtype.empty()) t.dtype = dtype, t.redop = redop;
    if (dtype != t.dtype || redop != t.redop) {
      ++t.skipped_other_type;
      continue;
    }
    const double bytes = double(r["size"].get<std::uint64_t>());
    const double us = time->get<double>();
    if (bytes == 0 || us == 0) continue;
    t.rows.push_back(Row{bytes, us / 1e6});
  }
  finish_table(t, opt, out);
}

NcclTestsImport import_nccl_tests_files(const std::vector<std::string>& paths, const NcclTestsImportOptions& opt) {
  if (paths.empty()) throw InputError("import-nccl-tests", "expected at least one nccl-tests log");
  NcclTestsImport out;
  for (const std::string& path : paths) {
    const std::string text = read_input_file(path);
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{')
      import_nccl_tests_json(text, path, opt, out);
    else
      import_nccl_tests_text(text, path, opt, out);
  }
  MeasurementSet& m = out.measurements;
  if (m.series.empty()) throw InputError(paths.front(), "no series of a planner collective in the given logs");
  m.tool = "nccl-tests (imported by planner calibrate import-nccl-tests)";
  m.backend = "nccl-tests";
  if (m.device.empty()) m.device = "unknown (the logs list no devices)";
  // The largest run stands for the machine's shape.
  const MeasuredSeries* big = &m.series.front();
  for (const MeasuredSeries& s : m.series)
    if (s.group_size * s.concurrent_groups > big->group_size * big->concurrent_groups) big = &s;
  m.world_size = big->group_size * big->concurrent_groups;
  const std::int64_t hosts = std::int64_t(m.hosts.size());
  if (hosts > 0 && m.world_size % hosts == 0) {
    m.nodes = hosts;
    m.ranks_per_node = m.world_size / hosts;
  } else {
    m.nodes = big->nodes;
    m.ranks_per_node = big->ranks_per_node;
  }
  return out;
}

}  // namespace planner
