// The discrete-event engine behind `planner simulate` (see simulate.h).
//
// Resources per stage: the compute stream (runs the stage's fixed op order,
// one op at a time; blocking sends and the optimizer also hold it), the send
// stream (activation/gradient transfers when p2p overlaps compute), and the
// DP stream (ZeRO-1/2 parameter gathers at the start, ZeRO-3 gathers during
// the ops, gradient buckets during / after the backward). The TP/CP stream
// only draws the exposed part of each op's tensor/context communication.
//
// An op starts when the compute stream is free and its input has arrived:
// F needs the previous stage's activation (stage 0, chunk c > 0: the last
// stage's chunk c-1), B/R need the next stage's gradient (the last stage's
// last chunk: its own F). W follows its B by construction of the order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include <fmt/format.h>

#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"

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
  }
  return "?";
}

namespace {

constexpr double kNotYet = -1.0;

struct QueueEntry {
  double time_s;
  std::uint64_t seq;
  enum class Type : std::uint8_t { op_done, send_done } type;
  std::int32_t stage;   // op_done: the stage; send_done: the receiving stage
  std::int32_t sender;  // send_done: the sending stage
  std::int32_t slot;    // send_done: readiness slot index at the receiver
  bool backward;        // send_done: a gradient (true) or an activation
  bool blocking;        // send_done: the sender's compute stream waits for it
};

struct Later {
  bool operator()(const QueueEntry& a, const QueueEntry& b) const {
    return a.time_s != b.time_s ? a.time_s > b.time_s : a.seq > b.seq;
  }
};

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
                     c.zero3_backward_total_s, c.param_gather_s})
      if (!ok(x)) bad("chunk costs: expected finite non-negative durations");
    for (double x : c.grad_buckets_s)
      if (!ok(x)) bad("gradient buckets: expected finite non-negative durations");
    if (c.weight_grad_s > c.backward_s) bad("chunk costs: weight-gradient part exceeds the backward");
  }
  for (double x : pr.send_s)
    if (!ok(x)) bad("send costs: expected finite non-negative durations");
  for (double x : pr.optimizer_s)
    if (!ok(x)) bad("optimizer costs: expected finite non-negative durations");
}

class Engine {
 public:
  explicit Engine(const PipelineProblem& pr)
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

