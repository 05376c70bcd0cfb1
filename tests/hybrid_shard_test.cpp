// Hybrid sharding (ParallelConfig::zero_shard, --zero-shard): the shard and
// replica groups, the memory they shard, the replicas' all-reduce in the
// closed form and the simulator, the search's pins, the frameworks' flags and
// rules, and validate's reading of rows that ran it.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/framework/framework.h"
#include "planner/framework/launch_flags.h"
#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"
#include "planner/model/labels.h"
#include "planner/model/priced_plan.h"
#include "planner/search/search.h"
#include "planner/simulate/compare.h"
#include "planner/simulate/simulate.h"
#include "planner/simulate/simulate_top.h"
#include "planner/validate/published_runs.h"
#include "planner/validate/validate.h"
#include "test_support.h"

using namespace planner;
using planner::testing::error_of;
using planner::testing::training_run;

namespace {

ParallelConfig layout(std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t dp, int zero,
                      std::int64_t shard) {
  ParallelConfig pc;
  pc.tp = tp, pc.cp = cp, pc.pp = pp, pc.dp = dp, pc.zero_stage = zero, pc.zero_shard = shard;
  pc.sequence_parallel = tp > 1;
  return pc;
}

constexpr std::uint32_t kOom = 1u << unsigned(Reason::out_of_memory);

}  // namespace

TEST_CASE("hybrid sharding: whole CP groups and the innermost DP ranks shard, the rest replicate", "[hsdp]") {
  const HardwareProfile hw = find_hardware("dgx-h100");
  // 64 GPUs, TP 1: a shard group of 8 is one node; its 8 replicas one GPU in each node.
  const ParallelConfig one_node = layout(1, 1, 1, 64, 3, 8);
  const GroupPlacement shard = weight_sharing_group(hw, one_node), reps = replica_group(hw, one_node);
  CHECK(shard.size == 8);
  CHECK(shard.domains == 1);
  CHECK(reps.size == 8);
  CHECK(reps.stride == 8);
  CHECK(reps.domains == 8);
  CHECK(zero_shard_size(one_node) == 8);
  CHECK(zero_replicas(one_node) == 8);
  // CP 2, shard 4: both CP ranks and 2 DP ranks; with PP 2 the DP ranks are tp*cp*pp apart.
  const ParallelConfig cp_pp = layout(2, 2, 2, 8, 1, 4);
  const GroupPlacement s2 = weight_sharing_group(hw, cp_pp), r2 = replica_group(hw, cp_pp);
  CHECK(s2.size == 4);
  CHECK(r2.size == 4);
  CHECK(r2.stride == 2 * 2 * 2 * 2);
  // Without hybrid sharding: one group of DP x CP, no replicas.
  const ParallelConfig plain = layout(1, 2, 1, 32, 3, 0);
  CHECK(weight_sharing_group(hw, plain).size == 64);
  CHECK(replica_group(hw, plain).size == 1);
}

