// evaluate (and the step-time breakdown it fills): infeasibility reasons,
// out-of-memory as a value, and invariants of the step-time terms that hold
// whatever the profile's efficiencies are.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/layer_cost.h"
#include "planner/model/memory_model.h"
#include "planner/model/model_math.h"
#include "planner/model/step_time.h"
#include "test_support.h"

using namespace planner;
using planner::testing::plan_on;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;
constexpr double kRel = 1e-12;

TrainingSpec training_for(const ModelSpec& m, std::int64_t gpus) {
  TrainingSpec ts;
  ts.num_gpus = gpus;
  ts.seq_len = m.default_seq_len;
  ts.global_batch_sequences = m.default_global_batch_tokens / m.default_seq_len;
  return ts;
}

ParallelConfig layout(std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t dp) {
  ParallelConfig pc;
  pc.tp = tp, pc.cp = cp, pc.pp = pp, pc.dp = dp;
  pc.sequence_parallel = tp > 1;
  return pc;
}
}  // namespace

TEST_CASE("structural problems are reasons, not exceptions", "[evaluate]") {
  struct Row {
    const char* what;
    const char* hardware;
    std::int64_t gpus;
    std::function<void(ParallelConfig&, TrainingSpec&)> edit;
    Reason expected;
    bool only;  // the single reason
  };
  const Row rows[] = {
      {"tp does not divide 32 heads", "dgx-h100", 3, [](ParallelConfig& pc, TrainingSpec&) { pc.tp = 3; },
       Reason::tp_not_dividing_heads, false},
      {"tp = 12 does not divide 8 KV heads", "dgx-h100", 24,
       [](ParallelConfig& pc, TrainingSpec&) { pc.tp = 12, pc.dp = 2; }, Reason::tp_not_dividing_heads, false},
      {"tp 16 > 8 GPUs per DGX node", "dgx-h100", 16, [](ParallelConfig& pc, TrainingSpec&) { pc.tp = 16; },
       Reason::tp_exceeds_scale_up, false},
      {"product != GPUs", "dgx-h100", 16, [](ParallelConfig& pc, TrainingSpec&) { pc.tp = 2, pc.pp = 2, pc.dp = 2; },
       Reason::gpu_count_mismatch, true},
      {"batch not divisible by dp", "dgx-h100", 8,
       [](ParallelConfig& pc, TrainingSpec& ts) { pc.dp = 8, ts.global_batch_sequences = 100; },
       Reason::batch_not_divisible, true},
      {"batch not divisible by dp * mbs", "dgx-h100", 8,
       [](ParallelConfig& pc, TrainingSpec&) { pc.dp = 8, pc.micro_batch_size = 3; }, Reason::batch_not_divisible,
       true},
      {"vpp without pp", "dgx-h100", 8, [](ParallelConfig& pc, TrainingSpec&) { pc.dp = 8, pc.virtual_stages = 2; },
       Reason::vpp_needs_pp, true},
      {"more stages than layers", "dgx-h100", 64, [](ParallelConfig& pc, TrainingSpec&) { pc.pp = 64; },
       Reason::too_few_layers, true},
      {"interleaving with fewer micro-batches than stages", "dgx-h100", 8,
       [](ParallelConfig& pc, TrainingSpec& ts) { pc.pp = 8, pc.virtual_stages = 2, ts.global_batch_sequences = 4; },
       Reason::interleave_needs_micro_batches, true},
      {"pp * vpp > layers", "dgx-h100", 8, [](ParallelConfig& pc, TrainingSpec&) { pc.pp = 8, pc.virtual_stages = 8; },
       Reason::too_few_layers, true},
      {"seq not divisible by 2*cp", "dgx-h100", 3, [](ParallelConfig& pc, TrainingSpec&) { pc.cp = 3; },
       Reason::cp_not_dividing_seq, true},
      {"ZeRO stage 4", "dgx-h100", 8, [](ParallelConfig& pc, TrainingSpec&) { pc.dp = 8, pc.zero_stage = 4; },
       Reason::zero_stage_invalid, true},
      {"fp8 on TPU v5e", "tpu-v5e-256", 8,
       [](ParallelConfig& pc, TrainingSpec& ts) { pc.dp = 8, ts.dtype = DType::fp8; }, Reason::dtype_unsupported, true},
  };
  const ModelSpec m = find_model("llama8b", kDir);
  for (const Row& r : rows) {
    SECTION(r.what) {
      const HardwareProfile hw = find_hardware(r.hardware, kDir);
      TrainingSpec ts = training_for(m, r.gpus);
      ParallelConfig pc;
      r.edit(pc, ts);
      const Evaluation ev = evaluate(m, hw, pc, ts);
      CHECK_FALSE(ev.feasible());
      CHECK(ev.has(r.expected));
      CHECK_FALSE(ev.has(Reason::out_of_memory));
      if (r.only) CHECK(ev.reason_list() == std::vector<Reason>{r.expected});
      CHECK(structural_reasons(m, hw, normalized(pc), ts) == ev.reasons);
      CHECK(ev.time.step_s == 0.0);  // not priced
      for (Reason x : ev.reason_list()) CHECK(std::string(describe(x)).size() > 0);
    }
  }
}

