// The layouts a search visits (layout_space.h).
#include "layout_space.h"

#include <algorithm>

#include "planner/model/moe_cost.h"

namespace planner::layout_space {

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

Axes search_axes(const HardwareProfile& hw, const SearchSpec& spec) {
  const SearchPins& pin = spec.pins;
  const std::int64_t N = spec.training.num_gpus;
  const std::int64_t domain = hw.tiers.empty() ? 1 : hw.tiers[0].size;
  Axes ax;
  // A list pin may name degrees the unpinned search leaves out (TP across
  // nodes, CP above max_cp): every divisor of N is valid for it.
  ax.tps = pinned_or(pin.tp, divisors_up_to(N, pin.tp ? N : domain));
  ax.cps = pinned_or(pin.cp, divisors_up_to(N, pin.cp ? N : spec.max_cp));
  std::vector<std::int64_t> mbs_all;
  for (std::int64_t b = 1; b <= spec.max_micro_batch_size; b *= 2) {
    mbs_all.push_back(b);
    if (b > spec.max_micro_batch_size / 2) break;  // the next doubling would pass the limit (or overflow)
  }
  ax.mbss = pinned_values_or(pin.micro_batch_size, mbs_all);
  // With flash attention, Megatron's selective recomputation equals none (the
  // attention core stores nothing to drop), so the search skips it unless
  // pinned; torchtitan's policies (TrainingSpec::selective) differ from none.
  ax.recs = pinned_values_or(
      pin.recompute, is_fused(spec.training.attention) && spec.training.selective == SelectivePolicy::megatron_attention
                         ? std::vector<Recompute>{Recompute::none, Recompute::full}
                         : std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full});
  const std::vector<std::int64_t> shards = pinned_values_or(pin.zero_shard, {0});
  for (int z : pinned_values_or(pin.zero_stage, {0, 1, 2, 3}))
    for (bool reshard : z == 3 ? pinned_values_or(pin.reshard_after_forward, {true, false}) : std::vector<bool>{true})
      for (std::int64_t shard : z >= 1 ? shards : std::vector<std::int64_t>{0})
        ax.shardings.push_back({z, reshard, shard, pin.zero_shard.single()});
  return ax;
}

std::vector<Sharding> distinct_shardings(std::vector<Sharding> shardings, std::int64_t dp, std::int64_t cp,
                                         std::int64_t edp) {
  if (dp * cp == 1 && edp == 1) {
    // Every stage equals ZeRO 0 here; a hybrid group cannot form, so a list
    // pin's values are left out (and the layout with them, when the pin holds
    // no 0), a single value tried as given.
    for (const Sharding& z : shardings)
      if (z.zero_shard == 0 || z.shard_as_given) return {z};
    return {};
  }
  if (std::none_of(shardings.begin(), shardings.end(), [](const Sharding& z) { return z.zero_shard > 0; }))
    return shardings;  // no hybrid sharding pinned: every stage is distinct
  std::vector<Sharding> out;
  for (Sharding z : shardings) {
    if (z.zero_shard > 0) {
      const bool forms = cp > 0 && z.zero_shard >= 2 && z.zero_shard % cp == 0 &&
                         dp % std::max<std::int64_t>(1, z.zero_shard / cp) == 0 && z.zero_shard <= dp * cp;
      if (z.zero_shard == dp * cp)
        z.zero_shard = 0;  // one group: plain ZeRO
      else if (!forms && !z.shard_as_given)
        continue;
    }
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Sharding& o) {
      return o.zero_stage == z.zero_stage && o.reshard_after_forward == z.reshard_after_forward &&
             o.zero_shard == z.zero_shard;
    });
    if (!seen) out.push_back(z);
  }
  return out;
}

