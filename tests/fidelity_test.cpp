// Fidelity regression: the Korthikanti et al. 2022 runs (tests/data/
// korthikanti_2022.tsv) evaluated with their exact configuration on the stock
// DGX A100 profile, no per-run parameters. Fails when the median |error| of
// step (or per-layer) time exceeds 5% or any row exceeds 10% (issue 2 target).
// Run `planner_tests "[fidelity]" -s` to print the table.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "planner/framework/framework.h"
#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/model_math.h"
#include "planner/search/search.h"

using namespace planner;

TEST_CASE("Korthikanti 2022 runs land within 5% median, 10% worst", "[fidelity]") {
  const std::string dir = PLANNER_SOURCE_DIR;
  std::ifstream in(dir + "/tests/data/korthikanti_2022.tsv");
  REQUIRE(in.good());
  const HardwareProfile hw = find_hardware("dgx-a100-80gb", dir);
  std::vector<double> errors;
  std::string line, table = fmt::format("{:<5} {:<18} {:>5} {:<10} {:<5} {:>10} {:>10} {:>7}\n", "id", "model", "SP",
                                        "recompute", "scope", "predicted", "measured", "error");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    std::string id, model, rec, scope;
    std::int64_t gpus, tp, pp, dp, vpp, mbs, gb;
    int sp;
    double measured;
    row >> id >> model >> gpus >> tp >> pp >> dp >> vpp >> mbs >> gb >> sp >> rec >> scope >> measured;
    REQUIRE_FALSE(row.fail());
    const ModelSpec m = find_model(model, dir);
    TrainingSpec ts;
    ts.num_gpus = gpus;
    ts.seq_len = 2048;
    ts.global_batch_sequences = gb;
    ts.attention = AttentionKernel::unfused;
    ts.grad_bytes_per_param = 4;
    ts.overlap_grad_reduce = false;
    ParallelConfig pc;
    pc.tp = tp, pc.pp = pp, pc.dp = dp, pc.virtual_stages = vpp, pc.micro_batch_size = mbs;
    pc.sequence_parallel = sp != 0;
    pc.recompute = rec == "full" ? Recompute::full : rec == "selective" ? Recompute::selective : Recompute::none;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO(id);
    // Layer-scope rows measured one layer; the whole model need not fit then.
    const std::uint32_t oom = 1u << unsigned(Reason::out_of_memory);
    REQUIRE((ev.feasible() || (scope == "layer" && ev.reasons == oom)));
    const double predicted = scope == "layer" ? ev.time.layer_fwd_s + ev.time.layer_bwd_s : ev.time.step_s;
    const double err = (predicted - measured) / measured;
    errors.push_back(std::abs(err));
    table += fmt::format("{:<5} {:<18} {:>5} {:<10} {:<5} {:>10.4f} {:>10.4f} {:>+6.1f}%\n", id, model,
                         sp ? "on" : "off", rec, scope, predicted, measured, 100 * err);
  }
  REQUIRE(errors.size() == 14);
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const double median = (sorted[6] + sorted[7]) / 2;
  const double worst = sorted.back();
  table += fmt::format("median |error| {:.1f}%, worst {:.1f}%\n", 100 * median, 100 * worst);
  WARN(table);
  CHECK(median <= 0.05);
  CHECK(worst <= 0.10);
}

