// memory_model: per-GPU memory by component. Model state is 2 + 2 + 12 = 16
// bytes per parameter (mixed-precision Adam: Rajbhandari et al. 2020, arXiv:1910.02054, §3.1),
// sharded over DP x CP by ZeRO stage; activations are checked per layer in
// layer_cost_test.cpp and here only as layers x micro-batches in flight.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/layer_cost.h"
#include "planner/model/memory_model.h"
#include "planner/model/model_math.h"

using namespace planner;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;
constexpr double kRel = 1e-12;

TrainingSpec training(std::int64_t gpus, std::int64_t seq, std::int64_t batch) {
  TrainingSpec ts;
  ts.num_gpus = gpus;
  ts.seq_len = seq;
  ts.global_batch_sequences = batch;
  return ts;
}
}  // namespace

TEST_CASE("model state is 16 bytes per parameter, sharded over dp*cp by ZeRO stage", "[memory_model]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(16, 8192, 64);
  struct Row {
    int zero;
    double w_div, g_div, o_div;  // divisors of the 2, 2, 12 bytes (dp*cp = 4)
  };
  const Row rows[] = {{0, 1, 1, 1}, {1, 1, 1, 4}, {2, 1, 4, 4}, {3, 4, 4, 4}};
  for (const Row& r : rows) {
    SECTION("ZeRO-" + std::to_string(r.zero)) {
      ParallelConfig pc;
      pc.tp = 2, pc.cp = 2, pc.pp = 2, pc.dp = 2;
      pc.zero_stage = r.zero;
      const Evaluation ev = evaluate(m, hw, pc, ts);
      REQUIRE(ev.reason_list() == std::vector<Reason>{});
      const MemoryBreakdown& mem = ev.memory;
      // A dense GQA model: everything over TP 2 (its norms too: Known gaps).
      CHECK(ev.plan.stage_replicated_params(mem.peak_stage) == 0.0);
      const double params = ev.plan.local_non_expert_params(mem.peak_stage, 2);
      CHECK(params == ev.plan.stage_params(mem.peak_stage) / 2.0);
      CHECK(mem.weights_bytes == Approx(params * 2.0 / r.w_div).epsilon(kRel));
      CHECK(mem.gradients_bytes == Approx(params * 2.0 / r.g_div).epsilon(kRel));
      CHECK(mem.optimizer_bytes == Approx(params * 12.0 / r.o_div).epsilon(kRel));
      if (r.zero == 0)
        CHECK(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes == Approx(params * 16.0).epsilon(kRel));
    }
  }
}

TEST_CASE("bytes per parameter follow the training spec", "[memory_model]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec ts = training(8, 8192, 64);
  ts.grad_bytes_per_param = 4;  // fp32 main grads: 18 bytes per parameter
  ParallelConfig pc;
  pc.tp = 8;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  const double params = 8'030'261'248.0 / 8.0;
  CHECK(ev.memory.weights_bytes + ev.memory.gradients_bytes + ev.memory.optimizer_bytes ==
        Approx(params * 18.0).epsilon(kRel));
}

TEST_CASE("components add up, and activations scale with layers and micro-batches in flight", "[memory_model]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(64, 8192, 512);
  ParallelConfig pc;
  pc.tp = 4, pc.pp = 4, pc.dp = 4, pc.virtual_stages = 2, pc.sequence_parallel = true;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  const MemoryBreakdown& mem = ev.memory;
  CHECK(mem.total_bytes == Approx(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                                  mem.activations_bytes + mem.logits_bytes + mem.transient_bytes + mem.reserve_bytes)
                               .epsilon(kRel));
  CHECK(mem.reserve_bytes == hw.memory_reserve_bytes);
  CHECK(mem.capacity_bytes == hw.hbm_capacity_bytes);
  CHECK(mem.fits() == (mem.total_bytes <= mem.capacity_bytes));
  // Interleaved, m = 512/4 = 128: stage 0 holds p + (p-1)/v = 5.5 stages' worth in flight.
  const double in_flight =
      mem.peak_stage == 0 ? 4.0 + 3.0 / 2.0 : micro_batches_in_flight(Schedule::interleaved, 4, 2, 128, mem.peak_stage);
  CHECK(mem.micro_batches_in_flight == Approx(in_flight).epsilon(kRel));
  const ParallelConfig npc = normalized(pc);
  const double per_layer = layer_activations(m, npc, ts).stored_bytes;
  // Stage 0 also keeps the embedding output, b*s*h*2 bytes split by SP.
  const double embedding_out = mem.peak_stage == 0 ? 2.0 * 8192.0 * 8192.0 / 4.0 : 0.0;
  CHECK(mem.activations_bytes ==
        Approx((per_layer * double(mem.layers_on_peak_stage) + embedding_out) * mem.micro_batches_in_flight)
            .epsilon(kRel));
}

