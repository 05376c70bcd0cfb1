// Text labels of a parallel layout and of a set of infeasibility reasons, as
// fmt formatters, so every report, error and title writes them one way.
//   fmt::format("{}", pc)    tp=4 cp=1 pp=4 dp=4 mbs=1 vpp=2 recompute=none zero=0 sp=on
//   fmt::format("{:c}", pc)  tp4 cp1 pp4 dp4 mbs1 v2 sp rc-full z1   (compact: knobs at
//                            their defaults left out; validate's layout column)
//   fmt::format("{:d}", pc)  TP4 CP1 PP4 DP4                         (the degrees alone)
//   fmt::format("{}", ReasonSet{ev.reasons})  "reason; reason" in Reason order
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "planner/model/evaluate.h"
#include "planner/spec/specs.h"

namespace planner {

// A bit set of Reason (Evaluation::reasons), for formatting.
struct ReasonSet {
  std::uint32_t bits = 0;
  [[nodiscard]] ReasonSet without(Reason r) const { return {bits & ~(1u << unsigned(r))}; }
};

// style: 'f' (full), 'c' (compact) or 'd' (degrees), as above.
[[nodiscard]] std::string config_label(const ParallelConfig& c, char style = 'f');
[[nodiscard]] std::string reasons_label(ReasonSet r);
// Layers per stage in stage order, equal neighbours as NxK: "19 20x2 21";
// with virtual stages each stage's chunks joined by '/': "9/10 10/10x2 10/9".
[[nodiscard]] std::string split_label(const PricedPlan& plan);
// The recomputation as a table column shows it: none, selective, full, or
// under selective the Megatron modules when not its default {core_attn}
// ("layernorm,mla_up_proj"; "none" for the empty set).
[[nodiscard]] std::string recompute_label(const ParallelConfig& c, std::uint8_t modules);
// Whether recompute_label names modules (selective with a set other than {core_attn}).
[[nodiscard]] bool names_modules(const ParallelConfig& c, std::uint8_t modules);
// One reason with the numbers of the configuration it rejects, e.g.
// "tp*cp*pp*dp = 4*1*2*8 = 64 does not equal the GPU count 7",
// "global batch 500 not divisible by dp*mbs = 16*2 = 32". Out of memory
// is worded by the reports, which have the breakdown.
[[nodiscard]] std::string reason_text(Reason r, const ModelSpec& model, const HardwareProfile& hw,
                                      const ParallelConfig& c, const TrainingSpec& ts);
// What the profile's accelerators are called: "chip" on a TPU-style torus
// pod, "GPU" otherwise.
[[nodiscard]] const char* device_word(const HardwareProfile& hw);
// The ZeRO stage: "0" to "3", and "3nr" for ZeRO-3 that keeps the gathered
// weights from the forward to the backward (no reshard after forward).
[[nodiscard]] std::string zero_label(const ParallelConfig& c);

}  // namespace planner

template <>
struct fmt::formatter<planner::ParallelConfig> {
  char style = 'f';
  constexpr auto parse(fmt::format_parse_context& ctx) -> decltype(ctx.begin()) {
    auto it = ctx.begin();
    if (it != ctx.end() && (*it == 'c' || *it == 'd')) style = *it++;
    if (it != ctx.end() && *it != '}') throw fmt::format_error("ParallelConfig: expected {}, {:c} or {:d}");
    return it;
  }
  template <typename FormatContext>
  auto format(const planner::ParallelConfig& c, FormatContext& ctx) const -> decltype(ctx.out()) {
    const std::string s = planner::config_label(c, style);
    return std::copy(s.begin(), s.end(), ctx.out());
  }
};

template <>
struct fmt::formatter<planner::ReasonSet> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(planner::ReasonSet r, FormatContext& ctx) const -> decltype(ctx.out()) {
    const std::string s = planner::reasons_label(r);
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s), ctx);
  }
};
