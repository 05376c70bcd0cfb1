// The pipeline simulator: bubble formulas on ideal pipelines, ZB-H1 against
// 1F1B, agreement with the closed form, time accounting, determinism, and
// the problem built from the analytical engine.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/layer_cost.h"
#include "planner/model/pipeline.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/simulate.h"
#include "planner/simulate/simulate_top.h"
#include "planner/spec/input_error.h"

using namespace planner;

namespace {

// Uniform stages, no communication, no optimizer: the textbook pipeline.
// F, B (whole backward) and W (its weight-gradient part) per micro-batch per
// stage, divided evenly over v chunks.
PipelineProblem ideal(Schedule s, std::int64_t p, std::int64_t v, std::int64_t m, double f = 1.0, double b = 2.0,
                      double w = 1.0) {
  PipelineProblem pr;
  pr.schedule = s;
  pr.stages = p;
  pr.chunks_per_stage = v;
  pr.micro_batches = m;
  pr.chunks.resize(std::size_t(p * v));
  for (ChunkCost& c : pr.chunks) {
    c.forward_s = f / double(v);
    c.backward_s = b / double(v);
    c.weight_grad_s = w / double(v);
    c.layers = 1;
  }
  pr.send_s.assign(std::size_t(p), 0.0);
  pr.optimizer_s.assign(std::size_t(p), 0.0);
  return pr;
}

double accounted(const StageStats& s) {
  return s.compute_s + s.tp_cp_s + s.zero3_s + s.send_blocked_s + s.pipeline_wait_s + s.dp_wait_s + s.optimizer_s;
}

TrainingSpec training(std::int64_t gpus, std::int64_t global_batch, std::int64_t seq = 8192) {
  TrainingSpec ts;
  ts.num_gpus = gpus;
  ts.seq_len = seq;
  ts.global_batch_sequences = global_batch;
  return ts;
}

ParallelConfig layout(std::int64_t tp, std::int64_t pp, std::int64_t dp, std::int64_t v, Recompute r = Recompute::none,
                      int zero = 0) {
  ParallelConfig pc;
  pc.tp = tp;
  pc.pp = pp;
  pc.dp = dp;
  pc.virtual_stages = v;
  pc.recompute = r;
  pc.zero_stage = zero;
  pc.sequence_parallel = tp > 1;
  return pc;
}

}  // namespace

TEST_CASE("GPipe and 1F1B bubbles equal (p-1)/(m+p-1) on an ideal pipeline", "[simulate]") {
  for (Schedule s : {Schedule::gpipe, Schedule::one_f_one_b})
    for (auto [p, m] :
         std::vector<std::pair<int, int>>{{2, 1}, {2, 8}, {4, 4}, {4, 8}, {4, 13}, {8, 32}, {16, 64}, {3, 2}}) {
      INFO(to_string(s) << " p=" << p << " m=" << m);
      const SimResult r = simulate(ideal(s, p, 1, m));
      CHECK(r.critical_wait_fraction() == Approx(double(p - 1) / double(m + p - 1)).epsilon(1e-12));
      CHECK(r.step_s == Approx(double(m + p - 1) * 3.0).epsilon(1e-12));
      for (const StageStats& st : r.stages) CHECK(st.compute_s == Approx(3.0 * m));
    }
}

TEST_CASE("interleaved bubble equals (p-1)/v over m + (p-1)/v exactly", "[simulate]") {
  for (auto [p, v, m] : std::vector<std::tuple<int, int, int>>{
           {2, 2, 2}, {4, 2, 4}, {4, 2, 8}, {4, 3, 12}, {8, 4, 32}, {8, 2, 16}, {16, 4, 64}}) {
    INFO("p=" << p << " v=" << v << " m=" << m);
    const SimResult r = simulate(ideal(Schedule::interleaved, p, v, m));
    const double bubble_units = double(p - 1) / double(v);
    CHECK(r.step_s == Approx((double(m) + bubble_units) * 3.0).epsilon(1e-12));
    CHECK(r.critical_wait_fraction() == Approx(ideal_bubble_fraction(p, v, m)).epsilon(1e-12));
  }
}

