#include "planner/views/report.h"

#include "views/model_moe_view.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/model/collectives.h"
#include "planner/model/labels.h"
#include "planner/model/model_math.h"

namespace planner {

using nlohmann::json;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Fixed precision everywhere, so outputs are stable across platforms.
double round_to(double x, int digits) {
  const double s = std::pow(10.0, digits);
  return std::round(x * s) / s;
}

std::string context_line(const RunContext& ctx) {
  const auto& t = ctx.training;
  return fmt::format("model {} | hardware {} | {} GPUs | seq {} | global batch {} seqs ({} tokens) | {} | attention {}",
                     ctx.model.name, ctx.hardware.name, t.num_gpus, t.seq_len, t.global_batch_sequences,
                     t.global_batch_sequences * t.seq_len, to_string(t.dtype), to_string(t.attention));
}

json memory_json(const MemoryBreakdown& m) {
  return {{"weights_gib", round_to(m.weights_bytes / kGiB, 3)},
          {"gradients_gib", round_to(m.gradients_bytes / kGiB, 3)},
          {"optimizer_gib", round_to(m.optimizer_bytes / kGiB, 3)},
          {"activations_gib", round_to(m.activations_bytes / kGiB, 3)},
          {"logits_gib", round_to(m.logits_bytes / kGiB, 3)},
          {"transient_gib", round_to(m.transient_bytes / kGiB, 3)},
          {"reserve_gib", round_to(m.reserve_bytes / kGiB, 3)},
          {"total_gib", round_to(m.total_bytes / kGiB, 3)},
          {"capacity_gib", round_to(m.capacity_bytes / kGiB, 3)},
          {"peak_stage", m.peak_stage},
          {"layers_on_peak_stage", m.layers_on_peak_stage},
          {"micro_batches_in_flight", round_to(m.micro_batches_in_flight, 3)}};
}

json time_json_dense(const StepTimeBreakdown& t) {
  return {{"compute_s", round_to(t.compute_s, 6)},
          {"recompute_s", round_to(t.recompute_s, 6)},
          {"tp_comm_s", round_to(t.tp_comm_s, 6)},
          {"cp_comm_s", round_to(t.cp_comm_s, 6)},
          {"pp_p2p_s", round_to(t.pp_p2p_s, 6)},
          {"pp_bubble_s", round_to(t.pp_bubble_s, 6)},
          {"dp_comm_s", round_to(t.dp_comm_s, 6)},
          {"zero3_comm_s", round_to(t.zero3_comm_s, 6)},
          {"contention_s", round_to(t.contention_s, 6)},
          {"straggler_s", round_to(t.straggler_s, 6)},
          {"optimizer_s", round_to(t.optimizer_s, 6)},
          {"step_s", round_to(t.step_s, 6)},
          {"dp_comm_total_s", round_to(t.dp_comm_total_s, 6)},
          {"dp_tail_stage", t.dp_tail_stage},
          {"zero3_comm_total_s", round_to(t.zero3_comm_total_s, 6)},
          {"layer_fwd_s", round_to(t.layer_fwd_s, 7)},
          {"layer_bwd_s", round_to(t.layer_bwd_s, 7)},
          {"micro_batches", t.micro_batches},
          {"bubble_fraction", round_to(t.bubble_fraction, 5)},
          {"tokens_per_s", round_to(t.tokens_per_s, 1)},
          {"mfu", round_to(t.mfu, 5)},
          {"hfu", round_to(t.hfu, 5)},
          {"tflops_per_gpu", round_to(t.tflops_per_gpu, 2)},
          {"flop_convention", "megatron"}};
}

json time_json(const StepTimeBreakdown& t) {
  json j = time_json_dense(t);
  if (t.ep_comm_total_s > 0) {  // MoE only: dense outputs keep their keys
    j["ep_comm_s"] = round_to(t.ep_comm_s, 6);
    j["ep_comm_total_s"] = round_to(t.ep_comm_total_s, 6);
  }
  return j;
}

std::string layout_text(const StageLayout& l) {
  if (l.stages == 1) return fmt::format("1 stage, {} layers", l.first);
  if (l.stages == 2) return fmt::format("2 stages: first {} layers, last {}", l.first, l.last);
  const std::int64_t lo = l.middle_hi - 1;
  std::string mid =
      l.middle_hi_count == l.stages - 2 || lo < 1
          ? fmt::format("{}", l.middle_hi)
          : fmt::format("{}x{} + {}x{}", l.middle_hi_count, l.middle_hi, l.stages - 2 - l.middle_hi_count, lo);
  return fmt::format("{} stages: first {} layers, middle {}, last {}", l.stages, l.first, mid, l.last);
}

json config_json_dense(const ParallelConfig& c) {
  return {{"tp", c.tp},
          {"cp", c.cp},
          {"pp", c.pp},
          {"dp", c.dp},
          {"micro_batch_size", c.micro_batch_size},
          {"virtual_stages", c.virtual_stages},
          {"recompute", std::string(to_string(c.recompute))},
          {"zero_stage", c.zero_stage},
          {"reshard_after_forward", c.reshard_after_forward},
          {"sequence_parallel", c.sequence_parallel},
          {"schedule", std::string(to_string(c.schedule))}};
}

}  // namespace

