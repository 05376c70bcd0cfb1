// framework: each framework's rules drop exactly the layouts it cannot
// express (search counts them by rule), its defaults apply, uniform splits
// follow DeepSpeed's partition_uniform, and the launch flags spell the layout
// (Megatron's layout string, torchtitan's model parts).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "planner/framework/framework.h"
#include "planner/framework/launch_flags.h"
#include "planner/io/catalog.h"
#include "planner/model/labels.h"
#include "planner/model/time_to_train.h"
#include "planner/search/search.h"
#include "planner/simulate/simulate_top.h"
#include "planner/views/html_report.h"
#include "planner/views/report.h"
#include "planner/spec/input_error.h"

using namespace planner;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;

// megatron/core/transformer/pipeline_parallel_layer_layout.py parse_str_to_list's unrolling.
std::string expand_layout(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  const std::regex group(R"(\(([^)]+)\)\*(\d+))"), one(R"((.)\*(\d+))");
  for (const std::regex* re : {&group, &one}) {
    std::smatch m;
    while (std::regex_search(s, m, *re)) {
      std::string rep;
      for (int i = 0; i < std::stoi(m[2].str()); ++i) rep += m[1].str();
      s = m.prefix().str() + rep + m.suffix().str();
    }
  }
  return s;
}

TrainingSpec training(const ModelSpec& m, std::int64_t gpus) {
  TrainingSpec ts;
  ts.num_gpus = gpus;
  ts.seq_len = m.default_seq_len;
  ts.global_batch_sequences = m.default_global_batch_tokens / m.default_seq_len;
  return ts;
}
}  // namespace

TEST_CASE("uniform_layers is DeepSpeed's partition_uniform", "[framework]") {
  // partition_uniform(126, 16): residual 14, the first 14 stages hold 8, the last 2 hold 7.
  const StageLayout l = uniform_layers(126, 16, 1);
  REQUIRE(l.feasible);
  for (std::int64_t s = 0; s < 16; ++s) CHECK(l.layers_on(s) == (s < 14 ? 8 : 7));
  const StageLayout even = uniform_layers(80, 4, 2);
  for (std::int64_t s = 0; s < 4; ++s) CHECK(even.layers_on(s) == 20);
  const StageLayout one_extra = uniform_layers(81, 4, 1);  // 21 20 20 20
  CHECK(one_extra.layers_on(0) == 21);
  CHECK(one_extra.layers_on(1) == 20);
  CHECK(one_extra.layers_on(3) == 20);
  CHECK_FALSE(uniform_layers(7, 4, 2).feasible);
}

TEST_CASE("each framework's rules break where its source says", "[framework]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const TrainingSpec ts = training(m, 64);
  ParallelConfig pc;
  pc.tp = 8, pc.pp = 2, pc.dp = 4, pc.sequence_parallel = true;
  auto kind_of = [&](Framework f, const ParallelConfig& c) -> std::string {
    const FrameworkInfo& info = framework_info(f);
    const int r = broken_rule(info, m, normalized(c), ts);
    return r < 0 ? "ok" : std::string(info.rules[std::size_t(r)].text);
  };
  CHECK(kind_of(Framework::megatron, pc) == "ok");
  ParallelConfig z2 = pc;
  z2.zero_stage = 2;
  CHECK(kind_of(Framework::deepspeed, z2).find("ZeRO-2 and ZeRO-3") != std::string::npos);
  CHECK(kind_of(Framework::megatron, z2) == "ok");
  CHECK(kind_of(Framework::torchtitan, z2).find("no ZeRO-2") != std::string::npos);
  ParallelConfig ddp = pc;  // ZeRO-0 with TP and PP: torchtitan's DDP is 1-D only
  CHECK(kind_of(Framework::torchtitan, ddp).find("DDP") != std::string::npos);
  ParallelConfig nosp = pc;
  nosp.zero_stage = 3, nosp.reshard_after_forward = false, nosp.sequence_parallel = false;
  CHECK(kind_of(Framework::torchtitan, nosp).find("SequenceParallel") != std::string::npos);
  ParallelConfig v = pc;
  v.virtual_stages = 3;  // 80 layers over 2 x 3 chunks: not uniform
  CHECK(kind_of(Framework::maxtext, v).find("uniform chunks") != std::string::npos);
  v.virtual_stages = 4;
  CHECK(kind_of(Framework::maxtext, v) == "ok");
  CHECK(kind_of(Framework::deepspeed, v).find("TrainSchedule") != std::string::npos);
  // DeepSpeed's ZeRO-0 all-reduces after the backward (overlap_comm is ZeRO's):
  // plain DDP only without the overlap priced.
  ParallelConfig ddp64;
  ddp64.dp = 64;
  CHECK(kind_of(Framework::deepspeed, ddp64).find("ZeRO-0 all-reduces") != std::string::npos);
  TrainingSpec exposed = ts;
  exposed.overlap_grad_reduce = false;
  CHECK(broken_rule(framework_info(Framework::deepspeed), m, normalized(ddp64), exposed) < 0);
}