TEST_CASE("ZB-H1 cuts 1F1B's bubble from (p-1)(F+B+W) to (p-1)(F+B-W)", "[simulate]") {
  // Qi et al. 2023 §3.1: with T_F = T_B = T_W the ZB-H1 bubble is a third of 1F1B's.
  for (auto [p, m] : std::vector<std::pair<int, int>>{{2, 4}, {4, 8}, {4, 16}, {8, 16}, {8, 64}}) {
    INFO("p=" << p << " m=" << m);
    const SimResult one = simulate(ideal(Schedule::one_f_one_b, p, 1, m));
    const SimResult zb = simulate(ideal(Schedule::zb_h1, p, 1, m));
    const double work = 3.0 * m;
    CHECK(one.step_s - work == Approx(3.0 * (p - 1)));
    CHECK(zb.step_s - work == Approx(1.0 * (p - 1)));
    CHECK(one.step_s - zb.step_s == Approx(2.0 * (p - 1)));  // 2 (p-1) T_W
    CHECK(zb.critical_wait_fraction() == Approx(double(p - 1) / (3.0 * m + double(p - 1))));
  }
  // Unequal passes (T_W <= T_F): still (p-1)(T_F + T_B - T_W).
  const double f = 1.0, b_in = 1.3, w = 0.7;
  const SimResult zb = simulate(ideal(Schedule::zb_h1, 4, 1, 12, f, b_in + w, w));
  CHECK(zb.step_s - 12 * (f + b_in + w) == Approx(3 * (f + b_in - w)));
}

TEST_CASE("every second of every stage is accounted for", "[simulate]") {
  PipelineProblem pr = ideal(Schedule::interleaved, 4, 2, 8);
  pr.send_s = {0.01, 0.01, 0.01, 0.05};
  for (std::size_t k = 0; k < pr.chunks.size(); ++k) {
    pr.chunks[k].forward_tp_cp_s = 0.05;
    pr.chunks[k].forward_s += 0.05;
    pr.chunks[k].recompute_s = 0.2;
    pr.chunks[k].grad_buckets_s = {0.1, 0.1, 0.3};
    pr.chunks[k].param_gather_s = 0.4;
    pr.chunks[k].layers = 4;
  }
  pr.optimizer_s = {0.2, 0.2, 0.3, 0.1};
  for (bool overlap : {false, true}) {
    pr.overlap_p2p = overlap;
    pr.overlap_grad_reduce = pr.overlap_param_gather = overlap;
    const SimResult r = simulate(pr);
    for (const StageStats& s : r.stages) CHECK(accounted(s) == Approx(s.end_s).epsilon(1e-12));
    CHECK(r.step_s == Approx(std::max_element(r.stages.begin(), r.stages.end(), [](auto& a, auto& b) {
                               return a.end_s < b.end_s;
                             })->end_s));
    // Every event is well formed, and no stream runs two things at once.
    for (const SimEvent& e : r.events) {
      CHECK(e.start_s >= 0);
      CHECK(e.end_s > e.start_s);
      CHECK(std::isfinite(e.end_s));
    }
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < kNumStreams; ++k) {
        std::vector<std::pair<double, double>> spans;
        for (const SimEvent& e : r.events)
          if (e.stage == s && int(e.stream) == k) spans.emplace_back(e.start_s, e.end_s);
        std::sort(spans.begin(), spans.end());
        for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second - 1e-12);
      }
  }
}

TEST_CASE("forward passes follow the pipeline: stage s+1 starts a micro-batch after stage s sent it", "[simulate]") {
  PipelineProblem pr = ideal(Schedule::interleaved, 4, 2, 8);
  pr.send_s = {0.1, 0.1, 0.1, 0.3};
  const SimResult r = simulate(pr);
  auto find = [&](int stage, EventKind k, int mb, int chunk) {
    for (const SimEvent& e : r.events)
      if (e.stage == stage && e.kind == k && e.micro_batch == mb && e.chunk == chunk) return e;
    FAIL("event not found");
    return SimEvent{};
  };
  for (int mb = 0; mb < 8; ++mb) {
    for (int s = 0; s + 1 < 4; ++s)
      CHECK(find(s + 1, EventKind::forward, mb, 0).start_s >= find(s, EventKind::forward, mb, 0).end_s + 0.1 - 1e-12);
    // The wrap-around: stage 0's chunk 1 needs the last stage's chunk 0.
    CHECK(find(0, EventKind::forward, mb, 1).start_s >= find(3, EventKind::forward, mb, 0).end_s + 0.3 - 1e-12);
    // Backward runs the other way.
    CHECK(find(2, EventKind::backward, mb, 1).start_s >= find(3, EventKind::backward, mb, 1).end_s + 0.1 - 1e-12);
  }
}

TEST_CASE("event order is deterministic across runs", "[simulate]") {
  PipelineProblem pr = ideal(Schedule::interleaved, 8, 4, 32);
  pr.send_s.assign(8, 0.01);
  pr.overlap_p2p = true;
  for (ChunkCost& c : pr.chunks) c.grad_buckets_s = {0.02, 0.02};
  const SimResult a = simulate(pr), b = simulate(pr);
  REQUIRE(a.events.size() == b.events.size());
  CHECK(a.events == b.events);
  CHECK(a.step_s == b.step_s);
}

