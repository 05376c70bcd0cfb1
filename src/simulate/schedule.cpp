// Per-stage op orders of the pipeline schedules (see simulate.h for the
// citations). Pure functions of (schedule, p, v, m).
#include <algorithm>

#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"

namespace planner {

namespace {

struct OrderBuilder {
  std::vector<StageOp>& out;
  bool with_recompute;
  void forward(std::int64_t mb, std::int64_t c) { out.push_back({OpKind::forward, std::int32_t(mb), std::int32_t(c)}); }
  void backward(std::int64_t mb, std::int64_t c) {
    if (with_recompute) out.push_back({OpKind::recompute, std::int32_t(mb), std::int32_t(c)});
    out.push_back({OpKind::backward, std::int32_t(mb), std::int32_t(c)});
  }
  void weight_grad(std::int64_t mb, std::int64_t c) {
    out.push_back({OpKind::weight_grad, std::int32_t(mb), std::int32_t(c)});
  }
};

// Megatron-LM's interleaved order: micro-batches in groups of p; within a
// group every chunk in turn (forward: 0..v-1; backward: v-1..0). The last
// group is smaller when p does not divide m.
std::vector<std::pair<std::int64_t, std::int64_t>> interleaved_sequence(std::int64_t p, std::int64_t v, std::int64_t m,
                                                                        bool backward) {
  std::vector<std::pair<std::int64_t, std::int64_t>> seq;
  seq.reserve(std::size_t(m * v));
  for (std::int64_t g0 = 0; g0 < m; g0 += p) {
    const std::int64_t g1 = std::min(m, g0 + p);
    for (std::int64_t k = 0; k < v; ++k) {
      const std::int64_t c = backward ? v - 1 - k : k;
      for (std::int64_t mb = g0; mb < g1; ++mb) seq.emplace_back(mb, c);
    }
  }
  return seq;
}

}  // namespace

std::vector<std::vector<StageOp>> stage_op_order(Schedule s, std::int64_t p, std::int64_t v, std::int64_t m,
                                                 bool with_recompute) {
  std::vector<std::vector<StageOp>> orders(static_cast<std::size_t>(p));
  for (std::int64_t i = 0; i < p; ++i) {
    auto& ops = orders[std::size_t(i)];
    ops.reserve(std::size_t(m * v * (with_recompute ? 3 : 2) + (s == Schedule::zb_h1 ? m : 0)));
    OrderBuilder b{ops, with_recompute};
    switch (s) {
      case Schedule::gpipe:
        for (std::int64_t mb = 0; mb < m; ++mb) b.forward(mb, 0);
        for (std::int64_t mb = m - 1; mb >= 0; --mb) b.backward(mb, 0);
        break;
      case Schedule::one_f_one_b: {
        const std::int64_t warm = std::min(p - i - 1, m);
        for (std::int64_t mb = 0; mb < warm; ++mb) b.forward(mb, 0);
        for (std::int64_t k = 0; k < m - warm; ++k) b.forward(warm + k, 0), b.backward(k, 0);
        for (std::int64_t mb = m - warm; mb < m; ++mb) b.backward(mb, 0);
        break;
      }
      case Schedule::interleaved: {
        const auto fwd = interleaved_sequence(p, v, m, false);
        const auto bwd = interleaved_sequence(p, v, m, true);
        const std::int64_t total = m * v;
        const std::int64_t warm = m == p ? total : std::min(total, 2 * (p - i - 1) + (v - 1) * std::min(p, m));
        for (std::int64_t k = 0; k < warm; ++k) b.forward(fwd[std::size_t(k)].first, fwd[std::size_t(k)].second);
        for (std::int64_t k = 0; k < total - warm; ++k) {
          b.forward(fwd[std::size_t(warm + k)].first, fwd[std::size_t(warm + k)].second);
          b.backward(bwd[std::size_t(k)].first, bwd[std::size_t(k)].second);
        }
        for (std::int64_t k = total - warm; k < total; ++k)
          b.backward(bwd[std::size_t(k)].first, bwd[std::size_t(k)].second);
        break;
      }
      case Schedule::zb_h1: {
        // 1F1B's F/B order; W of micro-batch k runs after B of micro-batch
        // k + i: stage i defers i weight-gradient passes (the last stage p-1,
        // the first none), so no stage holds more than p micro-batches of
        // activations (1F1B's first-stage peak) and the deferred W's run
        // while the gradients drain back: bubble (p-1)(T_F + T_B - T_W)
        // (Qi et al. 2023 §3.1, Fig. 3).
        const std::int64_t warm = std::min(p - i - 1, m);
        const std::int64_t lag = i;
        std::int64_t next_w = 0, b_done = 0;
        auto after_b = [&] {
          ++b_done;
          while (next_w < b_done - lag) b.weight_grad(next_w++, 0);
        };
        for (std::int64_t mb = 0; mb < warm; ++mb) b.forward(mb, 0);
        for (std::int64_t k = 0; k < m - warm; ++k) {
          b.forward(warm + k, 0);
          b.backward(k, 0);
          after_b();
        }
        for (std::int64_t mb = m - warm; mb < m; ++mb) {
          b.backward(mb, 0);
          after_b();
        }
        while (next_w < m) b.weight_grad(next_w++, 0);
        break;
      }
    }
  }
  return orders;
}

}  // namespace planner
