// nccl-tests output -> measurements, the part the text and JSON readers
// share: a finished table -> a series (its rank count, checked against the
// busbw/algbw ratios of nccl_tests_ratios.cpp; the tokens of a line are
// nccl_tests_tokens.cpp's). The text layouts differ between versions
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
#include <map>
#include <string>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner::nccl_tests_detail {

namespace {

struct Shape {
  std::int64_t group_size = 0, ranks_per_node = 0, nodes = 0, concurrent = 1;
  GroupKind kind = GroupKind::world;
  std::vector<std::string> hosts;
};

// No '# Using devices' lines: the flags, or the ratios for the rank count.
Shape shape_without_devices(const RankRange& rr, Collective c, const NcclTestsImportOptions& opt,
                            const std::string& where, NcclTestsImport& out) {
  Shape s;
  if (!opt.ranks && !rr.pins())
    throw InputError(
        where, rr.known ? fmt::format("the log does not list its ranks (no '# Using devices' lines) and {} only says "
                                      "{}; give --ranks and --ranks-per-node",
                                      rr.why, rr.text())
                        : "the log does not list its ranks (no '# Using devices' lines); give --ranks and "
                          "--ranks-per-node");
  if (opt.ranks) check_ratio(rr, *opt.ranks, c, fmt::format("--ranks {}", *opt.ranks), where);
  const std::int64_t n = opt.ranks ? *opt.ranks : rr.lo;
  if (!opt.ranks_per_node)
    throw InputError(where, opt.ranks ? fmt::format("the log does not list its ranks (no '# Using devices' lines); "
                                                    "--ranks {} gives their count but not how they sit on nodes, give "
                                                    "--ranks-per-node",
                                                    n)
                                      : fmt::format("the log does not list its ranks (no '# Using devices' lines); "
                                                    "{} pins {}, give --ranks-per-node",
                                                    rr.why, count_of(n, "rank")));
  if (n < 2 || *opt.ranks_per_node < 1 || n % *opt.ranks_per_node != 0)
    throw InputError(where, fmt::format("{} {} must be at least 2 and a multiple of --ranks-per-node {}",
                                        opt.ranks ? "--ranks" : "the rank count", n, *opt.ranks_per_node) +
                                (opt.ranks ? std::string() : fmt::format(" ({} pins it)", rr.why)));
  if (!opt.ranks) out.notes.push_back(fmt::format("{}: {} ranks from {} ({})", where, n, rr.why, factor_text(c)));
  s.group_size = n;
  s.ranks_per_node = *opt.ranks_per_node;
  s.nodes = s.group_size / s.ranks_per_node;
  return s;
}

// What a device list cut short still shows of a node is a lower bound on its
// ranks: a host listing m ranks of the group ran at least m, and a rank on
// device d at least d + 1 (nccl-tests gives each process the devices after
// those of the local ranks before it: src/common.cu, localRank * nThreads *
// nGpus). The device bound holds for the world, so only without
// NCCL_TESTS_SPLIT groups. A smaller --ranks-per-node contradicts the list.
void check_ranks_per_node_bound(const Table& t, std::int64_t k, bool split) {
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> per_host;
  const Device* busiest = nullptr;
  const Device* top_gpu = nullptr;
  for (const Device& d : t.devices) {
    const std::int64_t m = ++per_host[{d.group, d.host}];
    if (!busiest || m > per_host[{busiest->group, busiest->host}]) busiest = &d;
    if (!split && (!top_gpu || d.gpu > top_gpu->gpu)) top_gpu = &d;
  }
  if (!busiest) return;
  const std::int64_t on_host = per_host[{busiest->group, busiest->host}];
  const std::int64_t by_gpu = top_gpu ? top_gpu->gpu + 1 : 0;
  if (k >= std::max(on_host, by_gpu)) return;
  throw InputError(
      t.origin,
      fmt::format("--ranks-per-node {} is fewer than the device list shows on one node ({})", k,
                  on_host >= by_gpu ? fmt::format("host {} lists {}", busiest->host, count_of(on_host, "rank"))
                                    : fmt::format("rank {} on {} is device {}: at least {} a node", top_gpu->rank,
                                                  top_gpu->host, top_gpu->gpu, count_of(by_gpu, "rank"))));
}

// A device list cut short ('...', or some rank lines only, as READMEs and
// NVL72 racks show them): the rank count from --ranks (which wins, with a
// warning), else from the highest rank shown when the list shows its end,
// else from the ratios; ranks per node from --ranks-per-node, else from the
// highest device index (or the most ranks seen on one host).
Shape shape_of_cut_list(const Table& t, const RankRange& rr, Collective c, const NcclTestsImportOptions& opt,
                        NcclTestsImport& out) {
  const std::string& where = t.origin;
  Shape s;
  std::int64_t top = 0, gpus = 0, groups = 0;
  std::map<std::string, std::int64_t> per_host;
  for (const Device& d : t.devices) {
    top = std::max(top, d.rank);
    gpus = std::max(gpus, d.gpu + 1);
    groups = std::max(groups, d.group);
    if (!per_host.count(d.host)) s.hosts.push_back(d.host);
    ++per_host[d.host];
  }
  if (groups > 0 && !opt.ranks)
    throw InputError(where, "the device list is cut short and shows several NCCL_TESTS_SPLIT groups; give --ranks "
                            "(ranks per group) and --ranks-per-node");
  const std::string shown = fmt::format(
      "{} rank line{} shown, the highest rank {}{}", t.devices.size(), t.devices.size() == 1 ? "" : "s", top,
      t.devices_cut_in_host
          ? fmt::format("; its host {} lists {}, the others {}", t.devices.back().host,
                        count_of(per_host[t.devices.back().host], "rank"), per_host[t.devices.front().host])
      : t.devices_cut_at_end ? ", then '...'"
      : t.devices_dots       ? ", with '...'"
                             : "");
  std::int64_t n = 0;
  if (opt.ranks) {
    if (*opt.ranks <= top && groups == 0)
      throw InputError(where, fmt::format("--ranks {} is fewer than the device list shows ({})", *opt.ranks, shown));
    check_ratio(rr, *opt.ranks, c, fmt::format("--ranks {}", *opt.ranks), where);
    n = *opt.ranks;
    out.warnings.push_back(
        fmt::format("{}: --ranks {} wins over the device list, which is cut short ({})", where, n, shown));
  } else if (!t.devices_cut_at_end) {
    n = top + 1;
    check_ratio(rr, n, c, fmt::format("the device list is cut short ({}), which means {}", shown, count_of(n, "rank")),
                where);
    out.warnings.push_back(fmt::format("{}: the device list is cut short ({}); {} from the highest rank{}", where,
                                       shown, count_of(n, "rank"),
                                       rr.known ? fmt::format(", as {} says", rr.why) : ""));
  } else if (rr.pins() && rr.lo > top) {
    n = rr.lo;
    out.warnings.push_back(
        fmt::format("{}: the device list is cut short ({}); {} ranks from {} ({})", where, shown, n, rr.why,
                    factor_text(c)));
  } else if (const std::int64_t k = opt.ranks_per_node.value_or(0);
             k > 0 && rr.known && rr.hi < kNoBound && rr.hi / k - (std::max(rr.lo, top + 1) - 1) / k == 1) {
    // --ranks-per-node k, and one multiple of k in the ratios' interval above the ranks shown.
    n = rr.hi / k * k;
    out.warnings.push_back(fmt::format(
        "{}: the device list is cut short ({}); {} ranks, the one multiple of --ranks-per-node {} that {} allows ({})",
        where, shown, n, k, rr.why, rr.text()));
  } else {
    throw InputError(where, fmt::format("the device list is cut short ({}){}; give --ranks and --ranks-per-node",
                                        shown, rr.known ? fmt::format(" and {} only says {}", rr.why, rr.text())
                                                        : ""));
  }
  if (opt.ranks_per_node) check_ranks_per_node_bound(t, *opt.ranks_per_node, groups > 0);
  std::int64_t most = 0;
  for (const auto& [host, k] : per_host) most = std::max(most, k);
  std::int64_t rpn = opt.ranks_per_node ? *opt.ranks_per_node : std::max(gpus, most);
  // A cut list shows at least that many a node: where it does not divide n,
  // the smallest count above it that does (devices a node: at most 8 on an
  // HGX board, 4 on a GB200/GB300 tray).
  const std::int64_t shown_per_node = rpn;
  if (!opt.ranks_per_node && rpn > 0 && n % rpn != 0)
    for (std::int64_t d = rpn + 1; d <= 8; ++d)
      if (n % d == 0) {
        rpn = d;
        break;
      }
  if (rpn < 1 || n % rpn != 0)
    throw InputError(where, opt.ranks_per_node
                                ? fmt::format("--ranks {} must be a multiple of --ranks-per-node {}", n, rpn)
                                : fmt::format("the device list is cut short; {} are not a multiple of the {} "
                                              "per node it suggests (highest device index {}); give --ranks-per-node",
                                              count_of(n, "rank"), rpn, gpus - 1));
  if (!opt.ranks_per_node)
    out.warnings.push_back(
        fmt::format("{}: {} per node from the {}{} (give --ranks-per-node if the nodes ran more)", where,
                    count_of(rpn, "rank"), gpus >= most ? "highest device index shown" : "ranks shown on one host",
                    rpn != shown_per_node
                        ? fmt::format(", at least {}, and the smallest such count that divides {}", shown_per_node, n)
                        : ""));
  if (n < 2) throw InputError(where, "a one-rank run measures no communication");
  s.group_size = n;
  s.ranks_per_node = rpn;
  s.nodes = n / rpn;
  return s;
}

Shape shape_of(const Table& t, Collective c, const NcclTestsImportOptions& opt, NcclTestsImport& out) {
  const std::vector<Device>& devices = t.devices;
  const std::string& where = t.origin;
  const RankRange rr = ranks_from_ratios(c, t.ratios, t.test_name.empty());
  if (devices.empty()) return shape_without_devices(rr, c, opt, where, out);
  if (t.devices_cut) return shape_of_cut_list(t, rr, c, opt, out);
  Shape s;
  // NCCL_TESTS_SPLIT runs several groups at once; "Group" is each rank's group.
  std::map<std::int64_t, std::vector<const Device*>> groups;
  for (const Device& d : devices) groups[d.group].push_back(&d);
  const auto& first = groups.begin()->second;
  for (const auto& [id, members] : groups)
    if (members.size() != first.size())
      throw InputError(
          where,
          fmt::format("groups of different sizes ({} has {}, {} has {}); not a supported NCCL_TESTS_SPLIT layout",
                      groups.begin()->first, count_of(std::int64_t(first.size()), "rank"), id, members.size()));
  std::map<std::string, std::int64_t> per_host;
  for (const Device* d : first) {
    if (!per_host.count(d->host)) s.hosts.push_back(d->host);
    ++per_host[d->host];
  }
  // Every host but the last running k ranks and the last fewer: a list that
  // stops inside its last host (an issue thread's paste), unless the ratios
  // say the ranks shown are all there were; --ranks wins, as for any cut list.
  const std::int64_t shown = std::int64_t(first.size());
  if (const std::int64_t k = per_host[s.hosts.front()], last = per_host[s.hosts.back()];
      groups.size() == 1 && s.hosts.size() > 1 && last < k &&
      std::all_of(s.hosts.begin(), s.hosts.end() - 1, [&](const std::string& h) { return per_host[h] == k; }) &&
      ((opt.ranks && *opt.ranks > shown) || !rr.allows(shown))) {
    Table cut = t;
    cut.devices_cut = cut.devices_cut_at_end = cut.devices_cut_in_host = true;
    return shape_of_cut_list(cut, rr, c, opt, out);
  }
  for (const auto& [host, n] : per_host)
    if (n != per_host.begin()->second)
      throw InputError(where, fmt::format("hosts run different numbers of ranks ({}: {}, {}: {}), which the planner "
                                          "does not price (one rank count a node){}",
                                          per_host.begin()->first, per_host.begin()->second, host, n,
                                          rr.known ? fmt::format("; {} says {}", rr.why, rr.text()) : ""));
  s.group_size = std::int64_t(first.size());
  s.ranks_per_node = per_host.begin()->second;
  s.nodes = std::int64_t(per_host.size());
  s.concurrent = std::int64_t(groups.size());
  if (s.concurrent > 1)
    s.kind = s.nodes == 1 ? GroupKind::intra_node : s.ranks_per_node == 1 ? GroupKind::inter_node : GroupKind::world;
  for (const Device& d : devices)
    if (std::find(s.hosts.begin(), s.hosts.end(), d.host) == s.hosts.end()) s.hosts.push_back(d.host);
  if (opt.ranks && *opt.ranks != s.group_size)
    throw InputError(
        where,
        fmt::format("--ranks {} disagrees with the log's device list ({} per group{})", *opt.ranks,
                    count_of(s.group_size, "rank"),
                    t.separate_jobs > 1 ? fmt::format("; rank {} is listed {} times, on {}: {} separate jobs, one "
                                                      "per process, as nccl-tests built without MPI runs them",
                                                      t.repeated_rank, t.separate_jobs, t.repeated_on, t.separate_jobs)
                                        : ""));
  if (opt.ranks_per_node && *opt.ranks_per_node != s.ranks_per_node)
    throw InputError(where, fmt::format("--ranks-per-node {} disagrees with the log's device list ({} per node)",
                                        *opt.ranks_per_node, s.ranks_per_node));
  if (s.group_size < 2) throw InputError(where, "a one-rank run measures no communication");
  check_ratio(rr, s.group_size, c,
              fmt::format("the device list shows {}{} ranks", s.concurrent > 1 ? "groups of " : "", s.group_size),
              where);
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
  if (repeated)
    out.notes.push_back(
        fmt::format("{}: {}, median time kept", where, count_of(std::int64_t(repeated), "repeated size")));
  for (const std::string& h : shape.hosts)
    if (std::find(m.hosts.begin(), m.hosts.end(), h) == m.hosts.end()) m.hosts.push_back(h);
}

}  // namespace