TEST_CASE("the op orders hold every op exactly once", "[simulate]") {
  for (Schedule s : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::zb_h1, Schedule::interleaved}) {
    const std::int64_t v = s == Schedule::interleaved ? 3 : 1;
    const auto orders = stage_op_order(s, 4, v, 8, true);
    for (const auto& ops : orders) {
      std::vector<int> count(4 * 8 * 3, 0);
      for (const StageOp& op : ops) ++count[std::size_t((int(op.kind) * 8 + op.micro_batch) * 3 + op.chunk)];
      for (int k = 0; k < 4; ++k)
        for (int mb = 0; mb < 8; ++mb)
          for (int c = 0; c < v; ++c) {
            const int expected = k == int(OpKind::weight_grad) ? (s == Schedule::zb_h1 ? 1 : 0) : 1;
            CHECK(count[std::size_t((k * 8 + mb) * 3 + c)] == expected);
          }
      // Recompute comes right before its backward.
      for (std::size_t i = 0; i + 1 < ops.size(); ++i)
        if (ops[i].kind == OpKind::recompute) {
          CHECK(ops[i + 1].kind == OpKind::backward);
          CHECK(ops[i + 1].micro_batch == ops[i].micro_batch);
        }
    }
  }
}

TEST_CASE("bad problems and deadlocking orders are errors, not hangs", "[simulate]") {
  PipelineProblem pr = ideal(Schedule::one_f_one_b, 4, 1, 8);
  pr.chunks[3].forward_s = std::nan("");
  CHECK_THROWS_AS(simulate(pr), InputError);
  pr = ideal(Schedule::one_f_one_b, 4, 2, 8);  // v > 1 needs interleaved
  CHECK_THROWS_AS(simulate(pr), InputError);
  pr = ideal(Schedule::one_f_one_b, 4, 1, 8);
  pr.send_s.pop_back();
  CHECK_THROWS_AS(simulate(pr), InputError);
  // Megatron-LM's interleaved order with m not a multiple of p can deadlock
  // (why it refuses such counts): the simulator says so.
  try {
    (void)simulate(ideal(Schedule::interleaved, 4, 3, 5));
    FAIL("expected a deadlock");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("deadlocked") != std::string::npos);
  }
}

TEST_CASE("the problem is the analytical engine's costs cut into chunks", "[simulate]") {
  const ModelSpec m = find_model("llama70b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const TrainingSpec ts = training(64, 64);
  const ParallelConfig pc = layout(4, 4, 4, 2, Recompute::selective);
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.reasons == (ev.reasons & (1u << unsigned(Reason::out_of_memory))));
  const PipelineProblem pr = pipeline_problem(m, hw, pc, ts, ev, Schedule::interleaved);
  CHECK(pr.micro_batches == 16);
  const LayerTime lt = layer_time(m, hw, normalized(pc), ts);
  const HeadTime head = head_time(m, hw, normalized(pc), ts);
  for (std::int64_t s = 0; s < 4; ++s) {
    double per_mb = 0;
    std::int64_t layers = 0;
    for (std::int64_t c = 0; c < 2; ++c) {
      const ChunkCost& cc = pr.cost(s, c);
      per_mb += cc.forward_s + cc.recompute_s + cc.backward_s;
      layers += cc.layers;
    }
    CHECK(layers == ev.layout.layers_on(s));
    double expected = double(ev.layout.layers_on(s)) * lt.total_s();
    if (s == 0) expected += head.embedding_fwd_s + head.embedding_bwd_s;
    if (s == 3) expected += head.output_fwd_s + head.output_bwd_s + head.output_tp_comm_s;
    CHECK(per_mb == Approx(expected).epsilon(1e-12));
  }
}