json to_json(const ParallelConfig& c) {
  json j = config_json_dense(c);
  if (c.ep > 1 || c.etp > 1) {  // expert parallelism (MoE only): dense outputs keep their keys
    j["ep"] = c.ep;
    j["etp"] = c.etp;
  }
  return j;
}


json to_json(const Evaluation& ev) {
  json j;
  j["config"] = to_json(ev.config);
  j["feasible"] = ev.feasible();
  json reasons = json::array();
  for (Reason r : ev.reason_list()) reasons.push_back(describe(r));
  j["reasons"] = reasons;
  if (ev.layout.stages > 0 && ev.memory.capacity_bytes > 0) {
    j["layout"] = {{"first", ev.layout.first},
                   {"last", ev.layout.last},
                   {"middle_hi", ev.layout.middle_hi},
                   {"middle_hi_count", ev.layout.middle_hi_count}};
    j["memory"] = memory_json(ev.memory);
    j["time"] = time_json(ev.time);
    j["dominant_overhead"] = dominant_overhead(ev.time);
  }
  return j;
}

void add_report_header(json& into, const RunContext& ctx) {
  into["schema_version"] = kReportSchemaVersion;
  into["model"] = ctx.model.name;
  into["hardware"] = ctx.hardware.name;
  into["gpus"] = ctx.training.num_gpus;
}

