// priced_plan: the quantities evaluate() prices once and memory_per_gpu,
// step_time and the simulator's problem builder read: stage queries of the
// layout (layers_before, distinct_stages), the slowest stage, stage and chunk
// parameters, and the plan evaluate() keeps.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/layer_cost.h"
#include "planner/model/memory_model.h"
#include "planner/model/model_math.h"
#include "planner/model/pipeline.h"
#include "planner/model/priced_plan.h"
#include "planner/model/step_time.h"
#include "planner/spec/limits.h"
#include "test_support.h"

using namespace planner;
using planner::testing::plan_on;

namespace {

const std::string kDir = PLANNER_SOURCE_DIR;

TrainingSpec training(std::int64_t gpus, std::int64_t seq, std::int64_t batch) {
  TrainingSpec ts;
  ts.num_gpus = gpus;
  ts.seq_len = seq;
  ts.global_batch_sequences = batch;
  return ts;
}

ParallelConfig config(std::int64_t tp, std::int64_t pp, std::int64_t dp, std::int64_t v = 1, int zero = 0) {
  ParallelConfig pc;
  pc.tp = tp, pc.pp = pp, pc.dp = dp, pc.virtual_stages = v, pc.zero_stage = zero;
  pc.sequence_parallel = tp > 1;
  return pc;
}

// A MoE layout at TP 1 under ZeRO-1, the experts over EP `ep`.
ParallelConfig expert_config(std::int64_t pp, std::int64_t dp, std::int64_t ep) {
  ParallelConfig pc = config(1, pp, dp, 1, 1);
  pc.ep = ep;
  return pc;
}

StageLayout make_layout(std::int64_t stages, std::int64_t first, std::int64_t middle_hi, std::int64_t middle_hi_count,
                        std::int64_t last) {
  StageLayout l;
  l.stages = stages, l.first = first, l.middle_hi = middle_hi, l.middle_hi_count = middle_hi_count, l.last = last;
  return l;
}

// Layouts of every shape balance_layers makes: 1..9 stages, layer counts
// that divide and that do not, light and heavy heads, interleaving minima.
std::vector<StageLayout> layout_mix() {
  std::vector<StageLayout> out;
  for (std::int64_t stages = 1; stages <= 9; ++stages)
    for (std::int64_t layers : {9, 16, 31, 32, 80, 126})
      for (std::int64_t min_layers : {1, 2})
        for (double extra : {0.0, 0.6, 1.7, 3.2}) {
          const StageLayout l = balance_layers(layers, stages, min_layers, extra, 0.5 * extra);
          if (l.feasible) out.push_back(l);
        }
  return out;
}

}  // namespace

TEST_CASE("layers_before is the sum of the layers on the stages before", "[priced_plan]") {
  // Hand-made: 7 | 8 8 | 7 7 | 6 (two middle stages with middle_hi, two with one fewer).
  const StageLayout l = make_layout(6, 7, 8, 2, 6);
  const std::int64_t expected[6] = {0, 7, 15, 23, 30, 37};
  for (std::int64_t s = 0; s < 6; ++s) CHECK(l.layers_before(s) == expected[s]);
  for (const StageLayout& mix : layout_mix()) {
    std::int64_t sum = 0;
    for (std::int64_t s = 0; s < mix.stages; ++s) {
      INFO("stages " << mix.stages << " first " << mix.first << " middle " << mix.middle_hi << " x"
                     << mix.middle_hi_count << " last " << mix.last << ", stage " << s);
      CHECK(mix.layers_before(s) == sum);
      sum += mix.layers_on(s);
    }
  }
}

