// MoE costs (moe_cost.h): the all-to-all volume, the EP group's placement on
// the tiers, the expert-parallel rejection reasons, the tokens per expert
// under imbalance and capacity, the memory sharding of expert parameters, and
// the simulated step of a MoE layout against the closed form. Models are
// built here (Mixtral 8x7B and a DeepSeek-V3-like shape with standard
// attention; moe.md §2) so that the tests do not depend on model files.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/gemm_cost.h"
#include "planner/model/layer_cost.h"
#include "planner/model/moe_cost.h"
#include "planner/model/pipeline.h"
#include "planner/search/search.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/simulate.h"
#include "test_support.h"

using namespace planner;
using planner::testing::training_run;

namespace {

const std::string kDir = PLANNER_SOURCE_DIR;

// Mixtral 8x7B (moe.md §2: 32 layers, h 4096, GQA 32/8 x 128, 8 experts
// top-2 of width 14336, vocab 32000).
ModelSpec mixtral() {
  ModelSpec m;
  m.name = "mixtral-test";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.ffn_hidden_size = 14336;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.vocab_size = 32000;
  m.default_seq_len = 4096;
  m.default_global_batch_tokens = 4096 * 256;
  m.moe.num_experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden_size = 14336;
  return m;
}

// DeepSeek-V3's MoE shape (256 routed experts top-8 of width 2048, one shared
// expert, the first 3 of 61 layers dense with FFN 18432) on standard attention.
ModelSpec deepseek_like() {
  ModelSpec m;
  m.name = "deepseek-like";
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.ffn_hidden_size = 18432;
  m.num_heads = 128;
  m.num_kv_heads = 128;
  m.head_dim = 128;
  m.vocab_size = 129280;
  m.default_seq_len = 4096;
  m.default_global_batch_tokens = 4096 * 256;
  m.moe.num_experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden_size = 2048;
  m.moe.num_shared_experts = 1;
  m.moe.first_dense_layers = 3;
  return m;
}

ParallelConfig layout(std::int64_t tp, std::int64_t pp, std::int64_t dp, std::int64_t ep, std::int64_t etp = 1) {
  ParallelConfig pc;
  pc.tp = tp, pc.pp = pp, pc.dp = dp, pc.ep = ep, pc.etp = etp;
  pc.sequence_parallel = tp > 1;
  return pc;
}

// Mixtral on 64 H100s: DP 64 with the experts over EP 8, one 4096-token
// sequence per micro-batch, `batch` sequences a step.
struct MixtralEp8 {
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  ModelSpec m = mixtral();
  TrainingSpec ts;
  ParallelConfig pc = layout(1, 1, 64, 8);
  explicit MixtralEp8(std::int64_t batch) : ts(training_run(64, batch, 4096)) { pc.micro_batch_size = 1; }
};

bool has(std::uint32_t reasons, Reason r) { return (reasons >> unsigned(r)) & 1u; }

}  // namespace

TEST_CASE("all-to-all volume is rows*h*bytes*(EP-1)/EP", "[moe]") {
  // 4096 tokens x top-2 rows of h = 4096 in bf16 over EP 8: 7/8 leave the GPU.
  CHECK(a2a_volume_bytes(8192, 4096, 2, 8) == Approx(8192.0 * 4096 * 2 * 7 / 8).epsilon(1e-15));
  CHECK(a2a_volume_bytes(8192, 4096, 2, 1) == 0.0);
  CHECK(a2a_volume_bytes(8192, 4096, 1, 2) == Approx(8192.0 * 4096 / 2).epsilon(1e-15));
}

TEST_CASE("the EP group stays on NVLink up to a scale-up domain and crosses nodes beyond", "[moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  struct Row {
    std::int64_t tp, dp, ep, etp, per_node, nodes;
  };
  // Expert ranks ETP innermost, then EP (Megatron-Core's expert RankGenerator):
  // EP members ETP ranks apart, whatever TP is (folding).
  const Row rows[] = {{1, 8, 8, 1, 8, 1},  {1, 16, 16, 1, 8, 2}, {2, 8, 8, 1, 8, 1},
                      {2, 8, 8, 2, 4, 2},  {8, 8, 64, 1, 8, 8}, {1, 64, 4, 1, 4, 1}};
  for (const Row& r : rows) {
    INFO("tp " << r.tp << " dp " << r.dp << " ep " << r.ep << " etp " << r.etp);
    const ExpertGroups g = expert_groups(hw, layout(r.tp, 1, r.dp, r.ep, r.etp));
    CHECK(g.ep.size == r.ep);
    CHECK(g.ep.members_per_domain == r.per_node);
    CHECK(g.ep.domains == r.nodes);
    CHECK(g.edp == r.tp * r.dp / (r.ep * r.etp));
  }
  // A 72-GPU NVLink domain (NVL72) holds an EP of 72.
  HardwareProfile nvl72 = hw;
  nvl72.tiers[0].size = 72;
  const ExpertGroups g72 = expert_groups(nvl72, layout(1, 1, 144, 72));
  CHECK(g72.ep.domains == 1);
  CHECK(g72.ep.members_per_domain == 72);
}