TEST_CASE("last stage logits: bf16 + fp32 + fp32 per vocabulary entry", "[memory_model]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(16, 8192, 64);
  ParallelConfig pc;
  pc.tp = 8, pc.cp = 2, pc.micro_batch_size = 2;  // pp = 1: stage 0 is also the last
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.reason_list() == std::vector<Reason>{});
  // b*s/cp tokens x V/t logits x 10 bytes.
  CHECK(ev.memory.logits_bytes == Approx(2.0 * 8192.0 / 2.0 * 128256.0 / 8.0 * 10.0).epsilon(kRel));
  // Transformer Engine's fused loss keeps only the bf16 logits (gradient in place).
  TrainingSpec te = ts;
  te.loss_kernel = LossKernel::te;
  const Evaluation ev_te = evaluate(m, hw, pc, te);
  CHECK(ev_te.memory.logits_bytes == Approx(2.0 * 8192.0 / 2.0 * 128256.0 / 8.0 * 2.0).epsilon(kRel));
  // flash-attn's keeps the bf16 logits and writes the bf16 gradient into a new tensor.
  TrainingSpec fa = ts;
  fa.loss_kernel = LossKernel::flash_attn;
  const Evaluation ev_fa = evaluate(m, hw, pc, fa);
  CHECK(ev_fa.memory.logits_bytes == Approx(2.0 * 8192.0 / 2.0 * 128256.0 / 8.0 * 4.0).epsilon(kRel));
}