TEST_CASE("Llama 3.1 405B on 8 GPUs is out of memory, and says by how much", "[evaluate]") {
  const ModelSpec m = find_model("llama405b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const Evaluation ev = evaluate(m, hw, layout(8, 1, 1, 1), training_for(m, 8));
  CHECK(ev.reason_list() == std::vector<Reason>{Reason::out_of_memory});
  CHECK_FALSE(ev.memory.fits());
  // Model state alone: 405,853,388,800 / 8 * 16 bytes = 811.7 GB per GPU > 80 GiB.
  CHECK(ev.memory.weights_bytes + ev.memory.gradients_bytes + ev.memory.optimizer_bytes ==
        Approx(405'853'388'800.0 / 8.0 * 16.0).epsilon(kRel));
  CHECK(ev.memory.total_bytes > hw.hbm_capacity_bytes);
  CHECK(ev.time.step_s > 0.0);  // still priced
}

TEST_CASE("a generous layout fits", "[evaluate]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  ParallelConfig pc = layout(8, 1, 1, 8);
  pc.recompute = Recompute::full;
  pc.zero_stage = 1;
  const Evaluation ev = evaluate(m, hw, pc, training_for(m, 64));
  CHECK(ev.feasible());
  CHECK(ev.memory.fits());
}

TEST_CASE("step-time terms are non-negative, finite and sum to the step", "[evaluate]") {
  struct Row {
    const char* model;
    const char* hardware;
    std::int64_t gpus, tp, cp, pp, dp, mbs, vpp;
    Recompute rec;
    int zero;
    AttentionKernel attention;
    Schedule schedule;
  };
  const Row rows[] = {
      {"llama8b", "dgx-h100", 8, 1, 1, 1, 8, 1, 1, Recompute::none, 1, AttentionKernel::flash, Schedule::one_f_one_b},
      {"llama70b", "dgx-h100", 64, 4, 1, 4, 4, 1, 2, Recompute::none, 0, AttentionKernel::flash, Schedule::one_f_one_b},
      {"llama70b", "dgx-h200", 512, 8, 2, 4, 8, 1, 1, Recompute::full, 3, AttentionKernel::flash,
       Schedule::one_f_one_b},
      {"llama405b", "dgx-h100", 1024, 8, 1, 16, 8, 1, 1, Recompute::selective, 1, AttentionKernel::flash,
       Schedule::one_f_one_b},
      {"gpt3-175b", "dgx-a100-80gb", 128, 8, 1, 8, 2, 1, 1, Recompute::selective, 0, AttentionKernel::unfused,
       Schedule::gpipe},
      {"llama8b", "tpu-v5e-256", 256, 4, 1, 1, 64, 2, 1, Recompute::full, 3, AttentionKernel::flash,
       Schedule::one_f_one_b},
      {"llama8b", "tpu-v5e-256", 512, 8, 1, 2, 32, 1, 1, Recompute::full, 2, AttentionKernel::flash,
       Schedule::one_f_one_b},
  };
  for (const Row& r : rows) {
    INFO(r.model << " on " << r.gpus << " x " << r.hardware << ": tp " << r.tp << " cp " << r.cp << " pp " << r.pp
                 << " dp " << r.dp);
    const ModelSpec m = find_model(r.model, kDir);
    const HardwareProfile hw = find_hardware(r.hardware, kDir);
    TrainingSpec ts = training_for(m, r.gpus);
    ts.attention = r.attention;
    ParallelConfig pc = layout(r.tp, r.cp, r.pp, r.dp);
    pc.micro_batch_size = r.mbs, pc.virtual_stages = r.vpp, pc.recompute = r.rec, pc.zero_stage = r.zero;
    pc.schedule = r.schedule;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    // Structure valid: at most out of memory.
    REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0u);
    const StepTimeBreakdown& t = ev.time;
    const double terms[] = {t.compute_s, t.recompute_s, t.contention_s, t.tp_comm_s,    t.cp_comm_s,
                            t.pp_p2p_s,  t.pp_bubble_s, t.dp_comm_s,    t.zero3_comm_s, t.optimizer_s};
    double sum = 0;
    for (double x : terms) {
      CHECK(std::isfinite(x));
      CHECK(x >= 0.0);
      sum += x;
    }
    CHECK(t.step_s == Approx(sum).epsilon(kRel));
    CHECK(t.compute_s > 0.0);
    CHECK(t.mfu > 0.0);
    CHECK(t.mfu < 1.0);
    CHECK(t.hfu >= t.mfu);
    CHECK(t.hfu < 1.0);
    // Derived quantities, from their definitions.
    const double tokens = double(ts.global_batch_sequences) * double(ts.seq_len);
    CHECK(t.micro_batches == ts.global_batch_sequences / (r.dp * r.mbs));
    CHECK(t.tokens_per_s == Approx(tokens / t.step_s).epsilon(kRel));
    CHECK(t.model_flops_per_step == Approx(flops_per_token(m, ts.seq_len, r.rec, ts.attention).model * tokens).epsilon(kRel));
    CHECK(t.mfu == Approx(t.model_flops_per_step / (t.step_s * double(r.gpus) * hw.peak_flops_per_s[0])).epsilon(kRel));
    CHECK(t.bubble_fraction == Approx(t.pp_bubble_s / t.step_s).epsilon(kRel));
    // Terms that must vanish for this layout.
    if (r.pp == 1) CHECK(t.pp_bubble_s + t.pp_p2p_s == 0.0);
    if (r.tp == 1) CHECK(t.tp_comm_s == 0.0);
    if (r.cp == 1) CHECK(t.cp_comm_s == 0.0);
    // ZeRO-2 reduce-scatters every micro-batch and copies the gradients into its input on the compute stream.
    if (r.zero < 2) CHECK(t.zero3_comm_s == 0.0);
    if (r.zero == 3) CHECK(t.dp_comm_s == 0.0);
    if (r.rec == Recompute::none) CHECK(t.recompute_s == 0.0);
  }
}

TEST_CASE("the stage layout holds every layer exactly once", "[evaluate]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  // nemotron4-15b: a 256k vocabulary makes the output layer worth several layers.
  for (const char* name : {"llama8b", "llama70b", "gpt3-175b", "nemotron4-15b"}) {
    const ModelSpec m = find_model(name, kDir);
    for (std::int64_t tp : {1, 8})
      for (std::int64_t pp : {2, 4, 8, 16, 32})
        for (std::int64_t vpp : {1, 2, 3, 4}) {
          if (pp * vpp > m.num_layers) continue;
          INFO(name << " tp " << tp << " pp " << pp << " vpp " << vpp);
          TrainingSpec ts = training_for(m, tp * pp);
          ts.global_batch_sequences = 64 * pp;
          ParallelConfig pc = layout(tp, 1, pp, 1);
          pc.virtual_stages = vpp;
          const Evaluation ev = evaluate(m, hw, pc, ts);
          REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0u);
          std::int64_t sum = 0;
          for (std::int64_t s = 0; s < pp; ++s) {
            // Every chunk a layer, but the end stages' head chunks, which may hold their head alone.
            const bool end = s == 0 || s == pp - 1;
            CHECK(ev.layout.layers_on(s) >= (end && vpp > 1 ? vpp - 1 : vpp));
            sum += ev.layout.layers_on(s);
          }
          CHECK(sum == m.num_layers);
        }
  }
}

TEST_CASE("pricing with precomputed layer costs gives the same evaluation", "[evaluate]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training_for(m, 64);
  ParallelConfig pc = layout(4, 1, 4, 4);
  pc.virtual_stages = 2;
  const ParallelConfig n = normalized(pc);
  const Evaluation a = evaluate(m, hw, pc, ts);
  const Evaluation b = evaluate(m, hw, pc, ts, layer_time(m, hw, n, ts), head_time(m, hw, n, ts));
  CHECK(a.reasons == b.reasons);
  CHECK(a.config == b.config);
  CHECK(a.time.step_s == b.time.step_s);
  CHECK(a.memory.total_bytes == b.memory.total_bytes);
}

TEST_CASE("normalized: SP needs TP, vpp > 1 is interleaved", "[evaluate]") {
  ParallelConfig pc;
  pc.sequence_parallel = true;
  CHECK_FALSE(normalized(pc).sequence_parallel);
  pc.pp = 4, pc.virtual_stages = 2;
  CHECK(normalized(pc).schedule == Schedule::interleaved);
  pc.virtual_stages = 1, pc.schedule = Schedule::interleaved;
  CHECK(normalized(pc).schedule == Schedule::one_f_one_b);
  pc.schedule = Schedule::gpipe;
  CHECK(normalized(pc).schedule == Schedule::gpipe);
}

TEST_CASE("dominant overhead names the largest non-compute term", "[evaluate]") {
  StepTimeBreakdown t;
  CHECK(std::string(dominant_overhead(t)) == "none");
  t.compute_s = 100, t.pp_bubble_s = 2, t.tp_comm_s = 3;
  CHECK(std::string(dominant_overhead(t)) == "TP comm");
  t.dp_comm_s = 4;
  CHECK(std::string(dominant_overhead(t)) == "DP comm");
}

TEST_CASE("explain records formulas when asked", "[evaluate]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  Explain ex;
  (void)evaluate(m, hw, layout(2, 1, 2, 2), training_for(m, 8), &ex);
  REQUIRE_FALSE(ex.steps().empty());
  for (const ExplainStep& s : ex.steps()) {
    CHECK_FALSE(s.name.empty());
    CHECK_FALSE(s.citation.empty());
    CHECK(std::isfinite(s.output));
  }
}

TEST_CASE("the DP and optimizer tail is the latest over the stages, each less its lead", "[evaluate]") {
  // With the gradient reduction after the backward pass (no overlap) a
  // stage's tail is its whole all-reduce plus its Adam step, so it can be
  // rebuilt from the public pieces, less the stage's lead over stage 0: the
  // backward of the stages before it, (sum_{j<r} bwd_j)/v. The layout is given
  // (step_time takes any): the last stage holds the most layers.
  const ModelSpec m = find_model("llama8b", kDir);
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  REQUIRE(hw.tiers.size() == 2);
  TrainingSpec ts = training_for(m, 24);
  ts.global_batch_sequences = 48;
  ts.overlap_grad_reduce = false;
  const ParallelConfig pc = layout(2, 1, 3, 4);  // DP ranks 6 apart: across nodes
  StageLayout sl;
  sl.stages = 3, sl.first = 6, sl.middle_hi = 10, sl.middle_hi_count = 1, sl.last = 16;
  REQUIRE(sl.first + sl.middle_hi + sl.last == m.num_layers);
  // Stock: the lead (the backward of the stages before) outlasts the extra
  // layers' reduction and Adam, so stage 0 ends the step. Inter-node links
  // 1000x slower: the reduction dominates, and the stage with the most
  // parameters ends it.
  const InterconnectTier nic = hw.tiers[1];
  for (const bool slow : {false, true}) {
    hw.tiers[1].bandwidth_nominal_bytes_per_s = nic.bandwidth_nominal_bytes_per_s / (slow ? 1000 : 1);
    hw.tiers[1].bandwidth_achieved_bytes_per_s = nic.bandwidth_achieved_bytes_per_s / (slow ? 1000 : 1);
    const PricedPlan plan = plan_on(m, hw, pc, ts, sl);
    const LayerTime& lt = plan.layer;
    const HeadTime& head = plan.head;
    const StepTimeBreakdown st = step_time(m, hw, pc, ts, plan);
    const GroupPlacement dp_group = weight_sharing_group(hw, pc);
    REQUIRE(dp_group.domains == 4);
    double expect = 0;
    std::int64_t stage = -1, before = 0;
    for (std::int64_t r = 0; r < sl.stages; ++r) {
      const double params = plan.local_non_expert_params(r, pc.tp);
      const double reduce =
          collective_cost(hw, dp_group, Collective::all_reduce, params * ts.grad_bytes_per_param).total_s();
      const double lead = r == 0 ? 0.0 : double(before) * lt.bwd_s() + head.embedding_bwd_s;
      const double tail = reduce + optimizer_time_s(hw, pc, ts, params) - lead;
      if (stage < 0 || tail > expect) expect = tail, stage = r;
      before += sl.layers_on(r);
    }
    INFO((slow ? "slow inter-node links" : "stock links"));
    CHECK(st.dp_comm_s + st.optimizer_s == Approx(expect).epsilon(1e-9));
    CHECK(st.dp_tail_stage == stage);
    CHECK(st.dp_tail_stage == (slow ? 2 : 0));
    CHECK(st.optimizer_s >= 0);
    CHECK(st.dp_comm_s >= 0);
  }
}

TEST_CASE("Megatron-Core's DP buckets: max(40M, 1M x DP x CP) parameters, the input embedding whole in the last",
          "[evaluate]") {
  // core_v0.19.0 distributed_data_parallel_config.py (bucket_size default) and
  // distrib_optimizer.py (parameters in backward order, a bucket closes after
  // a whole parameter): hand-derived sizes.
  CHECK(grad_bucket_params(16) == 40e6);
  CHECK(grad_bucket_params(64) == 64e6);
  CHECK(grad_bucket_params(128) == 128e6);
  CHECK(last_grad_bucket_params(1e9, 0, 64) == 64e6);
  CHECK(last_grad_bucket_params(1e9, 5.25e8, 64) == 5.25e8);  // Llama 3 8B's 128256 x 4096 embedding
  CHECK(last_grad_bucket_params(3e7, 0, 8) == 3e7);           // a chunk smaller than one bucket

  // One stage, gradients reduced during a backward far longer than the
  // reduction: the exposed DP time is the last bucket's reduce-scatter, the
  // embedding's (V*h = 525M parameters), plus the weight all-gather beyond the
  // first forward (none here).
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec ts = training_for(m, 64);
  ts.global_batch_sequences = 64 * 16;
  ParallelConfig pc = layout(1, 1, 1, 64);
  pc.zero_stage = 1;
  const Evaluation e = evaluate(m, hw, pc, ts);  // priced whether or not it fits in memory
  const GroupPlacement dp_group = weight_sharing_group(hw, pc);
  const double embedding = double(m.vocab_size) * double(m.hidden_size);
  const double last =
      collective_cost(hw, dp_group, Collective::reduce_scatter, embedding * reduce_bytes_per_param(ts)).total_s();
  const double gather =
      collective_cost(hw, dp_group, Collective::all_gather, e.plan.stage_params(0) * ts.weight_bytes_per_param)
          .total_s();
  REQUIRE(gather < double(m.num_layers) * e.plan.layer.fwd_s());
  CHECK(e.time.dp_comm_s == Approx(last).epsilon(1e-9));
  // The 40M-parameter bucket it replaces would be exposed for a fraction of that.
  const double old_bucket =
      collective_cost(hw, dp_group, Collective::reduce_scatter, 40e6 * reduce_bytes_per_param(ts)).total_s();
  CHECK(e.time.dp_comm_s > 2.0 * old_bucket);
}
