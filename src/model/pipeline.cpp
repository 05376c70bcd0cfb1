#include "planner/model/pipeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace planner {

StageLayout balance_layers(std::int64_t layers, std::int64_t stages, std::int64_t min_layers, double extra_first,
                           double extra_last) {
  StageLayout out;
  out.stages = std::max<std::int64_t>(stages, 1);
  min_layers = std::max<std::int64_t>(min_layers, 1);
  // With chunks (min_layers > 1) the first and last stages may hold one layer
  // fewer: the embedding fills stage 0's first chunk alone, the output layer
  // stage p-1's last (end_min, pipeline.h).
  const std::int64_t end_min = out.stages > 1 && min_layers > 1 ? min_layers - 1 : min_layers;
  if (out.stages == 1 ? layers < min_layers : layers < (out.stages - 2) * min_layers + 2 * end_min) {
    out.feasible = false;
    return out;
  }
  if (out.stages == 1) {
    out.first = out.last = layers;
    return out;
  }
  const std::int64_t p = out.stages, mids = p - 2;
  // Capacity of each stage under a bound T on the heaviest stage's cost.
  auto cap = [&](double T, double extra) {
    return std::max<std::int64_t>(0, std::int64_t(std::floor(T - extra + 1e-9)));
  };
  auto total_cap = [&](double T) { return cap(T, extra_first) + cap(T, extra_last) + mids * cap(T, 0.0); };
  auto ok = [&](double T) {
    return cap(T, extra_first) >= end_min && cap(T, extra_last) >= end_min &&
           (mids == 0 || cap(T, 0.0) >= min_layers) && total_cap(T) >= layers;
  };
  // The optimum is at an integer M for some stage kind: T in {M, M+ef, M+el}.
  // Binary search over integer M for each kind, keep the smallest feasible T.
  double best = std::numeric_limits<double>::infinity();
  for (double extra : {0.0, extra_first, extra_last}) {
    std::int64_t lo = 0, hi = layers + 1;
    if (!ok(double(hi) + extra)) continue;
    while (lo < hi) {
      std::int64_t mid = lo + (hi - lo) / 2;
      if (ok(double(mid) + extra))
        hi = mid;
      else
        lo = mid + 1;
    }
    best = std::min(best, double(lo) + extra);
  }
  std::int64_t f = cap(best, extra_first), l = cap(best, extra_last), mcap = mids ? cap(best, 0.0) : 0;
  std::int64_t excess = f + l + mids * mcap - layers;
  // Remove the excess: from middle stages first (one layer each), then from the
  // end stages, never below min_layers (end_min for the end stages).
  std::int64_t hi_count = mids;
  if (mids > 0) {
    // Whole rows first: lower every middle stage while the excess covers it.
    const std::int64_t rows = std::min(excess / mids, mcap - min_layers);
    mcap -= rows;
    excess -= rows * mids;
    std::int64_t take = std::min(excess, mcap > min_layers ? mids : 0);
    hi_count = mids - take;
    excess -= take;
  }
  while (excess > 0 && (f > end_min || l > end_min)) {
    if (double(f) + extra_first >= double(l) + extra_last && f > end_min)
      --f;
    else if (l > end_min)
      --l;
    else
      --f;
    --excess;
  }
  if (excess > 0 && mids > 0) {  // extreme: spread the rest over middle stages again
    mcap -= 1;
    hi_count = mids - excess;
    excess = 0;
  }
  out.first = f;
  out.last = l;
  out.middle_hi = mcap;
  out.middle_hi_count = hi_count;
  out.feasible = excess == 0;
  return out;
}

bool layers_fill_chunks(std::int64_t layers, std::int64_t pp, std::int64_t v, PipelineSplit split) {
  if (pp < 1 || v < 1 || pp > layers) return false;
  if (split == PipelineSplit::balanced && pp > 1 && v > 1) return v <= (layers + 2) / pp;
  return v <= layers / pp;
}

StageLayout uniform_layers(std::int64_t layers, std::int64_t stages, std::int64_t min_layers) {
  StageLayout out;
  out.stages = std::max<std::int64_t>(stages, 1);
  min_layers = std::max<std::int64_t>(min_layers, 1);
  const std::int64_t p = out.stages, base = layers / p, rem = layers % p;
  if (base < min_layers) {
    out.feasible = false;
    return out;
  }
  if (p == 1) {
    out.first = out.last = layers;
    return out;
  }
  // Stages 0 .. rem-1 hold base + 1 (rem < p, so the last stage holds base
  // unless rem == 0).
  out.first = base + (rem > 0 ? 1 : 0);
  out.last = base;
  const std::int64_t mid_hi = std::max<std::int64_t>(0, rem - 1);  // middle stages with base + 1
  if (mid_hi > 0) {
    out.middle_hi = base + 1;
    out.middle_hi_count = mid_hi;
  } else {
    out.middle_hi = base;
    out.middle_hi_count = p - 2;
  }
  return out;
}