TEST_CASE("dispatch crossing nodes costs more than inside one, at the same bytes", "[moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  const TrainingSpec ts = training_run(16, 64, 4096);
  // EP 8 in one node vs EP 8 spread two per node (ETP 4 puts members 4 apart).
  const MoeA2a inside = moe_a2a(m, hw, layout(1, 1, 16, 8, 1), ts);
  const GroupPlacement ep8 = expert_groups(hw, layout(1, 1, 16, 8, 1)).ep;
  REQUIRE(ep8.domains == 1);
  CHECK(inside.dispatch_fwd_s ==
        Approx(collective_cost(hw, ep8, Collective::all_to_all, inside.dispatch_bytes).total_s()).epsilon(1e-12));
  // Bytes: b*s/(cp*tp) * k * h * 2 = 4096 * 2 * 4096 * 2.
  CHECK(inside.dispatch_bytes == Approx(4096.0 * 2 * 4096 * 2).epsilon(1e-15));
  GroupPlacement across = ep8;
  across.members_per_domain = 4, across.domains = 2, across.stride = 2;
  CHECK(collective_cost(hw, across, Collective::all_to_all, inside.dispatch_bytes).total_s() >
        2.0 * inside.dispatch_fwd_s);
  // Four all-to-alls per MoE layer per micro-batch: dispatch and combine, fwd and bwd, all bf16.
  CHECK(inside.fwd_s() + inside.bwd_s() == Approx(4.0 * inside.dispatch_fwd_s).epsilon(1e-12));
}

TEST_CASE("DeepEP sends a token once per remote node and dispatches fp8 with --dtype fp8", "[moe]") {
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const GroupPlacement g = placement(hw, 64, 1);  // 8 nodes of 8
  REQUIRE(g.domains == 8);
  const double bytes = 4096.0 * 8 * 7168 * 2;
  const CollectiveCost c = deepep_cost(hw, g, bytes, 8);
  // Remote share 56/64 of the rows; a token reaches 7*(1-(7/8)^8) remote
  // nodes instead of 8*7/8 copies; per GPU one NIC.
  const double dedup = 7.0 * (1.0 - std::pow(7.0 / 8.0, 8)) / 7.0;
  const double nic = hw.tiers[1].bandwidth_achieved_bytes_per_s * double(hw.tiers[1].nics_per_node) /
                     double(hw.tiers[1].gpus_per_node);
  CHECK(c.bandwidth_s == Approx(bytes * 56.0 / 64.0 * dedup / nic).epsilon(1e-12));
  CHECK(c.latency_s == hw.collective_base_latency_s);
  // In one node a token goes once to each rank holding any of its k experts:
  // 8(1-(7/8)^8) = 5.25 ranks, not 8 copies (MoE QA: 205.5 MB where 135 MB move).
  const GroupPlacement node = placement(hw, 8, 1);
  REQUIRE(node.domains == 1);
  const double ranks = 8.0 * (1.0 - std::pow(7.0 / 8.0, 8));
  CHECK(deepep_cost(hw, node, bytes, 8).bandwidth_s ==
        Approx(deepep_cost(hw, node, bytes, 1).bandwidth_s * ranks / 8.0).epsilon(1e-12));
  // FP8 dispatch halves the dispatch bytes only with DeepEP.
  ModelSpec m = deepseek_like();
  TrainingSpec ts = training_run(64, 64, 4096);
  ts.dtype = DType::fp8;
  const ParallelConfig pc = layout(1, 1, 64, 64);
  const double nccl_bytes = moe_a2a(m, hw, pc, ts).dispatch_bytes;
  ts.a2a = A2aBackend::deepep;
  CHECK(moe_a2a(m, hw, pc, ts).dispatch_bytes == Approx(nccl_bytes / 2).epsilon(1e-15));
  // Megatron-Core's DeepEP/HybridEP path dispatches bf16 (a2a_fp8_dispatch false): the NCCL bytes.
  ts.a2a_fp8_dispatch = false;
  CHECK(moe_a2a(m, hw, pc, ts).dispatch_bytes == Approx(nccl_bytes).epsilon(1e-15));
}