TEST_CASE("MoE: each framework's all-to-all overlap, DeepEP and expert TP as its source has them", "[framework]") {
  const ModelSpec mixtral = find_model("mixtral-8x7b", kDir);
  const ModelSpec dsv3 = find_model("deepseek-v3", kDir);  // MLA: MaxText's DeepSeek sparse layers
  ParallelConfig pc;
  pc.tp = 2, pc.dp = 32, pc.ep = 8, pc.etp = 2, pc.sequence_parallel = true, pc.zero_stage = 3;
  auto kind_of = [&](Framework f, const ModelSpec& m, const ParallelConfig& c,
                     const TrainingSpec& ts) -> std::optional<RuleKind> {
    const FrameworkInfo& info = framework_info(f);
    const int r = broken_rule(info, m, normalized(c), ts);
    if (r < 0) return std::nullopt;
    return info.rules[std::size_t(r)].kind;
  };
  TrainingSpec overlap = training(mixtral, 64);
  overlap.overlap_a2a = true;
  TrainingSpec deepep = training(mixtral, 64);
  deepep.a2a = A2aBackend::deepep;
  const TrainingSpec plain = training(mixtral, 64);
  CHECK(kind_of(Framework::megatron, mixtral, pc, overlap) == std::nullopt);
  CHECK(kind_of(Framework::nemo, mixtral, pc, deepep) == std::nullopt);
  CHECK(kind_of(Framework::torchtitan, mixtral, pc, overlap) == RuleKind::no_a2a_overlap);
  CHECK(kind_of(Framework::torchtitan, mixtral, pc, plain) == std::nullopt);  // etp = tp
  // expert_parallel_comm_backend: read by deepseek_v3 and llama4 only, and without expert TP.
  CHECK(kind_of(Framework::torchtitan, mixtral, pc, deepep) == RuleKind::deepep_mla_or_llama4_only);
  CHECK(kind_of(Framework::torchtitan, dsv3, pc, deepep) == RuleKind::no_deepep_with_etp);
  ParallelConfig etp1 = pc;
  etp1.etp = 1;
  CHECK(kind_of(Framework::torchtitan, dsv3, etp1, deepep) == std::nullopt);
  CHECK(kind_of(Framework::torchtitan, find_model("llama4-scout", kDir), etp1, deepep) == std::nullopt);
  CHECK(kind_of(Framework::torchtitan, find_model("qwen3-30b-a3b", kDir), etp1, deepep) ==
        RuleKind::deepep_mla_or_llama4_only);
  ParallelConfig etp4 = pc;
  etp4.tp = 4, etp4.dp = 16, etp4.etp = 2;  // neither 1 nor TP
  CHECK(kind_of(Framework::torchtitan, mixtral, etp4, plain) == RuleKind::etp_one_or_tp);
  ParallelConfig ddp = pc;  // DDP over 64 with EP 8: no FSDP dimension to fold EP out of
  ddp.tp = 1, ddp.dp = 64, ddp.etp = 1, ddp.sequence_parallel = false, ddp.zero_stage = 0;
  CHECK(kind_of(Framework::torchtitan, mixtral, ddp, plain) == RuleKind::ep_needs_zero3);
  // DeepSpeed and MaxText: planner writes no expert settings, so any MoE
  // layout is refused first, as export refuses it (moe_export_problem).
  ParallelConfig ds = pc;
  ds.tp = 1, ds.dp = 64, ds.etp = 1, ds.sequence_parallel = false, ds.zero_stage = 1;
  ParallelConfig ep1 = ds;
  ep1.ep = 1;
  for (Framework f : {Framework::deepspeed, Framework::maxtext}) {
    CHECK(kind_of(f, mixtral, ds, overlap) == RuleKind::no_moe);
    CHECK(kind_of(f, mixtral, ds, plain) == RuleKind::no_moe);
    CHECK(kind_of(f, dsv3, ep1, plain) == RuleKind::no_moe);
    CHECK(moe_export_problem(f, mixtral) != "");
  }
  CHECK(overlaps_a2a(framework_info(Framework::megatron), mixtral));
  CHECK_FALSE(overlaps_a2a(framework_info(Framework::torchtitan), mixtral));
  CHECK_FALSE(overlaps_a2a(framework_info(Framework::maxtext), mixtral));
  CHECK(overlaps_a2a(framework_info(Framework::maxtext), dsv3));
}