TEST_CASE("distinct stages: the first stage of each kind, in stage order", "[priced_plan]") {
  auto list = [](const StageLayout& l) {
    const DistinctStages d = l.distinct_stages();
    return std::vector<std::int64_t>(d.begin(), d.end());
  };
  CHECK(list(make_layout(1, 32, 0, 0, 32)) == std::vector<std::int64_t>{0});
  CHECK(list(make_layout(2, 16, 0, 0, 16)) == std::vector<std::int64_t>{0, 1});
  // Llama 3 405B PP16: 7 | 8 x 14 | 7, every middle stage alike.
  CHECK(list(make_layout(16, 7, 8, 14, 7)) == std::vector<std::int64_t>{0, 1, 15});
  CHECK(list(make_layout(6, 7, 8, 2, 6)) == std::vector<std::int64_t>{0, 1, 3, 5});
  // No middle stage holds middle_hi: stage 1 is the first of the lighter kind.
  CHECK(list(make_layout(4, 7, 8, 0, 7)) == std::vector<std::int64_t>{0, 1, 3});
  for (const StageLayout& l : layout_mix()) {
    INFO("stages " << l.stages << " first " << l.first << " middle " << l.middle_hi << " x" << l.middle_hi_count
                   << " last " << l.last);
    const std::vector<std::int64_t> d = list(l);
    REQUIRE(!d.empty());
    CHECK(d.front() == 0);
    CHECK(d.back() == l.stages - 1);
    CHECK(std::is_sorted(d.begin(), d.end()));
    CHECK(std::adjacent_find(d.begin(), d.end()) == d.end());
    // Every stage has a representative no later than it, with its layers and heads.
    for (std::int64_t s = 0; s < l.stages; ++s) {
      const bool found = std::any_of(d.begin(), d.end(), [&](std::int64_t r) {
        return r <= s && l.layers_on(r) == l.layers_on(s) && (r == 0) == (s == 0) &&
               (r == l.stages - 1) == (s == l.stages - 1);
      });
      CHECK(found);
    }
  }
}

TEST_CASE("the slowest stage has the largest stage time, the earliest on ties", "[priced_plan]") {
  PricedPlan plan;
  plan.layout = make_layout(4, 7, 8, 2, 7);
  plan.layer_step_s = 1.0;
  plan.head_first_s = 0.5;
  plan.head_last_s = 2.5;  // 7.5 | 8 | 8 | 9.5
  CHECK(plan.stage_time_s(0) == 7.5);
  CHECK(plan.stage_time_s(3) == 9.5);
  CHECK(plan.slowest_stage() == 3);
  plan.head_last_s = 0.5;  // 7.5 | 8 | 8 | 7.5: the first of the two middle stages
  CHECK(plan.slowest_stage() == 1);
  plan.head_first_s = 1.0;  // 8 | 8 | 8 | 7.5: stage 0 on the tie
  CHECK(plan.slowest_stage() == 0);
  plan.head_first_s = 1.5;  // 8.5 | 8 | 8 | 7.5
  CHECK(plan.slowest_stage() == 0);
  plan.layout = make_layout(1, 32, 0, 0, 32);  // one stage carries both heads
  CHECK(plan.stage_time_s(0) == 32.0 + 1.5 + 0.5);
  CHECK(plan.slowest_stage() == 0);

  // On evaluated plans: the maximum over every stage (ZeRO-3 exposure counts
  // per layer, so a stage with more layers can overtake the output stage).
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  for (const ParallelConfig& pc :
       {config(8, 4, 2), config(8, 8, 1, 2), config(4, 16, 1, 1, 3), config(2, 5, 6, 1, 3)}) {
    const TrainingSpec ts = training(pc.tp * pc.pp * pc.dp, 4096, 240);
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO("TP" << pc.tp << " PP" << pc.pp << " DP" << pc.dp << " v" << pc.virtual_stages << " ZeRO-" << pc.zero_stage);
    REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
    std::int64_t brute = 0;
    for (std::int64_t s = 1; s < pc.pp; ++s)
      if (ev.plan.stage_time_s(s) > ev.plan.stage_time_s(brute)) brute = s;
    CHECK(ev.plan.slowest_stage() == brute);
    CHECK(ev.time.stage_time_per_micro_batch_s == ev.plan.stage_time_s(brute));
  }
}

