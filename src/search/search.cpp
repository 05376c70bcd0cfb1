#include "planner/search/search.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "layout_space.h"
#include "moe_choices.h"
#include "planner/model/layer_cost.h"
#include "planner/model/memory_model.h"
#include "planner/model/moe_cost.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"

namespace planner {

namespace {

using namespace layout_space;

auto key(const Evaluation& e) {
  const ParallelConfig& c = e.config;
  return std::make_tuple(c.tp, c.cp, c.pp, c.dp, c.micro_batch_size, c.virtual_stages, int(c.recompute), c.zero_stage,
                         !c.reshard_after_forward, c.zero_shard, c.sequence_parallel, c.ep, c.etp, e.recompute_modules,
                         e.overlap_a2a);
}

void check_pins(const SearchPins& pin) {
  for (auto [name, p] : {std::pair{"tp", &pin.tp},
                         {"cp", &pin.cp},
                         {"pp", &pin.pp},
                         {"dp", &pin.dp},
                         {"micro_batch_size", &pin.micro_batch_size},
                         {"virtual_stages", &pin.virtual_stages},
                         {"ep", &pin.ep},
                         {"etp", &pin.etp},
                         {"zero_shard", &pin.zero_shard}})
    for (std::int64_t v : p->values())
      if (v < 1) throw InputError("search", fmt::format("pinned {}: expected a positive integer, got {}", name, v));
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

  void reject_by_rule(int rule) {
    ++res_.rejected;
    ++res_.framework_rejections[std::size_t(rule)];
  }

  // `reasons`: the configuration's reasons; `all_reasons`: all it is known to
  // have (those and any learned by relaxing them, see price_group; 0 when
  // unknown), for the binding count.
  void reject(std::uint32_t reasons, std::uint32_t all_reasons) {
    if (all_reasons != 0 && (all_reasons & (all_reasons - 1)) == 0)
      for (std::size_t i = 0; i < kNumReasons; ++i)
        if ((all_reasons >> i) & 1u) ++res_.alone[i];
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

constexpr std::uint32_t kInterleaveOnly = 1u << unsigned(Reason::interleave_needs_micro_batches);

// The out-of-memory bit of a configuration that breaks only the interleaving
// rule, priced as if the rule held (the rule is Megatron-LM's, the layout is
// otherwise sound): whether relaxing the rule alone would admit it. Without
// this, every configuration the rule rejects would look as if the rule alone
// blocked it, since a rejected structure is never priced (SearchResult::alone).
std::uint32_t relaxed_memory(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                             const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head) {
  const ParallelConfig n = normalized(pc);
  const PricedPlan plan = price_plan(model, hw, n, ts, lt, head);
  if (!plan.layout.feasible) return 1u << unsigned(Reason::too_few_layers);
  return memory_per_gpu(model, hw, n, ts, plan).fits() ? 0u : 1u << unsigned(Reason::out_of_memory);
}

// The framework's rules, when the search has one.
struct FrameworkFilter {
  const FrameworkInfo* info = nullptr;
  RuleContext ctx;
};

// A group whose shared knobs break a structural rule: each of its `variants`
// configurations is rejected unpriced (how binding each reason is alone stays
// unknown).
void reject_group(Tally& tally, std::uint32_t shape_reasons, std::int64_t variants) {
  tally.res().considered += variants;
  for (std::int64_t i = 0; i < variants; ++i) tally.reject(shape_reasons, 0);
  tally.report();
}

// Prices the configurations that share `base` (tp, cp, pp, dp, micro-batch,
// SP, recompute) and differ in virtual stages and ZeRO stage: the structural
// checks and the layer costs depend only on the shared knobs, so they run
// once for the group; each variant is then evaluated (memory pruning inside
// evaluate) and offered to `top` when it fits.

void price_group(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts, const ParallelConfig& base,
                 const std::vector<std::int64_t>& vpps, const std::vector<Sharding>& shardings,
                 const FrameworkFilter& fw, Tally& tally, TopK& top) {
  SearchResult& res = tally.res();
  const std::vector<Sharding> distinct = distinct_shardings(shardings, base.dp, base.cp, 1);
  const std::uint32_t shape_reasons = structural_reasons(model, hw, base, ts);
  const std::int64_t variants = std::int64_t(vpps.size() * distinct.size());
  if (shape_reasons) {
    reject_group(tally, shape_reasons, variants);
    return;
  }
  const LayerTime lt = layer_time(model, hw, base, ts);
  const HeadTime head = head_time(model, hw, base, ts);
  for (std::int64_t v : vpps)
    for (const Sharding& z : distinct) {
      ParallelConfig pc = base;
      pc.virtual_stages = v;
      pc.zero_stage = z.zero_stage;
      pc.reshard_after_forward = z.reshard_after_forward;
      pc.zero_shard = z.zero_shard;
      ++res.considered;
      if (fw.info) {
        if (const int rule = broken_rule(*fw.info, model, normalized(pc), ts, fw.ctx); rule >= 0) {
          tally.reject_by_rule(rule);
          continue;
        }
      }
      Evaluation ev = evaluate(model, hw, pc, ts, lt, head);
      if (!ev.feasible()) {
        // Alone only as far as checked: a priced configuration's reasons are
        // all it has; an unpriced one's memory is unknown (not counted),
        // except under the interleaving rule alone, priced as if it held.
        const bool priced = ev.memory.capacity_bytes > 0;
        tally.reject(ev.reasons, priced ? ev.reasons
                                 : ev.reasons == kInterleaveOnly
                                     ? ev.reasons | relaxed_memory(model, hw, pc, ts, lt, head)
                                     : 0);
        continue;
      }
      tally.accept(ev);
      top.offer(std::move(ev));
    }
  tally.report();
}

// MoE models: the configurations that share `base` (tp, cp, pp, dp,
// micro-batch, SP, EP, ETP), each virtual-stage count and ZeRO stage one
// configuration whose recomputation and all-to-all overlap the search picks.
// Dominance (price_choices): the overlap is kept only where it prices the
// layer cheaper; then, as the choices differ only in per-layer time and
// stored activations, the cheapest per-layer time that fits is the best of
// them (the step is monotone in the layer's time). The choice storing the
// least is tried first: if it does not fit, none does.
void price_moe_group(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts,
                     const ParallelConfig& base, const std::vector<search_detail::TrainingChoice>& choices,
                     const std::vector<std::int64_t>& vpps, const std::vector<Sharding>& shardings,
                     const FrameworkFilter& fw, Tally& tally, TopK& top) {
  SearchResult& res = tally.res();
  const std::vector<Sharding> distinct = distinct_shardings(shardings, base.dp, base.cp, expert_dp_size(base));
  const std::uint32_t shape_reasons = structural_reasons(model, hw, base, ts);
  const std::int64_t variants = std::int64_t(vpps.size() * distinct.size());
  if (shape_reasons || choices.empty()) {
    reject_group(tally, shape_reasons, variants);
    return;
  }
  std::size_t floor = 0;
  const std::vector<search_detail::PricedChoice> priced =
      search_detail::price_choices(model, hw, ts, base, choices, floor, fw.info != nullptr && base.pp > 1);
  for (std::int64_t v : vpps)
    for (const Sharding& z : distinct) {
      ++res.considered;
      int rule = -1;
      auto variant = [&](const search_detail::PricedChoice& p) {
        ParallelConfig pc = p.pc;
        pc.virtual_stages = v;
        pc.zero_stage = z.zero_stage;
        pc.reshard_after_forward = z.reshard_after_forward;
        pc.zero_shard = z.zero_shard;
        return pc;
      };
      auto allowed = [&](const search_detail::PricedChoice& p) {
        if (!fw.info) return true;
        const int r = broken_rule(*fw.info, model, normalized(variant(p)), p.ts, fw.ctx);
        if (r >= 0 && rule < 0) rule = r;
        return r < 0;
      };
      // The least-storing allowed choice first: if it does not fit, none does.
      std::size_t first = priced.size();
      if (allowed(priced[floor])) {
        first = floor;
      } else {
        for (std::size_t i = 0; i < priced.size() && first == priced.size(); ++i)
          if (allowed(priced[i])) first = i;
      }
      if (first == priced.size()) {
        tally.reject_by_rule(rule);
        continue;
      }
      Evaluation ev = evaluate(model, hw, variant(priced[first]), priced[first].ts, priced[first].lt,
                               priced[first].head);
      if (!ev.feasible()) {
        const bool evaluated = ev.memory.capacity_bytes > 0;
        const search_detail::PricedChoice& p = priced[first];
        tally.reject(ev.reasons, evaluated ? ev.reasons
                                 : ev.reasons == kInterleaveOnly
                                     ? ev.reasons | relaxed_memory(model, hw, variant(p), p.ts, p.lt, p.head)
                                     : 0);
        continue;
      }
      // The cheapest choice that fits (time order), at worst the one found
      // above; memory alone is priced until one fits (structure is shared).
      for (std::size_t i = 0; i < first; ++i) {
        if (!allowed(priced[i])) continue;
        const search_detail::PricedChoice& p = priced[i];
        const ParallelConfig n = normalized(variant(p));
        if (!memory_per_gpu(model, hw, n, p.ts, price_plan(model, hw, n, p.ts, p.lt, p.head)).fits()) continue;
        ev = evaluate(model, hw, n, p.ts, p.lt, p.head);
        break;
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
  pc.zero_shard = pins.zero_shard.value_or(0);
  pc.sequence_parallel = pins.sequence_parallel.value_or(pc.tp > 1);
  pc.ep = pins.ep.value_or(1);
  pc.etp = pins.etp.value_or(1);
  return pc;
}

bool better(const Evaluation& a, const Evaluation& b) {
  if (a.time.step_s != b.time.step_s) return a.time.step_s < b.time.step_s;
  if (a.memory.total_bytes != b.memory.total_bytes) return a.memory.total_bytes < b.memory.total_bytes;
  return key(a) < key(b);
}

SearchResult search(const ModelSpec& model, const HardwareProfile& hw, const SearchSpec& spec) {
  TrainingSpec ts = spec.training;
  FrameworkFilter fw;
  if (spec.framework) {
    fw.info = &framework_info(*spec.framework);
    fw.ctx.reshard_pinned = spec.pins.reshard_after_forward.has_value();
    ts.pipeline_split = fw.info->split;
  }
  check_sizes(model, "model " + model.name);
  check_sizes(ts, "search");
  check_pins(spec.pins);
  const Axes ax = search_axes(hw, spec);
  const Enumeration en = enumerate_layouts(model, spec, ax, ts.pipeline_split);

  SearchResult res;
  if (fw.info) {
    res.framework = spec.framework;
    res.framework_rejections.assign(fw.info->rules.size(), 0);
  }
  Tally tally(res, spec, en.total);
  TopK top(spec.top_k);
  // A framework that cannot overlap the all-to-alls gets no overlapped
  // choice (an unpinned overlap; a pinned one meets the rule and its reason).
  SearchSpec choice_spec = spec;
  if (fw.info && model.is_moe() && !spec.pins.overlap_a2a && !overlaps_a2a(*fw.info, model))
    choice_spec.pins.overlap_a2a = false;
  const std::vector<search_detail::TrainingChoice> moe_choices =
      model.is_moe() ? search_detail::moe_training_choices(model, choice_spec, ts)
                     : std::vector<search_detail::TrainingChoice>{};
  for (const Outer& o : en.outers)
    for (std::int64_t mbs : ax.mbss)
      for (bool sp : o.sps) {
        if (model.is_moe()) {
          for (const auto& [ep, etp] : o.experts) {
            ParallelConfig base;
            base.tp = o.tp, base.cp = o.cp, base.pp = o.pp, base.dp = o.dp;
            base.micro_batch_size = mbs, base.sequence_parallel = sp;
            base.ep = ep, base.etp = etp;
            price_moe_group(model, hw, ts, base, moe_choices, o.vpps, ax.shardings, fw, tally, top);
          }
          continue;
        }
        for (Recompute rec : ax.recs)
          for (const auto& [ep, etp] : o.experts) {
            ParallelConfig base;
            base.tp = o.tp, base.cp = o.cp, base.pp = o.pp, base.dp = o.dp;
            base.micro_batch_size = mbs, base.sequence_parallel = sp, base.recompute = rec;
            base.ep = ep, base.etp = etp;
            price_group(model, hw, ts, base, o.vpps, ax.shardings, fw, tally, top);
          }
      }
  if (spec.progress) spec.progress(SearchProgress{res.considered, en.total});
  res.top = std::move(top).ranked();
  return res;
}

}  // namespace planner
