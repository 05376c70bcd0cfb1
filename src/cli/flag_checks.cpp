// The layout flags that cannot apply to the model, the layout or the run
// (an InputError naming the flag, never a flag silently ignored), and the
// pins they narrow; declared in config_flags.h.
#include "config_flags.h"

#include <fmt/format.h>

#include "planner/model/evaluate.h"
#include "planner/model/moe_cost.h"
#include "planner/model/recompute_modules.h"
#include "planner/model/selective_policy.h"
#include "planner/spec/input_error.h"
#include "planner/spec/names.h"

namespace planner::cli {

namespace {

// A single value that does not divide `of` is an error; a list or a range
// keeps the values that do (SearchPins), an error only when none does.
// `what` names `of`, e.g. "mixtral-8x7b's 8 experts".
void keep_divisors(Pin<std::int64_t>& pin, std::int64_t of, const char* flag, const std::string& what) {
  std::vector<std::int64_t> kept;
  for (std::int64_t v : pin.values())
    if (of % v == 0) kept.push_back(v);
  if (kept.size() == pin.values().size()) return;
  if (kept.empty()) {
    std::string given;
    for (std::int64_t v : pin.values()) given += (given.empty() ? "" : ",") + std::to_string(v);
    throw InputError(flag, fmt::format("expected a divisor of {}, got {}", what, given));
  }
  pin = Pin<std::int64_t>(std::move(kept));
}

}  // namespace

void check_expert_flags(SearchPins& pins, const ModelSpec& model) {
  for (auto [flag, pin] : {std::pair{"--ep", &pins.ep}, {"--etp", &pins.etp}})
    for (std::int64_t v : pin->values())
      if (v != 1 && !model.is_moe())
        throw InputError(flag, fmt::format("expected 1: {} is dense (no experts), got {}", model.name, v));
  if (!model.is_moe()) return;
  // Experts shard over the expert data-parallel group (moe_cost.h), which
  // hybrid sharding would split in ways the planner does not price.
  if (pins.zero_shard)
    throw InputError("--zero-shard", fmt::format("hybrid sharding of a MoE model's experts is not modelled ({} has "
                                                 "routed experts); leave --zero-shard out",
                                                 model.name));
  // Megatron-LM arguments.py: num_experts % expert_model_parallel_size == 0;
  // the expert FFN splits over ETP (moe/experts.py).
  keep_divisors(pins.ep, model.moe.num_experts, "--ep",
                fmt::format("{}'s {} experts", model.name, model.moe.num_experts));
  keep_divisors(pins.etp, model.moe.expert_ffn_hidden_size, "--etp",
                fmt::format("the expert FFN width {}", model.moe.expert_ffn_hidden_size));
}

void check_zero_shard(SearchPins& pins, std::int64_t gpus) {
  // A shard group times TP, PP and the replicas is the GPU count: a group
  // size that does not divide it forms on no layout.
  if (pins.zero_shard) keep_divisors(pins.zero_shard, gpus, "--zero-shard", fmt::format("the GPU count {}", gpus));
}

void check_a2a_applies(const CommonFlags& f, const ParallelConfig& pc) {
  if (pc.ep > 1) return;
  // EP 1: the tokens never leave the GPU, so there is no all-to-all to choose or overlap.
  if (f.a2a) throw InputError("--a2a", "chooses the expert all-to-all, but the layout has EP 1 (give --ep)");
  if (f.overlap_a2a && *f.overlap_a2a)
    throw InputError("--overlap-a2a", "overlaps the expert all-to-all, but the layout has EP 1 (give --ep)");
}

void check_tp_overlap(const TrainingSpec& ts, const SearchPins& pins) {
  if (!ts.tp_comm_overlap) return;
  if (pins.tp && pins.tp.values() == std::vector<std::int64_t>{1})
    throw InputError("--tp-overlap", "overlaps TP communication, but --tp is 1");
  if (pins.sequence_parallel && !pins.sequence_parallel.allows(true))
    throw InputError("--tp-overlap",
                     "needs sequence parallelism (Megatron-LM requires --sequence-parallel with --tp-comm-overlap); "
                     "drop --sp false");
}

// The values a pin allows, as typed: "1" or "0,1".
template <typename T, typename Fmt>
std::string pin_text(const Pin<T>& pin, Fmt fmt_one) {
  std::string out;
  for (const T& v : pin.values()) out += (out.empty() ? "" : ",") + fmt_one(v);
  return out;
}

void check_selective_ac(const CommonFlags& f, const TrainingSpec& ts, const SearchPins& pins, bool search) {
  if (!f.selective_ac) return;
  // Unpinned, evaluate runs none and the search visits selective unless it
  // equals none (Megatron's policy with flash attention: search.cpp).
  const bool searched =
      search && (ts.selective != SelectivePolicy::megatron_attention || ts.attention == AttentionKernel::unfused);
  if (pins.recompute ? pins.recompute.allows(Recompute::selective) : searched) return;
  const std::string given = pins.recompute
                                ? pin_text(pins.recompute, [](Recompute r) { return std::string(to_string(r)); })
                                : std::string("none");
  throw InputError("--selective-ac", fmt::format("chooses what selective recomputation recomputes, but --recompute is "
                                                 "{} (give --recompute selective)",
                                                 given));
}

void apply_recompute_modules(const ConfigFlags& c, const ModelSpec& model, TrainingSpec& ts) {
  if (!c.recompute_modules) return;
  ts.recompute_modules = parse_recompute_modules(*c.recompute_modules, model, "--recompute-modules");
  if (ts.selective != SelectivePolicy::megatron_attention)
    throw InputError("--recompute-modules", fmt::format("names Megatron's modules, but the selective policy is {} "
                                                        "(--selective-ac or --framework torchtitan); give "
                                                        "--selective-ac megatron",
                                                        selective_policy_label(ts)));
}

void check_recompute_overlap(const ParallelConfig& pc, const TrainingSpec& ts) {
  if (const std::string why = overlap_a2a_problem(pc, ts); !why.empty()) throw InputError("--overlap-a2a", why);
}

void check_data_parallel_flags(const CommonFlags& f, const ConfigFlags& c, const ModelSpec& model,
                               const ParallelConfig& pc) {
  // A dense model's states shard and its gradients reduce over DP x CP only;
  // a MoE model's routed experts over EDP (moe_cost.h reduces_gradients),
  // which TP can make larger than one.
  if (reduces_gradients(model, pc)) return;
  // An expert grid that does not fold (EP x ETP not dividing TP x CP x DP)
  // is no layout; evaluate() says so, naming the reason.
  if (model.is_moe() && pc.tp % (pc.ep * pc.etp) != 0) return;
  const std::string groups = model.is_moe()
                                 ? fmt::format("DP 1, CP 1 and expert DP 1 (TP x CP x DP = EP x ETP = {})", pc.tp)
                                 : std::string("DP 1 and CP 1");
  if (c.zero && pc.zero_stage > 0)
    throw InputError("--zero", fmt::format("shards over DP x CP{}, but the layout has {}: nothing to shard (leave "
                                           "--zero out or give --dp{})",
                                           model.is_moe() ? " (the experts over expert DP)" : "", groups,
                                           model.is_moe() ? ", or EP x ETP below TP" : ""));
  if (f.grad_reduce_bytes)
    throw InputError(
        "--grad-reduce-bytes",
        fmt::format("sets the gradient reduction's dtype, but the layout has {}: nothing is reduced", groups));
  if (f.no_overlap_grad_reduce)
    throw InputError("--no-overlap-grad-reduce",
                     fmt::format("times the gradient reduction, but the layout has {}: nothing is reduced", groups));
}

void check_zero3_regather(const TrainingSpec& ts, const SearchPins& pins) {
  if (!ts.zero3_recompute_regather) return;
  if (pins.zero_stage && !pins.zero_stage.allows(3))
    throw InputError("--zero3-recompute-regather",
                     fmt::format("applies to ZeRO-3 only, but --zero is {}",
                                 pin_text(pins.zero_stage, [](int z) { return std::to_string(z); })));
  if (pins.reshard_after_forward && !pins.reshard_after_forward.allows(true))
    throw InputError("--zero3-recompute-regather",
                     "gathers weights released after the forward, but --reshard-after-forward false keeps them");
  if (pins.recompute && !pins.recompute.allows(Recompute::full))
    throw InputError("--zero3-recompute-regather",
                     fmt::format("applies to full recomputation only, but --recompute is {}",
                                 pin_text(pins.recompute, [](Recompute r) { return std::string(to_string(r)); })));
}

}  // namespace planner::cli