TEST_CASE("stage parameters: layers plus the embedding / output layer", "[priced_plan]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(16, 8192, 64);
  // Llama 3.1 8B: 218,112,000 per layer, V*h = 525,336,576, final norm 4096.
  const StageLayout two = balance_layers(32, 2, 1, 0.0, 0.0);
  REQUIRE(two.first == 16);
  const PricedPlan p2 = plan_on(m, hw, config(1, 2, 8), ts, two);
  CHECK(p2.stage_params(0) == 16.0 * 218'112'000 + 525'336'576);
  CHECK(p2.stage_params(1) == 16.0 * 218'112'000 + 525'336'576 + 4'096);
  const PricedPlan p1 = plan_on(m, hw, config(1, 1, 16), ts, balance_layers(32, 1, 1, 0.0, 0.0));
  CHECK(p1.stage_params(0) == 8'030'261'248.0);

  // Tied embeddings with PP > 1: the last stage keeps its own copy for the output layer.
  const ModelSpec g = find_model("gpt3-175b", kDir);
  const ParamCounts gp = count_params(g);
  const PricedPlan pg = plan_on(g, hw, config(1, 2, 8), training(16, 2048, 64), balance_layers(96, 2, 1, 0.0, 0.0));
  CHECK(pg.stage_params(1) == 48.0 * double(gp.per_layer) + double(gp.embedding + gp.final_norm));
  CHECK(pg.stage_params(0) == 48.0 * double(gp.per_layer) + double(gp.embedding + gp.position));
}

TEST_CASE("chunk layers and parameters agree with the per-chunk computation they replace", "[priced_plan]") {
  // The simulator's problem builder counted each chunk's parameters itself:
  // its layers plus the embedding (chunk 0 of stage 0) or the output layer and
  // final norm, with tied embeddings and PP > 1 an embedding copy (chunk v-1
  // of stage p-1). The plan's chunks must give the same, and sum to the stage.
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  for (const char* name : {"llama8b", "gpt3-175b"}) {
    const ModelSpec m = find_model(name, kDir);
    const ParamCounts pcnt = count_params(m);
    for (const ParallelConfig& pc : {config(1, 1, 8), config(2, 4, 1, 2), config(1, 4, 2, 3), config(2, 2, 2, 1, 3)}) {
      const TrainingSpec ts = training(pc.tp * pc.pp * pc.dp, 2048, 64);
      const Evaluation ev = evaluate(m, hw, pc, ts);
      INFO(name << " TP" << pc.tp << " PP" << pc.pp << " DP" << pc.dp << " v" << pc.virtual_stages);
      REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
      const PricedPlan& plan = ev.plan;
      const std::int64_t p = pc.pp, v = pc.virtual_stages;
      for (std::int64_t s = 0; s < p; ++s) {
        const std::vector<ChunkPlan> chunks = plan.chunks(s);
        REQUIRE(chunks.size() == std::size_t(v));
        const std::vector<std::int64_t> layers = chunk_layers(ev.layout, s, v, plan.extra_first, plan.extra_last);
        double sum = 0;
        std::int64_t layer_sum = 0;
        for (std::int64_t c = 0; c < v; ++c) {
          const ChunkPlan& ch = chunks[std::size_t(c)];
          const bool embedding = s == 0 && c == 0, output = s == p - 1 && c == v - 1;
          CHECK(ch.layers == layers[std::size_t(c)]);
          CHECK(ch.embedding == embedding);
          CHECK(ch.output == output);
          double old = double(ch.layers) * double(pcnt.per_layer);
          if (embedding) old += double(pcnt.embedding + pcnt.position);
          if (output)
            old += double(pcnt.output + pcnt.final_norm) + (m.tied_embeddings && p > 1 ? double(pcnt.embedding) : 0.0);
          CHECK(ch.params == old);
          sum += ch.params;
          layer_sum += ch.layers;
        }
        CHECK(layer_sum == ev.layout.layers_on(s));
        CHECK(sum == Approx(plan.stage_params(s)).epsilon(1e-15));
      }
    }
  }
}

TEST_CASE("evaluate keeps the plan it priced memory and time from", "[priced_plan]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  for (int zero : {0, 1, 3}) {
    const ParallelConfig pc = config(8, 4, 4, 2, zero);
    const TrainingSpec ts = training(128, 4096, 256);
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO("ZeRO-" << zero);
    REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
    const PricedPlan& plan = ev.plan;
    const ParallelConfig n = normalized(pc);
    const LayerTime lt = layer_time(m, hw, n, ts);
    CHECK(plan.layer.total_s() == lt.total_s());
    CHECK(plan.micro_batches == 256 / (4 * 1));
    CHECK(plan.micro_batches == ev.time.micro_batches);
    CHECK(plan.layout.first == ev.layout.first);
    CHECK(plan.layout.last == ev.layout.last);
    CHECK(plan.layout.middle_hi == ev.layout.middle_hi);
    CHECK(plan.layout.middle_hi_count == ev.layout.middle_hi_count);
    CHECK(plan.weight_group.size == 4);
    CHECK(plan.grads_reduced == (zero < 3));
    CHECK(plan.zero3_gathers == (zero == 3));
    if (zero < 3) CHECK(plan.zero3.all_gather_s == 0.0);
    if (zero == 3) CHECK(plan.zero3.all_gather_s > 0.0);
    CHECK(plan.layer_step_s ==
          lt.total_s() + plan.zero3.exposed_s() + plan.zero3.staging_s() + plan.zero3.contention_s());
    CHECK(plan.extra_first == plan.head_first_s / std::max(plan.layer_step_s, kTinyTime_s));
    CHECK(plan.extra_last == plan.head_last_s / std::max(plan.layer_step_s, kTinyTime_s));
    // The plan is all step_time and memory_per_gpu need: pricing it again gives the same bits.
    const StepTimeBreakdown again = step_time(m, hw, n, ts, plan);
    CHECK(again.step_s == ev.time.step_s);
    CHECK(memory_per_gpu(m, hw, n, ts, plan).total_bytes == ev.memory.total_bytes);
  }
}

// ZeRO-3 as frameworks run it: the reduce dtype on the wire, the staging
// copies on the compute stream, DeepSpeed's re-gather for the recomputed forward.
TEST_CASE("ZeRO-3 reduce dtype: fp32 reduce-scatters move twice the bytes of bf16 ones", "[priced_plan][zero3]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-a100-80gb", kDir);
  ParallelConfig pc = config(1, 1, 64, 1, 3);
  TrainingSpec ts = training(64, 8192, 64);
  const LayerTime lt = layer_time(m, hw, pc, ts);
  const GroupPlacement wg = weight_sharing_group(hw, pc);
  const double layer_params = double(count_params(m).per_layer);
  const Zero3LayerComm bf16 = zero3_layer_comm(m, hw, pc, ts, lt, wg);
  ts.grad_reduce_bytes_per_param = 2;  // the same as the default's fallback to grad_bytes
  CHECK(zero3_layer_comm(m, hw, pc, ts, lt, wg).reduce_scatter_s == bf16.reduce_scatter_s);
  ts.grad_reduce_bytes_per_param = 4;
  const Zero3LayerComm fp32 = zero3_layer_comm(m, hw, pc, ts, lt, wg);
  CHECK(fp32.reduce_scatter_s ==
        collective_cost(hw, wg, Collective::reduce_scatter, layer_params * 4.0).total_s());
  CHECK(fp32.reduce_scatter_s > 1.5 * bf16.reduce_scatter_s);
  CHECK(fp32.all_gather_s == bf16.all_gather_s);  // weights still gathered in bf16
  // The copy into the reduce-scatter input writes the wider dtype: 2 more bytes per parameter.
  const double hbm = hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency;
  CHECK(fp32.staging_bwd_s - bf16.staging_bwd_s == Approx(layer_params * 2.0 / hbm).epsilon(1e-12));
  CHECK(reduce_bytes_per_param(ts) == 4.0);
  ts.grad_reduce_bytes_per_param = 0;
  ts.grad_bytes_per_param = 4;
  CHECK(reduce_bytes_per_param(ts) == 4.0);  // 0: the gradients' own width
}

