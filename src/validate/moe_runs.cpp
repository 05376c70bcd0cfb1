#include "validate/moe_runs.h"

#include "validate/bridge_recipes.h"
#include "validate/row_text.h"

#include <cmath>
#include <optional>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "planner/io/catalog.h"
#include "planner/model/model_math.h"
#include "planner/model/recompute_modules.h"
#include "planner/spec/names.h"
#include "planner/spec/input_error.h"

namespace planner::moe_runs {

using nlohmann::json;
using row_text::contains;
using row_text::lower;

namespace {

struct Skip {
  std::string message;
};

using row_text::field;
using row_text::text;

// An integral count: an integer, an integral float (the file writes vp/ep as
// 8.0) or a string of digits ("256"); null is unknown.
std::optional<std::int64_t> count(const json& row, const char* key) {
  const json* v = field(row, key);
  if (!v) return std::nullopt;
  double d = -1;
  if (v->is_number()) d = v->get<double>();
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    if (!s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos) d = std::stod(s);
  }
  if (!(d >= 0 && d <= double(std::int64_t(1) << 30) && d == std::floor(d)))
    throw Skip{fmt::format("{}: expected a whole number, got {}", key, v->dump())};
  return std::int64_t(d);
}

// An optional degree: null is unknown, and a stated one is at least 1 (0 is
// not "unset": the tables write null for that).
std::optional<std::int64_t> degree(const json& row, const char* key) {
  const auto v = count(row, key);
  if (v && *v < 1) throw Skip{fmt::format("{}: expected a positive whole number (null when not stated), got 0", key)};
  return v;
}

std::int64_t required(const json& row, const char* key, const char* what) {
  const auto v = count(row, key);
  if (!v || *v < 1) throw Skip{fmt::format("layout incomplete: no {} ({})", key, what)};
  return *v;
}

std::optional<double> positive(const json& row, const char* key) {
  const json* v = field(row, key);
  if (!v) return std::nullopt;
  if (!v->is_number() || !(v->get<double>() > 0) || !std::isfinite(v->get<double>()))
    throw Skip{fmt::format("{}: expected a positive number, got {}", key, v->dump())};
  return v->get<double>();
}

// BF16 -> bf16; FP8, MXFP8, FP8-MX and "FP8 mixed precision ..." -> fp8 (MXFP8 uses DType::fp8's peak).
DType precision(const json& row) {
  const std::string p = lower(text(row, "precision"));
  if (p.empty()) throw Skip{"precision: not stated"};
  const bool fp8 = contains(p, "fp8"), bf16 = contains(p, "bf16");
  if (fp8 && bf16) throw Skip{fmt::format("precision: two precisions in one row ('{}')", text(row, "precision"))};
  if (fp8) return DType::fp8;
  if (bf16) return DType::bf16;
  throw Skip{fmt::format("precision: expected BF16, FP8, MXFP8 or FP8-MX, got '{}'", text(row, "precision"))};
}

// The model file, adjusted where the row ran a variant: SimuMax's 4-layer
// truncations (model_variant "truncated to 4 layers (dense_layers=1 ...)")
// and DeepSeek-V3 with or without its MTP module.
ModelSpec model_of(const json& row, MeasuredRun& r) {
  const std::string name = lower(text(row, "model"));
  try {
    r.model = find_model(name);
  } catch (const InputError&) {
    throw Skip{fmt::format("model '{}': no model file of that name", text(row, "model"))};
  }
  ModelSpec& m = r.model;
  r.model_name = m.name;
  const std::string variant = lower(text(row, "model_variant"));
  std::smatch match;
  static const std::regex truncated(R"(truncated to ([0-9]+) layers)"), dense(R"(dense_layers=([0-9]+))");
  if (std::regex_search(variant, match, truncated)) {
    m.num_layers = std::stoll(match[1].str());
    if (std::regex_search(variant, match, dense)) m.moe.first_dense_layers = std::stoll(match[1].str());
    m.expected_params = m.expected_active_params = 0;
    m.mtp_layers = 0;
    if (count_moe_layers(m) == 0) throw Skip{"model_variant: the truncated model has no MoE layer"};
    r.model_name = fmt::format("{} ({} layers)", m.name, m.num_layers);
    r.assumptions.push_back(fmt::format("{} truncated to {} layers, {} dense, no MTP (model_variant)", m.name,
                                        m.num_layers, m.moe.first_dense_layers));
    return m;
  }
  if (m.mtp_layers > 0) {
    const std::string label = lower(text(row, "model_label_in_source"));
    double implied = 0;  // GFLOP/token; 0 = not derived
    if (row.contains("derived") && row["derived"].is_object())
      implied = positive(row["derived"], "implied_model_GFLOP_per_token").value_or(0.0);
    ModelSpec without = m;
    without.mtp_layers = 0;
    const auto seq = count(row, "seq_len").value_or(m.default_seq_len);
    if (contains(label, "w/o mtp")) {
      m = without;
      r.assumptions.push_back("no MTP module (the source's label says w/o MTP)");
    } else if (contains(label, "w/ mtp")) {
      r.assumptions.push_back(fmt::format("{} MTP module(s) (the source's label says w/ MTP)", m.mtp_layers));
    } else if (implied > 0 && seq > 0) {
      // The row's TFLOP/s over its tokens/s is Megatron's FLOPs per token; the
      // MTP module adds ~4% (moe.md §1.3), so the nearer count tells which ran.
      const double with_g = flops_per_token(m, seq, Recompute::none).model / 1e9;
      const double without_g = flops_per_token(without, seq, Recompute::none).model / 1e9;
      const bool mtp = std::abs(implied - with_g) < std::abs(implied - without_g);
      if (!mtp) m = without;
      r.assumptions.push_back(fmt::format("{} MTP (its TFLOP/s / tokens/s = {:.1f} GFLOP/token; {:.1f} with, {:.1f} without)",
                                          mtp ? "with" : "without", implied, with_g, without_g));
    } else {
      r.assumptions.push_back(fmt::format("{} MTP module(s), as the model file (the row does not say)", m.mtp_layers));
    }
  }
  return m;
}

// What the source's own launcher set that its table does not say.
void apply_source_launcher(MeasuredRun& r) {
  if (!contains(lower(r.source), "simumax")) return;
  TrainingSpec& ts = r.training;
  // SimuMax's measured rows ran its own Megatron-LM launcher
  // (MooreThreads/SimuMax simu_tools/megatron_scripts/scripts/run_pretrain_deepseekv2.sh:
  // --bf16 --accumulate-allreduce-grads-in-fp32, distributed optimizer, and
  // neither --overlap-grad-reduce nor --overlap-param-gather, which
  // Megatron-LM leaves off by default): fp32 gradients reduced, and the
  // weights gathered, after the backward pass.
  ts.grad_bytes_per_param = 4;
  ts.overlap_grad_reduce = false;
  r.assumptions.push_back(
      "SimuMax's Megatron-LM launcher: fp32 gradients, reduced and gathered after the backward pass "
      "(run_pretrain_deepseekv2.sh: --accumulate-allreduce-grads-in-fp32, no --overlap-grad-reduce)");
}

MeasuredRun map_row(const json& row) {
  MeasuredRun r;
  r.id = text(row, "id");
  r.source = text(row, "source");
  r.gpu_type = text(row, "hardware");
  model_of(row, r);
  const std::string profile = profile_for(r.gpu_type);
  if (profile.empty()) throw Skip{fmt::format("hardware '{}': no profile for it", r.gpu_type)};
  r.hardware = profile;

  TrainingSpec& ts = r.training;
  SearchPins& p = r.pins;
  ts.num_gpus = required(row, "gpus", "GPU count");
  p.tp = required(row, "tp", "tensor parallel");
  p.pp = required(row, "pp", "pipeline parallel");
  p.ep = required(row, "ep", "expert parallel");
  ts.seq_len = required(row, "seq_len", "sequence length");
  ts.global_batch_sequences = required(row, "gbs", "global batch");
  ts.dtype = precision(row);
  const std::string kernels = lower(text(row, "kernels") + " " + text(row, "features"));
  if (contains(kernels, "deepep") || contains(kernels, "hybridep")) {
    // HybridEP (DeepEP's hybrid-ep kernels, Megatron's flex dispatcher) is
    // priced as DeepEP: one fused NVLink + RDMA kernel (bridge_recipes.cpp).
    ts.a2a = A2aBackend::deepep;
    r.assumptions.push_back("DeepEP/HybridEP dispatch/combine (the row's kernels/features)");
  }
  if (contains(kernels, "ep overlap") || contains(kernels, "a2a overlap")) {
    ts.overlap_a2a = true;
    r.assumptions.push_back("all-to-all overlapped with compute (the row's features)");
  }
  apply_source_launcher(r);
  const std::string label = lower(text(row, "model_label_in_source"));
  if (contains(label, "tokendrop")) {
    ts.capacity_factor = 1.0;  // Megatron-Bridge's token-drop recipes: --moe-expert-capacity-factor 1.0
    r.assumptions.push_back("capacity factor 1.0 (the source's label says tokendrop)");
  }

  if (const auto cp = degree(row, "cp")) {
    p.cp = *cp;
  } else {
    p.cp = 1;
    r.assumptions.push_back("cp = 1 (not stated)");
  }
  const std::int64_t attention_grid = *p.tp * *p.pp * *p.cp;
  if (ts.num_gpus % attention_grid != 0)
    throw Skip{fmt::format("layout does not multiply out: {} GPUs over tp {} x pp {} x cp {}", ts.num_gpus, *p.tp,
                           *p.pp, *p.cp)};
  p.dp = ts.num_gpus / attention_grid;
  if (const auto etp = degree(row, "etp")) {
    p.etp = *etp;
  } else if (bridge_recipes::is_bridge_row(row)) {
    // Every Megatron-Bridge MoE performance recipe sets expert TP 1 (v0.1.0rc4
    // scripts/performance/configs/{deepseek,qwen3} yaml `etp: 1`; v0.4.0
    // *_workload_base_configs.py BASE_* expert_tensor_parallel_size=1).
    p.etp = 1;
    r.assumptions.push_back("etp = 1 (not stated; Megatron-Bridge's performance recipes set expert TP 1)");
  } else {
    p.etp = *p.tp;  // Megatron-Core: expert_tensor_parallel_size defaults to tensor_model_parallel_size
    r.assumptions.push_back(fmt::format("etp = tp = {} (not stated; Megatron-Core's default)", *p.tp));
  }
  p.micro_batch_size = required(row, "mbs", "micro-batch");
  // NeMo AutoModel's tables state a local batch (LBS, "size of one step per
  // GPU") and GA, the local batches before the optimizer step: its benchmark
  // recipe (recipes/llm/benchmark.py run_benchmark) runs GA forward-backward
  // steps, with PP each a pipeline schedule run of LBS/MBS micro-batches (its
  // own fill, drain and FSDP gradient reduce-scatter), then one optimizer
  // step. Other rows' ga counts micro-batches of one pipeline pass.
  if (const auto local = degree(row, "local_batch")) {
    const std::int64_t ga = required(row, "ga", "gradient accumulation over local batches");
    if (*local % *p.micro_batch_size != 0)
      throw Skip{fmt::format("local_batch: expected a multiple of mbs {}, got {}", *p.micro_batch_size, *local)};
    if (ga * *local * p.dp.value_or(0) != ts.global_batch_sequences)
      throw Skip{fmt::format("ga x local_batch x dp = {} x {} x {} does not give the global batch {}", ga, *local,
                             p.dp.value_or(0), ts.global_batch_sequences)};
    if (*p.pp > 1 && ga > 1) {
      r.pipeline_passes = ga;
      r.assumptions.push_back(
          fmt::format("{} pipeline passes of {} micro-batches per step, one optimizer step (the "
                      "row's GA over local batches of {})",
                      ga, *local / *p.micro_batch_size, *local));
    }
  }
  if (const auto vp = degree(row, "vp")) {
    p.virtual_stages = *vp;
  } else {
    p.virtual_stages = 1;
    if (*p.pp > 1) r.assumptions.push_back("no interleaving (vp not stated)");
  }
  p.sequence_parallel = *p.tp > 1;  // Megatron-Bridge recipes turn SP on with TP
  // Recomputation: the row's own "recompute" (none, full, selective or
  // Megatron module names); else the modules of the Megatron-Bridge recipe
  // that produced it, where known (bridge_recipes.h); else none.
  if (const std::string stated = lower(text(row, "recompute")); !stated.empty()) {
    if (const auto rc = parse_name<Recompute>(stated)) {
      p.recompute = *rc;
    } else {
      try {
        ts.recompute_modules = parse_recompute_modules(stated, r.model, "recompute");
      } catch (const InputError& e) {
        throw Skip{e.message()};
      }
      p.recompute = Recompute::selective;
    }
    r.assumptions.push_back(fmt::format("recompute {} (the row's)", stated));
  } else if (const auto recipe = bridge_recipes::recipe_recompute(row)) {
    p.recompute = Recompute::selective;
    ts.recompute_modules = recipe->modules;
    r.assumptions.push_back(fmt::format("recompute modules [{}] (not stated; the recipe's: {})",
                                        recipe->modules ? recompute_modules_label(recipe->modules) : "",
                                        recipe->citation));
  } else {
    p.recompute = Recompute::none;
    r.assumptions.push_back("no activation recomputation (not stated; no recipe known for the row)");
  }
  p.recompute_modules = true;  // as mapped: a search for the row's unknown knobs keeps them
  p.overlap_a2a = ts.overlap_a2a;
  const auto fsdp = count(row, "fsdp");
  if (fsdp && *fsdp > 0) {
    // FSDP shards within the data-parallel GPUs: NeMo AutoModel's device mesh
    // is (pp, dp_replicate, dp_shard, cp, tp), and FSDP2 shards each block over
    // its flattened dp_shard_cp dimension (dp_shard x cp, replicated over
    // dp_replicate): a divisor of dp x cp.
    if ((*p.dp * *p.cp) % *fsdp != 0)
      throw Skip{fmt::format("fsdp: expected a divisor of the data-parallel GPUs dp x cp = {} x {}, got {}", *p.dp,
                             *p.cp, *fsdp)};
    p.zero_stage = 3;
    r.assumptions.push_back(fmt::format("ZeRO-3 (FSDP over {} GPUs, as the row's fsdp)", *fsdp));
  } else {
    p.zero_stage = 1;
    r.assumptions.push_back("ZeRO-1 (Megatron's distributed optimizer, the recipes' default; fsdp 0 or not stated)");
  }

  bridge_recipes::apply(row, r);
  // Every row ran Megatron-Core (Bridge, NeMo, AutoModel's DeepEP, SimuMax's
  // Megatron-LM): its DeepEP and HybridEP dispatch is bf16 (core_v0.19.0
  // moe/fused_a2a.py), whatever the GEMM precision.
  if (ts.a2a == A2aBackend::deepep && ts.dtype == DType::fp8) {
    ts.a2a_fp8_dispatch = false;
    r.assumptions.push_back("bf16 dispatch (Megatron-Core's DeepEP/HybridEP path does not dispatch fp8)");
  }

  r.step_time_s = positive(row, "step_time_s");
  r.tokens_per_sec_per_gpu = positive(row, "tokens_per_sec_per_gpu");
  r.tflops_per_gpu = positive(row, "model_tflops_per_gpu");
  if (r.tflops_per_gpu) {
    r.convention = FlopConvention::megatron;
    r.convention_text = "Megatron-LM num_floating_point_operations (NVIDIA's Model TFLOP/s/GPU, moe.md §1.3)";
  }
  if (!r.step_time_s && !r.tokens_per_sec_per_gpu && !r.tflops_per_gpu)
    throw Skip{"nothing measured: step_time_s, tokens_per_sec_per_gpu and model_tflops_per_gpu are all missing"};
  return r;
}

}  // namespace