TEST_CASE("expert-parallel layouts are checked as Megatron checks them", "[moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  ModelSpec dense = mixtral();
  dense.moe = MoeSpec{};
  const ModelSpec m = mixtral();
  CHECK(has(expert_reasons(dense, layout(1, 1, 8, 2)), Reason::ep_on_dense_model));
  CHECK(expert_reasons(dense, layout(1, 1, 8, 1)) == 0);
  CHECK(has(expert_reasons(m, layout(1, 1, 12, 3)), Reason::ep_not_dividing_experts));
  CHECK(has(expert_reasons(m, layout(1, 1, 4, 8)), Reason::expert_grid_not_folding));
  CHECK(has(expert_reasons(m, layout(2, 1, 2, 2, 2)), Reason::expert_grid_not_folding) == false);
  CHECK(has(expert_reasons(m, layout(3, 1, 8, 8, 3)), Reason::etp_not_dividing_expert_ffn));  // 14336 % 3
  ParallelConfig no_sp = layout(2, 1, 4, 8);
  no_sp.sequence_parallel = false;
  CHECK(has(expert_reasons(m, no_sp), Reason::moe_tp_needs_sp));
  // Folding: EP 8 with TP 2, DP 4 fits where EP <= DP would not (arXiv:2504.14960).
  CHECK(expert_reasons(m, layout(2, 1, 4, 8)) == 0);
  const Evaluation ev = evaluate(m, hw, layout(1, 1, 4, 8), training_run(4, 16, 4096));
  CHECK(ev.has(Reason::expert_grid_not_folding));
}

TEST_CASE("tokens per expert scale with the imbalance, a capacity factor pads to capacity", "[moe]") {
  const ModelSpec m = mixtral();
  TrainingSpec ts = training_run(16, 64, 4096);
  const ParallelConfig pc = layout(2, 1, 8, 4);
  const MoeTokens even = moe_tokens(m, pc, ts);
  // local = b*s/(cp*tp) = 2048; rows = local*k = 4096 over 8/4 = 2 local experts.
  CHECK(even.local == 2048);
  CHECK(even.rows_per_expert == Approx(2048.0 * 2 / 2).epsilon(1e-15));
  ts.moe_imbalance = 1.5;
  const MoeTokens hot = moe_tokens(m, pc, ts);
  CHECK(hot.rows_per_expert == Approx(1.5 * even.rows_per_expert).epsilon(1e-15));
  CHECK(hot.a2a_rows == Approx(1.5 * even.a2a_rows).epsilon(1e-15));
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec balanced = ts;
  balanced.moe_imbalance = 1.0;
  CHECK(moe_layer_time(m, hw, pc, ts).total_s() > moe_layer_time(m, hw, pc, balanced).total_s());
  // Capacity factor 1.25: ceil(2048*2/8*1.25) = 640 per source rank, from EP*ETP = 4 sources.
  ts.moe_imbalance = 1.0;
  ts.capacity_factor = 1.25;
  const MoeTokens cap = moe_tokens(m, pc, ts);
  CHECK(cap.rows_per_expert == 640.0 * 4);
  CHECK(cap.load == 1.25);
}

TEST_CASE("expert gradients reduce over EDP = TP x CP x DP / (EP x ETP), even where DP x CP is 1", "[moe]") {
  ModelSpec dense = mixtral();
  dense.moe = MoeSpec{};
  struct Row {
    std::int64_t tp, dp, ep, etp, edp;
    bool moe_reduces, dense_reduces;
  };
  for (const Row& r : {Row{8, 1, 1, 1, 8, true, false},    // TP 8, EP 1: the experts replicated over the 8 TP ranks
                       Row{8, 1, 2, 1, 4, true, false},    // EP below TP
                       Row{8, 1, 2, 4, 1, false, false},   // EP x ETP = TP: each expert shard on one rank
                       Row{8, 1, 8, 1, 1, false, false},   // EP = TP
                       Row{1, 16, 8, 1, 2, true, true},    // DP 16, EP 8: both
                       Row{1, 8, 8, 1, 1, true, true}}) {  // DP 8 reduces the dense weights alone
    INFO("tp " << r.tp << " dp " << r.dp << " ep " << r.ep << " etp " << r.etp);
    const ParallelConfig pc = layout(r.tp, 1, r.dp, r.ep, r.etp);
    CHECK(expert_dp_size(pc) == r.edp);
    CHECK(reduces_gradients(mixtral(), pc) == r.moe_reduces);
    ParallelConfig dense_pc = pc;
    dense_pc.ep = dense_pc.etp = 1;
    CHECK(reduces_gradients(dense, dense_pc) == r.dense_reduces);
  }
  ParallelConfig cp2 = layout(1, 1, 1, 1);
  cp2.cp = 2;
  CHECK(reduces_gradients(dense, cp2));
}

TEST_CASE("expert imbalance has no effect without expert parallelism", "[moe]") {
  // The busiest EP rank's rows over the mean: with EP 1 each GPU runs every
  // expert on its own local*k rows whatever their spread (MoE QA: --moe-imbalance 3
  // at EP 1 priced 7.71 s against 4.16 s).
  const ModelSpec m = mixtral();
  TrainingSpec ts = training_run(64, 256, 4096);
  ts.moe_imbalance = 3.0;
  const MoeTokens one = moe_tokens(m, layout(2, 1, 32, 1), ts);
  CHECK(one.load == 1.0);
  CHECK(moe_tokens(m, layout(2, 1, 32, 8), ts).load == 3.0);
}

