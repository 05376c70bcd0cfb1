#include "moe_choices.h"

#include <algorithm>
#include <optional>

#include "planner/model/moe_cost.h"
#include "planner/model/recompute_modules.h"

namespace planner::search_detail {

namespace {

using M = RecomputeModule;

constexpr std::uint8_t set_of(std::initializer_list<M> ms) {
  std::uint8_t out = 0;
  for (M m : ms) out |= module_bit(m);
  return out;
}

// Module sets run in practice (those a model lacks a module of are skipped):
// DeepSeek-V3's own (arXiv:2412.19437 §3.2.3: "recompute all RMSNorm
// operations and MLA up-projections"), and NVIDIA's Megatron-Bridge v0.6.0
// perf recipes: src/megatron/bridge/perf_recipes/deepseek/{b200,gb200}/
// deepseek_v3.py ["mla_up_proj"], gb300/deepseek_v3.py ["moe_act"],
// h100/deepseek_v3.py ["mla_up_proj", "mlp"], common.py ["layernorm",
// "mla_up_proj", "moe_act"], qwen/h100/qwen3_moe.py ["moe_act", "layernorm"].
constexpr std::uint8_t kMoeRecomputeSets[] = {
    set_of({M::moe_act}),
    set_of({M::mla_up_proj}),
    set_of({M::layernorm, M::mla_up_proj}),
    set_of({M::mla_up_proj, M::mlp}),
    set_of({M::layernorm, M::moe_act}),
    set_of({M::layernorm, M::mla_up_proj, M::moe_act}),
};

}  // namespace

std::vector<TrainingChoice> moe_training_choices(const ModelSpec& model, const SearchSpec& spec,
                                                 const TrainingSpec& ts) {
  const SearchPins& pin = spec.pins;
  std::vector<Recompute> recs = pin.recompute
                                    ? pin.recompute.values()
                                    : std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full};
  // Only Megatron's policy has module sets; torchtitan's selective policies
  // are tried as one choice.
  const bool modules = ts.selective == SelectivePolicy::megatron_attention;
  std::vector<std::uint8_t> sets;
  if (!modules || pin.recompute_modules) {
    sets.push_back(ts.recompute_modules);
  } else {
    if (pin.recompute || ts.attention == AttentionKernel::unfused) sets.push_back(ts.recompute_modules);
    for (std::uint8_t s : kMoeRecomputeSets)
      if (recompute_modules_problem(s, model).empty()) sets.push_back(s);
  }
  const std::vector<bool> overlaps = pin.overlap_a2a ? pin.overlap_a2a.values() : std::vector<bool>{false, true};
  std::vector<TrainingChoice> out;
  for (Recompute r : recs)
    for (std::uint8_t s : r == Recompute::selective ? sets : std::vector<std::uint8_t>{ts.recompute_modules})
      for (bool o : overlaps) {
        TrainingChoice c{r, s, o};
        // Megatron refuses the overlap with full recomputation or the moe module.
        if (o && (r == Recompute::full || (r == Recompute::selective && modules && (s & module_bit(M::moe))))) continue;
        out.push_back(c);
      }
  return out;
}

namespace {

PricedChoice price_choice(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts,
                          const ParallelConfig& base, const TrainingChoice& c) {
  PricedChoice p{base, ts, {}, {}};
  p.pc.recompute = c.recompute;
  p.ts.recompute_modules = c.modules;
  p.ts.overlap_a2a = c.overlap_a2a;
  if (model.mtp_layers > 0) {  // the MTP module's MoE layer priced once, as evaluate() does
    LayerTime moe;
    p.lt = mean_moe_model_layer_time(model, hw, p.pc, p.ts, nullptr, &moe);
    p.head = head_time(model, hw, p.pc, p.ts, nullptr, &moe);
  } else {
    p.lt = layer_time(model, hw, p.pc, p.ts);
    p.head = head_time(model, hw, p.pc, p.ts);
  }
  return p;
}

}  // namespace

std::vector<PricedChoice> price_choices(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts,
                                        const ParallelConfig& base, const std::vector<TrainingChoice>& choices,
                                        std::size_t& floor, bool keep_exposed) {
  std::vector<PricedChoice> priced;
  priced.reserve(choices.size());
  // Whether the overlap prices the layer cheaper does not depend on the
  // recomputation: the all-to-alls hide behind the forward / backward
  // kernels (compute_fwd_s / compute_bwd_s), which exclude the recomputed
  // forward, so on - off is the same for every recomputation that allows the
  // overlap. Decided once, on the first pair (moe_training_choices lists each
  // recomputation without then with the overlap).
  std::optional<bool> overlap_pays;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const TrainingChoice& c = choices[i];
    const bool has_off = i > 0 && !choices[i - 1].overlap_a2a && choices[i - 1].recompute == c.recompute &&
                         choices[i - 1].modules == c.modules;
    if (c.overlap_a2a && has_off) {
      if (base.ep == 1) continue;  // nothing to overlap
      if (!overlap_pays) {
        PricedChoice on = price_choice(model, hw, ts, base, c);
        overlap_pays = on.lt.total_s() < priced.back().lt.total_s();
        if (*overlap_pays && keep_exposed)
          priced.push_back(std::move(on));
        else if (*overlap_pays)
          priced.back() = std::move(on);
      } else if (*overlap_pays) {
        if (keep_exposed)
          priced.push_back(price_choice(model, hw, ts, base, c));
        else
          priced.back() = price_choice(model, hw, ts, base, c);
      }
      continue;
    }
    // Its pair's overlap already known to pay: price only the overlapped one
    // (and the exposed one where some variants cannot overlap).
    const bool next_on = i + 1 < choices.size() && choices[i + 1].overlap_a2a &&
                         choices[i + 1].recompute == c.recompute && choices[i + 1].modules == c.modules;
    if (!c.overlap_a2a && next_on && overlap_pays && *overlap_pays && base.ep > 1) {
      if (keep_exposed) priced.push_back(price_choice(model, hw, ts, base, c));
      priced.push_back(price_choice(model, hw, ts, base, choices[i + 1]));
      ++i;
      continue;
    }
    priced.push_back(price_choice(model, hw, ts, base, c));
  }
  std::stable_sort(priced.begin(), priced.end(),
                   [](const PricedChoice& a, const PricedChoice& b) { return a.lt.total_s() < b.lt.total_s(); });
  floor = 0;
  double floor_bytes = 0;
  for (std::size_t i = 0; i < priced.size(); ++i)
    if (priced[i].pc.recompute == Recompute::full) {  // keeps each layer's input only: the least
      floor = i;
      return priced;
    }
  for (std::size_t i = 0; i < priced.size(); ++i) {
    const LayerActivations a = layer_activations(model, priced[i].pc, priced[i].ts);
    const double bytes = a.stored_bytes + a.recompute_working_bytes / 16.0;
    if (i == 0 || bytes <= floor_bytes) floor = i, floor_bytes = bytes;
  }
  return priced;
}

}  // namespace planner::search_detail
