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
                         !c.reshard_after_forward, c.sequence_parallel, c.ep, c.etp);
}

void check_pins(const SearchPins& pin) {
  for (auto [name, v] : {std::pair{"tp", pin.tp},
                         {"cp", pin.cp},
                         {"pp", pin.pp},
                         {"dp", pin.dp},
                         {"micro_batch_size", pin.micro_batch_size},
                         {"virtual_stages", pin.virtual_stages},
                         {"ep", pin.ep},
                         {"etp", pin.etp}})
    if (v && *v < 1)
      throw InputError("search", fmt::format("pinned {}: expected a positive integer, got {}", name, *v));
}

// A ZeRO stage and, at ZeRO-3, whether the gathered weights are freed after
// the forward.
struct Sharding {
  int zero_stage = 0;
  bool reshard_after_forward = true;
};

// The values of the knobs that do not depend on the other degrees: the pinned
// value alone, else every candidate.
struct Axes {
  std::vector<std::int64_t> tps, cps, mbss;
  std::vector<Recompute> recs;
  std::vector<Sharding> shardings;
};

Axes search_axes(const HardwareProfile& hw, const SearchSpec& spec) {
  const SearchPins& pin = spec.pins;
  const std::int64_t N = spec.training.num_gpus;
  const std::int64_t domain = hw.tiers.empty() ? 1 : hw.tiers[0].size;
  Axes ax;
  ax.tps = pinned_or(pin.tp, divisors_up_to(N, domain));
  ax.cps = pinned_or(pin.cp, divisors_up_to(N, spec.max_cp));
  std::vector<std::int64_t> mbs_all;
  for (std::int64_t b = 1; b <= spec.max_micro_batch_size; b *= 2) {
    mbs_all.push_back(b);
    if (b > spec.max_micro_batch_size / 2) break;  // the next doubling would pass the limit (or overflow)
  }
  ax.mbss = pinned_or(pin.micro_batch_size, mbs_all);
  // With flash attention, selective recomputation equals none (the attention
  // core stores nothing to drop), so the search skips it unless pinned.
  ax.recs =
      pinned_or(pin.recompute, spec.training.attention == AttentionKernel::flash
                                   ? std::vector<Recompute>{Recompute::none, Recompute::full}
                                   : std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full});
  for (int z : pinned_or(pin.zero_stage, {0, 1, 2, 3}))
    for (bool reshard : z == 3 ? pinned_or(pin.reshard_after_forward, {true, false}) : std::vector<bool>{true})
      ax.shardings.push_back({z, reshard});
  return ax;
}

// One (tp, cp, pp, dp) with tp*cp*pp*dp = N, and the virtual-stage and SP
// choices it allows.
struct Outer {
  std::int64_t tp, cp, pp, dp;
  std::vector<std::int64_t> vpps;
  std::vector<bool> sps;
  std::vector<std::pair<std::int64_t, std::int64_t>> experts;  // (ep, etp); (1, 1) for dense models
};

// Expert layouts a (tp, cp, dp) allows a MoE model: EP over the divisors of
// the expert count with EP*ETP dividing TP*CP*DP (MoE parallel folding,
// arXiv:2504.14960), ETP 1 or TP (Megatron-Core's default ETP is TP; the MoE
// README prefers EP over ETP) and dividing the expert FFN width. Dense
// models: (1, 1) only, unless pinned (then rejected by expert_reasons).
std::vector<std::pair<std::int64_t, std::int64_t>> expert_layouts(const ModelSpec& model, const SearchPins& pin,
                                                                  std::int64_t tp, std::int64_t cp,
                                                                  std::int64_t dp) {
  if (!model.is_moe()) return {{pin.ep.value_or(1), pin.etp.value_or(1)}};
  std::vector<std::int64_t> etps = pin.etp ? std::vector<std::int64_t>{*pin.etp}
                                           : (tp > 1 ? std::vector<std::int64_t>{1, tp} : std::vector<std::int64_t>{1});
  const std::int64_t fold = tp * cp * dp;
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t etp : etps) {
    if (!pin.etp && (fold % etp != 0 || model.moe.expert_ffn_hidden_size % etp != 0)) continue;
    const auto eps = pin.ep ? std::vector<std::int64_t>{*pin.ep} : divisors_up_to(model.moe.num_experts, fold / etp);
    for (std::int64_t ep : eps)
      if (pin.ep || (fold / etp) % ep == 0) out.emplace_back(ep, etp);
  }
  if (out.empty()) out.emplace_back(pin.ep.value_or(1), pin.etp.value_or(1));  // rejected by expert_reasons
  return out;
}

