#include "sweep.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/calibrate/measurements.h"
#include "planner/io/atomic_write.h"
#include "planner/spec/input_error.h"

namespace planner::bench {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string group_label(const GroupConfig& g) {
  return fmt::format("{} {} ranks ({} per node x {} node{}, {} group{} at once)", to_string(g.kind), g.size,
                     g.ranks_per_node, g.nodes, g.nodes == 1 ? "" : "s", g.concurrent, g.concurrent == 1 ? "" : "s");
}

}  // namespace

int run_sweep(Backend& b, const SweepOptions& opt) {
  const NodeLayout& layout = b.layout();
  std::vector<Collective> collectives = opt.collectives;
  if (collectives.empty()) collectives.assign(std::begin(kAllCollectives), std::end(kAllCollectives));
  const std::vector<GroupConfig> configs =
      make_group_configs(layout, opt.world, opt.intra, opt.inter, opt.all_group_sizes);
  const double mem_limit = b.memory_limit_bytes();

  MeasurementSet set;
  set.tool = "planner-bench 0.1.0";
  set.backend = b.name();
  set.device = b.device();
  set.hosts = layout.hosts;
  set.world_size = layout.world_size;
  set.nodes = layout.nodes;
  set.ranks_per_node = layout.ranks_per_node;
  set.emulated_nodes = layout.emulated;
  set.versions = b.versions();
  set.command = opt.command;

  if (b.is_root() && !opt.quiet) {
    std::printf("# planner-bench: %s backend, %lld ranks on %lld node%s (%lld per node%s), %s\n", b.name().c_str(),
                (long long)layout.world_size, (long long)layout.nodes, layout.nodes == 1 ? "" : "s",
                (long long)layout.ranks_per_node, layout.emulated ? ", emulated by --ranks-per-node" : "",
                set.device.c_str());
    if (configs.empty()) std::printf("# no group of 2 or more ranks: nothing to measure\n");
  }
  bool first = true;
  for (const GroupConfig& g : configs) {
    b.use_groups(g);
    if (b.is_root() && !opt.quiet) std::printf("# %s\n", group_label(g).c_str());
    for (Collective c : collectives) {
      // A send/recv ring over a group with several ranks on several nodes
      // mixes node-local and network pairs; the planner prices send/recv
      // between two ranks on one tier, which the other groups measure.
      if (c == Collective::send_recv && g.nodes > 1 && g.ranks_per_node > 1) continue;
      MeasuredSeries s;
      s.collective = c;
      s.group = g.kind;
      s.group_size = g.size;
      s.ranks_per_node = g.ranks_per_node;
      s.nodes = g.nodes;
      s.concurrent_groups = g.concurrent;
      s.dtype = "int32";
      s.time_statistic = "median";
      const std::int64_t mult = size_multiplier(c, g.size);
      double last_bytes = 0;
      for (double target = opt.min_bytes; target <= opt.max_bytes; target *= 2) {
        const std::int64_t count = std::max<std::int64_t>(1, std::int64_t(target / 4.0 / double(mult)));
        const double bytes = 4.0 * double(count) * double(mult);
        if (bytes <= last_bytes) continue;
        const double buffer = 4.0 * double(std::max(send_elements(c, count, g.size), recv_elements(c, count, g.size)));
        if (3.0 * buffer > mem_limit) {
          if (b.is_root() && !opt.quiet)
            std::printf("#   %s: stopping at %.0f B, the buffers would not fit in memory\n", collective_key(c), bytes);
          break;
        }
        last_bytes = bytes;
        const PointResult r = b.measure(c, count, opt.warmup, opt.iters, opt.corrupt && first);
        first = false;
        if (!r.error.empty()) {
          if (b.is_root())
            std::fprintf(stderr,
                         "planner-bench: error: %s on %s, %.0f B: wrong result (%s); no measurement file written\n",
                         collective_key(c), group_label(g).c_str(), bytes, r.error.c_str());
          b.barrier();
          return 1;
        }
        const double t = median_of(r.times_s);
        const double tmin = *std::min_element(r.times_s.begin(), r.times_s.end());
        const MeasuredPoint p = make_point(c, g.size, bytes, std::max(t, 1e-9), std::max(tmin, 1e-9));
        s.points.push_back(p);
        if (b.is_root() && !opt.quiet)
          std::printf("  %-14s %12.0f B  %11.2f us  (min %9.2f)  algbw %8.3f GB/s  busbw %8.3f GB/s\n",
                      collective_key(c), bytes, p.time_s * 1e6, p.time_min_s * 1e6, p.algbw_bytes_per_s / 1e9,
                      p.busbw_bytes_per_s / 1e9);
      }
      if (!s.points.empty()) set.series.push_back(std::move(s));
    }
    std::fflush(stdout);
  }
  if (opt.compute) b.measure_compute(set, opt.warmup, opt.iters, opt.sustain_s);
  b.barrier();
  if (!b.is_root()) return 0;
  try {
    const std::string text = render_measurements(set);
    // The file must read back under the strict reader (catches a bug here, not in the fit).
    (void)measurements_from_json(nlohmann::json::parse(text), opt.output);
    write_file_atomically(opt.output, text);
  } catch (const InputError& e) {
    std::fprintf(stderr, "planner-bench: error: %s\n", e.what());
    return 1;
  }
  if (!opt.quiet) std::printf("# wrote %s: %zu series\n", opt.output.c_str(), set.series.size());
  return 0;
}

}  // namespace planner::bench
