// planner regress: suite parsing, flattening an Evaluation into metrics,
// comparison with the golden file and the text view of the differences.
#include "planner/validate/regress.h"

#include "io/field_reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/model/evaluate.h"
#include "planner/model/recompute_modules.h"
#include "planner/model/selective_policy.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"
#include "planner/spec/names.h"

namespace planner {

using detail::describe;
using detail::FieldReader;
using detail::throw_if_problems;
using nlohmann::json;

namespace {

// Model and hardware lookups, each catalog read once per suite.
class Catalog {
 public:
  explicit Catalog(std::string dir) : dir_(std::move(dir)) {}
  const ModelSpec& model(const std::string& key) {
    auto it = models_.find(key);
    if (it == models_.end()) it = models_.emplace(key, find_model(key, dir_)).first;
    return it->second;
  }
  const HardwareProfile& hardware(const std::string& key) {
    auto it = hardware_.find(key);
    if (it == hardware_.end()) it = hardware_.emplace(key, find_hardware(key, dir_)).first;
    return it->second;
  }

 private:
  std::string dir_;
  std::map<std::string, ModelSpec> models_;
  std::map<std::string, HardwareProfile> hardware_;
};

// Fields the case states that cannot apply to its model or layout are
// refused, as `planner evaluate` refuses the flags (cli/config_flags.cpp):
// priced as nothing, they would pass unnoticed. A field counts as stated
// whatever its value ("zero3_gather": "layer" is the default, and still says
// the case runs ZeRO-3).
void check_fields_apply(const json& cj, const RegressCase& c, const ParallelConfig& pc, bool have_model,
                        FieldReader& r) {
  const auto stated = [&](const char* key) {
    const auto it = cj.find(key);
    return it != cj.end() && !it->is_null();
  };
  const bool dense = have_model && !c.model.is_moe();
  for (const char* key : {"moe_imbalance", "capacity_factor", "a2a", "overlap_a2a"})
    if (stated(key) && dense)
      r.problem(key, fmt::format("applies to MoE models only; {} is dense (no experts)", c.model.name));
  // EP 1: the tokens never leave the GPU, so there is no all-to-all to choose or overlap.
  if (!dense && pc.ep == 1 && stated("a2a"))
    r.problem("a2a", "chooses the expert all-to-all, but the layout has EP 1 (\"ep\")");
  if (!dense && pc.ep == 1 && c.training.overlap_a2a)
    r.problem("overlap_a2a", "overlaps the expert all-to-all, but the layout has EP 1 (\"ep\")");
  if (stated("reshard_after_forward") && pc.zero_stage != 3)
    r.problem("reshard_after_forward", "applies to ZeRO-3 (\"zero\": 3)");
  if (stated("zero3_gather") && pc.zero_stage != 3) r.problem("zero3_gather", "applies to ZeRO-3 (\"zero\": 3)");
  if (stated("zero_shard") && pc.zero_stage == 0)
    r.problem("zero_shard", "sets the group ZeRO shards over (\"zero\": 1, 2 or 3)");
  if (stated("zero_shard") && have_model && c.model.is_moe())
    r.problem("zero_shard", fmt::format("hybrid sharding of a MoE model's experts is not modelled ({})", c.model.name));
  if (c.training.tp_comm_overlap && pc.tp == 1)
    r.problem("tp_comm_overlap", "overlaps TP communication, but the layout has TP 1 (\"tp\")");
  else if (c.training.tp_comm_overlap && !pc.sequence_parallel)
    r.problem("tp_comm_overlap",
              "needs sequence parallelism (Megatron-LM requires --sequence-parallel with --tp-comm-overlap; \"sp\")");
}

std::optional<RegressCase> case_from_json(const json& cj, std::size_t index, Catalog& catalog,
                                          std::vector<std::string>& problems) {
  std::string path = fmt::format("cases[{}]", index);
  if (!cj.is_object()) {
    problems.push_back(fmt::format("{}: expected an object, got {}", path, describe(cj)));
    return std::nullopt;
  }
  const std::size_t problems_before = problems.size();
  FieldReader r(cj, path, problems);
  RegressCase c;
  c.name = r.string("name", true);
  if (!c.name.empty()) r.set_path(path = fmt::format("{} ({})", path, c.name));

  const std::string model = r.string("model", true);
  const std::string hardware = r.string("hardware", true);
  bool have_model = false;
  if (!model.empty()) {
    try {
      c.model = catalog.model(model);
      have_model = true;
    } catch (const InputError& e) {
      r.problem("model", e.message());
    }
  }
  if (!hardware.empty()) {
    try {
      c.hardware = catalog.hardware(hardware);
    } catch (const InputError& e) {
      r.problem("hardware", e.message());
    }
  }

  TrainingSpec& ts = c.training;
  ts.num_gpus = r.integer_in("gpus", 1, kMaxGpus, true, 1);
  ts.seq_len = r.integer_in("seq_len", 1, kMaxSeqLen, true, 1);
  ts.global_batch_sequences = r.integer_in("global_batch", 1, kMaxGlobalBatchSequences, true, 1);
  ts.dtype = r.choice("dtype", kDTypeNames, DType::bf16, false);
  ts.attention = r.choice("attention", kAttentionKernelNames, AttentionKernel::flash, false);
  ts.grad_bytes_per_param = r.number("grad_bytes", 0, kMaxBytesPerParam, false, ts.grad_bytes_per_param, false);
  ts.grad_reduce_bytes_per_param =
      r.number("grad_reduce_bytes", 0, kMaxBytesPerParam, false, ts.grad_reduce_bytes_per_param, false);
  ts.zero3_recompute_regather = r.boolean("zero3_recompute_regather", false, ts.zero3_recompute_regather);
  // What a ZeRO-3 gather holds (Zero3Gather): layer, tensor (XLA) or submodule (DeepSpeed).
  ts.zero3_gather = r.choice("zero3_gather", kZero3GatherNames, Zero3Gather::layer, false);
  ts.optimizer_bytes_per_param =
      r.number("optimizer_bytes", 0, kMaxBytesPerParam, false, ts.optimizer_bytes_per_param, false);
  ts.weight_bytes_per_param = r.number("weight_bytes", 0, kMaxBytesPerParam, false, ts.weight_bytes_per_param, false);
  ts.overlap_grad_reduce = r.boolean("overlap_grad_reduce", false, ts.overlap_grad_reduce);
  ts.overlap_p2p = r.boolean("overlap_p2p", false, ts.overlap_p2p);
  ts.tp_comm_overlap = r.boolean("tp_comm_overlap", false, ts.tp_comm_overlap);
  ts.loss_kernel = r.choice("loss_kernel", kLossKernelNames, LossKernel::unfused, false);
  ts.train_metric_losses = int(r.integer_in("train_metric_losses", 0, 8, false, 0));
  // FSDP1's flat parameter and a per-parameter Adam loop (Composer 0.17; specs.h).
  ts.zero3_staging = r.choice("zero3_staging", kZero3StagingNames, Zero3Staging::per_parameter_copies, false);
  ts.optimizer_kernel = r.choice("optimizer_kernel", kOptimizerKernelNames, OptimizerKernel::fused, false);
  // Eager PyTorch (torchtitan without torch.compile) and its composite RMSNorm before torch 2.9.
  ts.eager_elementwise = r.boolean("eager_elementwise", false, ts.eager_elementwise);
  ts.eager_composite_rmsnorm = r.boolean("eager_composite_rmsnorm", false, ts.eager_composite_rmsnorm);
  ts.attention_varlen_unpad = r.boolean("attention_varlen_unpad", false, ts.attention_varlen_unpad);
  if (ts.eager_composite_rmsnorm && !ts.eager_elementwise)
    r.problem("eager_composite_rmsnorm", "applies to eager PyTorch (\"eager_elementwise\": true)");
  // MoE (moe_cost.h): all-to-all backend, imbalance, capacity factor, a2a overlap.
  ts.a2a = r.choice("a2a", kA2aBackendNames, A2aBackend::nccl, false);
  ts.moe_imbalance = r.number("moe_imbalance", 1, 1e3, false, ts.moe_imbalance, false);
  ts.capacity_factor = r.number("capacity_factor", 0, 1e3, false, ts.capacity_factor, false);
  ts.overlap_a2a = r.boolean("overlap_a2a", false, ts.overlap_a2a);
  // What "recompute": "selective" recomputes (SelectivePolicy): megatron, op or layer:N.
  const std::string selective = r.string("selective_ac", false);
  if (!selective.empty() && !parse_selective_policy(selective, ts))
    r.problem("selective_ac", fmt::format("expected \"megatron\", \"op\" or \"layer:N\" (N >= 1), got \"{}\"", selective));

  ParallelConfig& pc = c.config;
  pc.tp = r.integer_in("tp", 1, kMaxGpus, true, 1);
  pc.cp = r.integer_in("cp", 1, kMaxGpus, false, 1);
  pc.pp = r.integer_in("pp", 1, kMaxGpus, true, 1);
  pc.dp = r.integer_in("dp", 1, kMaxGpus, true, 1);
  // A micro-batch is at most the global batch; virtual stages at most the layers.
  pc.micro_batch_size = r.integer_in("mbs", 1, kMaxGlobalBatchSequences, false, 1);
  pc.virtual_stages = r.integer_in("vpp", 1, kMaxLayers, false, 1);
  pc.recompute = r.choice("recompute", kRecomputeNames, Recompute::none, false);
  pc.zero_stage = int(r.integer_in("zero", 0, kMaxZeroStage, false, 0));
  pc.reshard_after_forward = r.boolean("reshard_after_forward", false, true);
  pc.zero_shard = r.integer_in("zero_shard", 1, kMaxGpus, false, 0);
  pc.sequence_parallel = r.boolean("sp", false, pc.tp > 1);  // as `planner evaluate`: on when TP > 1
  pc.ep = r.integer_in("ep", 1, kMaxGpus, false, 1);
  pc.etp = r.integer_in("etp", 1, kMaxGpus, false, 1);
  pc.schedule = r.choice("schedule", kClosedFormSchedules, Schedule::one_f_one_b, false);
  if (!selective.empty() && pc.recompute != Recompute::selective)
    r.problem("selective_ac", "applies to selective recomputation (\"recompute\": \"selective\")");
  // Megatron's --recompute-modules: "recompute_modules": "layernorm,mla_up_proj",
  // which implies "recompute": "selective" as the flag does.
  if (const std::string modules = r.string("recompute_modules", false); !modules.empty()) {
    try {
      ts.recompute_modules = parse_recompute_modules(modules, c.model, "recompute_modules");
      if (pc.recompute == Recompute::none) pc.recompute = Recompute::selective;
      if (pc.recompute != Recompute::selective || ts.selective != SelectivePolicy::megatron_attention)
        r.problem("recompute_modules", "applies to Megatron's selective recomputation (\"recompute\": \"selective\")");
    } catch (const InputError& e) {
      r.problem("recompute_modules", e.message());
    }
  }
  if (const std::string why = overlap_a2a_problem(pc, ts); !why.empty()) r.problem("overlap_a2a", why);
  if (ts.attention_varlen_unpad && !is_fused(ts.attention))
    r.problem("attention_varlen_unpad", "applies to a fused attention kernel (\"attention\": \"flash\" or \"flash2\")");
  if (ts.zero3_recompute_regather && (pc.zero_stage != 3 || pc.recompute != Recompute::full))
    r.problem("zero3_recompute_regather", "applies to ZeRO-3 with full recomputation (\"zero\": 3, \"recompute\": \"full\")");
  else if (ts.zero3_recompute_regather && !pc.reshard_after_forward)
    r.problem("zero3_recompute_regather", "gathers weights released after the forward; \"reshard_after_forward\": false keeps them");
  check_fields_apply(cj, c, pc, have_model, r);
  r.allow("note");
  r.reject_unknown();
  if (problems.size() != problems_before) return std::nullopt;
  c.config = normalized(pc);
  return c;
}

// Metric table: name, tolerance class, how to read it from an Evaluation.
struct MetricDef {
  const char* name;
  MetricClass cls;
  double (*get)(const Evaluation&);
};

#define PLANNER_TIME(field)                                                             \
  {                                                                                     \
#field, MetricClass::time, [](const Evaluation& e) { return double(e.time.field); } \
  }
#define PLANNER_TIME_AS(field, cls)                                       \
  {                                                                       \
#field, cls, [](const Evaluation& e) { return double(e.time.field); } \
  }
#define PLANNER_MEM(field)                                                                  \
  {                                                                                         \
#field, MetricClass::amount, [](const Evaluation& e) { return double(e.memory.field); } \
  }
#define PLANNER_MEM_AS(field, cls)                                          \
  {                                                                         \
#field, cls, [](const Evaluation& e) { return double(e.memory.field); } \
  }
#define PLANNER_LAYOUT(field)                                                                        \
  {                                                                                                  \
    "layout_" #field, MetricClass::exact, [](const Evaluation& e) { return double(e.layout.field); } \
  }

const MetricDef kMetrics[] = {
    // Step time (StepTimeBreakdown): its terms, then the context reports read.
    PLANNER_TIME(compute_s),
    PLANNER_TIME(recompute_s),
    PLANNER_TIME(tp_comm_s),
    PLANNER_TIME(cp_comm_s),
    PLANNER_TIME(pp_p2p_s),
    PLANNER_TIME(pp_bubble_s),
    PLANNER_TIME(dp_comm_s),
    PLANNER_TIME(zero3_comm_s),
    PLANNER_TIME(ep_comm_s),
    PLANNER_TIME(contention_s),
    PLANNER_TIME(optimizer_s),
    PLANNER_TIME(step_s),
    PLANNER_TIME(dp_comm_total_s),
    PLANNER_TIME(zero3_comm_total_s),
    PLANNER_TIME(ep_comm_total_s),
    PLANNER_TIME(stage_time_per_micro_batch_s),
    PLANNER_TIME(layer_fwd_s),
    PLANNER_TIME(layer_bwd_s),
    PLANNER_TIME_AS(micro_batches, MetricClass::exact),
    PLANNER_TIME(bubble_fraction),
    PLANNER_TIME(tokens_per_s),
    PLANNER_TIME_AS(model_flops_per_step, MetricClass::amount),
    PLANNER_TIME_AS(hardware_flops_per_step, MetricClass::amount),
    PLANNER_TIME(mfu),
    PLANNER_TIME(hfu),
    // Memory per GPU (MemoryBreakdown).
    PLANNER_MEM(weights_bytes),
    PLANNER_MEM(gradients_bytes),
    PLANNER_MEM(optimizer_bytes),
    PLANNER_MEM(activations_bytes),
    PLANNER_MEM(logits_bytes),
    PLANNER_MEM(transient_bytes),
    PLANNER_MEM(reserve_bytes),
    PLANNER_MEM(total_bytes),
    PLANNER_MEM(capacity_bytes),
    PLANNER_MEM_AS(peak_stage, MetricClass::exact),
    PLANNER_MEM_AS(layers_on_peak_stage, MetricClass::exact),
    PLANNER_MEM_AS(micro_batches_in_flight, MetricClass::time),
    // Pipeline stage layout (balance_layers).
    PLANNER_LAYOUT(first),
    PLANNER_LAYOUT(last),
    PLANNER_LAYOUT(middle_hi),
    PLANNER_LAYOUT(middle_hi_count),
    // Feasibility: 1 or 0, and the bit set of Reason (evaluate.h).
    {"feasible", MetricClass::exact, [](const Evaluation& e) { return e.feasible() ? 1.0 : 0.0; }},
    {"reasons", MetricClass::exact, [](const Evaluation& e) { return double(e.reasons); }},
};

#undef PLANNER_TIME
#undef PLANNER_TIME_AS
#undef PLANNER_MEM
#undef PLANNER_MEM_AS
#undef PLANNER_LAYOUT

// Tolerances per class; see the header comment and docs/regress.md.
constexpr Tolerance kTimeTolerance{1e-6, 1e-12};
constexpr Tolerance kAmountTolerance{1e-9, 1.0};

bool within(double golden, double now, const Tolerance& t, bool exact) {
  if (std::isnan(golden) || std::isnan(now)) return std::isnan(golden) && std::isnan(now);
  if (exact) return golden == now;
  return std::abs(now - golden) <= std::max(t.atol, t.rtol * std::abs(golden));
}

}  // namespace

std::optional<double> MetricDiff::change_pct() const {
  if (!golden || !now || *golden == 0 || !std::isfinite(*golden) || !std::isfinite(*now)) return std::nullopt;
  return (*now - *golden) / std::abs(*golden) * 100.0;
}

std::string default_suite_path() { return data_dir() + "/tests/regress/suite.json"; }
std::string default_golden_path() { return data_dir() + "/tests/regress/golden.json"; }

RegressSuite suite_from_json(const json& j, const std::string& origin, const std::string& catalog_dir) {
  if (!j.is_object()) throw InputError(origin, "expected a JSON object with \"schema_version\" and \"cases\"");
  std::vector<std::string> problems;
  RegressSuite suite;
  FieldReader top(j, "", problems);
  const std::int64_t version = top.integer_in("schema_version", 1, 1'000'000, true, kRegressSchemaVersion);
  if (version != kRegressSchemaVersion)
    top.problem("schema_version", fmt::format("expected {}, got {}", kRegressSchemaVersion, version));
  top.allow("notes");
  const json* cases = top.get("cases", true, "a non-empty list of cases");
  top.reject_unknown();
  if (cases && (!cases->is_array() || cases->empty())) {
    top.problem("cases", fmt::format("expected a non-empty list of cases, got {}", describe(*cases)));
  } else if (cases) {
    Catalog catalog(catalog_dir);
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < cases->size(); ++i) {
      auto c = case_from_json((*cases)[i], i, catalog, problems);
      if (!c) continue;
      if (auto [it, fresh] = seen.emplace(c->name, i); !fresh) {
        problems.push_back(fmt::format("cases[{}] ({}).name: duplicate of cases[{}]", i, c->name, it->second));
        continue;
      }
      suite.cases.push_back(std::move(*c));
    }
  }
  throw_if_problems(origin, problems);
  return suite;
}