bool is_moe_row(const json& row) {
  return row.is_object() && row.contains("model") && row.contains("hardware") && !row.contains("num_layers") &&
         !row.contains("gpu_type");
}

std::string profile_for(const std::string& hardware) {
  // Hardware strings of moe_runs.json -> profile names (the common names of
  // issue 15; profiles the tree lacks are skipped by validate, naming them).
  struct Map {
    const char* text;  // lower-case prefix
    const char* profile;
  };
  static const Map maps[] = {{"gb300", "gb300-nvl72"}, {"gb200", "gb200-nvl72"}, {"b300", "dgx-b300"},
                             {"b200", "dgx-b200"},     {"h800", "hgx-h800"},    {"h100", "dgx-h100"},
                             {"h200", "dgx-h200"},     {"tpu v5p", "tpu-v5p"},  {"tpu v6e", "tpu-v6e"}};
  const std::string h = lower(hardware);
  for (const Map& m : maps)
    if (h.rfind(m.text, 0) == 0) return m.profile;
  return "";
}

RunRow map_moe_row(const json& row, std::size_t index) {
  RunRow out;
  out.id = text(row, "id");
  if (out.id.empty()) out.id = fmt::format("#{}", index);
  out.source = text(row, "source");
  out.model_name = text(row, "model");
  try {
    out.run = map_row(row);
    out.run->id = out.id;
    out.model_name = out.run->model_name;
  } catch (const Skip& s) {
    out.skip_reason = s.message;
  }
  return out;
}

}  // namespace planner::moe_runs