TEST_CASE("ZeRO-3 staging copies: 2w bytes per gathered parameter, g + r per reduced one", "[priced_plan][zero3]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(128, 4096, 256);
  const double hbm = hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency;
  const double p = double(count_params(m).per_layer) / 8.0;
  for (bool reshard : {true, false})
    for (int zero : {2, 3}) {
      ParallelConfig pc = config(8, 1, 16, 1, zero);
      pc.reshard_after_forward = reshard;
      const LayerTime lt = layer_time(m, hw, pc, ts);
      const Zero3LayerComm z = zero3_layer_comm(m, hw, pc, ts, lt, weight_sharing_group(hw, pc));
      INFO("ZeRO-" << zero << " reshard " << reshard);
      const double gathers_bwd = zero == 3 && reshard ? 1.0 : 0.0;
      CHECK(z.staging_fwd_s == Approx(zero == 3 ? p * 4.0 / hbm : 0.0).epsilon(1e-12));
      CHECK(z.staging_bwd_s == Approx((gathers_bwd * 4.0 + 4.0) * p / hbm).epsilon(1e-12));
    }
  // One rank holds the weights whole: nothing is gathered, reduced or copied.
  const ParallelConfig one = config(8, 1, 1, 1, 3);
  const Zero3LayerComm none = zero3_layer_comm(m, hw, one, training(8, 4096, 8), layer_time(m, hw, one, ts),
                                               weight_sharing_group(hw, one));
  CHECK(none.staging_s() == 0.0);
  CHECK(none.total_s() == 0.0);
  // A TPU runs XLA, whose collectives need no staging copies; the traffic itself stays.
  const HardwareProfile tpu = find_hardware("tpu-v5e-256", kDir);
  const ParallelConfig fsdp = config(1, 1, 256, 1, 3);
  const TrainingSpec tts = training(256, 2048, 256);
  const Zero3LayerComm xla = zero3_layer_comm(m, tpu, fsdp, tts, layer_time(m, tpu, fsdp, tts),
                                              weight_sharing_group(tpu, fsdp));
  CHECK(xla.staging_s() == 0.0);
  CHECK(xla.all_gather_s > 0.0);
}

