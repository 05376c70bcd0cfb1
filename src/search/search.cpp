#include "planner/search/search.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "planner/model/layer_cost.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"

namespace planner {

namespace {

std::vector<std::int64_t> divisors_up_to(std::int64_t n, std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    if (d <= limit) out.push_back(d);
    if (n / d != d && n / d <= limit) out.push_back(n / d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename T>
std::vector<T> pinned_or(const std::optional<T>& pin, std::vector<T> all) {
  if (pin) return {*pin};
  return all;
}

auto key(const ParallelConfig& c) {
  return std::make_tuple(c.tp, c.cp, c.pp, c.dp, c.micro_batch_size, c.virtual_stages, int(c.recompute), c.zero_stage,
                         c.sequence_parallel);
}

}  // namespace

ParallelConfig pinned_config(const SearchPins& pins) {
  ParallelConfig pc;
  pc.tp = pins.tp.value_or(1);
  pc.cp = pins.cp.value_or(1);
  pc.pp = pins.pp.value_or(1);
  pc.dp = pins.dp.value_or(1);
  pc.micro_batch_size = pins.micro_batch_size.value_or(1);
  pc.virtual_stages = pins.virtual_stages.value_or(1);
  pc.recompute = pins.recompute.value_or(Recompute::none);
  pc.zero_stage = pins.zero_stage.value_or(0);
  pc.sequence_parallel = pins.sequence_parallel.value_or(pc.tp > 1);
  return pc;
}

bool better(const Evaluation& a, const Evaluation& b) {
  if (a.time.step_s != b.time.step_s) return a.time.step_s < b.time.step_s;
  if (a.memory.total_bytes != b.memory.total_bytes) return a.memory.total_bytes < b.memory.total_bytes;
  return key(a.config) < key(b.config);
}

SearchResult search(const ModelSpec& m, const HardwareProfile& hw, const SearchSpec& spec) {
  SearchResult res;
  const TrainingSpec& ts = spec.training;
  check_sizes(m, "model " + m.name);
  check_sizes(ts, "search");
  const SearchPins& pin = spec.pins;
  for (auto [name, v] : {std::pair{"tp", pin.tp},
                         {"cp", pin.cp},
                         {"pp", pin.pp},
                         {"dp", pin.dp},
                         {"micro_batch_size", pin.micro_batch_size},
                         {"virtual_stages", pin.virtual_stages}})
    if (v && *v < 1)
      throw InputError("search", fmt::format("pinned {}: expected a positive integer, got {}", name, *v));
  const std::int64_t N = ts.num_gpus;
  const std::int64_t domain = hw.tiers.empty() ? 1 : hw.tiers[0].size;

  const auto tps = pinned_or(pin.tp, divisors_up_to(N, domain));
  const auto cps = pinned_or(pin.cp, divisors_up_to(N, spec.max_cp));
  std::vector<std::int64_t> mbs_all;
  for (std::int64_t b = 1; b <= spec.max_micro_batch_size; b *= 2) {
    mbs_all.push_back(b);
    if (b > spec.max_micro_batch_size / 2) break;  // the next doubling would pass the limit (or overflow)
  }
  const auto mbss = pinned_or(pin.micro_batch_size, mbs_all);
  // With flash attention, selective recomputation equals none (the attention
  // core stores nothing to drop), so the search skips it unless pinned.
  const auto recs =
      pinned_or(pin.recompute, ts.attention == AttentionKernel::flash
                                   ? std::vector<Recompute>{Recompute::none, Recompute::full}
                                   : std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full});
  const auto zeros = pinned_or(pin.zero_stage, {0, 1, 2, 3});

  // Every (tp, cp, pp, dp) with tp*cp*pp*dp = N the pins allow, with the
  // virtual-stage and SP choices of each: listed first (a few thousand at
  // most), so that the number of configurations is known before pricing.
  struct Outer {
    std::int64_t tp, cp, pp, dp;
    std::vector<std::int64_t> vpps;
    std::vector<bool> sps;
  };
  std::vector<Outer> outers;
  std::int64_t total = 0;
  for (std::int64_t tp : tps) {
    if (N % tp) continue;
    if (pin.sequence_parallel.value_or(false) && tp == 1) continue;  // SP needs TP > 1
    for (std::int64_t cp : cps) {
      if ((N / tp) % cp) continue;
      const auto pps = pinned_or(pin.pp, divisors_up_to(N / tp / cp, m.num_layers));
      for (std::int64_t pp : pps) {
        if ((N / tp / cp) % pp) continue;
        const std::int64_t dp = N / tp / cp / pp;
        if (pin.dp && *pin.dp != dp) continue;
        std::vector<std::int64_t> vpp_all{1};
        if (pp > 1)
          for (std::int64_t v = 2; v <= spec.max_virtual_stages && v <= m.num_layers / pp; ++v) vpp_all.push_back(v);
        Outer o{tp,
                cp,
                pp,
                dp,
                pinned_or(pin.virtual_stages, vpp_all),
                pinned_or(pin.sequence_parallel, tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})};
        total += std::int64_t(mbss.size() * o.sps.size() * recs.size() * o.vpps.size() * zeros.size());
        outers.push_back(std::move(o));
      }
    }
  }