struct Enumeration {
  std::vector<Outer> outers;
  std::int64_t total = 0;  // configurations, all knobs
};

// Every (tp, cp, pp, dp) the pins allow, listed first (a few thousand at
// most), so that the number of configurations is known before pricing.
Enumeration enumerate_layouts(const ModelSpec& model, const SearchSpec& spec, const Axes& ax) {
  const SearchPins& pin = spec.pins;
  const std::int64_t N = spec.training.num_gpus;
  Enumeration en;
  for (std::int64_t tp : ax.tps) {
    if (N % tp) continue;
    if (pin.sequence_parallel.value_or(false) && tp == 1) continue;  // SP needs TP > 1
    for (std::int64_t cp : ax.cps) {
      if ((N / tp) % cp) continue;
      const auto pps = pinned_or(pin.pp, divisors_up_to(N / tp / cp, model.num_layers));
      for (std::int64_t pp : pps) {
        if ((N / tp / cp) % pp) continue;
        const std::int64_t dp = N / tp / cp / pp;
        if (pin.dp && *pin.dp != dp) continue;
        std::vector<std::int64_t> vpp_all{1};
        if (pp > 1)
          for (std::int64_t v = 2; v <= spec.max_virtual_stages && v <= model.num_layers / pp; ++v)
            vpp_all.push_back(v);
        Outer o{tp,
                cp,
                pp,
                dp,
                pinned_or(pin.virtual_stages, vpp_all),
                // MoE with TP > 1 needs SP (expert_reasons): SP off is not tried unless pinned.
                pinned_or(pin.sequence_parallel, tp > 1 ? (model.is_moe() ? std::vector<bool>{true}
                                                                          : std::vector<bool>{false, true})
                                                        : std::vector<bool>{false}),
                expert_layouts(model, pin, tp, cp, dp)};
        en.total += std::int64_t(ax.mbss.size() * o.sps.size() * ax.recs.size() * o.vpps.size() *
                                 ax.shardings.size() * o.experts.size());
        en.outers.push_back(std::move(o));
      }
    }
  }
  return en;
}

// The best top_k evaluations seen: a max-heap on `better`, the worst of the
// kept on top, so memory stays bounded however many are offered.
class TopK {
 public:
  explicit TopK(std::size_t k) : k_(k) {}

  void offer(Evaluation&& ev) {
    if (heap_.size() < k_) {
      heap_.push_back(std::move(ev));
      std::push_heap(heap_.begin(), heap_.end(), better);
    } else if (!heap_.empty() && better(ev, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), better);
      heap_.back() = std::move(ev);
      std::push_heap(heap_.begin(), heap_.end(), better);
    }
  }

  // Best first; leaves the TopK empty.
  std::vector<Evaluation> ranked() && {
    std::sort_heap(heap_.begin(), heap_.end(), better);
    return std::move(heap_);
  }

 private:
  std::size_t k_;
  std::vector<Evaluation> heap_;
};

// The search's counters (considered, feasible, rejected by first reason) and
// its progress reports.
class Tally {
 public:
  Tally(SearchResult& res, const SearchSpec& spec, std::int64_t total)
      : res_(res), spec_(spec), total_(total), next_report_(std::max<std::int64_t>(1, spec.progress_every)) {}

  void reject(std::uint32_t reasons) {
    ++res_.rejected;
    for (std::size_t i = 0; i < kNumReasons; ++i)
      if ((reasons >> i) & 1u) {
        ++res_.rejections[i];
        break;
      }
  }