TEST_CASE("FSDP1's flat parameter: no gather copy, the gradients concatenated, cast and pre-divided",
          "[priced_plan][zero3]") {
  // torch FSDP1 (_runtime_utils.py _post_backward_hook, _reduce_grad): (3w + 3r) bytes per parameter of the
  // unsharded layer in the backward, nothing in the forward, whether or not the weights were resharded.
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec ts = training(128, 4096, 256);
  ts.grad_reduce_bytes_per_param = 4;  // Composer's DEFAULT mixed precision
  ts.zero3_staging = Zero3Staging::flat_parameter;
  const double hbm = hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency;
  const double p = double(count_params(m).per_layer) / 8.0;
  for (int zero : {2, 3}) {
    const ParallelConfig pc = config(8, 1, 16, 1, zero);
    const LayerTime lt = layer_time(m, hw, pc, ts);
    const Zero3LayerComm z = zero3_layer_comm(m, hw, pc, ts, lt, weight_sharing_group(hw, pc));
    INFO("ZeRO-" << zero);
    CHECK(z.staging_fwd_s == 0.0);
    CHECK(z.staging_bwd_s == Approx((3.0 * 2.0 + 3.0 * 4.0) * p / hbm).epsilon(1e-12));
    // The traffic itself is FSDP2's.
    TrainingSpec two = ts;
    two.zero3_staging = Zero3Staging::per_parameter_copies;
    const Zero3LayerComm z2 = zero3_layer_comm(m, hw, pc, two, lt, weight_sharing_group(hw, pc));
    CHECK(z.all_gather_s == z2.all_gather_s);
    CHECK(z.reduce_scatter_s == z2.reduce_scatter_s);
    // ZeRO-3 resharding: FSDP2 copies 4 + 10 bytes a parameter, FSDP1 18.
    if (zero == 3) CHECK(z.staging_s() > z2.staging_s());
  }
}

TEST_CASE("the Adam step: fused kernels (3g + 28 + w) or a per-parameter loop (104 bytes)", "[priced_plan]") {
  TrainingSpec ts;
  ts.grad_bytes_per_param = 4;
  CHECK(optimizer_bytes_per_local_param(ts) == 42.0);
  ts.optimizer_kernel = OptimizerKernel::unfused_loop;  // Composer's DecoupledAdamW (v0.17.2)
  CHECK(optimizer_bytes_per_local_param(ts) == 104.0);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ParallelConfig pc = config(1, 1, 8, 1, 3);
  const double loop = optimizer_time_s(hw, pc, ts, 8e9);
  ts.optimizer_kernel = OptimizerKernel::fused;
  CHECK(loop / optimizer_time_s(hw, pc, ts, 8e9) == Approx(104.0 / 42.0));
  CHECK(loop == Approx(1e9 * 104.0 / (hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency)));
}

