// The ops of the event engine (see engine.h): when an op may start, what it
// costs, and what its end sets off (sends, gradient reductions, the next op).
//
// An op starts when the compute stream is free and its input has arrived:
// F needs the previous stage's activation (stage 0, chunk c > 0: the last
// stage's chunk c-1), B/R need the next stage's gradient (the last stage's
// last chunk: its own F). W follows its B by construction of the order.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "simulate/engine.h"

namespace planner::engine {

Engine::OpCost Engine::op_cost(const ChunkCost& c, OpKind k, bool unpaired) const {
  OpCost o;
  switch (k) {
    case OpKind::forward: {
      const double unpaired_ep = unpaired ? c.forward_ep_unpaired_s : 0.0;
      o.duration_s = c.forward_s + unpaired_ep;
      o.ep_s = c.forward_ep_s + unpaired_ep;
      o.tp_cp_s = c.forward_tp_cp_s, o.zero3_s = c.forward_zero3_s, o.zero3_total_s = c.zero3_forward_total_s;
      break;
    }
    case OpKind::recompute:
      o.duration_s = c.recompute_s;
      o.ep_s = c.recompute_ep_s;
      o.tp_cp_s = c.recompute_tp_s;
      break;
    case OpKind::backward: {
      const double unpaired_ep = unpaired ? c.backward_ep_unpaired_s : 0.0;
      o.duration_s = (split_ ? c.backward_s - c.weight_grad_s : c.backward_s) + unpaired_ep;
      o.ep_s = c.backward_ep_s + unpaired_ep;
      o.tp_cp_s = c.backward_tp_cp_s, o.zero3_s = c.backward_zero3_s, o.zero3_total_s = c.zero3_backward_total_s;
      break;
    }
    case OpKind::weight_grad:
      o.duration_s = c.weight_grad_s;
      break;
  }
  return o;
}

// Time the input of `op` on `stage` arrived, or kNotYet.
double Engine::input_ready(std::int64_t stage, const StageOp& op) const {
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

void Engine::try_start(std::int64_t s, double now) {
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
  const double d = op_cost(c, op.kind, st.unpaired[st.next]).duration_s;
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

void Engine::send(std::int64_t from, std::int64_t to, std::int64_t chunk, std::int64_t mb, bool gradient, double now) {
  Stage& st = stages_[std::size_t(from)];
  // Hop between stage k and k+1 (mod p): send_s[k].
  const std::int64_t hop = gradient ? to : from;
  const double d = pr_.send_s[std::size_t(hop)];
  const bool blocking = !pr_.overlap_p2p;
  const double start = blocking ? now : std::max(now, st.send_free);
  const double end = start + d;
  if (!blocking) st.send_free = end;
  emit({start, end, std::int32_t(from), Stream::send, gradient ? EventKind::send_gradient : EventKind::send_activation,
        std::int32_t(mb), std::int32_t(chunk), -1, blocking});
  if (blocking) {
    out_.stages[std::size_t(from)].send_blocked_s += d;
    st.busy = true;
  }
  push({end, 0, QueueEntry::Type::send_done, std::int32_t(to), std::int32_t(from), std::int32_t(slot(to, chunk, mb)),
        gradient, blocking});
}

void Engine::reduce_buckets(std::int64_t s, std::int64_t chunk, double from_s, double to_s) {
  Stage& st = stages_[std::size_t(s)];
  const ChunkCost& cc = pr_.cost(s, chunk);
  const auto& buckets = cc.grad_buckets_s;
  const double n = double(buckets.size());
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    // Gradients come out of the op uniformly over its duration (approximation).
    const double f = cc.grad_bucket_ready.empty() ? double(k + 1) / n : cc.grad_bucket_ready[k];
    const double ready = from_s + (to_s - from_s) * f;
    const double start = std::max(ready, st.dp_free);
    st.dp_free = start + buckets[k];
    emit({start, st.dp_free, std::int32_t(s), Stream::dp, EventKind::grad_reduce, -1, std::int32_t(chunk),
          std::int32_t(k)});
    st.grads_done = std::max(st.grads_done, st.dp_free);
  }
}

void Engine::op_done(std::int64_t s, double now) {
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
  const OpCost cost = op_cost(c, op.kind, st.unpaired[index]);
  const double d = cost.duration_s, ep = cost.ep_s, tp_cp = cost.tp_cp_s, zero3 = cost.zero3_s;
  const double zero3_total = cost.zero3_total_s;
  emit({start, now, std::int32_t(s), Stream::compute, EventKind(op.kind), op.micro_batch, op.chunk});
  emit({now - tp_cp, now, std::int32_t(s), Stream::tp_cp, EventKind::tp_cp_comm, op.micro_batch, op.chunk});
  // The op's exposed expert all-to-alls (MoE), drawn on their own lane
  // before its exposed TP/CP part (both are summed per op, not placed layer
  // by layer).
  if (ep > 0)
    emit({now - tp_cp - ep, now - tp_cp, std::int32_t(s), Stream::ep, EventKind::ep_comm, op.micro_batch, op.chunk});
  if (zero3_total > 0) {
    const double zs = std::max(start, st.dp_free);
    st.dp_free = zs + zero3_total;
    emit({zs, st.dp_free, std::int32_t(s), Stream::dp, EventKind::zero3_gather, op.micro_batch, op.chunk});
  }
  ss.compute_s += d - tp_cp - zero3 - ep;
  if (op.kind == OpKind::recompute) ss.recompute_s += d - tp_cp - ep;
  ss.tp_cp_s += tp_cp;
  ss.ep_s += ep;
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

}  // namespace planner::engine