namespace {

std::string evaluation_json(const Evaluation& ev, const RunContext& ctx, const Explain* explain) {
  json j = to_json(ev);
  add_report_header(j, ctx);
  j["seq_len"] = ctx.training.seq_len;
  j["global_batch_sequences"] = ctx.training.global_batch_sequences;
  j["dtype"] = std::string(to_string(ctx.training.dtype));
  if (explain) {
    json steps = json::array();
    for (const auto& st : explain->steps()) {
      json inputs = json::object();
      for (const auto& [k, v] : st.inputs) inputs[k] = v;
      steps.push_back({{"name", st.name},
                       {"formula", st.formula},
                       {"source", st.citation},
                       {"inputs", inputs},
                       {"output", st.output},
                       {"unit", st.unit}});
    }
    j["explain"] = steps;
  }
  return j.dump(2) + "\n";
}

std::string evaluation_csv(const Evaluation& ev, bool priced) {
  std::string out = "section,item,value\n";
  // Keep each JSON value alive while iterating its items.
  const json config = to_json(ev.config);
  for (const auto& [k, v] : config.items()) out += fmt::format("config,{},{}\n", k, v.dump());
  if (priced) {
    const json memory = memory_json(ev.memory), time = time_json(ev.time);
    for (const auto& [k, v] : memory.items()) out += fmt::format("memory,{},{}\n", k, v.dump());
    for (const auto& [k, v] : time.items()) out += fmt::format("time,{},{}\n", k, v.dump());
  }
  out += fmt::format("result,feasible,{}\n", ev.feasible() ? "true" : "false");
  return out;
}

std::string memory_text(const MemoryBreakdown& m) {
  std::string out = fmt::format("memory per GPU (stage {}, {} layers, {:.2f} micro-batches in flight)\n", m.peak_stage,
                                m.layers_on_peak_stage, m.micro_batches_in_flight);
  auto row = [&](const char* name, double bytes) { out += fmt::format("  {:<22}{:>10.2f} GiB\n", name, bytes / kGiB); };
  row("weights", m.weights_bytes);
  row("gradients", m.gradients_bytes);
  row("optimizer state", m.optimizer_bytes);
  row("activations", m.activations_bytes);
  row("logits (last stage)", m.logits_bytes);
  row("transient", m.transient_bytes);
  row("reserve", m.reserve_bytes);
  out += fmt::format("  {:<22}{:>10.2f} GiB of {:.2f} GiB\n\n", "total", m.total_bytes / kGiB, m.capacity_bytes / kGiB);
  return out;
}

std::string step_time_text(const StepTimeBreakdown& t, const RunContext& ctx) {
  std::string out = fmt::format("step time ({} micro-batches; heaviest stage {:.4f} s per micro-batch)\n",
                                t.micro_batches, t.stage_time_per_micro_batch_s);
  auto row = [&](const char* name, double s) {
    out += fmt::format("  {:<26}{:>10.4f} s {:>6.1f}%\n", name, s, t.step_s > 0 ? 100.0 * s / t.step_s : 0.0);
  };
  row("compute", t.compute_s);
  row("recompute", t.recompute_s);
  row("overlap contention", t.contention_s);
  row("TP comm (exposed)", t.tp_comm_s);
  row("CP comm (exposed)", t.cp_comm_s);
  row("PP send/recv", t.pp_p2p_s);
  row("PP bubble", t.pp_bubble_s);
  row("DP comm (exposed)", t.dp_comm_s);
  row("ZeRO-2/3 comm (exposed)", t.zero3_comm_s);
  if (t.ep_comm_total_s > 0) row("EP all-to-all (exposed)", t.ep_comm_s);
  row("optimizer", t.optimizer_s);
  out += fmt::format("  {:<26}{:>10.4f} s\n", "step", t.step_s);
  out += fmt::format(
      "  DP comm before overlap {:.4f} s; ZeRO-2/3 comm before overlap {:.4f} s; DP and optimizer "
      "tail of stage {}\n",
      t.dp_comm_total_s, t.zero3_comm_total_s, t.dp_tail_stage);
  if (t.ep_comm_total_s > 0) out += fmt::format("  EP all-to-all before overlap {:.4f} s\n", t.ep_comm_total_s);
  out += fmt::format("  one layer, one micro-batch: forward {:.3f} ms, backward {:.3f} ms (incl. recompute)\n",
                     1e3 * t.layer_fwd_s, 1e3 * t.layer_bwd_s);
  if (t.straggler_s > 0)
    out += fmt::format("  compute includes {:.4f} s of waiting for the slowest of {} GPUs\n", t.straggler_s,
                       ctx.training.num_gpus);
  out +=
      fmt::format("\nthroughput {:.0f} tokens/s ({:.1f} per GPU) | {:.0f} TFLOP/s per GPU | MFU {:.1f}% | HFU {:.1f}% "
                  "| dominant overhead: {}\n",
                  t.tokens_per_s, t.tokens_per_s / double(ctx.training.num_gpus), t.tflops_per_gpu, 100.0 * t.mfu,
                  100.0 * t.hfu, dominant_overhead(t));
  out += "  (model FLOPs as Megatron-LM counts them: causal attention, logits included; HFU: FLOPs executed)\n";
  return out;
}

// "fits: yes", or "fits: no" with every reason.
std::string fits_text(const Evaluation& ev) {
  if (ev.feasible()) return "fits: yes\n";
  std::string out = "fits: no\n";
  for (Reason r : ev.reason_list()) {
    if (r == Reason::out_of_memory)
      out += fmt::format("  - {}: needs {:.2f} GiB, has {:.2f} GiB\n", describe(r), ev.memory.total_bytes / kGiB,
                         ev.memory.capacity_bytes / kGiB);
    else
      out += fmt::format("  - {}\n", describe(r));
  }
  return out;
}

}  // namespace