RegressSuite load_suite(const std::string& path, const std::string& catalog_dir) {
  return suite_from_json(read_json_file(path), path, catalog_dir);
}

const std::vector<std::string>& regress_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const MetricDef& m : kMetrics) out.emplace_back(m.name);
    return out;
  }();
  return names;
}

MetricClass metric_class(const std::string& metric) {
  for (const MetricDef& m : kMetrics)
    if (metric == m.name) return m.cls;
  // Metrics this build does not know (an older or newer golden file): compare
  // as time terms.
  return MetricClass::time;
}

Tolerance tolerance_for(const std::string& metric, const RegressOptions& opt) {
  Tolerance t;
  switch (metric_class(metric)) {
    case MetricClass::time:
      t = kTimeTolerance;
      break;
    case MetricClass::amount:
      t = kAmountTolerance;
      break;
    case MetricClass::exact:
      return Tolerance{0, 0};
  }
  if (opt.rtol_override) t.rtol = *opt.rtol_override;
  return t;
}

RegressResults predict(const RegressSuite& suite) {
  RegressResults out;
  out.cases.reserve(suite.cases.size());
  for (const RegressCase& c : suite.cases) {
    const Evaluation ev = evaluate(c.model, c.hardware, normalized(c.config), c.training);
    CaseMetrics cm;
    cm.name = c.name;
    cm.metrics.reserve(std::size(kMetrics));
    for (const MetricDef& m : kMetrics) cm.metrics.emplace_back(m.name, m.get(ev));
    out.cases.push_back(std::move(cm));
  }
  return out;
}

