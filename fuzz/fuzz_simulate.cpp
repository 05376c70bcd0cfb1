// libFuzzer target: the pipeline simulator on arbitrary problems. Bytes pick
// the schedule, p, v, m and every duration; the simulation must finish (or
// reject the problem), every stage's time must add up to its end, and no
// event may be negative, inverted or non-finite.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "fuzz_support.h"
#include "planner/simulate/simulate.h"
#include "planner/spec/input_error.h"

using namespace planner;

namespace {
struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t next() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  double duration() { return double(next()) / 16.0; }  // 0 .. 16 in steps of 1/16
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes b{data, size};
  PipelineProblem pr;
  pr.schedule = Schedule(b.next() % 4);
  pr.stages = 1 + b.next() % 8;
  pr.chunks_per_stage = pr.schedule == Schedule::interleaved ? 1 + b.next() % 4 : 1;
  pr.micro_batches = 1 + b.next() % 24;
  if (pr.schedule == Schedule::interleaved)
    pr.micro_batches = pr.stages * (1 + pr.micro_batches % 6);  // Megatron's rule
  const std::uint8_t flags = b.next();
  pr.overlap_p2p = flags & 1;
  pr.overlap_grad_reduce = flags & 2;
  pr.overlap_param_gather = flags & 4;
  pr.chunks.resize(std::size_t(pr.stages * pr.chunks_per_stage));
  for (ChunkCost& c : pr.chunks) {
    c.forward_tp_cp_s = b.duration() / 4;
    c.forward_s = b.duration() + c.forward_tp_cp_s;
    c.recompute_s = (flags & 8) ? b.duration() : 0.0;
    c.weight_grad_s = b.duration();
    c.backward_s = c.weight_grad_s + b.duration();
    c.layers = 1 + b.next() % 4;
    c.param_gather_s = (flags & 16) ? b.duration() : 0.0;
    for (int k = b.next() % 4; k > 0; --k) c.grad_buckets_s.push_back(b.duration());
    if (flags & 32) {  // buckets ready where the bytes say (MoE: two interleaved lists), sorted
      for (std::size_t k = 0; k < c.grad_buckets_s.size(); ++k)
        c.grad_bucket_ready.push_back(double(1 + b.next() % 16) / 16.0);
      std::sort(c.grad_bucket_ready.begin(), c.grad_bucket_ready.end());
    }
  }
  pr.send_s.resize(std::size_t(pr.stages));
  for (double& x : pr.send_s) x = b.duration() / 8;
  pr.optimizer_s.resize(std::size_t(pr.stages));
  for (double& x : pr.optimizer_s) x = b.duration() / 4;
  try {
    const SimResult r = simulate(pr);
    for (const StageStats& s : r.stages) {
      const double sum =
          s.compute_s + s.tp_cp_s + s.zero3_s + s.send_blocked_s + s.pipeline_wait_s + s.dp_wait_s + s.optimizer_s;
      fuzz::require(std::abs(sum - s.end_s) <= 1e-9 * std::max(1.0, s.end_s), "stage time adds up to its end");
      fuzz::require(s.end_s <= r.step_s, "step is the last stage's end");
    }
    for (const SimEvent& e : r.events) {
      fuzz::require(std::isfinite(e.start_s) && std::isfinite(e.end_s), "finite event");
      fuzz::require(e.start_s >= 0 && e.end_s > e.start_s, "ordered event");
    }
  } catch (const InputError& e) {
    // Only a deadlock is acceptable for these well-formed problems, and the
    // schedules here (m a multiple of p for interleaving) never deadlock.
    fuzz::require(false, e.what());
  }
  return 0;
}