TEST_CASE("search --framework offers no all-to-all overlap where the framework has none", "[framework][search]") {
  // The overlapped choice replaces the exposed one where it prices cheaper;
  // for a framework that cannot run it the search must price the exposed one
  // instead of dropping the layout.
  const ModelSpec m = find_model("mixtral-8x7b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  for (Framework f : {Framework::torchtitan, Framework::megatron}) {
    SearchSpec spec;
    spec.training = training(m, 64);
    spec.top_k = 20;
    spec.framework = f;
    apply_framework_defaults(framework_info(f), spec.training, {});
    const SearchResult r = search(m, hw, spec);
    INFO(to_string(f));
    REQUIRE_FALSE(r.top.empty());
    const bool any_overlap =
        std::any_of(r.top.begin(), r.top.end(), [](const Evaluation& ev) { return ev.overlap_a2a; });
    CHECK(any_overlap == (f == Framework::megatron));
    for (const Evaluation& ev : r.top) {
      TrainingSpec ts = spec.training;
      ts.overlap_a2a = ev.overlap_a2a;
      CHECK(broken_rule(framework_info(f), m, ev.config, ts) < 0);
    }
    if (f == Framework::megatron) {
      // Megatron overlaps with PP > 1 only when interleaved; the layouts
      // without virtual stages keep their exposed choice, so as many fit as
      // with the overlap off.
      for (const Evaluation& ev : r.top)
        CHECK_FALSE((ev.overlap_a2a && ev.config.pp > 1 && ev.config.virtual_stages == 1));
      SearchSpec exposed = spec;
      exposed.pins.overlap_a2a = false;
      CHECK(search(m, hw, exposed).feasible == r.feasible);
      SearchSpec pp4 = spec;  // PP 4 without interleaving: the overlap refused, the layouts priced exposed
      pp4.pins.pp = 4, pp4.pins.virtual_stages = 1;
      const SearchResult p4 = search(m, hw, pp4);
      REQUIRE_FALSE(p4.top.empty());
      for (const Evaluation& ev : p4.top) CHECK_FALSE(ev.overlap_a2a);
      continue;
    }
    // As good as the same search told --overlap-a2a false.
    SearchSpec exposed = spec;
    exposed.pins.overlap_a2a = false;
    const SearchResult e = search(m, hw, exposed);
    REQUIRE_FALSE(e.top.empty());
    CHECK(r.top.front().time.step_s == e.top.front().time.step_s);
    CHECK(r.feasible == e.feasible);
  }
}

TEST_CASE("defaults: Megatron's fp32 main grads give 18 bytes per parameter, flags given win", "[framework]") {
  TrainingSpec ts;
  apply_framework_defaults(framework_info(Framework::megatron), ts, {});
  CHECK(ts.weight_bytes_per_param + ts.grad_bytes_per_param + ts.optimizer_bytes_per_param == 18);
  TrainingSpec kept;
  apply_framework_defaults(framework_info(Framework::megatron), kept, {true, false, false});
  CHECK(kept.grad_bytes_per_param == 2);
  TrainingSpec ds;
  apply_framework_defaults(framework_info(Framework::deepspeed), ds, {});
  CHECK(ds.pipeline_split == PipelineSplit::uniform);
  CHECK(ds.grad_bytes_per_param == 2);
}

