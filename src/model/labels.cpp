// The labels of labels.h.
#include "planner/model/labels.h"

#include "planner/spec/names.h"

namespace planner {

std::string config_label(const ParallelConfig& c, char style) {
  // Expert parallelism shows only where it is used (MoE): dense labels unchanged.
  const bool ep = c.ep > 1 || c.etp > 1;
  if (style == 'd')
    return fmt::format("TP{} CP{} PP{} DP{}", c.tp, c.cp, c.pp, c.dp) +
           (ep ? fmt::format(" EP{} ETP{}", c.ep, c.etp) : std::string());
  if (style == 'c') {
    std::string s = fmt::format("tp{} cp{} pp{} dp{} mbs{}", c.tp, c.cp, c.pp, c.dp, c.micro_batch_size);
    if (ep) s += fmt::format(" ep{} etp{}", c.ep, c.etp);
    if (c.virtual_stages > 1) s += fmt::format(" v{}", c.virtual_stages);
    if (c.sequence_parallel) s += " sp";
    if (c.recompute != Recompute::none) s += c.recompute == Recompute::full ? " rc-full" : " rc-sel";
    if (c.zero_stage) s += fmt::format(" z{}", zero_label(c));
    return s;
  }
  return fmt::format("tp={} cp={} pp={} dp={} mbs={} vpp={} recompute={} zero={} sp={}", c.tp, c.cp, c.pp, c.dp,
                     c.micro_batch_size, c.virtual_stages, to_string(c.recompute), zero_label(c),
                     c.sequence_parallel ? "on" : "off") +
         (ep ? fmt::format(" ep={} etp={}", c.ep, c.etp) : std::string());
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