TEST_CASE("expert parameters shard over EP x ETP and their optimizer state over EDP", "[moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  const TrainingSpec ts = training_run(16, 64, 4096);
  ParallelConfig ep1 = layout(1, 1, 16, 1), ep8 = layout(1, 1, 16, 8);
  ep1.zero_stage = ep8.zero_stage = 1;
  const Evaluation a = evaluate(m, hw, ep1, ts), b = evaluate(m, hw, ep8, ts);
  REQUIRE(a.plan.layout.feasible);
  const double expert = a.plan.stage_expert_params(0);
  CHECK(expert == Approx(routed_params_per_layer(m) * 32).epsilon(1e-12));
  CHECK(expert == Approx(32.0 * 8 * 3 * 4096 * 14336).epsilon(1e-12));
  // Weights (bf16): the experts' 7/8 moved off this GPU.
  CHECK(a.memory.weights_bytes - b.memory.weights_bytes == Approx(expert * 2 * 7 / 8).epsilon(1e-9));
  // Optimizer (ZeRO-1): experts over EDP = 16 (EP 1) and 2 (EP 8): expert/16 vs expert/8/2, equal.
  CHECK(b.plan.expert_dp_group.size == 2);
  CHECK(a.memory.optimizer_bytes == Approx(b.memory.optimizer_bytes).epsilon(1e-9));
  // Routed activations: larger EP, same rows per GPU (balanced): unchanged.
  CHECK(a.memory.activations_bytes == Approx(b.memory.activations_bytes).epsilon(1e-9));
}

TEST_CASE("a MoE model's layer is the mean of its dense and MoE layers", "[moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = deepseek_like();
  const TrainingSpec ts = training_run(64, 64, 4096);
  const ParallelConfig pc = layout(1, 1, 64, 64);
  ModelSpec dense = m;
  dense.moe = MoeSpec{};
  const LayerTime d = layer_time(dense, hw, pc, ts);
  const LayerTime e = moe_layer_time(m, hw, pc, ts);
  const LayerTime mean = layer_time(m, hw, pc, ts);
  CHECK(mean.total_s() == Approx((3.0 * d.total_s() + 58.0 * e.total_s()) / 61.0).epsilon(1e-12));
  CHECK(e.ep_comm_total_s > 0);
  CHECK(d.ep_comm_total_s == 0);
  // The expert GEMMs (4096*8*64/256 = 1024 rows each at EP 64) run below the dense FFN's efficiency.
  CHECK(e.gemm_flops_fwd / e.gemm_fwd_s < d.gemm_flops_fwd / d.gemm_fwd_s);
}

TEST_CASE("overlapping the all-to-alls hides them behind the other micro-batch's compute", "[moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  TrainingSpec ts = training_run(16, 64, 4096);
  const ParallelConfig pc = layout(1, 1, 16, 8);
  const LayerTime plain = moe_layer_time(m, hw, pc, ts);
  ts.overlap_a2a = true;
  const LayerTime hidden = moe_layer_time(m, hw, pc, ts);
  CHECK(plain.ep_comm_fwd_s + plain.ep_comm_bwd_s == Approx(plain.ep_comm_total_s).epsilon(1e-12));
  CHECK(hidden.ep_comm_fwd_s + hidden.ep_comm_bwd_s < plain.ep_comm_total_s);
  CHECK(hidden.contention_fwd_s + hidden.contention_bwd_s > plain.contention_fwd_s + plain.contention_bwd_s);
  CHECK(hidden.total_s() < plain.total_s());
}

TEST_CASE("overlapped all-to-alls of the warm-up forwards and cool-down backwards stay exposed", "[moe]") {
  // Megatron-Core pairs forward i+1 with backward i: with one micro-batch
  // nothing runs beside the other, so overlap changes nothing.
  MixtralEp8 r(64);  // one micro-batch per DP rank
  r.pc.zero_stage = 1;
  const Evaluation plain = evaluate(r.m, r.hw, r.pc, r.ts);
  r.ts.overlap_a2a = true;
  const Evaluation one = evaluate(r.m, r.hw, r.pc, r.ts);
  REQUIRE(one.plan.micro_batches == 1);
  // (The other's contention, which no longer runs beside it, is taken off the exposed all-to-all.)
  CHECK(one.time.ep_comm_s + one.time.contention_s ==
        Approx(plain.time.ep_comm_s + plain.time.contention_s).epsilon(5e-3));
  CHECK(one.time.step_s == Approx(plain.time.step_s).epsilon(1e-3));
  // With m micro-batches and no pipeline, one forward and one backward of m are exposed.
  r.ts.global_batch_sequences = 64 * 8;
  const Evaluation eight = evaluate(r.m, r.hw, r.pc, r.ts);
  const LayerTime& lt = eight.plan.layer;
  const double layers = double(r.m.num_layers);
  CHECK(eight.time.ep_comm_s == Approx(8.0 * layers * (lt.ep_comm_fwd_s + lt.ep_comm_bwd_s) +
                                       layers * (lt.ep_unpaired_fwd_s() + lt.ep_unpaired_bwd_s()))
                                    .epsilon(1e-9));
  CHECK(lt.ep_unpaired_fwd_s() + lt.ep_unpaired_bwd_s() > 0);
}

