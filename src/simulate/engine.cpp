// The event engine's set-up and loop (see engine.h): the per-stage state and
// ZeRO-1/2 prefetches at the start of the step, the queue ordered by (time,
// sequence number), the deadlock check, the critical stage; and the checks on
// a PipelineProblem before it runs.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"
#include "simulate/engine.h"

namespace planner {

const char* to_string(Stream s) {
  switch (s) {
    case Stream::compute:
      return "compute";
    case Stream::tp_cp:
      return "TP/CP comm (exposed)";
    case Stream::send:
      return "PP send";
    case Stream::dp:
      return "DP comm";
    case Stream::ep:
      return "EP all-to-all (exposed)";
  }
  return "?";
}

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::forward:
      return "F";
    case EventKind::recompute:
      return "R";
    case EventKind::backward:
      return "B";
    case EventKind::weight_grad:
      return "W";
    case EventKind::tp_cp_comm:
      return "TP/CP";
    case EventKind::send_activation:
      return "send act";
    case EventKind::send_gradient:
      return "send grad";
    case EventKind::grad_reduce:
      return "grad reduce";
    case EventKind::param_gather:
      return "param gather";
    case EventKind::zero3_gather:
      return "ZeRO-3 gather";
    case EventKind::optimizer:
      return "optimizer";
    case EventKind::ep_comm:
      return "EP a2a";
  }
  return "?";
}

namespace {

void check_problem(const PipelineProblem& pr) {
  auto bad = [](const std::string& what) { throw InputError("simulate", what); };
  if (pr.stages < 1 || pr.chunks_per_stage < 1 || pr.micro_batches < 1)
    bad(fmt::format("expected p, v, m >= 1, got p={} v={} m={}", pr.stages, pr.chunks_per_stage, pr.micro_batches));
  // Bounded memory: about 200 bytes per chunk-micro-batch (readiness slots,
  // ops, events), so at most ~210 MiB (measured: 0.21 s, 210 MiB peak at 2^20).
  if (pr.stages > (1 << 20) || pr.chunks_per_stage > 1024 || pr.micro_batches > (1 << 20) ||
      pr.stages * pr.chunks_per_stage * pr.micro_batches > (std::int64_t(1) << 20))
    bad(
        fmt::format("p*v*m = {}*{}*{} chunk-micro-batches is more than the simulator handles (2^20 = 1048576); "
                    "simulate fewer micro-batches (--global-batch) or stages",
                    pr.stages, pr.chunks_per_stage, pr.micro_batches));
  if (pr.chunks_per_stage > 1 && pr.schedule != Schedule::interleaved)
    bad(fmt::format("{} runs one chunk per stage; v = {} needs the interleaved schedule", to_string(pr.schedule),
                    pr.chunks_per_stage));
  if (pr.chunks.size() != std::size_t(pr.stages * pr.chunks_per_stage)) bad("chunk costs: expected p*v entries");
  if (pr.send_s.size() != std::size_t(pr.stages) || pr.optimizer_s.size() != std::size_t(pr.stages))
    bad("send and optimizer costs: expected p entries");
  auto ok = [](double x) { return std::isfinite(x) && x >= 0; };
  for (const ChunkCost& c : pr.chunks) {
    for (double x : {c.forward_s, c.recompute_s, c.backward_s, c.weight_grad_s, c.forward_tp_cp_s, c.backward_tp_cp_s,
                     c.recompute_tp_s, c.forward_zero3_s, c.backward_zero3_s, c.zero3_forward_total_s,
                     c.zero3_backward_total_s, c.param_gather_s, c.forward_ep_s, c.backward_ep_s, c.recompute_ep_s,
                     c.forward_ep_unpaired_s, c.backward_ep_unpaired_s})
      if (!ok(x)) bad("chunk costs: expected finite non-negative durations");
    for (double x : c.grad_buckets_s)
      if (!ok(x)) bad("gradient buckets: expected finite non-negative durations");
    if (!c.grad_bucket_ready.empty()) {
      if (c.grad_bucket_ready.size() != c.grad_buckets_s.size())
        bad("gradient buckets: expected one ready fraction per bucket");
      double prev = 0;
      for (double f : c.grad_bucket_ready) {
        if (!(f > 0 && f <= 1) || f < prev) bad("gradient buckets: expected non-decreasing ready fractions in (0, 1]");
        prev = f;
      }
    }
    if (c.weight_grad_s > c.backward_s) bad("chunk costs: weight-gradient part exceeds the backward");
  }
  for (double x : pr.send_s)
    if (!ok(x)) bad("send costs: expected finite non-negative durations");
  for (double x : pr.optimizer_s)
    if (!ok(x)) bad("optimizer costs: expected finite non-negative durations");
}

}  // namespace