TEST_CASE("simulated steps agree with the closed form within 2% on real layouts", "[simulate]") {
  // Megatron's defaults (blocking sends, overlapped DP reduction), at least 4p
  // micro-batches. The closed form is exact only for uniform stages; integer
  // layer counts and the embedding/output layers make real stages differ by a
  // few %, and its (sum of the other stages)/v fill-and-drain then over-counts
  // (see "an uneven pipeline..." below), which matters less as m grows.
  struct Case {
    const char* model;
    std::int64_t gpus, gb, tp, pp, dp, v;
    Recompute r;
    int zero;
  };
  const Case cases[] = {
      {"llama70b", 64, 64, 4, 4, 4, 1, Recompute::selective, 0},
      {"llama70b", 64, 256, 4, 4, 4, 2, Recompute::selective, 1},
      {"llama70b", 256, 256, 8, 4, 8, 5, Recompute::selective, 1},
      {"llama8b", 64, 128, 2, 4, 8, 1, Recompute::none, 1},
      {"llama405b", 2048, 512, 8, 16, 16, 4, Recompute::selective, 1},
      {"llama405b", 1024, 256, 8, 16, 8, 1, Recompute::full, 1},
  };
  for (const Case& c : cases) {
    const ModelSpec m = find_model(c.model);
    const HardwareProfile hw = find_hardware("dgx-h100");
    const TrainingSpec ts = training(c.gpus, c.gb);
    const ParallelConfig pc = layout(c.tp, c.pp, c.dp, c.v, c.r, c.zero);
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO(c.model << " TP" << c.tp << " PP" << c.pp << " DP" << c.dp << " v" << c.v);
    REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
    const PipelineProblem pr = pipeline_problem(m, hw, pc, ts, ev, default_sim_schedule(ev.config));
    const SimResult r = simulate(pr);
    const SimComparison cmp = compare_with_closed_form(ev, pr, r);
    CHECK(std::abs(cmp.relative_difference()) < 0.02);
    double sum = 0;
    for (const auto& t : cmp.terms) sum += t.simulated_s;
    CHECK(sum == Approx(r.step_s).epsilon(1e-9));
    CHECK(r.stages.size() == std::size_t(c.pp));
  }
}

TEST_CASE("an uneven pipeline idles less than the closed form's fill-and-drain", "[simulate]") {
  // Stage 1 is 1.5x slower; the others wait for it. The closed form charges
  // m * 4.5 + (sum of the other stages) = 36 + 9; the heaviest stage's own
  // warm-up forwards overlap part of the downstream round trip, so the real
  // critical path is 3 shorter: 42 (1F1B, per-micro-batch F = 1/3 of F+B).
  PipelineProblem pr = ideal(Schedule::one_f_one_b, 4, 1, 8);
  pr.chunks[1].forward_s = 1.5;
  pr.chunks[1].backward_s = 3.0;
  const SimResult r = simulate(pr);
  CHECK(r.step_s == Approx(42.0));
  CHECK(r.step_s < 8 * 4.5 + 9.0);
}

TEST_CASE("search --simulate-top re-ranks by simulated step", "[simulate]") {
  const ModelSpec m = find_model("llama70b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  SearchSpec spec;
  spec.training = training(256, 256);
  spec.top_k = 6;
  const SearchResult sr = search(m, hw, spec);
  REQUIRE(sr.top.size() == 6);
  const auto ranked = simulate_top(m, hw, spec.training, sr.top, 4);
  REQUIRE(ranked.size() == 4);
  for (std::size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].simulated_step_s <= ranked[i].simulated_step_s);
  std::vector<std::size_t> seen;
  for (const auto& x : ranked) seen.push_back(x.closed_form_rank);
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::size_t>{1, 2, 3, 4});
}

TEST_CASE("MoE: the experts' gradient buckets interleave with the rest's, as the closed form hides them",
          "[simulate]") {
  // The routed experts' gradients (reduced over EDP) come out of each layer's
  // backward beside the rest's. Simulated as one bucket at the end of the
  // backward, they were all exposed: +3.6% on this layout (0.09 s of DP wait
  // where the closed form hides the reduction behind the last backward).
  const ModelSpec m = find_model("mixtral-8x7b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  for (bool overlap_a2a : {false, true}) {
    TrainingSpec ts = training(64, 256, 4096);
    ts.overlap_a2a = overlap_a2a;
    ParallelConfig pc = layout(2, 1, 32, 1, Recompute::none, 1);
    pc.micro_batch_size = 2, pc.ep = 8, pc.etp = 2;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO("overlap_a2a " << overlap_a2a);
    REQUIRE(ev.feasible());
    REQUIRE(ev.time.dp_comm_total_s > 0.1);  // a reduction worth hiding
    const PipelineProblem pr = pipeline_problem(m, hw, pc, ts, ev, default_sim_schedule(ev.config));
    const ChunkCost& cc = pr.cost(0, 0);
    REQUIRE(cc.grad_bucket_ready.size() == cc.grad_buckets_s.size());
    CHECK(std::is_sorted(cc.grad_bucket_ready.begin(), cc.grad_bucket_ready.end()));
    CHECK(cc.grad_bucket_ready.back() == 1.0);
    const SimResult r = simulate(pr);
    const SimComparison cmp = compare_with_closed_form(ev, pr, r);
    CHECK(std::abs(cmp.relative_difference()) < 0.005);
    CHECK(r.stages[0].dp_wait_s < 0.01);
  }
}