namespace {

// Why a golden value cannot be read back, or "". Predictions are finite (a
// non-finite one is never blessed: `regress --update` refuses it), so null is
// a hand edit; exact metrics are counts or bit sets (reasons), whole and >= 0.
std::string golden_value_problem(const std::string& metric, const json& v) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) return fmt::format("expected a number, got {}", describe(v));
  const double d = v.get<double>();
  if (metric_class(metric) == MetricClass::exact && !(d >= 0 && d == std::floor(d) && d < 9007199254740992.0))
    return fmt::format("expected a whole number >= 0 (a count or bit set), got {}", describe(v));
  return "";
}

}  // namespace

RegressResults golden_from_json(const json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin, "expected a JSON object with \"schema_version\" and \"cases\"");
  std::vector<std::string> problems;
  RegressResults out;
  FieldReader top(j, "", problems);
  const std::int64_t version = top.integer_in("schema_version", 1, 1'000'000, true, kRegressSchemaVersion);
  if (version != kRegressSchemaVersion)
    top.problem("schema_version", fmt::format("expected {}, got {}", kRegressSchemaVersion, version));
  const json* cases = top.get("cases", true, "an object of cases");
  top.reject_unknown();
  if (cases && !cases->is_object()) {
    top.problem("cases", fmt::format("expected an object of cases, got {}", describe(*cases)));
  } else if (cases) {
    for (auto it = cases->begin(); it != cases->end(); ++it) {
      if (!it->is_object()) {
        problems.push_back(fmt::format("cases.{}: expected an object of metrics, got {}", it.key(), describe(*it)));
        continue;
      }
      CaseMetrics cm;
      cm.name = it.key();
      for (auto m = it->begin(); m != it->end(); ++m)
        if (const std::string why = golden_value_problem(m.key(), *m); !why.empty())
          problems.push_back(fmt::format("cases.{}.{}: {}", it.key(), m.key(), why));
        else
          cm.metrics.emplace_back(m.key(), m->get<double>());
      out.cases.push_back(std::move(cm));
    }
  }
  throw_if_problems(origin, problems);
  return out;
}