std::string render_evaluation(const Evaluation& ev, const RunContext& ctx, Format f, const Explain* explain) {
  if (f == Format::json) return evaluation_json(ev, ctx, explain);
  const bool priced = ev.memory.capacity_bytes > 0;
  if (f == Format::csv) return evaluation_csv(ev, priced);
  std::string out = context_line(ctx) + "\n";
  out += fmt::format("config: {} schedule={}\n", ev.config, to_string(ev.config.schedule));
  if (priced) {
    out += fmt::format("layout: {}\n\n", layout_text(ev.layout));
    out += memory_text(ev.memory);
    out += step_time_text(ev.time, ctx);
  }
  out += fits_text(ev);
  if (explain) out += render_explain(*explain);
  return out;
}

json to_json(const SearchResult& r, const RunContext& ctx) {
  json j;
  add_report_header(j, ctx);
  j["seq_len"] = ctx.training.seq_len;
  j["global_batch_sequences"] = ctx.training.global_batch_sequences;
  j["dtype"] = std::string(to_string(ctx.training.dtype));
  j["considered"] = r.considered;
  j["feasible"] = r.feasible;
  j["rejected"] = r.rejected;
  json rej = json::object();
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if (r.rejections[i]) rej[describe(Reason(i))] = r.rejections[i];
  j["rejections"] = rej;
  json top = json::array();
  for (const auto& ev : r.top) top.push_back(to_json(ev));
  j["results"] = top;
  return j;
}