namespace {

// The same rank listed twice: nccl-tests built without MPI (no `make MPI=1`)
// and started once per rank by mpirun or srun runs a job of its own in every
// process, each printing its devices and rows (nccl-tests README, "MPI";
// NVIDIA/nccl-tests#107 shows two such 1-rank jobs). The table keeps the
// first job's devices; finish_table says so, or refuses one-rank jobs.
void keep_first_job(Table& t) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const Device*>> seen;
  for (const Device& d : t.devices) seen[{d.group, d.rank}].push_back(&d);
  std::vector<Device> first;
  for (const Device& d : t.devices) {
    const auto& same = seen[{d.group, d.rank}];
    if (same.front() == &d) first.push_back(d);
    if (std::int64_t(same.size()) > t.separate_jobs) {
      t.separate_jobs = std::int64_t(same.size());
      std::string hosts;
      for (std::size_t i = 0; i < same.size(); ++i)
        hosts += (i == 0 ? "" : i + 1 == same.size() ? " and " : ", ") + same[i]->host;
      t.repeated_rank = d.rank;
      t.repeated_on = hosts;
    }
  }
  if (t.separate_jobs > 1) t.devices = std::move(first);
}

}  // namespace

void set_devices(Table& t, std::vector<Device> devices, bool dots, bool dots_at_end) {
  t.devices = std::move(devices);
  keep_first_job(t);
  // Ranks 0..D-1 each once, or the list misses some (only "Rank 71" shown).
  std::vector<std::int64_t> ranks;
  for (const Device& d : t.devices) ranks.push_back(d.rank);
  std::sort(ranks.begin(), ranks.end());
  bool complete = true;
  for (std::size_t i = 0; i < ranks.size(); ++i) complete = complete && ranks[i] == std::int64_t(i);
  t.devices_cut = !t.devices.empty() && (dots || !complete);
  t.devices_cut_at_end = t.devices_cut && dots_at_end;
  t.devices_dots = t.devices_cut && dots;
}

