// Selective recomputation as torchtitan runs it (SelectivePolicy; pytorch/
// torchtitan v0.2.2 torchtitan/distributed/activation_checkpoint.py): which
// matmuls op-level SAC saves, the share of layers the per-layer policy
// recomputes, and their time, FLOPs and stored activations, hand-derived for
// Llama 3 8B; the simulator agreeing with the closed form; the framework
// default and the measured rows' mapping. Megatron's policy stays as it was.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/framework/framework.h"
#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/gemm_cost.h"
#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/selective_policy.h"
#include "planner/model/straggler.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/simulate.h"
#include "planner/validate/published_runs.h"

using namespace planner;

namespace {

TrainingSpec training(std::int64_t gpus, std::int64_t gb, SelectivePolicy p, std::int64_t n = 2) {
  TrainingSpec ts;
  ts.num_gpus = gpus;
  ts.seq_len = 8192;
  ts.global_batch_sequences = gb;
  ts.selective = p;
  ts.selective_every_n_layers = n;
  return ts;
}

ParallelConfig layout(std::int64_t tp, std::int64_t pp, std::int64_t dp, Recompute r) {
  ParallelConfig pc;
  pc.tp = tp;
  pc.pp = pp;
  pc.dp = dp;
  pc.recompute = r;
  pc.sequence_parallel = tp > 1;
  return pc;
}

std::vector<std::string> recomputed(const ModelSpec& m) {
  std::vector<std::string> out;
  for (const LayerMatmul& mm : op_sac_matmuls(m))
    if (!mm.saved) out.emplace_back(mm.name);
  return out;
}

}  // namespace

TEST_CASE("op-level SAC saves every second matmul's output: Llama recomputes wk, wo, w3", "[selective]") {
  // mm count per block 1..7 = wq wk wv wo w1 w3 w2; the even counts are recomputed.
  CHECK(recomputed(find_model("llama8b")) == std::vector<std::string>{"wk", "wo", "w3"});
  // A non-gated FFN has 6 matmuls: wq wk wv wo w1 w2.
  CHECK(recomputed(find_model("gpt3-175b")) == std::vector<std::string>{"wk", "wo", "w2"});
}

TEST_CASE("per-layer SAC recomputes floor(L/N) of L layers", "[selective]") {
  const ModelSpec m = find_model("llama8b");  // 32 layers
  CHECK(recomputed_layer_fraction(m, training(8, 8, SelectivePolicy::torchtitan_every_nth_layer, 2)) == 0.5);
  CHECK(recomputed_layer_fraction(m, training(8, 8, SelectivePolicy::torchtitan_every_nth_layer, 3)) == 10.0 / 32.0);
  CHECK(recomputed_layer_fraction(m, training(8, 8, SelectivePolicy::torchtitan_every_nth_layer, 1)) == 1.0);
  CHECK(recomputed_layer_fraction(m, training(8, 8, SelectivePolicy::torchtitan_op)) == 0.0);
}

TEST_CASE("HFU FLOPs count what each selective policy re-runs", "[selective]") {
  const ModelSpec m = find_model("llama8b");
  const double L = 32, h = 4096, kv = 8 * 128, F = 14336;
  // Megatron's selective with flash attention re-runs nothing (unchanged).
  CHECK(flops_per_token(m, 8192, Recompute::selective).recompute == 0.0);
  // op: wk (h x kv), wo (h x h), w3 (h x F), 2 FLOPs per weight per token.
  const FlopsPerToken op =
      flops_per_token(m, 8192, Recompute::selective, AttentionKernel::flash, SelectivePolicy::torchtitan_op);
  CHECK(op.recompute == Approx(2.0 * L * h * (kv + h + F)).epsilon(1e-12));
  const FlopsPerToken full = flops_per_token(m, 8192, Recompute::full);
  for (std::int64_t n : {1, 2, 3}) {
    const FlopsPerToken layer = flops_per_token(m, 8192, Recompute::selective, AttentionKernel::flash,
                                                SelectivePolicy::torchtitan_every_nth_layer, n);
    CHECK(layer.recompute == Approx(double(32 / n) / 32.0 * full.recompute).epsilon(1e-12));
    CHECK(layer.hardware - full.hardware == Approx(layer.recompute - full.recompute).epsilon(1e-9));
  }
}