RegressResults load_golden(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError(path, "cannot open file (create it with `planner regress --update`)");
  return golden_from_json(read_json_file(path), path);
}

std::string render_golden(const RegressResults& r) {
  nlohmann::ordered_json cases = nlohmann::ordered_json::object();
  for (const CaseMetrics& c : r.cases) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [name, value] : c.metrics) {
      if (std::isfinite(value))
        m[name] = value;
      else
        m[name] = nullptr;
    }
    cases[c.name] = std::move(m);
  }
  nlohmann::ordered_json j;
  j["schema_version"] = kRegressSchemaVersion;
  j["cases"] = std::move(cases);
  // nlohmann prints the shortest text that reads back to the same double, so
  // `--update` round-trips exactly.
  return j.dump(2) + "\n";
}

RegressReport compare(const RegressResults& golden, const RegressResults& now, const RegressOptions& opt) {
  RegressReport rep;
  std::map<std::string, const CaseMetrics*> by_name;
  for (const CaseMetrics& g : golden.cases) by_name.emplace(g.name, &g);
  std::set<std::string> in_suite;
  rep.cases = now.cases.size();
  for (const CaseMetrics& n : now.cases) {
    in_suite.insert(n.name);
    rep.metrics += n.metrics.size();
    const auto it = by_name.find(n.name);
    if (it == by_name.end()) {
      rep.missing_from_golden.push_back(n.name);
      continue;
    }
    std::map<std::string, double> g(it->second->metrics.begin(), it->second->metrics.end());
    for (const auto& [metric, value] : n.metrics) {
      const auto gm = g.find(metric);
      if (gm == g.end()) {
        rep.differences.push_back({n.name, metric, std::nullopt, value});
        continue;
      }
      if (!within(gm->second, value, tolerance_for(metric, opt), metric_class(metric) == MetricClass::exact))
        rep.differences.push_back({n.name, metric, gm->second, value});
      g.erase(gm);
    }
    for (const auto& [metric, value] : it->second->metrics)  // golden metrics this build no longer computes
      if (g.count(metric)) rep.differences.push_back({n.name, metric, value, std::nullopt});
  }
  for (const CaseMetrics& g : golden.cases)
    if (!in_suite.count(g.name)) rep.missing_from_suite.push_back(g.name);
  std::sort(rep.missing_from_suite.begin(), rep.missing_from_suite.end());
  return rep;
}

}  // namespace planner