TEST_CASE("unpaired passes are the forwards before the simulator's first backward", "[moe][simulate]") {
  for (Schedule s : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::zb_h1, Schedule::interleaved})
    for (std::int64_t p : {1, 2, 4})
      for (std::int64_t m : {1, 2, 4, 8, 12}) {
        const std::int64_t v = s == Schedule::interleaved && p > 1 ? 2 : 1;
        if (s == Schedule::interleaved && (p == 1 || m % p != 0)) continue;
        const auto orders = stage_op_order(s, p, v, m, false);
        for (std::int64_t stage = 0; stage < p; ++stage) {
          std::int64_t before_backward = 0;
          for (const StageOp& op : orders[std::size_t(stage)]) {
            if (op.kind == OpKind::backward) break;
            if (op.kind == OpKind::forward) ++before_backward;
          }
          INFO("schedule " << int(s) << " p " << p << " m " << m << " stage " << stage);
          CHECK(unpaired_chunk_passes(s, p, v, m, stage) == before_backward);
        }
      }
}

TEST_CASE("expert GEMMs run four at a time, so tokens per expert set their speed", "[moe]") {
  // Transformer Engine's 4 streams: 32 experts of 128 rows take less than 32
  // GEMMs one after another, and 4x the rows take more time (it grew not at
  // all when every expert filled one partial wave of its own; at 128 rows
  // reading the weights bounds it, so less than 4x).
  const HardwareProfile hw = find_hardware("dgx-b200", kDir);
  const double one = gemm_time_s(hw, DType::bf16, 128, 4096, 7168);
  const double grouped = grouped_gemm_time_s(hw, DType::bf16, 32, 128, 4096, 7168);
  CHECK(grouped < 32.0 * one / 2.0);
  CHECK(grouped_gemm_time_s(hw, DType::bf16, 32, 512, 4096, 7168) > 1.5 * grouped);
  CHECK(grouped_gemm_time_s(hw, DType::bf16, 4, 128, 4096, 7168) == Approx(grouped / 8.0).epsilon(1e-12));
  // Fraction of the B200 bf16 peak for DeepSeek-V3's FC1 (K 7168 -> N 4096):
  // SimuMax's measured grouped-GEMM table (moe.md §3.6) gives 0.18-0.21 at
  // 128 rows per expert and 0.38-0.46 at 1024; this is a check against
  // measurements the model was not fitted to, with a margin.
  auto efficiency = [&](double rows) {
    return 32.0 * 2.0 * rows * 4096.0 * 7168.0 / grouped_gemm_time_s(hw, DType::bf16, 32, rows, 4096, 7168) / 2.25e15;
  };
  CHECK(efficiency(128) > 0.12);
  CHECK(efficiency(128) < 0.27);
  CHECK(efficiency(1024) > 0.33);
  CHECK(efficiency(1024) < 0.50);
}