TEST_CASE("defaults: torchtitan runs eager PyTorch unless async TP (which needs torch.compile)", "[framework]") {
  TrainingSpec tt;
  apply_framework_defaults(framework_info(Framework::torchtitan), tt, {});
  CHECK(tt.eager_elementwise);
  TrainingSpec async_tp;
  async_tp.tp_comm_overlap = true;
  apply_framework_defaults(framework_info(Framework::torchtitan), async_tp, {});
  CHECK_FALSE(async_tp.eager_elementwise);
  TrainingSpec megatron;
  apply_framework_defaults(framework_info(Framework::megatron), megatron, {});
  CHECK_FALSE(megatron.eager_elementwise);
}

TEST_CASE("defaults: ZeRO-3 gathers a tensor in MaxText (XLA), a submodule in DeepSpeed, a layer otherwise",
          "[framework]") {
  for (const Framework f :
       {Framework::megatron, Framework::nemo, Framework::torchtitan, Framework::deepspeed, Framework::maxtext}) {
    TrainingSpec ts;
    apply_framework_defaults(framework_info(f), ts, {});
    const Zero3Gather expected = f == Framework::maxtext     ? Zero3Gather::tensor
                                 : f == Framework::deepspeed ? Zero3Gather::submodule
                                                             : Zero3Gather::layer;
    CHECK(ts.zero3_gather == expected);
  }
}

TEST_CASE("search --framework keeps only expressible layouts and counts the rest by rule", "[framework][search]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  SearchSpec spec;
  spec.training = training(m, 64);
  spec.top_k = 50;
  spec.framework = Framework::deepspeed;
  apply_framework_defaults(framework_info(Framework::deepspeed), spec.training, {});
  const SearchResult r = search(m, hw, spec);
  REQUIRE_FALSE(r.top.empty());
  const FrameworkInfo& info = framework_info(Framework::deepspeed);
  for (const Evaluation& ev : r.top) CHECK(broken_rule(info, m, ev.config, spec.training) < 0);
  const std::int64_t by_rule = std::accumulate(r.framework_rejections.begin(), r.framework_rejections.end(),
                                               std::int64_t(0));
  const std::int64_t by_reason = std::accumulate(r.rejections.begin(), r.rejections.end(), std::int64_t(0));
  CHECK(by_rule > 0);
  CHECK(by_rule + by_reason == r.rejected);
  CHECK(r.feasible + r.rejected == r.considered);
  // The same search without the framework finds at least as good a layout.
  SearchSpec any = spec;
  any.framework.reset();
  any.training = training(m, 64);
  const SearchResult free = search(m, hw, any);
  CHECK(free.top.front().time.step_s <= r.top.front().time.step_s);
}