TEST_CASE("hybrid sharding: a group of all DP x CP ranks is plain ZeRO, priced identically", "[hsdp]") {
  const ModelSpec m = find_model("llama8b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const TrainingSpec ts = training_run(64, 128);
  const Evaluation all = evaluate(m, hw, layout(1, 1, 1, 64, 3, 64), ts);
  const Evaluation plain = evaluate(m, hw, layout(1, 1, 1, 64, 3, 0), ts);
  CHECK(all.config.zero_shard == 0);
  CHECK(all.time.step_s == plain.time.step_s);
  CHECK(all.memory.total_bytes == plain.memory.total_bytes);
}

TEST_CASE("hybrid sharding: states shard over the group, not over DP x CP", "[hsdp]") {
  const ModelSpec m = find_model("llama8b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const TrainingSpec ts = training_run(64, 128);
  for (int zero : {1, 2, 3}) {
    INFO("ZeRO-" << zero);
    const Evaluation full = evaluate(m, hw, layout(1, 1, 1, 64, zero, 0), ts);
    const Evaluation hybrid = evaluate(m, hw, layout(1, 1, 1, 64, zero, 8), ts);
    REQUIRE((hybrid.reasons & ~kOom) == 0);
    CHECK(hybrid.memory.optimizer_bytes == Approx(8.0 * full.memory.optimizer_bytes));
    if (zero >= 2) CHECK(hybrid.memory.gradients_bytes == Approx(8.0 * full.memory.gradients_bytes));
  }
}

TEST_CASE("hybrid sharding, ZeRO-3: each layer's gradient shard all-reduced over the replicas", "[hsdp]") {
  const ModelSpec m = find_model("llama70b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const TrainingSpec ts = training_run(256, 256);
  ParallelConfig pc = layout(1, 1, 1, 256, 3, 32);
  pc.recompute = Recompute::full;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.feasible());
  const PricedPlan& plan = ev.plan;
  const double layer_params = double(count_params(m).per_layer);
  const double reduced = layer_params * ts.grad_bytes_per_param;  // bf16 reduction by default
  const CollectiveCost ar =
      collective_cost(hw, plan.replica_group, Collective::all_reduce, reduced / double(plan.weight_group.size));
  CHECK(plan.zero3.replica_all_reduce_s == Approx(ar.total_s()));
  CHECK(plan.zero3.bwd_comm_s() ==
        Approx(plan.zero3.bwd_all_gather_s + plan.zero3.reduce_scatter_s + plan.zero3.replica_all_reduce_s));
  // The shard group's gathers span 32 GPUs, not 256: cheaper per layer than plain ZeRO-3.
  const Evaluation plain = evaluate(m, hw, layout(1, 1, 1, 256, 3, 0), ts);
  CHECK(plan.zero3.all_gather_s < plain.plan.zero3.all_gather_s);
  CHECK(plain.plan.zero3.replica_all_reduce_s == 0.0);
}

TEST_CASE("hybrid sharding, ZeRO-1: the DP reduction adds the replicas' all-reduce of each shard", "[hsdp]") {
  const ModelSpec m = find_model("llama70b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const TrainingSpec ts = training_run(1024, 512);
  ParallelConfig pc = layout(8, 1, 4, 32, 1, 4);
  pc.virtual_stages = 5;
  const Evaluation hybrid = evaluate(m, hw, pc, ts);
  pc.zero_shard = 0;
  const Evaluation plain = evaluate(m, hw, pc, ts);
  REQUIRE(hybrid.feasible());
  REQUIRE(plain.feasible());
  CHECK(hybrid.plan.replica_group.size == 8);
  // More optimizer state, the same layers and weights.
  CHECK(hybrid.memory.optimizer_bytes == Approx(8.0 * plain.memory.optimizer_bytes));
  CHECK(hybrid.memory.weights_bytes == plain.memory.weights_bytes);
  const CollectiveCost ar = replica_all_reduce(hw, hybrid.plan, 1e9);
  CHECK(ar.total_s() ==
        Approx(collective_cost(hw, hybrid.plan.replica_group, Collective::all_reduce, 1e9 / 4.0).total_s()));
  CHECK(replica_all_reduce(hw, plain.plan, 1e9).total_s() == 0.0);
}

TEST_CASE("hybrid sharding: the simulator agrees with the closed form", "[hsdp][simulate]") {
  const HardwareProfile hw = find_hardware("dgx-h100");
  struct Case {
    const char* model;
    std::int64_t gpus, gb, tp, pp, dp, v;
    int zero;
    std::int64_t shard;
  };
  for (const Case& c : {Case{"llama70b", 1024, 512, 8, 4, 32, 5, 1, 4}, Case{"llama8b", 64, 128, 1, 1, 64, 1, 3, 8},
                        Case{"llama8b", 64, 128, 2, 2, 16, 1, 2, 4}}) {
    const ModelSpec m = find_model(c.model);
    const TrainingSpec ts = training_run(c.gpus, c.gb);
    ParallelConfig pc = layout(c.tp, 1, c.pp, c.dp, c.zero, c.shard);
    pc.virtual_stages = c.v;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO(c.model << " TP" << c.tp << " PP" << c.pp << " DP" << c.dp << " ZeRO-" << c.zero << "/" << c.shard);
    REQUIRE((ev.reasons & ~kOom) == 0);
    const std::optional<SimulatedStep> step = simulate_own_schedule(m, hw, ts, ev);
    REQUIRE(step.has_value());
    const SimComparison cmp = compare_with_closed_form(ev, step->problem, step->result);
    CHECK(std::abs(cmp.relative_difference()) < 0.02);
  }
}

TEST_CASE("hybrid sharding: groups a layout cannot form, ZeRO 0 and MoE models are refused", "[hsdp]") {
  const ModelSpec dense = find_model("llama8b");
  const ModelSpec moe = find_model("mixtral-8x7b");
  CHECK(zero_shard_valid(dense, layout(1, 1, 1, 64, 3, 8)));
  CHECK(zero_shard_valid(dense, layout(1, 2, 1, 32, 1, 4)));          // both CP ranks, 2 DP ranks
  CHECK_FALSE(zero_shard_valid(dense, layout(1, 2, 1, 32, 1, 3)));    // not whole CP groups
  CHECK_FALSE(zero_shard_valid(dense, layout(1, 1, 1, 64, 3, 48)));   // does not divide DP
  CHECK_FALSE(zero_shard_valid(dense, layout(1, 1, 1, 64, 3, 128)));  // more than DP x CP
  CHECK_FALSE(zero_shard_valid(dense, layout(1, 1, 1, 64, 0, 8)));    // ZeRO 0 shards nothing
  CHECK_FALSE(zero_shard_valid(dense, layout(1, 1, 1, 64, 1, 1)));    // nor does a group of one rank
  CHECK(zero_shard_valid(dense, layout(1, 2, 1, 32, 1, 2)));          // the CP pair alone
  CHECK_FALSE(zero_shard_valid(moe, layout(1, 1, 1, 64, 3, 8)));
  const HardwareProfile hw = find_hardware("dgx-h100");
  const Evaluation ev = evaluate(dense, hw, layout(1, 1, 1, 64, 3, 48), training_run(64, 128));
  CHECK(ev.has(Reason::zero_shard_invalid));
  CHECK(reason_text(Reason::zero_shard_invalid, dense, hw, ev.config, training_run(64, 128)).find("--zero-shard 48") !=
        std::string::npos);
  CHECK(zero_label(layout(1, 1, 1, 64, 3, 8)) == "3/8");
}

TEST_CASE("hybrid sharding in the search: a pinned list keeps the groups each layout can form", "[hsdp][search]") {
  const ModelSpec m = find_model("llama8b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  SearchSpec spec;
  spec.training = training_run(64, 128);
  spec.pins.zero_shard = Pin<std::int64_t>(std::vector<std::int64_t>{8, 48});
  spec.pins.zero_stage = Pin<int>(std::vector<int>{3});
  spec.top_k = 50;
  const SearchResult r = search(m, hw, spec);
  REQUIRE_FALSE(r.top.empty());
  // A list keeps only the groups a layout can form: none is rejected for its group (DP x CP 1 included).
  CHECK(r.rejections[std::size_t(Reason::zero_shard_invalid)] == 0);
  spec.pins.zero_shard = Pin<std::int64_t>(std::vector<std::int64_t>{48});  // one value: tried as given
  CHECK(search(m, hw, spec).rejections[std::size_t(Reason::zero_shard_invalid)] > 0);
  spec.pins.zero_shard = Pin<std::int64_t>(std::vector<std::int64_t>{8, 48});
  bool hybrid = false;
  for (const Evaluation& ev : r.top) {
    CHECK(ev.config.zero_stage == 3);
    // 48 divides no DP here; 8 is plain ZeRO-3 where DP x CP is 8.
    CHECK((ev.config.zero_shard == 8 || ev.config.zero_shard == 0));
    if (ev.config.zero_shard == 0) CHECK(ev.config.dp * ev.config.cp <= 8);
    hybrid = hybrid || ev.config.zero_shard == 8;
    CHECK(zero_shard_valid(m, ev.config));
  }
  CHECK(hybrid);
}

TEST_CASE("hybrid sharding's launch flags, and the frameworks that cannot express it", "[hsdp][framework]") {
  const ModelSpec m = find_model("llama8b");
  const HardwareProfile hw = find_hardware("dgx-h100");
  const TrainingSpec ts = training_run(64, 128);
  const Evaluation z3 = evaluate(m, hw, layout(1, 1, 1, 64, 3, 8), ts);
  CHECK(launch_flags(Framework::megatron, m, hw, ts, z3).text.find("--num-distributed-optimizer-instances 8") !=
        std::string::npos);
  TrainingSpec nemo_ts = ts;  // Megatron-Bridge's fp32 gradients, as the CLI applies them
  apply_framework_defaults(framework_info(Framework::nemo), nemo_ts, {});
  CHECK(launch_flags(Framework::nemo, m, hw, nemo_ts, evaluate(m, hw, layout(1, 1, 1, 64, 3, 8), nemo_ts))
            .text.find("ddp.num_distributed_optimizer_instances=8") != std::string::npos);
  TrainingSpec titan_ts = ts;  // torchtitan's precision, as the CLI applies it
  apply_framework_defaults(framework_info(Framework::torchtitan), titan_ts, {});
  const std::string titan =
      launch_flags(Framework::torchtitan, m, hw, titan_ts, evaluate(m, hw, layout(1, 1, 1, 64, 3, 8), titan_ts)).text;
  CHECK(titan.find("data_parallel_replicate_degree = 8\ndata_parallel_shard_degree = 8") != std::string::npos);
  CHECK(launch_flags(Framework::deepspeed, m, hw, ts, z3).text.find("\"mics_shard_size\": 8") != std::string::npos);
  // MiCS groups consecutive world ranks, across AutoTP's: refused with TP > 1.
  CHECK(broken_rule(framework_info(Framework::deepspeed), m, normalized(layout(2, 1, 1, 32, 3, 8)), ts) >= 0);
  const Evaluation z1 = evaluate(m, hw, layout(1, 1, 1, 64, 1, 8), ts);
  CHECK(broken_rule(framework_info(Framework::deepspeed), m, z1.config, ts) >= 0);
  CHECK(broken_rule(framework_info(Framework::maxtext), m, z1.config, ts) >= 0);
  CHECK(broken_rule(framework_info(Framework::megatron), m, z1.config, ts) < 0);
  ParallelConfig keep = layout(1, 1, 1, 64, 3, 8);
  keep.reshard_after_forward = false;
  CHECK(broken_rule(framework_info(Framework::megatron), m, normalized(keep), ts) >= 0);
  // MaxText: the replicas on the data axis over DCN first, the shard on fsdp inside the slice.
  const ModelSpec big = find_model("llama70b");
  const HardwareProfile tpu = find_hardware("tpu-v5e-256");
  TrainingSpec tts = training_run(1024, 1024, 2048);
  apply_framework_defaults(framework_info(Framework::maxtext), tts, {});  // fp32 weights and gradients
  ParallelConfig pc = layout(1, 1, 1, 1024, 3, 256);
  pc.recompute = Recompute::full;
  const Evaluation ev = evaluate(big, tpu, pc, tts);
  const std::string maxtext = launch_flags(Framework::maxtext, big, tpu, tts, ev).text;
  CHECK(maxtext.find("ici_fsdp_parallelism=256") != std::string::npos);
  CHECK(maxtext.find("dcn_data_parallelism=4") != std::string::npos);
  CHECK(maxtext.find("dcn_fsdp_parallelism=1") != std::string::npos);
  // A group spanning 1.5 slices fits neither axis as priced: refused, naming the flag.
  TrainingSpec three = training_run(768, 768, 2048);
  apply_framework_defaults(framework_info(Framework::maxtext), three, {});
  ParallelConfig odd = layout(4, 1, 1, 192, 3, 96);
  const Evaluation odd_ev = evaluate(big, tpu, odd, three);
  CHECK(error_of([&] { (void)launch_flags(Framework::maxtext, big, tpu, three, odd_ev); }).rfind("--zero-shard: ", 0) ==
        0);
  // 4 slices, TP 4, groups of 128 ranks = 512 chips: the shard spans 2 slices over DCN, the 2 replicas the other 2.
  TrainingSpec four = training_run(1024, 1024, 2048);
  apply_framework_defaults(framework_info(Framework::maxtext), four, {});
  const ParallelConfig spans = layout(4, 1, 1, 256, 3, 128);
  const std::string two = launch_flags(Framework::maxtext, big, tpu, four, evaluate(big, tpu, spans, four)).text;
  CHECK(two.find("ici_fsdp_parallelism=64") != std::string::npos);
  CHECK(two.find("dcn_fsdp_parallelism=2") != std::string::npos);
  CHECK(two.find("dcn_data_parallelism=2") != std::string::npos);
}

TEST_CASE("validate reads HYBRID_SHARD and MaxText's FSDP within a slice as one shard group per domain",
          "[hsdp][validate]") {
  auto row = [](const std::string& zero, std::int64_t gpus, const char* gpu) {
    return nlohmann::json::object({{"id", "H1"},
                                   {"source", "a test"},
                                   {"model_name", "Test 8B"},
                                   {"num_layers", 32},
                                   {"hidden_size", 4096},
                                   {"num_attention_heads", 32},
                                   {"num_kv_heads", 8},
                                   {"ffn_hidden_size", 14336},
                                   {"ffn_type", "swiglu"},
                                   {"vocab_size", 128256},
                                   {"seq_len", 8192},
                                   {"global_batch_size", gpus},
                                   {"micro_batch_size", 1},
                                   {"num_gpus", gpus},
                                   {"gpu_type", gpu},
                                   {"tp", 1},
                                   {"pp", 1},
                                   {"dp", gpus},
                                   {"cp", 1},
                                   {"activation_recompute", "full"},
                                   {"zero_or_fsdp", zero},
                                   {"step_time_s", 10.0}});
  };
  const RunRow hybrid = map_published_run(row("FSDP HYBRID_SHARD", 64, "H100-SXM5-80GB"), 0);
  REQUIRE(hybrid.run);
  CHECK(hybrid.run->shard_per_domain);
  const ValidationReport rep = validate_runs({hybrid}, {});
  REQUIRE(rep.rows.size() == 1);
  CHECK(rep.rows[0].config.zero_shard == 8);
  // A stated zero_shard wins; plain FSDP stays one group.
  nlohmann::json stated = row("FSDP", 64, "H100-SXM5-80GB");
  stated["zero_shard"] = 16;
  const RunRow s = map_published_run(stated, 0);
  REQUIRE(s.run);
  CHECK(s.run->pins.zero_shard.value_or(0) == 16);
  CHECK_FALSE(map_published_run(row("FSDP", 64, "H100-SXM5-80GB"), 0).run->shard_per_domain);
  CHECK(map_published_run(row("ICI: FSDP 256 within slice; DCN: data parallel across slices", 512, "TPU v5e"), 0)
            .run->shard_per_domain);
}