TEST_CASE("the simulated step of MoE layouts agrees with the closed form", "[moe][simulate]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  struct Case {
    std::int64_t gpus, gb, tp, pp, dp, ep, v;
    bool overlap;
  };
  const Case cases[] = {{32, 128, 1, 4, 8, 8, 1, false}, {32, 128, 2, 2, 8, 8, 2, false}, {16, 64, 1, 2, 8, 8, 1, true}};
  for (const Case& c : cases) {
    const ModelSpec m = mixtral();
    TrainingSpec ts = training_run(c.gpus, c.gb, 4096);
    ts.overlap_a2a = c.overlap;
    ParallelConfig pc = layout(c.tp, c.pp, c.dp, c.ep);
    pc.virtual_stages = c.v;
    pc.zero_stage = 1;
    pc.recompute = Recompute::full;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO("TP" << c.tp << " PP" << c.pp << " DP" << c.dp << " EP" << c.ep);
    REQUIRE((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
    REQUIRE(ev.time.ep_comm_total_s > 0);
    const PipelineProblem pr = pipeline_problem(m, hw, pc, ts, ev, default_sim_schedule(ev.config));
    const SimResult r = simulate(pr);
    const SimComparison cmp = compare_with_closed_form(ev, pr, r);
    CHECK(std::abs(cmp.relative_difference()) < 0.02);
    if (c.overlap) continue;  // hidden all-to-alls may leave nothing exposed to draw
    CHECK(r.critical().ep_s > 0);
    bool lane = false;
    for (const SimEvent& e : r.events) lane = lane || e.stream == Stream::ep;
    CHECK(lane);
  }
}

TEST_CASE("with DP x CP 1 and EP below TP the experts' gradients are reduced and gathered over EDP",
          "[moe][simulate]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  TrainingSpec ts = training_run(32, 128, 4096);
  // TP 8, PP 4, DP 1: EP 1 leaves every expert on all 8 TP ranks (EDP 8);
  // EP 8 gives each rank its own expert (EDP 1): nothing to reduce.
  ParallelConfig edp8 = layout(8, 4, 1, 1), edp1 = layout(8, 4, 1, 8);
  for (ParallelConfig* pc : {&edp8, &edp1}) {
    pc->zero_stage = 1;
    pc->recompute = Recompute::full;
  }
  const Evaluation a = evaluate(m, hw, edp8, ts), b = evaluate(m, hw, edp1, ts);
  REQUIRE((a.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
  REQUIRE((b.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
  REQUIRE(a.plan.expert_dp_group.size == 8);
  CHECK(a.plan.weight_group.size == 1);
  CHECK(a.plan.grads_reduced);
  CHECK(a.plan.params_gathered);
  CHECK(!b.plan.grads_reduced);
  CHECK(b.time.dp_comm_total_s == 0);
  // ZeRO-1 over EDP: the tail stage's expert gradients reduce-scattered, its
  // updated expert weights all-gathered; the rest, on a group of
  // one, costs nothing.
  const std::int64_t r = a.time.dp_tail_stage;
  const double expert_local = a.plan.stage_expert_params(r) / double(a.plan.expert_shards);
  CHECK(expert_local == Approx(8.0 * 8 * 3 * 4096 * 14336).epsilon(1e-12));  // 8 layers a stage, EP 1, ETP 1
  const double expected =
      collective_cost(hw, a.plan.expert_dp_group, Collective::reduce_scatter, expert_local * ts.grad_bytes_per_param)
          .total_s() +
      collective_cost(hw, a.plan.expert_dp_group, Collective::all_gather, expert_local * ts.weight_bytes_per_param)
          .total_s();
  CHECK(a.time.dp_comm_total_s == Approx(expected).epsilon(1e-12));
  // The experts reduce in the reduce dtype (Megatron-Core grad_reduce_in_fp32
  // sets every buffer's, the experts' too): --grad-reduce-bytes 4.
  TrainingSpec fp32_reduce = ts;
  fp32_reduce.grad_reduce_bytes_per_param = 4;
  const double expected_fp32 =
      collective_cost(hw, a.plan.expert_dp_group, Collective::reduce_scatter, expert_local * 4).total_s() +
      collective_cost(hw, a.plan.expert_dp_group, Collective::all_gather, expert_local * ts.weight_bytes_per_param)
          .total_s();
  CHECK(evaluate(m, hw, edp8, fp32_reduce).time.dp_comm_total_s == Approx(expected_fp32).epsilon(1e-12));
  // --no-overlap-grad-reduce exposes all of it; the simulation agrees either way.
  TrainingSpec after = ts;
  after.overlap_grad_reduce = false;
  const Evaluation c = evaluate(m, hw, edp8, after);
  CHECK(c.time.dp_comm_s == Approx(c.time.dp_comm_total_s).epsilon(1e-12));
  CHECK(c.time.dp_comm_s > a.time.dp_comm_s);
  CHECK(c.time.step_s > a.time.step_s);
  for (const auto& [ev, spec] : {std::pair{&a, &ts}, {&c, &after}}) {
    const PipelineProblem pr = pipeline_problem(m, hw, edp8, *spec, *ev, default_sim_schedule(ev->config));
    const SimComparison cmp = compare_with_closed_form(*ev, pr, simulate(pr));
    CHECK(std::abs(cmp.relative_difference()) < 0.02);
  }
}

TEST_CASE("the experts' last gradient bucket is exposed in the closed form as in the simulator", "[moe][simulate]") {
  // Qwen3-30B-A3B on 1024 GPUs, CP 2 x DP 512, EP 32: buckets of
  // max(40M, 1M x DP x CP) parameters hold each buffer whole, so the experts'
  // reduction over EDP 32 (32 nodes) starts as the backward ends. The closed
  // form hid it behind the backward and read 8.6% below the simulation.
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("qwen3-30b-a3b", kDir);
  TrainingSpec ts = training_run(1024, 1024, 4096);
  ParallelConfig pc = layout(1, 1, 512, 32);
  pc.cp = 2;
  pc.zero_stage = 1;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.feasible());
  const PipelineProblem pr = pipeline_problem(m, hw, pc, ts, ev, default_sim_schedule(ev.config));
  const SimComparison cmp = compare_with_closed_form(ev, pr, simulate(pr));
  CHECK(std::abs(cmp.relative_difference()) < 0.03);
}

TEST_CASE("the search enumerates EP over the expert count's divisors that fold, and ETP 1 or TP", "[moe][search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  SearchSpec spec;
  spec.training = training_run(16, 64, 4096);
  spec.pins.tp = 2, spec.pins.cp = 1, spec.pins.pp = 1, spec.pins.micro_batch_size = 1;
  spec.pins.recompute = Recompute::full, spec.pins.zero_stage = 1, spec.pins.sequence_parallel = true;
  spec.top_k = 100;
  const SearchResult r = search(m, hw, spec);
  // TP2 x DP8 = 16 ranks fold: ETP 1 with EP 1, 2, 4, 8; ETP 2 with EP 1, 2, 4, 8.
  CHECK(r.considered == 8);
  bool ep8 = false, etp2 = false;
  for (const Evaluation& ev : r.top) {
    CHECK(expert_reasons(m, ev.config) == 0);
    ep8 = ep8 || ev.config.ep == 8;
    etp2 = etp2 || ev.config.etp == 2;
  }
  CHECK(ep8);
  CHECK(etp2);
  // A dense model is searched as before: EP = ETP = 1 only.
  ModelSpec dense = m;
  dense.moe = MoeSpec{};
  CHECK(search(dense, hw, spec).considered == 1);
}

TEST_CASE("the search tries every ZeRO stage where DP x CP is 1 but EDP is not", "[moe][search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  SearchSpec spec;
  spec.training = training_run(32, 128, 4096);
  spec.pins.tp = 8, spec.pins.cp = 1, spec.pins.pp = 4, spec.pins.micro_batch_size = 1, spec.pins.virtual_stages = 1;
  spec.pins.recompute = Recompute::full, spec.pins.etp = 1;
  spec.top_k = 100;
  // EP 1: EDP 8, so ZeRO 0, 1, 2 and 3 (reshard or not) are 5 configurations
  // that differ; EP 8: EDP 1, all equal ZeRO 0, priced once.
  spec.pins.ep = 1;
  const SearchResult edp8 = search(m, hw, spec);
  CHECK(edp8.considered == 5);
  bool zero1 = false;
  for (const Evaluation& ev : edp8.top) zero1 = zero1 || ev.config.zero_stage == 1;
  CHECK(zero1);
  spec.pins.ep = 8;
  CHECK(search(m, hw, spec).considered == 1);
}

TEST_CASE("without shared experts a MoE layer runs only the attention's TP collectives", "[moe]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  const TrainingSpec ts = training_run(16, 64, 4096);
  const ParallelConfig pc = layout(2, 1, 8, 8);
  ModelSpec dense = m;
  dense.moe = MoeSpec{};
  const LayerTime d = layer_time(dense, hw, pc, ts);
  const LayerTime e = moe_layer_time(m, hw, pc, ts);
  // The dense layer's two all-gather / reduce-scatter pairs are equal (same bytes): half remain.
  CHECK(e.tp_comm_fwd_s == Approx(0.5 * d.tp_comm_fwd_s).epsilon(1e-12));
  // Backward: the attention half's part (the MLP's collectives beside its GEMMs are dropped too).
  CHECK(e.tp_comm_bwd_s == Approx(d.tp_comm_bwd_s - d.tp_comm_bwd_mlp_s).epsilon(1e-12));
  TrainingSpec exposed = ts;
  exposed.tp_bwd_overlap = false;  // every backward collective exposed: again half
  CHECK(moe_layer_time(m, hw, pc, exposed).tp_comm_bwd_s ==
        Approx(0.5 * layer_time(dense, hw, pc, exposed).tp_comm_bwd_s).epsilon(1e-12));
  ModelSpec shared = m;
  shared.moe.num_shared_experts = 1;
  CHECK(moe_layer_time(shared, hw, pc, ts).tp_comm_fwd_s == Approx(d.tp_comm_fwd_s).epsilon(1e-12));
}

TEST_CASE("a MoE layer keeps FC1's input and the expert intermediates, not the expert output", "[moe]") {
  // Megatron-Core's TEGroupedMLP multiplies the routing probabilities into
  // the activation and the combine unpermutes without them (Megatron-LM
  // d98e8a6 moe/experts.py, moe/token_dispatcher.py): the expert output is
  // not saved for the backward.
  const ModelSpec m = mixtral();
  ModelSpec attention_only = m;
  attention_only.moe = MoeSpec{};
  attention_only.ffn_hidden_size = 0;
  const TrainingSpec ts = training_run(64, 64, 4096);
  ParallelConfig pc = layout(1, 1, 64, 8);
  pc.micro_batch_size = 1;
  pc.recompute = Recompute::none;
  const double routed =
      layer_activations(m, pc, ts).stored_bytes - layer_activations(attention_only, pc, ts).stored_bytes;
  const double rows = 4096.0 * 2;                             // local tokens x top-2, balanced
  const double expected = 2.0 * rows * 4096                   // permuted tokens (FC1 input), bf16
                          + 2.0 * rows * 14336 * (2.0 + 1.0)  // FC1 output (gate, up) + activation output
                          + 4.0 * 4096 * 8 + 4.0 * rows;      // fp32 router logits + row probabilities
  CHECK(routed == Approx(expected).epsilon(1e-9));
}

TEST_CASE("FP8 expert GEMMs cast their inputs and output gradients with their transposes", "[moe]") {
  // As the dense layer's (Transformer Engine fp8_cast_transpose_fused): read
  // 2 bytes, write 1 + 1, for FC1's and FC2's inputs forward and their output
  // gradients backward; nothing in bf16.
  MixtralEp8 r(64);
  const auto cast_bytes = [&](DType dt) {
    r.ts.dtype = dt;
    Explain ex;
    const LayerTime lt = moe_layer_time(r.m, r.hw, r.pc, r.ts, &ex);
    for (const ExplainStep& s : ex.steps())
      if (s.name.rfind("MoE router + expert GEMMs", 0) == 0) {
        std::pair<double, double> b{-1, -1};
        for (const auto& [k, v] : s.inputs) {
          if (k == "fp8_cast_bytes_fwd") b.first = v;
          if (k == "fp8_cast_bytes_bwd") b.second = v;
        }
        return std::make_pair(b, lt.elementwise_fwd_s);
      }
    FAIL("no expert GEMM step in the explain");
    return std::make_pair(std::pair<double, double>{}, 0.0);
  };
  const auto [bf16, ew_bf16] = cast_bytes(DType::bf16);
  const auto [fp8, ew_fp8] = cast_bytes(DType::fp8);
  const double rows = 4096.0 * 2;  // local tokens x top-2, balanced over the EP ranks
  CHECK(bf16.first == 0);
  CHECK(bf16.second == 0);
  CHECK(fp8.first == Approx(4.0 * rows * (4096 + 14336)).epsilon(1e-12));
  CHECK(fp8.second == Approx(4.0 * rows * (4096 + 2 * 14336)).epsilon(1e-12));
  CHECK(ew_fp8 > ew_bf16);
}

TEST_CASE("full recomputation prices and explains the recomputed forward's all-to-alls", "[moe]") {
  // Megatron-LM core_v0.19.0 transformer_block.py _checkpointed_forward
  // recomputes each whole layer, its token dispatcher included: dispatch and
  // combine run again in the backward, 6 all-to-alls per MoE layer (moe.md
  // §3.4), the recomputed two in the recompute term, not the EP line.
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = mixtral();
  const TrainingSpec ts = training_run(64, 64, 4096);
  ParallelConfig none = layout(1, 1, 64, 8);
  none.micro_batch_size = 1;
  none.recompute = Recompute::none;
  ParallelConfig full = none;
  full.recompute = Recompute::full;
  const MoeA2a a = moe_a2a(m, hw, full, ts);
  REQUIRE(a.fwd_s() > 0);
  const auto explained = [&](const ParallelConfig& pc, Explain& ex) { return moe_layer_time(m, hw, pc, ts, &ex); };
  Explain ex_none, ex_full;
  const LayerTime off = explained(none, ex_none), on = explained(full, ex_full);
  // No TP, CP or overlap: the recompute is the whole forward's compute plus its two all-to-alls.
  CHECK(on.recompute_s == Approx(off.compute_fwd_s() + a.fwd_s()).epsilon(1e-12));
  CHECK(on.ep_comm_fwd_s + on.ep_comm_bwd_s == Approx(off.ep_comm_fwd_s + off.ep_comm_bwd_s).epsilon(1e-12));
  const auto input = [](const ExplainStep& s, const std::string& key) {
    for (const auto& [k, v] : s.inputs)
      if (k == key) return v;
    return -1.0;
  };
  const auto a2a_per_layer = [&](const Explain& ex) {
    for (const ExplainStep& s : ex.steps())
      if (s.name.rfind("MoE all-to-all", 0) == 0) return input(s, "all_to_alls_per_layer");
    return -1.0;
  };
  CHECK(a2a_per_layer(ex_none) == 4.0);
  CHECK(a2a_per_layer(ex_full) == 6.0);
  const auto recompute_step = [](const Explain& ex) {
    for (const ExplainStep& s : ex.steps())
      if (s.name.rfind("MoE recompute", 0) == 0) return &s;
    return static_cast<const ExplainStep*>(nullptr);
  };
  CHECK(recompute_step(ex_none) == nullptr);
  const ExplainStep* s = recompute_step(ex_full);
  REQUIRE(s != nullptr);
  CHECK(s->name == "MoE recompute per MoE layer (full recomputation)");
  CHECK(input(*s, "a2a_fwd_s") == Approx(a.fwd_s()).epsilon(1e-12));
  CHECK(s->output == Approx(input(*s, "routed_fwd_s") + a.fwd_s()).epsilon(1e-12));
}