TEST_CASE("Megatron-Core's gradient buffer: NaN-check norm, 1/DP scaling and zeroing every local gradient",
          "[priced_plan]") {
  TrainingSpec ts;
  ts.grad_bytes_per_param = 4;
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  // ZeRO-1 over 8: norm 4 + scale 8 + zeroing the 7/8 the optimizer's shard leaves, 3.5.
  CHECK(grad_buffer_bytes_per_local_param(hw, config(1, 1, 8, 1, 1), ts) == Approx(15.5));
  CHECK(grad_buffer_bytes_per_local_param(hw, config(1, 1, 8, 1, 0), ts) == Approx(12.0));  // DDP zeroes in Adam's pass
  CHECK(grad_buffer_bytes_per_local_param(hw, config(1, 1, 1, 1, 1), ts) == 0.0);           // nothing reduced
  CHECK(grad_buffer_bytes_per_local_param(hw, config(1, 1, 8, 1, 3), ts) == 0.0);           // sharded gradients
  CHECK(grad_buffer_bytes_per_local_param(find_hardware("tpu-v5e-256", kDir), config(1, 1, 8, 1, 1), ts) == 0.0);
  // The optimizer time carries it on every local parameter, not on the shard.
  const ParallelConfig pc = config(1, 1, 8, 1, 1);
  const double bw = hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency;
  CHECK(optimizer_time_s(hw, pc, ts, 8e9) == Approx((1e9 * 42.0 + 8e9 * 15.5) / bw));
  ts.optimizer_kernel = OptimizerKernel::unfused_loop;  // Composer: no Megatron buffer
  CHECK(grad_buffer_bytes_per_local_param(hw, pc, ts) == 0.0);
}

TEST_CASE("MoE without overlapped gathers: each chained distributed optimizer gathers every bucket", "[priced_plan]") {
  TrainingSpec ts;
  ts.overlap_grad_reduce = false;
  CHECK(weight_gather_rounds(ts, true) == 2);
  CHECK(weight_gather_rounds(ts, false) == 1);
  ts.overlap_grad_reduce = true;
  CHECK(weight_gather_rounds(ts, true) == 1);
}

TEST_CASE("DeepSpeed re-gather: weights whose reuse lies 1e9 parameters away", "[priced_plan][zero3]") {
  // GPT-3 175B, one TP rank: QKV (3h^2), O (h^2), fc1 (4h^2), fc2 (4h^2), biases and
  // norms shared among them. fc2's backward follows its recomputed forward at once;
  // fc1's comes after fc2 forward and backward, 2 * 4h^2 = 1.2e9 >= 1e9 away: released,
  // and so are O and QKV. Everything but fc2 is gathered again.
  const ModelSpec gpt3 = find_model("gpt3-175b", kDir);
  const double per_layer = double(count_params(gpt3).per_layer);
  const double h = double(gpt3.hidden_size);
  const double ffn = per_layer - 4.0 * h * h;
  CHECK(recompute_regathered_params(gpt3, config(1, 1, 64)) == Approx(per_layer - ffn / 2.0).epsilon(1e-12));
  // Under TP8 the layer is 226M per rank: QKV's reuse lies 2 * (O + fc1 + fc2) = 340M away, all kept.
  CHECK(recompute_regathered_params(gpt3, config(8, 1, 64)) == 0.0);
  // Llama 3 8B's layers (218M) are kept whole.
  CHECK(recompute_regathered_params(find_model("llama8b", kDir), config(1, 1, 64)) == 0.0);

  const HardwareProfile hw = find_hardware("dgx-a100-80gb", kDir);
  ParallelConfig pc = config(1, 1, 384, 1, 3);
  pc.recompute = Recompute::full;
  TrainingSpec ts = training(384, 2048, 1536);
  const LayerTime lt = layer_time(gpt3, hw, pc, ts);
  const GroupPlacement wg = weight_sharing_group(hw, pc);
  const Zero3LayerComm fsdp = zero3_layer_comm(gpt3, hw, pc, ts, lt, wg);
  CHECK(fsdp.recompute_all_gather_s == 0.0);
  ts.zero3_recompute_regather = true;
  const Zero3LayerComm ds = zero3_layer_comm(gpt3, hw, pc, ts, lt, wg);
  CHECK(ds.recompute_all_gather_s ==
        collective_cost(hw, wg, Collective::all_gather, ds.regathered_params * 2.0).total_s());
  CHECK(ds.total_s() == Approx(fsdp.total_s() + ds.recompute_all_gather_s).epsilon(1e-12));
  CHECK(ds.exposed_bwd_s >= fsdp.exposed_bwd_s);
  // Weights kept from the forward (reshard_after_forward false) are never released.
  pc.reshard_after_forward = false;
  CHECK(zero3_layer_comm(gpt3, hw, pc, ts, lt, wg).recompute_all_gather_s == 0.0);
  pc.reshard_after_forward = true;
  // Only under full recomputation: selective recomputes no layer's GEMMs.
  pc.recompute = Recompute::selective;
  CHECK(zero3_layer_comm(gpt3, hw, pc, ts, layer_time(gpt3, hw, pc, ts), wg).recompute_all_gather_s == 0.0);
}