TEST_CASE("search offers the virtual stages a balanced split can fill", "[framework][search]") {
  // 126 layers on PP16: v = 8 with the heads alone in the end stages' chunks (balance_layers), enumerated
  // and priced, none refused as too few layers; Megatron-LM expresses it (a layout string).
  const ModelSpec m = find_model("llama405b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  SearchSpec spec;
  spec.training = training(m, 2048);
  spec.pins.pp = 16;
  spec.pins.virtual_stages = 8;
  const SearchResult r = search(m, hw, spec);
  CHECK(r.considered > 0);
  CHECK(r.rejections[std::size_t(Reason::too_few_layers)] == 0);
  REQUIRE_FALSE(r.top.empty());
  CHECK(r.top.front().layout.layers_on(0) == 7);
  spec.framework = Framework::megatron;
  apply_framework_defaults(framework_info(Framework::megatron), spec.training, {});
  CHECK_FALSE(search(m, hw, spec).top.empty());
}

TEST_CASE("Megatron's layout string lists chunk c of stage s at c*p + s", "[framework]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(m, 64);
  ParallelConfig pc;
  pc.tp = 8, pc.pp = 4, pc.dp = 2, pc.virtual_stages = 7, pc.sequence_parallel = true;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.layout.stages == 4);
  const std::string layout = megatron_layout_string(ev.plan);
  // Expanded as Megatron's parse_str_to_list does: p*v entries, every layer once, in chunk order.
  const std::string flat = expand_layout(layout);
  std::vector<std::string> entries{""};
  for (char c : flat) {
    if (c == '|')
      entries.emplace_back();
    else
      entries.back().push_back(c);
  }
  REQUIRE(entries.size() == 28);
  CHECK(entries.front().front() == 'E');
  CHECK(entries.back().back() == 'L');
  std::int64_t layers = 0;
  for (std::int64_t c = 0; c < 7; ++c)
    for (std::int64_t s = 0; s < 4; ++s) {
      const std::string& e = entries[std::size_t(c * 4 + s)];
      const auto n = std::int64_t(std::count(e.begin(), e.end(), 't'));
      CHECK(n == ev.plan.chunks(s)[std::size_t(c)].layers);
      layers += n;
    }
  CHECK(layers == 80);
  const LaunchFlags flags = launch_flags(Framework::megatron, m, hw, ts, ev);
  CHECK(flags.text.find("--pipeline-model-parallel-size 4") != std::string::npos);
  CHECK(flags.text.find("--sequence-parallel") != std::string::npos);
  // 80 layers over 4 x 7 chunks cannot be uniform: the split is written out.
  CHECK(flags.text.find("--pipeline-model-parallel-layout") != std::string::npos);
  // Multi-token prediction: validate_layer_layout wants mtp_num_layers 'm'
  // after every decoder, all in the last chunk, then the loss.
  const std::string mtp = expand_layout(megatron_layout_string(ev.plan, 2));
  CHECK(std::count(mtp.begin(), mtp.end(), 'm') == 2);
  CHECK(mtp.substr(mtp.size() - 3) == "mmL");
  CHECK(mtp.find('t', mtp.find('m')) == std::string::npos);
  CHECK(mtp.rfind('|') < mtp.find('m'));
}

TEST_CASE("a split with the heads counted as layers is written as Megatron's account-for flags", "[framework]") {
  // Llama 3.1 405B, PP8 v8: (126 + 2) / 64 = 2 a chunk, 1 in the embedding's and the loss's chunks, as
  // Megatron-Bridge's 405B recipes set it (account_for_embedding/loss_in_pipeline_split = True).
  const ModelSpec m = find_model("llama405b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec ts = training(m, 1024);
  ts.global_batch_sequences = 512;
  ParallelConfig pc;
  pc.tp = 8, pc.cp = 2, pc.pp = 8, pc.dp = 8, pc.virtual_stages = 8, pc.sequence_parallel = true;
  pc.zero_stage = 1;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.layout.feasible);
  const std::string megatron = launch_flags(Framework::megatron, m, hw, ts, ev).text;
  CHECK(megatron.find("--account-for-embedding-in-pipeline-split") != std::string::npos);
  CHECK(megatron.find("--account-for-loss-in-pipeline-split") != std::string::npos);
  CHECK(megatron.find("--num-virtual-stages-per-pipeline-rank 8") != std::string::npos);
  CHECK(megatron.find("--pipeline-model-parallel-layout") == std::string::npos);
  TrainingSpec nemo_ts = ts;  // Megatron-Bridge's fp32 gradients, as the CLI applies them
  apply_framework_defaults(framework_info(Framework::nemo), nemo_ts, {});
  const std::string nemo = launch_flags(Framework::nemo, m, hw, nemo_ts, evaluate(m, hw, pc, nemo_ts)).text;
  CHECK(nemo.find("model.account_for_embedding_in_pipeline_split=true") != std::string::npos);
  CHECK(nemo.find("model.account_for_loss_in_pipeline_split=true") != std::string::npos);
  // PP4 v7 of llama70b is not that split (80 + 2 is not a multiple of 28): the layout string stays.
  const ModelSpec m70 = find_model("llama70b", kDir);
  ParallelConfig p70;
  p70.tp = 8, p70.pp = 4, p70.dp = 2, p70.virtual_stages = 7, p70.sequence_parallel = true;
  const Evaluation ev70 = evaluate(m70, hw, p70, training(m70, 64));
  CHECK(launch_flags(Framework::megatron, m70, hw, training(m70, 64), ev70).text.find("--account-for") ==
        std::string::npos);
}