TEST_CASE("recompute time: op re-runs its unsaved GEMMs and the element-wise forward", "[selective]") {
  const ModelSpec m = find_model("llama8b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const TrainingSpec ts = training(8, 8, SelectivePolicy::torchtitan_op);
  const ParallelConfig pc = layout(1, 1, 8, Recompute::selective);
  const LayerTime lt = layer_time(m, hw, pc, ts);
  const double n = 8192, h = 4096, kv = 1024, F = 14336;
  const double k = 1.0 + straggler_slowdown(hw, 8);
  const double gemms = k * (gemm_time_s(hw, DType::bf16, n, kv, h) + gemm_time_s(hw, DType::bf16, n, h, h) +
                            gemm_time_s(hw, DType::bf16, n, F, h));
  CHECK(lt.recompute_s == Approx(gemms + lt.elementwise_fwd_s).epsilon(1e-12));
  CHECK(lt.recompute_s > 0.3 * lt.gemm_fwd_s);  // about 37% of the forward GEMM FLOPs
  // Megatron's selective with flash attention costs nothing (unchanged).
  CHECK(layer_time(m, hw, pc, training(8, 8, SelectivePolicy::megatron_attention)).recompute_s == 0.0);
  // With TP and SP the forward's two all-gathers run again, the reduce-scatters' outputs are saved.
  const LayerTime tp = layer_time(m, hw, layout(8, 1, 1, Recompute::selective), ts);
  CHECK(tp.tp_comm_recompute_s == Approx(0.5 * tp.tp_comm_fwd_s));
}

TEST_CASE("recompute time: layer:N is floor(L/N)/L of full recomputation, TP traffic included", "[selective]") {
  const ModelSpec m = find_model("llama8b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const ParallelConfig sel = layout(8, 1, 1, Recompute::selective);
  const LayerTime full =
      layer_time(m, hw, layout(8, 1, 1, Recompute::full), training(8, 8, SelectivePolicy::megatron_attention));
  const LayerTime none =
      layer_time(m, hw, layout(8, 1, 1, Recompute::none), training(8, 8, SelectivePolicy::megatron_attention));
  for (std::int64_t n : {1, 2, 5}) {
    const LayerTime lt = layer_time(m, hw, sel, training(8, 8, SelectivePolicy::torchtitan_every_nth_layer, n));
    const double f = double(32 / n) / 32.0;
    CHECK(lt.recompute_s == Approx(f * full.recompute_s).epsilon(1e-12));
    CHECK(lt.tp_comm_recompute_s == Approx(f * full.tp_comm_recompute_s).epsilon(1e-12));
    CHECK(lt.fwd_s() == Approx(none.fwd_s()).epsilon(1e-12));
  }
}

TEST_CASE("stored activations: op keeps its saved outputs, layer:N the mean of kept and checkpointed layers",
          "[selective]") {
  const ModelSpec m = find_model("llama8b");
  const double n = 8192, h = 4096;
  const ParallelConfig pc = layout(1, 1, 8, Recompute::selective);
  const LayerActivations none =
      layer_activations(m, layout(1, 1, 8, Recompute::none), training(8, 8, SelectivePolicy::torchtitan_op));
  // op: layer input h, wq out 4096, wv out 1024, attention out 4096, w1 out 14336, w2 out 4096
  // (bf16), and flash's fp32 log-sum-exp per head and token.
  const LayerActivations op = layer_activations(m, pc, training(8, 8, SelectivePolicy::torchtitan_op));
  CHECK(op.stored_bytes == Approx(2.0 * n * (4096 + 4096 + 1024 + 4096 + 14336 + 4096) + 4.0 * 32 * n).epsilon(1e-12));
  CHECK(op.stored_bytes < 0.5 * none.stored_bytes);
  CHECK(op.recompute_working_bytes == Approx(none.full_layer_bytes - op.stored_bytes));
  const LayerActivations layer2 =
      layer_activations(m, pc, training(8, 8, SelectivePolicy::torchtitan_every_nth_layer, 2));
  CHECK(layer2.stored_bytes == Approx(0.5 * none.full_layer_bytes + 0.5 * 2.0 * n * h).epsilon(1e-12));
  // The layer being recomputed rebuilds everything but its input.
  CHECK(layer2.recompute_working_bytes == Approx(none.full_layer_bytes - 2.0 * n * h).epsilon(1e-12));
  // Megatron's selective with flash keeps everything (unchanged).
  CHECK(layer_activations(m, pc, training(8, 8, SelectivePolicy::megatron_attention)).stored_bytes ==
        none.stored_bytes);
}

TEST_CASE("torchtitan's policies: the simulator agrees with the closed form", "[selective][simulate]") {
  const ModelSpec m = find_model("llama70b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  for (SelectivePolicy p : {SelectivePolicy::torchtitan_op, SelectivePolicy::torchtitan_every_nth_layer}) {
    const TrainingSpec ts = training(64, 64, p);
    ParallelConfig pc = layout(4, 4, 4, Recompute::selective);
    pc.zero_stage = 1;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
    CHECK(ev.time.recompute_s > 0);
    const PipelineProblem pr = pipeline_problem(m, hw, pc, ts, ev, default_sim_schedule(ev.config));
    const SimResult r = simulate(pr);
    CHECK(std::abs(compare_with_closed_form(ev, pr, r).relative_difference()) < 0.02);
  }
}

TEST_CASE("torchtitan's default is selective_ac_option \"2\", --selective-ac given wins, rules follow the policy",
          "[selective][framework]") {
  TrainingSpec tt;
  apply_framework_defaults(framework_info(Framework::torchtitan), tt, {});
  CHECK(tt.selective == SelectivePolicy::torchtitan_every_nth_layer);
  CHECK(tt.selective_every_n_layers == 2);
  TrainingSpec given;
  given.selective = SelectivePolicy::torchtitan_op;
  apply_framework_defaults(framework_info(Framework::torchtitan), given, {false, false, false, true});
  CHECK(given.selective == SelectivePolicy::torchtitan_op);
  TrainingSpec mg;
  apply_framework_defaults(framework_info(Framework::megatron), mg, {});
  CHECK(mg.selective == SelectivePolicy::megatron_attention);

  const ModelSpec m = find_model("llama8b");
  const ParallelConfig sel = layout(1, 1, 8, Recompute::selective);
  CHECK(broken_rule(framework_info(Framework::torchtitan), m, sel, tt, {}) < 0);
  CHECK(broken_rule(framework_info(Framework::torchtitan), m, sel, mg, {}) >= 0);
  CHECK(broken_rule(framework_info(Framework::megatron), m, sel, mg, {}) < 0);
  CHECK(broken_rule(framework_info(Framework::megatron), m, sel, tt, {}) >= 0);
  CHECK(broken_rule(framework_info(Framework::nemo), m, sel, tt, {}) >= 0);
}

TEST_CASE("torchtitan rows map 'selective (per-op)' to op and 'selective (per-layer)' to layer:2",
          "[selective][validate]") {
  auto row = [](const char* source, const char* rc) {
    nlohmann::json j = nlohmann::json::parse(R"J({
      "id": "T1", "model_name": "Llama 3 8B", "num_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
      "num_kv_heads": 8, "head_dim": 128, "ffn_hidden_size": 14336, "ffn_type": "swiglu", "vocab_size": 128256,
      "seq_len": 8192, "global_batch_size": 64, "micro_batch_size": 1, "num_gpus": 64,
      "gpu_type": "A100-SXM4-80GB", "precision": "bf16", "tp": 1, "pp": 1, "dp": 64, "cp": 1,
      "sequence_parallel": false, "zero_or_fsdp": "FSDP2 (ZeRO-3-like) over dp",
      "measurement_scope": "C4 training, logged WPS", "tokens_per_sec_per_gpu": 2904,
      "reported_flop_convention": "n/a"})J");
    j["source"] = source;
    j["activation_recompute"] = rc;
    const RunRow r = map_published_run(j, 0);
    REQUIRE(r.run);
    return r.run->training;
  };
  const TrainingSpec op = row("pytorch/torchtitan docs/performance.md", "selective (per-op)");
  CHECK(op.selective == SelectivePolicy::torchtitan_op);
  const TrainingSpec layer = row("pytorch/torchtitan docs/performance.md", "selective (per-layer)");
  CHECK(layer.selective == SelectivePolicy::torchtitan_every_nth_layer);
  CHECK(layer.selective_every_n_layers == 2);
  CHECK(row("pytorch/torchtitan docs/performance.md", "selective").selective ==
        SelectivePolicy::torchtitan_every_nth_layer);
  CHECK(row("Test 2024, synthetic", "selective").selective == SelectivePolicy::megatron_attention);
}
