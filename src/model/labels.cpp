// The labels of labels.h.
#include "planner/model/labels.h"

#include <vector>

#include "planner/spec/names.h"

namespace planner {

std::string config_label(const ParallelConfig& c, char style) {
  if (style == 'd') return fmt::format("TP{} CP{} PP{} DP{}", c.tp, c.cp, c.pp, c.dp);
  if (style == 'c') {
    std::string s = fmt::format("tp{} cp{} pp{} dp{} mbs{}", c.tp, c.cp, c.pp, c.dp, c.micro_batch_size);
    if (c.virtual_stages > 1) s += fmt::format(" v{}", c.virtual_stages);
    if (c.sequence_parallel) s += " sp";
    if (c.recompute != Recompute::none) s += c.recompute == Recompute::full ? " rc-full" : " rc-sel";
    if (c.zero_stage) s += fmt::format(" z{}", zero_label(c));
    return s;
  }
  return fmt::format("tp={} cp={} pp={} dp={} mbs={} vpp={} recompute={} zero={} sp={}", c.tp, c.cp, c.pp, c.dp,
                     c.micro_batch_size, c.virtual_stages, to_string(c.recompute), zero_label(c),
                     c.sequence_parallel ? "on" : "off");
}

std::string split_label(const PricedPlan& plan) {
  const std::int64_t p = plan.layout.stages;
  std::vector<std::string> stages;
  for (std::int64_t s = 0; s < p; ++s) {
    if (plan.virtual_stages <= 1) {
      stages.push_back(std::to_string(plan.layout.layers_on(s)));
      continue;
    }
    std::string st;
    for (const ChunkPlan& c : plan.chunks(s)) st += (st.empty() ? "" : "/") + std::to_string(c.layers);
    stages.push_back(st);
  }
  std::string out;
  for (std::size_t i = 0; i < stages.size();) {
    std::size_t j = i + 1;
    while (j < stages.size() && stages[j] == stages[i]) ++j;
    out += (out.empty() ? "" : " ") + stages[i] + (j - i > 1 ? fmt::format("x{}", j - i) : "");
    i = j;
  }
  return out;
}

std::string zero_label(const ParallelConfig& c) {
  return c.zero_stage == 3 && !c.reshard_after_forward ? "3nr" : fmt::format("{}", c.zero_stage);
}

std::string reasons_label(ReasonSet r) {
  std::string out;
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if ((r.bits >> i) & 1u) out += (out.empty() ? "" : "; ") + std::string(describe(Reason(i)));
  return out;
}

}  // namespace planner
