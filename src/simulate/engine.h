// The discrete-event engine behind simulate() (simulate.h), private to
// src/simulate/: engine.cpp sets a step up and runs its event queue;
// engine_ops.cpp starts and finishes the ops, sends and gradient reductions.
//
// Resources per stage: the compute stream (runs the stage's fixed op order,
// one op at a time; blocking sends and the optimizer also hold it), the send
// stream (activation/gradient transfers when p2p overlaps compute), and the
// DP stream (ZeRO-1/2 parameter gathers at the start, ZeRO-3 gathers during
// the ops, gradient buckets during / after the backward). The TP/CP stream
// only draws the exposed part of each op's tensor/context communication.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

#include "planner/simulate/simulate.h"

namespace planner::engine {

inline constexpr double kNotYet = -1.0;

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

class Engine {
 public:
  explicit Engine(const PipelineProblem& pr);
  SimResult run();

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
    // Per op of the order: a forward before any backward's partner or a
    // backward after the last forward's (--overlap-a2a exposes its whole
    // all-to-alls: ChunkCost::forward_ep_unpaired_s).
    std::vector<bool> unpaired;
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

  // engine_ops.cpp
  // What an op of kind k on chunk c costs: its time on the compute stream,
  // the exposed communication inside it, and its ZeRO-3 gathers on the DP
  // stream. The one place an op kind picks its chunk's terms.
  struct OpCost {
    double duration_s = 0;     // on the compute stream (B without W when split)
    double ep_s = 0;           // exposed MoE all-to-alls, unpaired or not
    double tp_cp_s = 0;        // exposed TP/CP
    double zero3_s = 0;        // exposed ZeRO-3 gathers
    double zero3_total_s = 0;  // ZeRO-3 gathers before overlap (DP stream)
  };
  [[nodiscard]] OpCost op_cost(const ChunkCost& c, OpKind k, bool unpaired) const;
  // Time the input of `op` on `stage` arrived, or kNotYet.
  [[nodiscard]] double input_ready(std::int64_t stage, const StageOp& op) const;
  void try_start(std::int64_t s, double now);
  void send(std::int64_t from, std::int64_t to, std::int64_t chunk, std::int64_t mb, bool gradient, double now);
  void reduce_buckets(std::int64_t s, std::int64_t chunk, double from_s, double to_s);
  void op_done(std::int64_t s, double now);

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

}  // namespace planner::engine