  void report() {
    if (spec_.progress && res_.considered >= next_report_) {
      spec_.progress(SearchProgress{res_.considered, total_});
      next_report_ = res_.considered + std::max<std::int64_t>(1, spec_.progress_every);
    }
  }

  void accept(const Evaluation& ev) {
    ++res_.feasible;
    if (spec_.collect_points) res_.points.push_back({ev.config, ev.time.step_s, ev.memory.total_bytes});
  }

  SearchResult& res() { return res_; }

 private:
  SearchResult& res_;
  const SearchSpec& spec_;
  std::int64_t total_;
  std::int64_t next_report_;
};

// Prices the configurations that share `base` (tp, cp, pp, dp, micro-batch,
// SP, recompute) and differ in virtual stages and ZeRO stage: the structural
// checks and the layer costs depend only on the shared knobs, so they run
// once for the group; each variant is then evaluated (memory pruning inside
// evaluate) and offered to `top` when it fits.
void price_group(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts, const ParallelConfig& base,
                 const std::vector<std::int64_t>& vpps, const std::vector<Sharding>& shardings, Tally& tally,
                 TopK& top) {
  SearchResult& res = tally.res();
  const std::uint32_t shape_reasons = structural_reasons(model, hw, base, ts);
  const std::int64_t variants = std::int64_t(vpps.size() * shardings.size());
  if (shape_reasons) {
    res.considered += variants;
    for (std::int64_t i = 0; i < variants; ++i) tally.reject(shape_reasons);
    tally.report();
    return;
  }
  const LayerTime lt = layer_time(model, hw, base, ts);
  const HeadTime head = head_time(model, hw, base, ts);
  for (std::int64_t v : vpps)
    for (const Sharding& z : shardings) {
      ParallelConfig pc = base;
      pc.virtual_stages = v;
      pc.zero_stage = z.zero_stage;
      pc.reshard_after_forward = z.reshard_after_forward;
      ++res.considered;
      Evaluation ev = evaluate(model, hw, pc, ts, lt, head);
      if (!ev.feasible()) {
        tally.reject(ev.reasons);
        continue;
      }
      tally.accept(ev);
      top.offer(std::move(ev));
    }
  tally.report();
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
  pc.reshard_after_forward = pins.reshard_after_forward.value_or(true);
  pc.sequence_parallel = pins.sequence_parallel.value_or(pc.tp > 1);
  pc.ep = pins.ep.value_or(1);
  pc.etp = pins.etp.value_or(1);
  return pc;
}

bool better(const Evaluation& a, const Evaluation& b) {
  if (a.time.step_s != b.time.step_s) return a.time.step_s < b.time.step_s;
  if (a.memory.total_bytes != b.memory.total_bytes) return a.memory.total_bytes < b.memory.total_bytes;
  return key(a.config) < key(b.config);
}

SearchResult search(const ModelSpec& model, const HardwareProfile& hw, const SearchSpec& spec) {
  const TrainingSpec& ts = spec.training;
  check_sizes(model, "model " + model.name);
  check_sizes(ts, "search");
  check_pins(spec.pins);
  const Axes ax = search_axes(hw, spec);
  const Enumeration en = enumerate_layouts(model, spec, ax);

  SearchResult res;
  Tally tally(res, spec, en.total);
  TopK top(spec.top_k);
  for (const Outer& o : en.outers)
    for (std::int64_t mbs : ax.mbss)
      for (bool sp : o.sps)
        for (Recompute rec : ax.recs)
          for (const auto& [ep, etp] : o.experts) {
            ParallelConfig base;
            base.tp = o.tp, base.cp = o.cp, base.pp = o.pp, base.dp = o.dp;
            base.micro_batch_size = mbs, base.sequence_parallel = sp, base.recompute = rec;
            base.ep = ep, base.etp = etp;
            price_group(model, hw, ts, base, o.vpps, ax.shardings, tally, top);
          }
  if (spec.progress) spec.progress(SearchProgress{res.considered, en.total});
  res.top = std::move(top).ranked();
  return res;
}

}  // namespace planner