TEST_CASE("a MoE stage or chunk holds its own dense and MoE layers, not the mean layer", "[priced_plan][moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec v3 = find_model("deepseek-v3", kDir);
  const ParamCounts c = count_params(v3);
  const double routed = double(c.routed_experts_per_moe_layer);
  const ParallelConfig pc = expert_config(16, 16, 8);
  const TrainingSpec ts = training(256, 4096, 4096);
  // 61 layers over PP16: 4 on stage 0 (layers 0-3: dense 0-2, MoE 3), 4 on
  // each middle stage, 1 on the last (layer 60, with the MTP module).
  const PricedPlan p = plan_on(v3, hw, pc, ts, make_layout(16, 4, 4, 14, 1));
  CHECK(p.stage_moe_layers(0) == 1);
  CHECK(p.stage_moe_layers(1) == 4);
  CHECK(p.stage_moe_layers(15) == 1);
  // One MoE layer's 256 routed experts (11.27B), not 4 x the mean over 61 layers.
  CHECK(p.stage_expert_params(0) == routed);
  CHECK(routed == 256.0 * 3 * 7168 * 2048);
  CHECK(p.stage_expert_params(1) == 4.0 * routed);
  CHECK(p.stage_expert_params(15) == 2.0 * routed);  // layer 60 and the MTP module's MoE layer
  CHECK(p.stage_params(0) == 3.0 * double(c.dense_layer) + double(c.moe_layer) + double(c.embedding));
  CHECK(p.stage_params(1) == 4.0 * double(c.moe_layer));
  double total = 0;
  std::int64_t moe = 0;
  for (std::int64_t s = 0; s < 16; ++s) total += p.stage_params(s), moe += p.stage_moe_layers(s);
  CHECK(moe == 58);
  CHECK(total == double(c.total + c.mtp));
  // Stage 0 (one MoE layer) and stage 1 (four) are different kinds for memory and the DP tail.
  CHECK(p.state_distinct_stages() == std::vector<std::int64_t>{0, 1, 15});
  CHECK(stage_optimizer_s(hw, normalized(pc), ts, p, 1) > 2.0 * stage_optimizer_s(hw, normalized(pc), ts, p, 0));
  // Over TP 8 each rank holds the norms, MLA's down-projections (q_a 7168 x
  // 1536, kv_a 7168 x 576, their norms) and the router (7168 x 256 + 256)
  // whole: 16,990,464 a MoE layer; the rest of the non-expert layer over TP.
  CHECK(c.replicated_moe_layer == 2 * 7168 + 7168 * 1536 + 1536 + 7168 * 576 + 512 + 7168 * 256 + 256);
  CHECK(c.replicated_moe_layer == 16'990'464);
  ParallelConfig tp8 = pc;
  tp8.tp = 8, tp8.dp = 8;
  const PricedPlan p8 = plan_on(v3, hw, tp8, training(1024, 4096, 4096), make_layout(16, 4, 4, 14, 1));
  const double split = double(c.moe_layer - c.routed_experts_per_moe_layer - c.replicated_moe_layer);
  CHECK(p8.stage_replicated_params(1) == 4.0 * double(c.replicated_moe_layer));
  CHECK(p8.local_non_expert_params(1, 8) ==
        Approx(4.0 * (split / 8.0 + double(c.replicated_moe_layer))).epsilon(1e-12));
  CHECK(p8.local_non_expert_params(1, 8) == Approx(176.0e6).epsilon(2e-3));  // was 116.5M, everything over TP

  // Eight layers, the first four dense, over PP2: stage 1 holds all four MoE
  // layers (the mean would give it half of them).
  ModelSpec small = v3;
  small.num_layers = 8;
  small.moe.first_dense_layers = 4;
  small.mtp_layers = 0;
  small.expected_params = small.expected_active_params = 0;
  const ParallelConfig pc2 = expert_config(2, 64, 64);
  const TrainingSpec ts2 = training(128, 4096, 128);
  const PricedPlan q = plan_on(small, hw, pc2, ts2, make_layout(2, 4, 0, 0, 4));
  CHECK(q.stage_expert_params(0) == 0.0);
  CHECK(q.stage_expert_params(1) == 4.0 * routed);
  const MemoryBreakdown mem = memory_per_gpu(small, hw, normalized(pc2), ts2, q);
  CHECK(mem.peak_stage == 1);
  // ZeRO-1: 12 bytes of optimizer state per parameter, the rest over DP 64,
  // the 4 layers' experts over EP 64 and EDP 1.
  const double rest = q.stage_params(1) - 4.0 * routed;  // TP 1: nothing replicated apart
  CHECK(mem.optimizer_bytes == Approx(rest * 12.0 / 64.0 + 4.0 * routed / 64.0 * 12.0).epsilon(1e-12));
}

