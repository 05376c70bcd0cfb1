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

#include "calibrate/nccl_tests_tables.h"
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
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "planner/spec/input_error.h"

namespace planner {

using nlohmann::json;
using namespace nccl_tests_detail;

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

namespace {

// A result's root where it is a rank (broadcast, reduce); nccl-tests writes
// it as "%6i" text, "    -1" for every other test (src/util.cu).
std::optional<std::int64_t> rank_root(const json& r) {
  if (!r.contains("root") || !r["root"].is_string()) return std::nullopt;
  const auto words = split(r["root"].get<std::string>());
  const auto root = words.empty() ? std::nullopt : parse_int(words[0]);
  return root && *root >= 0 ? root : std::nullopt;
}

// config.devices[] of a -J file: each rank's host, group and device name.
std::vector<Device> json_devices(const json& j, const std::string& origin) {
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
      // The entry's place in the list where it does not print its rank.
      dev.rank = d.contains("rank") && d["rank"].is_number_integer() ? d["rank"].get<std::int64_t>() : std::int64_t(i);
      if (d.contains("group") && d["group"].is_number_integer()) dev.group = d["group"].get<std::int64_t>();
      if (d.contains("device") && d["device"].is_number_integer()) dev.gpu = d["device"].get<std::int64_t>();
      if (d.contains("device_info") && d["device_info"].is_string()) dev.model = d["device_info"].get<std::string>();
      devices.push_back(dev);
    }
  }
  return devices;
}

}  // namespace

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
  const std::vector<Device> devices = json_devices(j, origin);
  if (j.contains("out_of_bounds") && j["out_of_bounds"].is_object() && j["out_of_bounds"].contains("count") &&
      j["out_of_bounds"]["count"].is_number() && j["out_of_bounds"]["count"].get<double>() > 0)
    throw InputError(
        origin + ": out_of_bounds.count",
        fmt::format("nccl-tests reported {} out-of-bounds value{}; a failed run is not a measurement",
                    j["out_of_bounds"]["count"].dump(), j["out_of_bounds"]["count"].get<double>() == 1 ? "" : "s"));
  Table t;
  t.origin = origin;
  t.test_name = test_name;
  set_devices(t, devices, false, false);
  t.algbw_exact = true;
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
      if (r.contains(part) && r[part].is_object() && r[part].contains("nwrong") && r[part]["nwrong"].is_number()) {
        const double nwrong = r[part]["nwrong"].get<double>();
        if (nwrong < 0 || nwrong != std::floor(nwrong))
          throw InputError(
              fmt::format("{}.{}.nwrong", path, part),
              fmt::format("expected a count of wrong elements (0 or more), got {}", r[part]["nwrong"].dump()));
        if (nwrong > 0)
          throw InputError(fmt::format("{}.{}.nwrong", path, part),
                           fmt::format("nccl-tests counted {} wrong elements; a failed run is not a measurement",
                                       r[part]["nwrong"].dump()));
      }
    const std::string dtype = r.contains("type") && r["type"].is_string() ? r["type"].get<std::string>() : "unknown";
    const std::string redop = r.contains("redop") && r["redop"].is_string() ? r["redop"].get<std::string>() : "none";
    t.cputime = t.cputime || !body->contains("time");
    if (const auto root = rank_root(r); root && t.root < 0) t.root = *root, t.root_where = path + ".root";
    const double bytes = double(r["size"].get<std::uint64_t>());
    const double us = time->get<double>();
    if (body->contains("alg_bw") && body->contains("bus_bw") && (*body)["alg_bw"].is_number() &&
        (*body)["bus_bw"].is_number())
      if (auto ratio = ratio_of((*body)["alg_bw"].dump(), (*body)["bus_bw"].dump(), path))
        t.ratios.push_back(*ratio);
    const bool has_algbw = body->contains("alg_bw") && (*body)["alg_bw"].is_number();
    const std::string algbw_text = has_algbw ? (*body)["alg_bw"].dump() : std::string();
    if (bytes == 0) {  // a sweep from -b 0
      check_zero_size_row(algbw_text, fmt::format("{}.{}.alg_bw", path, which));
      continue;
    }
    if (us == 0 && body->contains("time"))
      throw InputError(fmt::format("{}.{}.time", path, which),
                       fmt::format("expected a time above 0 for a size of {} B, got 0", r["size"].dump()));
    const double algbw = has_algbw ? (*body)["alg_bw"].get<double>() : -1;
    t.rows.push_back(Row{bytes, us / 1e6, algbw, dtype, redop, time->dump(), algbw_text, path});
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
  if (m.series.empty())
    throw InputError(paths.front(),
                     fmt::format("no series of a planner collective in the given logs{}",
                                 out.notes.empty() ? "" : fmt::format(" ({})", fmt::join(out.notes, "; "))));
  m.tool = "nccl-tests (imported by planner calibrate import-nccl-tests)";
  m.backend = "nccl-tests";
  if (m.device.empty())
    m.device = out.devices_listed ? "unknown (the device lines name no model)" : "unknown (the logs list no devices)";
  // The largest run stands for the machine's shape.
  const MeasuredSeries* big = &m.series.front();
  for (const MeasuredSeries& s : m.series)
    if (s.group_size * s.concurrent_groups > big->group_size * big->concurrent_groups) big = &s;
  m.world_size = big->group_size * big->concurrent_groups;
  // Hosts name the nodes when every node was listed (several NCCL_TESTS_SPLIT
  // groups share them); a device list cut short lists fewer.
  const std::int64_t hosts = std::int64_t(m.hosts.size());
  if (hosts >= big->nodes && hosts > 0 && m.world_size % hosts == 0) {
    m.nodes = hosts;
    m.ranks_per_node = m.world_size / hosts;
  } else {
    // No complete host list: the most nodes any series spans, the ranks spread
    // evenly over them where they divide, so that world_size = nodes x
    // ranks_per_node and no series spans more nodes than the file (the reader
    // refuses both contradictions, measurements.cpp).
    std::int64_t nodes = 1, per_node = 1;
    for (const MeasuredSeries& s : m.series)
      nodes = std::max(nodes, s.nodes), per_node = std::max(per_node, s.ranks_per_node);
    m.nodes = nodes;
    m.ranks_per_node = m.world_size % nodes == 0 && m.world_size / nodes >= per_node ? m.world_size / nodes : per_node;
    m.world_size = m.nodes * m.ranks_per_node;
  }
  return out;
}

}  // namespace planner