namespace {

// Expert layouts a (tp, cp, dp) allows a MoE model: EP over the divisors of
// the expert count with EP*ETP dividing TP*CP*DP (MoE parallel folding,
// arXiv:2504.14960), ETP 1 or TP (Megatron-Core's default ETP is TP; the MoE
// README prefers EP over ETP) and dividing the expert FFN width. Dense
// models: (1, 1) only, unless pinned (then rejected by expert_reasons).
std::vector<std::pair<std::int64_t, std::int64_t>> expert_layouts(const ModelSpec& model, const SearchPins& pin,
                                                                  std::int64_t tp, std::int64_t cp, std::int64_t dp) {
  const auto first_or_1 = [](const Pin<std::int64_t>& p) { return p ? p.values().front() : std::int64_t{1}; };
  if (!model.is_moe()) return {{first_or_1(pin.ep), first_or_1(pin.etp)}};
  // A pin of one value is tried as given (expert_reasons rejects it if it does
  // not fold); a list keeps its values that fold.
  const std::vector<std::int64_t> etps =
      pin.etp ? pin.etp.values() : (tp > 1 ? std::vector<std::int64_t>{1, tp} : std::vector<std::int64_t>{1});
  const std::int64_t fold = tp * cp * dp;
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t etp : etps) {
    if (!pin.etp.single() && (fold % etp != 0 || model.moe.expert_ffn_hidden_size % etp != 0)) continue;
    const auto eps = pin.ep ? pin.ep.values() : divisors_up_to(model.moe.num_experts, fold / etp);
    for (std::int64_t ep : eps)
      if (pin.ep.single() || ((fold / etp) % ep == 0 && model.moe.num_experts % ep == 0)) out.emplace_back(ep, etp);
  }
  const bool one_each = (!pin.ep || pin.ep.single()) && (!pin.etp || pin.etp.single());
  if (out.empty() && one_each) out.emplace_back(first_or_1(pin.ep), first_or_1(pin.etp));  // rejected by expert_reasons
  return out;
}

}  // namespace

Enumeration enumerate_layouts(const ModelSpec& model, const SearchSpec& spec, const Axes& ax, PipelineSplit split) {
  const SearchPins& pin = spec.pins;
  const std::int64_t N = spec.training.num_gpus;
  Enumeration en;
  for (std::int64_t tp : ax.tps) {
    if (N % tp) continue;
    if (pin.sequence_parallel && !pin.sequence_parallel.allows(false) && tp == 1) continue;  // SP needs TP > 1
    for (std::int64_t cp : ax.cps) {
      if ((N / tp) % cp) continue;
      const auto pps = pinned_or(pin.pp, divisors_up_to(N / tp / cp, model.num_layers));
      for (std::int64_t pp : pps) {
        if ((N / tp / cp) % pp) continue;
        const std::int64_t dp = N / tp / cp / pp;
        if (!pin.dp.allows(dp)) continue;
        std::vector<std::int64_t> vpp_all{1};
        if (pp > 1)
          for (std::int64_t v = 2; v <= spec.max_virtual_stages && layers_fill_chunks(model.num_layers, pp, v, split);
               ++v)
            vpp_all.push_back(v);
        Outer o{tp, cp, pp, dp, pinned_or(pin.virtual_stages, vpp_all),
                // MoE with TP > 1 needs SP (expert_reasons): SP off is not tried unless pinned.
                pinned_or(pin.sequence_parallel,
                          tp > 1 ? (model.is_moe() ? std::vector<bool>{true} : std::vector<bool>{false, true})
                                 : std::vector<bool>{false}),
                expert_layouts(model, pin, tp, cp, dp)};
        if (o.vpps.empty() || o.sps.empty() || o.experts.empty()) continue;  // a list pin with no valid value here
        // MoE models: one configuration per layout, its recomputation and
        // all-to-all overlap chosen inside (price_moe_group).
        std::size_t shardings = 0;  // over the expert layouts, whose EDP differ
        for (const auto& [ep, etp] : o.experts) {
          ParallelConfig folded;
          folded.tp = tp, folded.cp = cp, folded.dp = dp, folded.ep = ep, folded.etp = etp;
          shardings += distinct_shardings(ax.shardings, dp, cp, model.is_moe() ? expert_dp_size(folded) : 1).size();
        }
        en.total += std::int64_t(ax.mbss.size() * o.sps.size() * (model.is_moe() ? 1 : ax.recs.size()) * o.vpps.size() *
                                 shardings);
        en.outers.push_back(std::move(o));
      }
    }
  }
  return en;
}

}  // namespace planner::layout_space