  std::vector<Evaluation> heap;  // max-heap on `better`: worst of the kept on top
  auto keep = [&](Evaluation&& ev) {
    if (heap.size() < spec.top_k) {
      heap.push_back(std::move(ev));
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (!heap.empty() && better(ev, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = std::move(ev);
      std::push_heap(heap.begin(), heap.end(), better);
    }
  };
  auto reject = [&](std::uint32_t reasons) {
    ++res.rejected;
    for (std::size_t i = 0; i < kNumReasons; ++i)
      if ((reasons >> i) & 1u) {
        ++res.rejections[i];
        break;
      }
  };
  std::int64_t next_report = std::max<std::int64_t>(1, spec.progress_every);
  auto report = [&] {
    if (spec.progress && res.considered >= next_report) {
      spec.progress(SearchProgress{res.considered, total});
      next_report = res.considered + std::max<std::int64_t>(1, spec.progress_every);
    }
  };

  for (const Outer& o : outers) {
    for (std::int64_t mbs : mbss)
      for (bool sp : o.sps)
        for (Recompute rec : recs) {
          ParallelConfig base;
          base.tp = o.tp, base.cp = o.cp, base.pp = o.pp, base.dp = o.dp;
          base.micro_batch_size = mbs, base.sequence_parallel = sp, base.recompute = rec;
          // Layer costs depend only on (tp, cp, mbs, sp, recompute): price once.
          const std::uint32_t shape_reasons = structural_reasons(m, hw, base, ts);
          const std::int64_t variants = std::int64_t(o.vpps.size() * zeros.size());
          if (shape_reasons) {
            res.considered += variants;
            for (std::int64_t i = 0; i < variants; ++i) reject(shape_reasons);
            report();
            continue;
          }
          const LayerTime lt = layer_time(m, hw, base, ts);
          const HeadTime head = head_time(m, hw, base, ts);
          for (std::int64_t v : o.vpps)
            for (int z : zeros) {
              ParallelConfig pc = base;
              pc.virtual_stages = v;
              pc.zero_stage = z;
              ++res.considered;
              Evaluation ev = evaluate(m, hw, pc, ts, lt, head);
              if (!ev.feasible()) {
                reject(ev.reasons);
                continue;
              }
              ++res.feasible;
              keep(std::move(ev));
            }
          report();
        }
  }
  if (spec.progress) spec.progress(SearchProgress{res.considered, total});
  std::sort_heap(heap.begin(), heap.end(), better);
  res.top = std::move(heap);
  return res;
}

}  // namespace planner