TEST_CASE("the last stage keeps the MTP modules' activations and logits", "[memory_model][moe]") {
  // DeepSeek-V3 (one MTP module, MoE: layer 60 is) against the same model
  // without it, on one stage (the last; one micro-batch in flight).
  const ModelSpec v3 = find_model("deepseek-v3", kDir);
  ModelSpec no_mtp = v3;
  no_mtp.mtp_layers = 0;
  no_mtp.expected_params = 0;
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(64, 4096, 64);
  for (const Recompute rc : {Recompute::none, Recompute::full}) {
    ParallelConfig pc;
    pc.dp = 64, pc.ep = 64, pc.recompute = rc;
    const Evaluation a = evaluate(v3, hw, pc, ts), b = evaluate(no_mtp, hw, pc, ts);
    REQUIRE(a.memory.micro_batches_in_flight == 1.0);
    INFO("recompute " << int(rc));
    // A second set of logits: 4096 tokens x V x 10 bytes (Megatron's fp32 cross-entropy).
    CHECK(b.memory.logits_bytes == Approx(4096.0 * 129280.0 * 10.0).epsilon(kRel));
    CHECK(a.memory.logits_bytes == Approx(2.0 * b.memory.logits_bytes).epsilon(kRel));
    // One MoE layer as stored, plus 6h a token (2h under full recompute) in bf16.
    const LayerActivations act = layer_activations(v3, normalized(pc), ts);
    const double own = (rc == Recompute::full ? 2.0 : 6.0) * 2.0 * 4096.0 * 7168.0;
    CHECK(a.memory.activations_bytes - b.memory.activations_bytes == Approx(act.moe_layer_bytes + own).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO-3 gathers a layer (and prefetches the next)", "[memory_model]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(64, 8192, 64);
  ParallelConfig pc;
  pc.tp = 2, pc.dp = 32, pc.zero_stage = 3;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.reason_list() == std::vector<Reason>{});
  // Current + prefetched layer's bf16 weights, one layer's bf16 grads and the bf16 reduce-scatter input
  // they are copied into: 8 bytes per layer parameter / tp.
  CHECK(ev.memory.transient_bytes == Approx(218'112'000.0 / 2.0 * 8.0).epsilon(kRel));
  // With FSDP2's fp32 reduce dtype (torchtitan) the reduce-scatter input is 4 bytes: 10.
  TrainingSpec fp32 = ts;
  fp32.grad_reduce_bytes_per_param = 4;
  CHECK(evaluate(m, hw, pc, fp32).memory.transient_bytes == Approx(218'112'000.0 / 2.0 * 10.0).epsilon(kRel));
}

TEST_CASE("XLA's ZeRO-3 gathers one weight tensor at a time, not a layer", "[memory_model]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const TrainingSpec ts = training(64, 8192, 64);
  ParallelConfig pc;
  pc.tp = 2, pc.dp = 32, pc.zero_stage = 3;
  // Llama 3 8B: the largest tensor is one MLP matrix, h x F = 4096 x 14336 (Q and O are 4096 x 4096).
  const double tensor = 4096.0 * 14336.0;
  CHECK(double(largest_weight_tensor(m).dense) == tensor);
  CHECK(largest_weight_tensor(m).experts == 0);
  // MaxText on GPUs (--framework maxtext): two gathered tensors, one tensor's grads and its reduce-scatter
  // input, 8 bytes per tensor parameter / tp, where FSDP2 holds a layer's.
  TrainingSpec xla = ts;
  xla.zero3_gather = Zero3Gather::tensor;
  const HardwareProfile h100 = find_hardware("dgx-h100", kDir);
  CHECK(evaluate(m, h100, pc, xla).memory.transient_bytes == Approx(tensor / 2.0 * 8.0).epsilon(kRel));
  CHECK(evaluate(m, h100, pc, ts).memory.transient_bytes == Approx(218'112'000.0 / 2.0 * 8.0).epsilon(kRel));
  // A TPU runs XLA whatever the spec says.
  const HardwareProfile tpu = find_hardware("tpu-v5e-256", kDir);
  pc.tp = 1, pc.dp = 64;
  CHECK(evaluate(m, tpu, pc, ts).memory.transient_bytes == Approx(tensor * 8.0).epsilon(kRel));
  // Weights kept whole from the forward to the backward: no gathered copies, grads and reduce input only.
  pc.reshard_after_forward = false;
  CHECK(evaluate(m, tpu, pc, ts).memory.transient_bytes == Approx(tensor * 4.0).epsilon(kRel));
  // DeepSpeed: the module being run plus at most stage3_prefetch_bucket_size (5e7) elements prefetched
  // (one 58.7M-element MLP matrix at TP 1 is more than that; at TP 2, 29.4M, it is not).
  pc.reshard_after_forward = true;
  TrainingSpec ds = ts;
  ds.zero3_gather = Zero3Gather::submodule;
  CHECK(evaluate(m, h100, pc, ds).memory.transient_bytes == Approx((tensor + 5e7) * 2.0 + tensor * 4.0).epsilon(kRel));
  pc.tp = 2, pc.dp = 32;
  CHECK(evaluate(m, h100, pc, ds).memory.transient_bytes == Approx(tensor / 2.0 * 8.0).epsilon(kRel));
}

TEST_CASE("the largest weight tensor of MoE and MLA layers", "[memory_model]") {
  // Mixtral 8x7B: the routed experts' wi_0 is one tensor over all 8 experts, 8 x 4096 x 14336.
  const ModelSpec mixtral = find_model("mixtral-8x7b", kDir);
  CHECK(double(largest_weight_tensor(mixtral).experts) == 8.0 * 4096.0 * 14336.0);
  CHECK(double(largest_weight_tensor(mixtral).dense) == 4096.0 * 4096.0);
  // DeepSeek-V3: 256 experts of 7168 x 2048; the dense layers' MLP (7168 x 18432) is the largest non-expert
  // tensor, above MLA's q_b (1536 x 128 x 192) and o (128 x 128 x 7168).
  const ModelSpec v3 = find_model("deepseek-v3", kDir);
  CHECK(double(largest_weight_tensor(v3).experts) == 256.0 * 7168.0 * 2048.0);
  CHECK(double(largest_weight_tensor(v3).dense) == 7168.0 * 18432.0);
}

TEST_CASE("ZeRO-3 on a MoE model: XLA gathers a rank's experts as one tensor, DeepSpeed one expert's matrix",
          "[memory_model]") {
  const ModelSpec m = find_model("mixtral-8x7b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(64, 4096, 64);
  ParallelConfig pc;
  pc.dp = 64, pc.ep = 4, pc.zero_stage = 3;
  const double one_expert = 4096.0 * 14336.0;
  TrainingSpec xla = ts, ds = ts;
  xla.zero3_gather = Zero3Gather::tensor;
  ds.zero3_gather = Zero3Gather::submodule;
  const Evaluation ex = evaluate(m, hw, pc, xla), ed = evaluate(m, hw, pc, ds);
  REQUIRE(ex.reason_list() == std::vector<Reason>{});
  // XLA: wi_0 of the 2 local experts, 2 x h x f_e, gathered with the next tensor, plus grads and reduce input.
  // DeepSpeed: one expert's matrix and 5e7 elements prefetched (the activations are the same in both).
  CHECK(ex.memory.transient_bytes - ed.memory.transient_bytes ==
        Approx(2.0 * one_expert * 8.0 - ((one_expert + 5e7) * 2.0 + one_expert * 4.0)).epsilon(1e-9));
}