TEST_CASE("Megatron overlaps pipeline p2p only when interleaved, and its flags say what was priced", "[framework]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec ts = training(m, 128);
  ts.global_batch_sequences = 128;
  ts.overlap_p2p = true;
  apply_framework_defaults(framework_info(Framework::megatron), ts, {});
  CHECK(ts.overlap_p2p_interleaved_only);
  ParallelConfig pc;
  pc.tp = 8, pc.pp = 4, pc.dp = 4, pc.zero_stage = 1, pc.sequence_parallel = true, pc.recompute = Recompute::full;
  CHECK_FALSE(overlaps_p2p(ts, pc));  // 1F1B: Megatron-LM turns the overlap off
  TrainingSpec blocking = ts;
  blocking.overlap_p2p = false;
  CHECK(evaluate(m, hw, pc, ts).time.step_s == evaluate(m, hw, pc, blocking).time.step_s);
  pc.virtual_stages = 5;
  CHECK(overlaps_p2p(ts, pc));
  CHECK(evaluate(m, hw, pc, ts).time.step_s < evaluate(m, hw, pc, blocking).time.step_s);
  // Megatron-LM overlaps by default when interleaved: a blocking plan says so.
  const std::string plain = launch_flags(Framework::megatron, m, hw, blocking, evaluate(m, hw, pc, blocking)).text;
  CHECK(plain.find("--no-overlap-p2p-communication") != std::string::npos);
  CHECK(launch_flags(Framework::megatron, m, hw, ts, evaluate(m, hw, pc, ts)).text.find("p2p") == std::string::npos);
  // Megatron-Core's config has it off (batch_p2p_comm on): Megatron-Bridge overrides say so when it is on.
  TrainingSpec bridge = training(m, 128);
  bridge.global_batch_sequences = 128;
  bridge.overlap_p2p = true;
  apply_framework_defaults(framework_info(Framework::nemo), bridge, {});
  const std::string nemo = launch_flags(Framework::nemo, m, hw, bridge, evaluate(m, hw, pc, bridge)).text;
  CHECK(nemo.find("model.overlap_p2p_comm=true") != std::string::npos);
  CHECK(nemo.find("model.batch_p2p_comm=false") != std::string::npos);
  // Without a framework, the overlap applies to 1F1B too (asynchronous p2p, as Meta's Llama 3 ran it).
  TrainingSpec any = training(m, 128);
  any.overlap_p2p = true;
  pc.virtual_stages = 1;
  CHECK(overlaps_p2p(any, pc));
}

TEST_CASE("launch flags refuse what the framework cannot express", "[framework]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const TrainingSpec ts = training(m, 64);
  ParallelConfig pc;
  pc.tp = 8, pc.pp = 2, pc.dp = 4, pc.zero_stage = 3, pc.sequence_parallel = true;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  CHECK_THROWS_WITH(launch_flags(Framework::deepspeed, m, hw, ts, ev),
                    Catch::Contains("deepspeed v0.19.5 cannot express") && Catch::Contains("pipe/engine.py"));
}