std::string render_search(const SearchResult& r, const RunContext& ctx, Format f) {
  if (f == Format::json) return to_json(r, ctx).dump(2) + "\n";
  if (f == Format::csv) {
    std::string out =
        "rank,tp,cp,pp,dp,mbs,micro_batches,vpp,recompute,zero,sp,gib_per_gpu,step_s,tokens_per_s,mfu,dominant_"
        "overhead\n";
    int rank = 1;
    for (const auto& ev : r.top) {
      const auto& c = ev.config;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.2f},{:.4f},{:.0f},{:.4f},{}\n", rank++, c.tp, c.cp, c.pp,
                         c.dp, c.micro_batch_size, ev.time.micro_batches, c.virtual_stages, to_string(c.recompute),
                         zero_label(c), c.sequence_parallel ? 1 : 0, ev.memory.total_bytes / kGiB, ev.time.step_s,
                         ev.time.tokens_per_s, ev.time.mfu, dominant_overhead(ev.time));
    }
    return out;
  }
  std::string out = context_line(ctx) + "\n\n";
  // Expert parallelism (MoE) as a last column, only where a result uses it.
  const bool ep_column =
      std::any_of(r.top.begin(), r.top.end(), [](const Evaluation& ev) { return ev.config.ep > 1 || ev.config.etp > 1; });
  if (r.top.empty()) {
    out += "no feasible layout\n";
  } else {
    out +=
        fmt::format("{:>4} {:>3} {:>3} {:>3} {:>5} {:>4} {:>5} {:>4} {:<9} {:>4} {:>3} {:>8} {:>9} {:>11} {:>6}  {}\n",
                    "rank", "TP", "CP", "PP", "DP", "mbs", "m", "vpp", "recompute", "ZeRO", "SP", "GiB/GPU", "step s",
                    "tokens/s", "MFU", "dominant overhead");
    if (ep_column) out.insert(out.size() - 1, "  | EP/ETP");
    int rank = 1;
    for (const auto& ev : r.top) {
      const auto& c = ev.config;
      out += fmt::format(
          "{:>4} {:>3} {:>3} {:>3} {:>5} {:>4} {:>5} {:>4} {:<9} {:>4} {:>3} {:>8.2f} {:>9.3f} {:>11.0f} {:>5.1f}%  "
          "{}\n",
          rank++, c.tp, c.cp, c.pp, c.dp, c.micro_batch_size, ev.time.micro_batches, c.virtual_stages,
          to_string(c.recompute), zero_label(c), c.sequence_parallel ? "on" : "off", ev.memory.total_bytes / kGiB,
          ev.time.step_s, ev.time.tokens_per_s, 100.0 * ev.time.mfu, dominant_overhead(ev.time));
      if (ep_column) out.insert(out.size() - 1, fmt::format("  | {}/{}", c.ep, c.etp));
    }
  }
  if (std::any_of(r.top.begin(), r.top.end(), [](const Evaluation& ev) { return zero_label(ev.config) == "3nr"; }))
    out += "ZeRO 3nr: ZeRO-3 keeping the gathered weights from forward to backward (--reshard-after-forward false)\n";
  out +=
      fmt::format("\n{} configurations considered, {} feasible, {} rejected\n", r.considered, r.feasible, r.rejected);
  std::vector<std::pair<std::int64_t, std::size_t>> reasons;
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if (r.rejections[i]) reasons.emplace_back(r.rejections[i], i);
  std::sort(reasons.begin(), reasons.end(),
            [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (!reasons.empty()) out += "top rejection reasons:\n";
  for (std::size_t i = 0; i < reasons.size() && i < 5; ++i)
    out += fmt::format("  {:>10}  {}\n", reasons[i].first, describe(Reason(reasons[i].second)));
  return out;
}

std::string render_explain(const Explain& ex) {
  std::string out = "\nexplain (each formula: inputs -> output)\n";
  for (const auto& s : ex.steps()) {
    out += fmt::format("* {}\n    formula: {}\n    source:  {}\n", s.name, s.formula, s.citation);
    std::string in;
    for (const auto& [k, v] : s.inputs) in += fmt::format("{}{}={:.6g}", in.empty() ? "" : ", ", k, v);
    out += fmt::format("    inputs:  {}\n    output:  {:.6g} {}\n", in, s.output, s.unit);
  }
  out += "note: GEMM efficiency, element-wise traffic and overlap windows are approximations (docs/cost_model.md).\n";
  return out;
}

std::string render_model_list(const std::vector<ModelSpec>& models, Format f) {
  if (f == Format::json) {
    json j = json::array();
    for (const auto& m : models)
      j.push_back({{"name", m.name}, {"aliases", m.aliases}, {"params", count_params(m).total}});
    return json{{"schema_version", kReportSchemaVersion}, {"models", j}}.dump(2) + "\n";
  }
  std::string out = fmt::format("{:<22} {:<26} {:>18}  {}\n", "name", "aliases", "parameters", "description");
  for (const auto& m : models) {
    std::string aliases;
    for (const auto& a : m.aliases) aliases += (aliases.empty() ? "" : ",") + a;
    out += fmt::format("{:<22} {:<26} {:>18}  {}\n", m.name, aliases, count_params(m).total, m.display_name);
  }
  return out;
}

std::string render_hardware_list(const std::vector<HardwareProfile>& hw, Format f) {
  if (f == Format::json) {
    json j = json::array();
    for (const auto& h : hw) j.push_back({{"name", h.name}, {"aliases", h.aliases}});
    return json{{"schema_version", kReportSchemaVersion}, {"hardware", j}}.dump(2) + "\n";
  }
  std::string out = fmt::format("{:<16} {:<24} {}\n", "name", "aliases", "description");
  for (const auto& h : hw) {
    std::string aliases;
    for (const auto& a : h.aliases) aliases += (aliases.empty() ? "" : ",") + a;
    out += fmt::format("{:<16} {:<24} {}\n", h.name, aliases, h.display_name);
  }
  return out;
}

std::string render_model(const ModelSpec& model, Format f) {
  const ParamCounts p = count_params(model);
  if (f == Format::json) {
    json j = to_json(model);
    j["derived"] = {{"params_total", p.total}, {"params_per_layer", p.per_layer}, {"params_matmul", p.matmul}};
    views::add_moe_derived(model, p, j["derived"]);
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format("{} ({})\n", model.display_name, model.name);
  if (!model.source.empty()) out += fmt::format("  source: {}\n", model.source);
  out += fmt::format("  layers {}  hidden {}  FFN {} ({})  heads {}  KV heads {}  head dim {}\n", model.num_layers,
                     model.hidden_size, model.ffn_hidden_size, to_string(model.ffn_kind), model.num_heads,
                     model.num_kv_heads, model.head_dim);
  out += fmt::format("  vocab {}  embeddings {}  norm {}  bias {}  dropout {}  positions {}\n", model.vocab_size,
                     model.tied_embeddings ? "tied" : "untied", to_string(model.norm), model.bias ? "yes" : "no",
                     model.dropout ? "yes" : "no", to_string(model.position));
  out += fmt::format("  default sequence {}  default global batch {} tokens\n", model.default_seq_len,
                     model.default_global_batch_tokens);
  out += fmt::format("  parameters {} ({} {}, embedding {}, output {}; matmul N = {})\n", p.total,
                     model.is_moe() ? "mean per layer" : "per layer", p.per_layer, p.embedding, p.output, p.matmul);
  if (model.expected_params)
    out += fmt::format("  published count {} ({})\n", model.expected_params,
                       model.expected_params == p.total ? "matches" : "MISMATCH");
  out += views::moe_model_lines(model, p);
  return out;
}

std::string render_hardware(const HardwareProfile& h, Format f) {
  if (f == Format::json) return to_json(h).dump(2) + "\n";
  std::string out = fmt::format("{} ({})\n", h.display_name, h.name);
  out += fmt::format("  chip {}: bf16 {:.1f} TFLOP/s", h.chip_name, h.peak_flops_per_s[0] / 1e12);
  if (h.peak_flops_per_s[1] > 0) out += fmt::format(", fp8 {:.1f} TFLOP/s", h.peak_flops_per_s[1] / 1e12);
  out += fmt::format("; HBM {:.1f} GiB at {:.0f} GB/s; reserve {:.1f} GiB\n", h.hbm_capacity_bytes / kGiB,
                     h.hbm_bandwidth_bytes_per_s / 1e9, h.memory_reserve_bytes / kGiB);
  const auto& e = h.efficiency;
  out += fmt::format("  efficiency: GEMM max bf16 {:.2f}", e.gemm_max[0]);
  if (e.gemm_max[1] > 0) out += fmt::format(" fp8 {:.2f}", e.gemm_max[1]);
  out += fmt::format(", GEMM half-efficiency size {:.3g} FLOP, flash attention {:.2f}", e.gemm_half_flops,
                     e.attention_max[0]);
  if (e.attention_half_tokens > 0)
    out += fmt::format(" (half of it at {:.0f} key/value tokens per kernel call)", e.attention_half_tokens);
  out += fmt::format(", unfused attention {:.2f}, HBM {:.2f}\n", e.unfused_attention_max, e.hbm_efficiency);
  if (e.compute_units > 0)
    out += fmt::format("  GEMM tiles {}x{} over {} compute units (wave quantisation)\n", e.gemm_tile_m, e.gemm_tile_n,
                       e.compute_units);
  for (std::size_t i = 0; i < h.tiers.size(); ++i) {
    const auto& t = h.tiers[i];
    out += fmt::format("  tier {} {}: {} size {}", i, t.name, to_string(t.topology),
                       t.size == 0 ? std::string("unbounded") : std::to_string(t.size));
    if (t.topology == Topology::torus) {
      std::string dims;
      for (auto d : t.torus_dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
      out += " dims " + dims;
    }
    out += fmt::format(", alpha {:.2f} us, bandwidth {:.1f} GB/s nominal / {:.1f} GB/s achieved", t.latency_s * 1e6,
                       t.bandwidth_nominal_bytes_per_s / 1e9, t.bandwidth_achieved_bytes_per_s / 1e9);
    if (i == 1) out += fmt::format(", {} NICs per {} GPUs", t.nics_per_node, t.gpus_per_node);
    out += "\n";
    for (Collective c : kAllCollectives) {
      const CollectiveFit& fit = t.collective_fits[std::size_t(c)];
      if (fit.fitted)
        out += fmt::format("    fitted {}: base {:.2f} us + {:.3f} us per step, bandwidth {:.2f} GB/s\n",
                           collective_key(c), fit.base_latency_s * 1e6, fit.latency_per_step_s * 1e6,
                           fit.bandwidth_bytes_per_s / 1e9);
    }
  }
  return out;
}

}  // namespace planner