TEST_CASE("interleaved chunks follow the model's order and count the MoE layers they hold", "[priced_plan][moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  ModelSpec m = find_model("deepseek-v3", kDir);
  m.moe.layer_freq = 2;  // MoE layers 4, 6, ..., 60
  m.expected_params = m.expected_active_params = 0;
  for (const std::int64_t v : {1, 2, 3}) {
    ParallelConfig pc = config(1, 4, 8, v);
    pc.ep = 8;
    const TrainingSpec ts = training(32, 4096, 256);
    const PricedPlan p = plan_on(m, hw, pc, ts, balance_layers(61, 4, v, 1.5, 2.5));
    INFO("v" << v);
    // Every layer in exactly one chunk; model chunk c*p + s starts where chunk c*p + s - 1 ends.
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  // (model chunk, first layer)
    std::vector<std::int64_t> sizes(std::size_t(4 * v));
    std::int64_t moe = 0;
    for (std::int64_t s = 0; s < 4; ++s) {
      const std::vector<ChunkPlan> chunks = p.chunks(s);
      const std::vector<std::int64_t> first = p.chunk_first_layers(s);
      std::int64_t stage_moe = 0;
      for (std::int64_t ch = 0; ch < v; ++ch) {
        const ChunkPlan& k = chunks[std::size_t(ch)];
        ranges.emplace_back(ch * 4 + s, first[std::size_t(ch)]);
        sizes[std::size_t(ch * 4 + s)] = k.layers;
        std::int64_t by_rule = 0;
        for (std::int64_t l = first[std::size_t(ch)]; l < first[std::size_t(ch)] + k.layers; ++l)
          by_rule += is_moe_layer(m, l) ? 1 : 0;
        CHECK(k.moe_layers == by_rule);
        stage_moe += k.moe_layers;
      }
      CHECK(p.stage_moe_layers(s) == stage_moe);
      moe += stage_moe;
    }
    std::sort(ranges.begin(), ranges.end());
    std::int64_t at = 0;
    for (const auto& [chunk, first] : ranges) {
      CHECK(first == at);
      at += sizes[std::size_t(chunk)];
    }
    CHECK(at == 61);
    CHECK(moe == count_moe_layers(m));
  }
}