void finish_table(Table& t, const NcclTestsImportOptions& opt, NcclTestsImport& out) {
  pick_rows(t);
  if (t.skipped_other_type)
    out.notes.push_back(fmt::format("{}: {} of other data types or reduction ops skipped (kept {} {})", t.origin,
                                    count_of(std::int64_t(t.skipped_other_type), "row"), t.dtype, t.redop));
  if (t.rows.empty()) {
    out.notes.push_back(t.commented_rows
                            ? fmt::format("{}: table whose {} (commented out in the paste), skipped; remove the "
                                          "'#' before {} to import {}",
                                          t.origin,
                                          t.commented_rows == 1
                                              ? std::string("1 row starts with '#'")
                                              : fmt::format("{} rows all start with '#'", t.commented_rows),
                                          t.commented_rows == 1 ? "it" : "them", t.commented_rows == 1 ? "it" : "them")
                            : fmt::format("{}: table without rows of a non-zero size, skipped", t.origin));
    return;
  }
  if (t.test_name.empty() && t.root >= 0 && !opt.collective) {
    out.notes.push_back(
        fmt::format("{}: the rows print root {}: a rooted test (broadcast_perf or reduce_perf), "
                    "which the planner does not price; skipped",
                    t.origin, t.root));
    return;
  }
  // A test named only by the command line above the table, in a file of
  // several tests: --collective picks its tables and skips the others.
  if (const auto named = collective_from_nccl_test_name(t.test_name);
      !t.test_named_by.empty() && opt.collective && named && *named != *opt.collective) {
    out.notes.push_back(fmt::format("{}: a table of {} ({}); --collective {}: skipped", t.origin, t.test_name,
                                    t.test_named_by, collective_key(*opt.collective)));
    return;
  }
  // Nothing names the test, but busbw exceeds algbw: of nccl-tests' tests only
  // all_reduce prints busbw = 2(n-1)/n x algbw; the others' factor is at most
  // 1 (src/*.cu GetBw).
  NcclTestsImportOptions inferred = opt;
  if (t.test_name.empty() && !opt.collective && !t.ratios.empty() &&
      std::none_of(t.ratios.begin(), t.ratios.end(), [](const RatioObs& r) { return r.hi < 1.0; }) &&
      std::any_of(t.ratios.begin(), t.ratios.end(), [](const RatioObs& r) { return r.lo > 1.0; })) {
    inferred.collective = Collective::all_reduce;
    const auto above = std::find_if(t.ratios.begin(), t.ratios.end(), [](const RatioObs& r) { return r.lo > 1.0; });
    out.notes.push_back(
        fmt::format("{}: the log does not name its test; busbw/algbw {}/{} on {} is above 1, which "
                    "only all_reduce prints (2(n-1)/n): read as all_reduce",
                    t.origin, above->busbw, above->algbw, above->where));
  }
  bool unsupported = false;
  const auto c = resolve_collective(t.test_name, inferred, t.origin, unsupported);
  if (unsupported) {
    out.notes.push_back(fmt::format("{}: {} is not a collective the planner prices, skipped", t.origin, t.test_name));
    return;
  }
  if (t.root >= 0)
    throw InputError(t.root_where, fmt::format("the rows print root {}: a rooted test (broadcast_perf or reduce_perf), "
                                               "not {}, for which nccl-tests prints root -1",
                                               t.root, collective_key(*c)));
  // nccl-tests prints the reduction of reducing tests (sum, prod, ...; "op"
  // in the oldest layout) and "none" (or nothing) for the others, send/recv
  // aside (it prints sum): a table whose redop says otherwise is another test.
  const bool reduces = *c == Collective::all_reduce || *c == Collective::reduce_scatter;
  if (*c != Collective::send_recv && reduces == (t.redop == "none"))
    throw InputError(t.origin, fmt::format("the rows print redop {}, which nccl-tests prints for {} tests: the table "
                                           "is not {}{}",
                                           t.redop == "none" ? "none (or no redop column)" : "'" + t.redop + "'",
                                           reduces ? "non-reducing (all_gather, alltoall, broadcast)"
                                                   : "reducing (all_reduce, reduce_scatter, reduce)",
                                           collective_key(*c),
                                           t.test_name.empty() ? fmt::format("; --collective {} applies to every "
                                                                             "table of the file, and the log does not "
                                                                             "name this table's test",
                                                                             collective_key(*c))
                                                               : ""));
  if (t.separate_jobs > 1 && t.devices.size() < 2 && !t.devices_cut)
    throw InputError(t.origin, fmt::format("rank {} is listed {} times (on {}): every process ran a one-rank job of "
                                           "its own, which measures no communication (nccl-tests built without MPI "
                                           "and started by mpirun or srun); rebuild it with `make MPI=1`",
                                           t.repeated_rank, t.separate_jobs, t.repeated_on));
  const Shape shape = shape_of(t, *c, opt, out);
  if (t.separate_jobs > 1)
    out.warnings.push_back(fmt::format(
        "{}: rank {} is listed {} times (on {}): the log is of {} separate {}-rank jobs, one per process (nccl-tests "
        "built without MPI and started by mpirun or srun; `make MPI=1` makes them one job); imported as one {}-rank "
        "job",
        t.origin, t.repeated_rank, t.separate_jobs, t.repeated_on, t.separate_jobs, shape.group_size,
        shape.group_size));
  out.devices_listed = out.devices_listed || !t.devices.empty();
  if (out.measurements.device.empty() && !t.devices.empty()) out.measurements.device = t.devices.front().model;
  check_time_column(t, *c, shape.group_size, out);
  add_series(*c, shape, t.dtype, t.rows, t.origin, out);
}

}  // namespace planner::nccl_tests_detail