namespace engine {

Engine::Engine(const PipelineProblem& pr)
    : pr_(pr), p_(pr.stages), v_(pr.chunks_per_stage), m_(pr.micro_batches), split_(pr.schedule == Schedule::zb_h1) {
  bool recompute = false;
  for (const ChunkCost& c : pr.chunks) recompute = recompute || c.recompute_s > 0;
  orders_ = stage_op_order(pr.schedule, p_, v_, m_, recompute);
  const std::size_t slots = std::size_t(p_ * v_ * m_);
  fwd_ready_.assign(slots, kNotYet);
  bwd_ready_.assign(slots, kNotYet);
  stages_.resize(std::size_t(p_));
  out_.stages.resize(std::size_t(p_));
  // Stage 0's first chunk has its input from the start.
  for (std::int64_t mb = 0; mb < m_; ++mb) fwd_ready_[slot(0, 0, mb)] = 0.0;
  for (std::int64_t s = 0; s < p_; ++s) {
    Stage& st = stages_[std::size_t(s)];
    st.last_grad_op.assign(std::size_t(v_), -1);
    st.first_forward_op.assign(std::size_t(v_), -1);
    const auto& ops = orders_[std::size_t(s)];
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const StageOp& op = ops[k];
      if (op.kind == (split_ ? OpKind::weight_grad : OpKind::backward))
        st.last_grad_op[std::size_t(op.chunk)] = std::int64_t(k);
      if (op.kind == OpKind::forward && st.first_forward_op[std::size_t(op.chunk)] < 0)
        st.first_forward_op[std::size_t(op.chunk)] = std::int64_t(k);
    }
    // Unpaired passes (unpaired_chunk_passes, pipeline.h): the forwards
    // before the first backward (the warm-up and the first steady-state
    // forward, which has no backward to pair with yet), and as many of the
    // last backwards.
    st.unpaired.assign(ops.size(), false);
    std::int64_t unpaired = 0;
    for (const StageOp& op : ops) {
      if (op.kind == OpKind::backward) break;
      if (op.kind == OpKind::forward) ++unpaired;
    }
    std::int64_t f = 0, b = 0;
    for (std::size_t k = 0; k < ops.size(); ++k)
      if (ops[k].kind == OpKind::forward && f++ < unpaired) st.unpaired[k] = true;
    for (std::size_t k = ops.size(); k-- > 0;)
      if (ops[k].kind == OpKind::backward && b++ < unpaired) st.unpaired[k] = true;
    // ZeRO-1/2: the updated weights are gathered chunk by chunk at the start
    // of the step, in forward order, on the DP stream (Megatron-LM
    // --overlap-param-gather); without overlap, after the optimizer step.
    st.gather_end.assign(std::size_t(v_), 0.0);
    for (std::int64_t c = 0; c < v_ && pr_.overlap_param_gather; ++c) {
      const double g = pr_.cost(s, c).param_gather_s;
      if (g <= 0) continue;
      emit({st.dp_free, st.dp_free + g, std::int32_t(s), Stream::dp, EventKind::param_gather, -1, std::int32_t(c)});
      st.dp_free += g;
      st.gather_end[std::size_t(c)] = st.dp_free;
    }
  }
}

SimResult Engine::run() {
  for (std::int64_t s = 0; s < p_; ++s) try_start(s, 0.0);
  while (!queue_.empty()) {
    const QueueEntry e = queue_.top();
    queue_.pop();
    ++out_.events_processed;
    if (e.type == QueueEntry::Type::op_done) {
      op_done(e.stage, e.time_s);
    } else {
      (e.backward ? bwd_ready_ : fwd_ready_)[std::size_t(e.slot)] = e.time_s;
      if (e.blocking) {
        stages_[std::size_t(e.sender)].busy = false;
        stages_[std::size_t(e.sender)].free_at = e.time_s;
        try_start(e.sender, e.time_s);
      }
      try_start(e.stage, e.time_s);
    }
  }
  for (std::int64_t s = 0; s < p_; ++s) {
    const Stage& st = stages_[std::size_t(s)];
    if (!st.finished) {
      const auto& ops = orders_[std::size_t(s)];
      const std::string what =
          st.next < ops.size() ? fmt::format("{} of micro-batch {} chunk {}", to_string(EventKind(ops[st.next].kind)),
                                             ops[st.next].micro_batch, ops[st.next].chunk)
                               : std::string("the optimizer step");
      throw InputError("simulate", fmt::format("{} schedule deadlocked: stage {} waits forever for {} (p={} v={} m={})",
                                               to_string(pr_.schedule), s, what, p_, v_, m_));
    }
    StageStats& ss = out_.stages[std::size_t(s)];
    if (ss.end_s > out_.step_s) out_.step_s = ss.end_s, out_.critical_stage = s;
  }
  return std::move(out_);
}

}  // namespace engine

SimResult simulate(const PipelineProblem& problem) {
  check_problem(problem);
  return engine::Engine(problem).run();
}

}  // namespace planner