  SimResult run() {
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
        throw InputError("simulate",
                         fmt::format("{} schedule deadlocked: stage {} waits forever for {} (p={} v={} m={})",
                                     to_string(pr_.schedule), s, what, p_, v_, m_));
      }
      StageStats& ss = out_.stages[std::size_t(s)];
      if (ss.end_s > out_.step_s) out_.step_s = ss.end_s, out_.critical_stage = s;
    }
    return std::move(out_);
  }

 private:
  struct Stage {
    std::size_t next = 0;  // next op in the order
    bool busy = false;
    bool finished = false;
    double free_at = 0;               // when the compute stream last became free
    double send_free = 0;             // send stream
    double dp_free = 0;               // DP stream
    double grads_done = 0;            // last gradient bucket reduced
    double op_start = 0, op_end = 0;  // the op in progress
    std::vector<std::int64_t> last_grad_op, first_forward_op;
    std::vector<double> gather_end;
  };

  [[nodiscard]] std::size_t slot(std::int64_t stage, std::int64_t chunk, std::int64_t mb) const {
    return std::size_t((stage * v_ + chunk) * m_ + mb);
  }

  void emit(const SimEvent& e) {
    if (e.end_s > e.start_s) out_.events.push_back(e);
  }

  void push(QueueEntry e) {
    e.seq = seq_++;
    queue_.push(e);
  }

  double op_duration(const ChunkCost& c, OpKind k) const {
    switch (k) {
      case OpKind::forward:
        return c.forward_s;
      case OpKind::recompute:
        return c.recompute_s;
      case OpKind::backward:
        return split_ ? c.backward_s - c.weight_grad_s : c.backward_s;
      case OpKind::weight_grad:
        return c.weight_grad_s;
    }
    return 0;
  }

  // Time the input of `op` on `stage` arrived, or kNotYet.
  double input_ready(std::int64_t stage, const StageOp& op) const {
    switch (op.kind) {
      case OpKind::forward:
        return fwd_ready_[slot(stage, op.chunk, op.micro_batch)];
      case OpKind::recompute:
      case OpKind::backward:
        return bwd_ready_[slot(stage, op.chunk, op.micro_batch)];
      case OpKind::weight_grad:
        return 0.0;  // its B ran earlier on this stream
    }
    return kNotYet;
  }

  void try_start(std::int64_t s, double now) {
    Stage& st = stages_[std::size_t(s)];
    if (st.busy || st.finished) return;
    const auto& ops = orders_[std::size_t(s)];
    StageStats& ss = out_.stages[std::size_t(s)];
    if (st.next == ops.size()) {
      // Every op done: the optimizer step waits for the last gradient bucket.
      const double start = std::max(now, st.grads_done);
      ss.dp_wait_s += start - st.free_at;
      const double d = pr_.optimizer_s[std::size_t(s)];
      emit({start, start + d, std::int32_t(s), Stream::compute, EventKind::optimizer});
      ss.optimizer_s = d;
      st.busy = true;
      st.op_start = start;
      st.op_end = start + d;
      push({start + d, 0, QueueEntry::Type::op_done, std::int32_t(s), 0, 0, false, false});
      return;
    }
    const StageOp& op = ops[st.next];
    if (input_ready(s, op) == kNotYet) return;
    const ChunkCost& c = pr_.cost(s, op.chunk);
    const double d = op_duration(c, op.kind);
    double start = now;
    ss.pipeline_wait_s += now - st.free_at;
    if (op.kind == OpKind::forward && std::int64_t(st.next) == st.first_forward_op[std::size_t(op.chunk)]) {
      // ZeRO-1/2 prefetch: layer by layer the forward needs its gathered
      // weights; the chunk's last layer cannot finish before the gather does.
      const double layer = d / double(std::max<std::int64_t>(1, c.layers));
      start = std::max(start, st.gather_end[std::size_t(op.chunk)] + layer - d);
      ss.dp_wait_s += start - now;
    }
    st.busy = true;
    st.op_start = start;
    st.op_end = start + d;
    push({start + d, 0, QueueEntry::Type::op_done, std::int32_t(s), 0, 0, false, false});
  }

  void send(std::int64_t from, std::int64_t to, std::int64_t chunk, std::int64_t mb, bool gradient, double now) {
    Stage& st = stages_[std::size_t(from)];
    // Hop between stage k and k+1 (mod p): send_s[k].
    const std::int64_t hop = gradient ? to : from;
    const double d = pr_.send_s[std::size_t(hop)];
    const bool blocking = !pr_.overlap_p2p;
    const double start = blocking ? now : std::max(now, st.send_free);
    const double end = start + d;
    if (!blocking) st.send_free = end;
    emit({start, end, std::int32_t(from), Stream::send,
          gradient ? EventKind::send_gradient : EventKind::send_activation, std::int32_t(mb), std::int32_t(chunk), -1,
          blocking});
    if (blocking) {
      out_.stages[std::size_t(from)].send_blocked_s += d;
      st.busy = true;
    }
    push({end, 0, QueueEntry::Type::send_done, std::int32_t(to), std::int32_t(from), std::int32_t(slot(to, chunk, mb)),
          gradient, blocking});
  }

  void reduce_buckets(std::int64_t s, std::int64_t chunk, double from_s, double to_s) {
    Stage& st = stages_[std::size_t(s)];
    const auto& buckets = pr_.cost(s, chunk).grad_buckets_s;
    const double n = double(buckets.size());
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      // Gradients come out of the op uniformly over its duration (approximation).
      const double ready = from_s + (to_s - from_s) * double(k + 1) / n;
      const double start = std::max(ready, st.dp_free);
      st.dp_free = start + buckets[k];
      emit({start, st.dp_free, std::int32_t(s), Stream::dp, EventKind::grad_reduce, -1, std::int32_t(chunk),
            std::int32_t(k)});
      st.grads_done = std::max(st.grads_done, st.dp_free);
    }
  }

  void op_done(std::int64_t s, double now) {
    Stage& st = stages_[std::size_t(s)];
    StageStats& ss = out_.stages[std::size_t(s)];
    st.busy = false;
    st.free_at = now;
    const auto& ops = orders_[std::size_t(s)];
    if (st.next == ops.size()) {  // the optimizer step finished
      st.finished = true;
      ss.end_s = now;
      if (!pr_.overlap_param_gather) {  // gather the updated weights, exposed
        for (std::int64_t c = 0; c < v_; ++c) {
          const double g = pr_.cost(s, c).param_gather_s;
          if (g <= 0) continue;
          const double gs = std::max(ss.end_s, st.dp_free);
          st.dp_free = gs + g;
          emit({gs, st.dp_free, std::int32_t(s), Stream::dp, EventKind::param_gather, -1, std::int32_t(c)});
          ss.dp_wait_s += st.dp_free - ss.end_s;
          ss.end_s = st.dp_free;
        }
      }
      return;
    }
    const StageOp op = ops[st.next];
    const std::size_t index = st.next++;
    const ChunkCost& c = pr_.cost(s, op.chunk);
    const double start = st.op_start;
    const double d = op_duration(c, op.kind);
    double tp_cp = 0, zero3 = 0, zero3_total = 0;
    switch (op.kind) {
      case OpKind::forward:
        tp_cp = c.forward_tp_cp_s, zero3 = c.forward_zero3_s, zero3_total = c.zero3_forward_total_s;
        break;
      case OpKind::recompute:
        tp_cp = c.recompute_tp_s;
        break;
      case OpKind::backward:
        tp_cp = c.backward_tp_cp_s, zero3 = c.backward_zero3_s, zero3_total = c.zero3_backward_total_s;
        break;
      case OpKind::weight_grad:
        break;
    }
    emit({start, now, std::int32_t(s), Stream::compute, EventKind(op.kind), op.micro_batch, op.chunk});
    emit({now - tp_cp, now, std::int32_t(s), Stream::tp_cp, EventKind::tp_cp_comm, op.micro_batch, op.chunk});
    if (zero3_total > 0) {
      const double zs = std::max(start, st.dp_free);
      st.dp_free = zs + zero3_total;
      emit({zs, st.dp_free, std::int32_t(s), Stream::dp, EventKind::zero3_gather, op.micro_batch, op.chunk});
    }
    ss.compute_s += d - tp_cp - zero3;
    if (op.kind == OpKind::recompute) ss.recompute_s += d - tp_cp;
    ss.tp_cp_s += tp_cp;
    ss.zero3_s += zero3;

    // Gradients of this chunk are complete: reduce its buckets (during the
    // backward when overlapped, otherwise once the stage's backward is over).
    if (pr_.overlap_grad_reduce) {
      if (std::int64_t(index) == st.last_grad_op[std::size_t(op.chunk)]) reduce_buckets(s, op.chunk, start, now);
    } else if (st.next == ops.size()) {
      for (std::int64_t k = v_ - 1; k >= 0; --k) reduce_buckets(s, k, now, now);
    }

    // Outputs.
    if (op.kind == OpKind::forward) {
      if (s + 1 < p_)
        send(s, s + 1, op.chunk, op.micro_batch, false, now);
      else if (op.chunk + 1 < v_)
        send(s, 0, op.chunk + 1, op.micro_batch, false, now);
      else
        bwd_ready_[slot(s, op.chunk, op.micro_batch)] = now;  // the loss: backward may start
    } else if (op.kind == OpKind::backward) {
      if (s > 0)
        send(s, s - 1, op.chunk, op.micro_batch, true, now);
      else if (op.chunk > 0)
        send(s, p_ - 1, op.chunk - 1, op.micro_batch, true, now);
    }
    try_start(s, now);
  }

  const PipelineProblem& pr_;
  const std::int64_t p_, v_, m_;
  const bool split_;
  std::vector<std::vector<StageOp>> orders_;
  std::vector<double> fwd_ready_, bwd_ready_;
  std::vector<Stage> stages_;
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, Later> queue_;
  std::uint64_t seq_ = 0;
  SimResult out_;
};

}  // namespace

SimResult simulate(const PipelineProblem& problem) {
  check_problem(problem);
  return Engine(problem).run();
}

}  // namespace planner