namespace {

// chunk_layers into caller-provided buffers of v entries (n, extra, low), so
// the step-time hot path (interleaved_pace_layers, once per evaluated
// configuration) allocates nothing for the usual v <= kStackChunks.
// With heads_in_split false the layers are filled as if no chunk carried a
// head, and `extra` gets the heads afterwards (the pace still counts them).
void fill_chunk_layers(const StageLayout& layout, std::int64_t stage, std::size_t nv, double extra_first,
                       double extra_last, bool heads_in_split, std::int64_t* n, double* extra, std::size_t* low) {
  for (std::size_t c = 0; c < nv; ++c) n[c] = 0, extra[c] = 0.0;
  const double head_first = stage == 0 ? extra_first : 0.0;
  const double head_last = stage == layout.stages - 1 ? extra_last : 0.0;
  if (heads_in_split) extra[0] += head_first, extra[nv - 1] += head_last;
  auto load = [&](std::size_t c) { return extra[c] + double(n[c]); };
  // Water-filling, each layer to the least-loaded chunk (ties to the earlier
  // one), in bulk: the chunks whose load is below the lowest + 1 take one
  // layer each, in some order, before any of them or any other chunk can be
  // the least loaded again, and that repeats while no other chunk comes
  // within 1 of them. O(v^2) steps instead of one per layer (a stage of a
  // 100,000-layer model is priced in microseconds, not milliseconds).
  std::int64_t left = layout.layers_on(stage);
  while (left > 0) {
    double lo = load(0);
    for (std::size_t c = 1; c < nv; ++c) lo = std::min(lo, load(c));
    std::size_t g = 0;
    double next = std::numeric_limits<double>::infinity();  // lowest load outside `low`
    for (std::size_t c = 0; c < nv; ++c) {
      if (load(c) < lo + 1.0)
        low[g++] = c;
      else
        next = std::min(next, load(c));
    }
    std::int64_t rounds = left / std::int64_t(g);
    if (std::isfinite(next)) rounds = std::min(rounds, std::int64_t(std::floor(next - lo)));
    if (rounds >= 1) {
      for (std::size_t k = 0; k < g; ++k) n[low[k]] += rounds;
      left -= rounds * std::int64_t(g);
      continue;
    }
    // Fewer layers left than low chunks: one at a time.
    std::size_t best = 0;
    for (std::size_t c = 1; c < nv; ++c)
      if (load(c) < load(best)) best = c;
    ++n[best];
    --left;
  }
  if (!heads_in_split) extra[0] += head_first, extra[nv - 1] += head_last;
}

constexpr std::size_t kStackChunks = 64;

}  // namespace

std::vector<std::int64_t> chunk_layers(const StageLayout& layout, std::int64_t stage, std::int64_t v,
                                       double extra_first, double extra_last, bool heads_in_split) {
  const std::size_t nv = std::size_t(std::max<std::int64_t>(v, 1));
  std::vector<std::int64_t> n(nv);
  std::vector<double> extra(nv);
  std::vector<std::size_t> low(nv);
  fill_chunk_layers(layout, stage, nv, extra_first, extra_last, heads_in_split, n.data(), extra.data(), low.data());
  return n;
}

double interleaved_pace_layers(const StageLayout& layout, std::int64_t v, double extra_first, double extra_last,
                               bool heads_in_split) {
  const std::size_t nv = std::size_t(std::max<std::int64_t>(v, 1));
  // Stack buffers for the usual v; heap only for a very large pinned v.
  std::int64_t n_stack[kStackChunks];
  double extra_stack[kStackChunks], max_stack[kStackChunks];
  std::size_t low_stack[kStackChunks];
  std::vector<std::int64_t> n_heap;
  std::vector<double> extra_heap, max_heap;
  std::vector<std::size_t> low_heap;
  std::int64_t* n = n_stack;
  double* extra = extra_stack;
  double* round_max = max_stack;
  std::size_t* low = low_stack;
  if (nv > kStackChunks) {
    n_heap.resize(nv), extra_heap.resize(nv), max_heap.resize(nv), low_heap.resize(nv);
    n = n_heap.data(), extra = extra_heap.data(), round_max = max_heap.data(), low = low_heap.data();
  }
  for (std::size_t c = 0; c < nv; ++c) round_max[c] = 0.0;
  // A stage's chunks depend only on its layers and the head it carries, so
  // one stage of each kind gives every chunk's slowest.
  for (std::int64_t s : layout.distinct_stages()) {
    fill_chunk_layers(layout, s, nv, extra_first, extra_last, heads_in_split, n, extra, low);
    for (std::size_t c = 0; c < nv; ++c) round_max[c] = std::max(round_max[c], double(n[c]) + extra[c]);
  }
  double pace = 0;
  for (std::size_t c = 0; c < nv; ++c) pace += round_max[c];
  return pace;
}

double micro_batches_in_flight(Schedule s, std::int64_t p, std::int64_t v, std::int64_t micro_batches,
                               std::int64_t stage) {
  const double md = double(micro_batches);
  switch (s) {
    case Schedule::gpipe:  // one stage has no pipeline: its micro-batches accumulate gradients in turn
      return p == 1 ? std::min(md, 1.0) : md;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1:  // ZB-H1 holds 1F1B's activations (Qi et al. 2023 §3)
      return std::min(md, double(p - stage));
    case Schedule::interleaved: {
      const double chunks = std::min(md * double(v), double(2 * (p - stage - 1) + (v - 1) * p + 1));
      return chunks / double(v);
    }
  }
  return md;
}

std::int64_t unpaired_chunk_passes(Schedule s, std::int64_t p, std::int64_t v, std::int64_t m, std::int64_t stage) {
  const std::int64_t total = s == Schedule::interleaved ? m * v : m;
  std::int64_t warm = total;
  switch (s) {
    case Schedule::gpipe:
      break;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1:
      warm = std::min(p - stage - 1, m);
      break;
    case Schedule::interleaved:
      warm = m == p ? total : std::min(total, 2 * (p - stage - 1) + (v - 1) * std::min(p, m));
      break;
  }
  return std::min(total, warm + 1);
}

double ideal_bubble_fraction(std::int64_t p, std::int64_t v, std::int64_t micro_batches) {
  const double bubble = double(p - 1) / double(std::max<std::int64_t>(v, 1));
  return bubble / (double(micro_batches) + bubble);
}

}  // namespace planner