// The flagship (planner search --model llama405b --gpus 16384) at both ends of
// its ranking, against what was measured:
// - Meta's layout as Meta ran it (Llama 3 paper, Dubey et al. 2024, §3.3.2 and
//   Table 4: TP8 CP1 PP16 DP128, 8K sequences, no activation checkpointing,
//   FSDP without resharding after the forward; "asynchronous point-to-point
//   communication in PP", §3.3.2, priced as overlap_p2p): 400 TFLOP/s per GPU.
//   Issue 13: it fits and lands within +-8% (v = 4: Meta does not give it). The paper does not give its FLOP count;
//   Meta's trainer counts PaLM's (6N + 12*L*H*Q*T, "we follow the convention
//   and do not account for sparsity in causal attention": pytorch/torchtitan
//   torchtitan/models/utils.py get_dense_model_nparams_and_flops, b5bcd76), so
//   the prediction is put in that convention (FlopsPerToken::palm), not in
//   Megatron-LM's causal count that the planner's own TFLOP/s column uses.
// - The planner's top pick, TP8 CP2 PP8 v8 mbs1, is NVIDIA's Megatron-Bridge
//   recipe for Llama 3.1 405B on H100 (perf_recipes/llama/h100/llama31.py:
//   TP 8, PP 8, CP 2, VP 8, distributed optimizer, TP comm overlap; its
//   _common.py sets grad_reduce_in_fp32 False, so 2-byte gradients; interleaved
//   p2p overlapped). Measured, 1024 H100s, GBS 512, FP8: 302 tokens/s per GPU
//   (docs/performance-summary.md, 25.11 container, DGX-H100; Megatron-Bridge
//   35b5ecb74). Priced at the sustained H100 clock (profile
//   efficiency.sustained_clock_fraction) the planner lands at +2% (it was 12.7%
//   fast at MAMF's burst figures); the bound keeps it there.
TEST_CASE("the flagship's layouts: Meta's 405B layout and NVIDIA's 405B recipe against their measurements",
          "[fidelity]") {
  const std::string dir = PLANNER_SOURCE_DIR;
  const ModelSpec m = find_model("llama405b", dir);
  const HardwareProfile hw = find_hardware("dgx-h100", dir);

  TrainingSpec meta;
  meta.num_gpus = 16384;
  meta.seq_len = 8192;
  meta.global_batch_sequences = 2048;
  meta.overlap_p2p = true;
  ParallelConfig pm;
  pm.tp = 8, pm.pp = 16, pm.dp = 128, pm.virtual_stages = 4, pm.micro_batch_size = 1;
  pm.sequence_parallel = true, pm.zero_stage = 2;
  const Evaluation ev_meta = evaluate(m, hw, pm, meta);
  CHECK(ev_meta.feasible());
  const double meta_tflops =
      ev_meta.time.tokens_per_s / 16384.0 * flops_per_token(m, meta.seq_len, pm.recompute).palm / 1e12;
  CHECK(meta_tflops == Approx(400).epsilon(0.08));

  TrainingSpec nv;
  nv.num_gpus = 1024;
  nv.seq_len = 8192;
  nv.global_batch_sequences = 512;
  nv.dtype = DType::fp8;
  nv.tp_comm_overlap = true;
  nv.overlap_p2p = true;
  apply_framework_defaults(framework_info(Framework::megatron), nv, {});
  nv.grad_bytes_per_param = 2;  // grad_reduce_in_fp32 = False (Megatron-Bridge perf_recipes/_common.py)
  nv.loss_kernel = LossKernel::te;  // _benchmark_common(cross_entropy_impl="te"), same file
  ParallelConfig pn;
  pn.tp = 8, pn.cp = 2, pn.pp = 8, pn.dp = 8, pn.virtual_stages = 8, pn.micro_batch_size = 1;
  pn.sequence_parallel = true, pn.zero_stage = 1;
  const Evaluation ev_nv = evaluate(m, hw, pn, nv);
  CHECK(ev_nv.feasible());
  const double tokens_per_gpu = ev_nv.time.tokens_per_s / 1024.0;
  WARN(
      fmt::format("Meta's layout {:.0f} TFLOP/s in PaLM's count (measured 400; {:.0f} in Megatron-LM's); NVIDIA's "
                  "recipe {:.1f} tokens/s/GPU (measured 302)",
                  meta_tflops, ev_meta.time.tflops_per_gpu, tokens_per_gpu));
  CHECK(tokens_per_gpu == Approx(302).epsilon(0.08));

  // Meta's layout with one layer a chunk (v = 8: the paper's 7/8 x 14/7 split
  // with the embedding and the output layer alone in their chunks, as
  // Megatron-LM's --account-for-embedding/loss-in-pipeline-split builds it) is
  // within 5% of the top pick of `planner search --model llama405b --gpus
  // 16384` (issue 13's flagship target). At v = 8 it is priced 11-12% above
  // Meta's 400 TFLOP/s, at v = 4 (above) 1%: docs/cost_model.md Known gaps.
  ParallelConfig p8 = pm;
  p8.virtual_stages = 8;
  const Evaluation ev8 = evaluate(m, hw, p8, meta);
  REQUIRE(ev8.feasible());
  CHECK(ev8.layout.layers_on(0) == 7);
  CHECK(ev8.layout.layers_on(1) == 8);
  SearchSpec flagship;
  flagship.training.num_gpus = 16384;
  flagship.training.seq_len = 8192;
  flagship.training.global_batch_sequences = 2048;
  const SearchResult top = search(m, hw, flagship);
  REQUIRE_FALSE(top.top.empty());
  const double gap = ev8.time.step_s / top.top.front().time.step_s - 1.0;
  WARN(fmt::format("Meta's layout at v = 8: {:.3f} s, {:.1f}% behind the flagship top pick ({:.3f} s)", ev8.time.step_s,
                   100.0 * gap, top.top.front().time.step_s));
  CHECK(gap <= 0.05);
}