TEST_CASE("torchtitan exports a MoE layout's expert degrees and DeepEP, DeepSpeed refuses a MoE model", "[framework]") {
  const ModelSpec m = find_model("mixtral-8x7b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec ts = training(m, 64);
  apply_framework_defaults(framework_info(Framework::torchtitan), ts, {});
  ParallelConfig pc;
  pc.tp = 2, pc.dp = 32, pc.ep = 8, pc.etp = 2, pc.zero_stage = 3, pc.sequence_parallel = true;
  pc.micro_batch_size = 2;
  const Evaluation ev = evaluate(m, hw, pc, ts);
  REQUIRE(ev.feasible());
  const std::string toml = launch_flags(Framework::torchtitan, m, hw, ts, ev).text;
  CHECK(toml.find("expert_parallel_degree = 8\nexpert_tensor_parallel_degree = 2\n") != std::string::npos);
  CHECK(toml.find("expert_parallel_comm_backend") == std::string::npos);
  // DeepEP: Llama 4 (or an MLA model) without expert TP.
  const ModelSpec scout = find_model("llama4-scout", kDir);
  TrainingSpec deepep = training(scout, 64);
  apply_framework_defaults(framework_info(Framework::torchtitan), deepep, {});
  deepep.a2a = A2aBackend::deepep;
  ParallelConfig etp1 = pc;
  etp1.tp = 1, etp1.dp = 64, etp1.etp = 1, etp1.sequence_parallel = false, etp1.ep = 16, etp1.micro_batch_size = 1;
  etp1.recompute = Recompute::full;
  const Evaluation dev_scout = evaluate(scout, hw, etp1, deepep);
  REQUIRE(dev_scout.feasible());
  CHECK(launch_flags(Framework::torchtitan, scout, hw, deepep, dev_scout)
            .text.find("expert_parallel_comm_backend = \"deepep\"") != std::string::npos);
  ParallelConfig ds = pc;
  ds.tp = 1, ds.dp = 64, ds.etp = 1, ds.sequence_parallel = false, ds.zero_stage = 1;
  TrainingSpec plain = training(m, 64);
  const Evaluation dev = evaluate(m, hw, ds, plain);
  CHECK_THROWS_WITH(launch_flags(Framework::deepspeed, m, hw, plain, dev),
                    Catch::Contains("deepspeed v0.19.5 cannot express") && Catch::Contains("no MoE models"));
  CHECK(moe_export_problem(Framework::maxtext, m) != "");
  CHECK(moe_export_problem(Framework::torchtitan, m) == "");
  // A capacity factor under torchtitan, whose MoE is dropless: a rule, so the
  // search rejects such layouts as export would.
  TrainingSpec dropping = ts;
  dropping.capacity_factor = 1.25;
  CHECK(broken_rule(framework_info(Framework::torchtitan), m, pc, ts) < 0);
  const int r = broken_rule(framework_info(Framework::torchtitan), m, pc, dropping);
  REQUIRE(r >= 0);
  CHECK(rule_text(framework_info(Framework::torchtitan), r).find("dropless") != std::string::npos);
}

TEST_CASE("time to train: tokens over throughput", "[framework]") {
  const TimeToTrain t = time_to_train({15e12, 2.0}, 1e7, 256);
  CHECK(t.seconds == Approx(1.5e6));
  CHECK(t.days == Approx(1.5e6 / 86400.0));
  CHECK(t.gpu_hours == Approx(256 * 1.5e6 / 3600.0));
  CHECK(t.cost_usd == Approx(2.0 * 256 * 1.5e6 / 3600.0));
}

TEST_CASE("reports count the framework's rules beside the cost model's reasons", "[framework][html]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  SearchSpec spec;
  spec.training = training(m, 64);
  spec.framework = Framework::torchtitan;
  apply_framework_defaults(framework_info(Framework::torchtitan), spec.training, {});
  const SearchReport rep = search_and_simulate(m, hw, spec, 3, 0, false);
  const RunContext ctx{m, hw, spec.training, nullptr, &framework_info(Framework::torchtitan)};
  std::size_t bars = 0;
  for (std::int64_t n : rep.search.rejections) bars += n > 0;
  for (std::int64_t n : rep.search.framework_rejections) bars += n > 0;
  REQUIRE(bars > 0);
  const std::string page = render_search_html(rep, ctx, {"planner search", "0.1.0"});
  std::size_t rects = 0;
  for (std::size_t at = page.find("<rect class=\"reason\""); at != std::string::npos;
       at = page.find("<rect class=\"reason\"", at + 1))
    ++rects;
  CHECK(rects == bars);
  CHECK(page.find("torchtitan: no ZeRO-1") != std::string::npos);
  const std::string text = render_search(rep.search, ctx, Format::table);
  CHECK(text.find("torchtitan v0.2.2: ") != std::string::npos);
  CHECK(text.find("TFLOP/s") != std::string::npos);
}
