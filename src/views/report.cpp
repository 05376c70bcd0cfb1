#include "planner/views/report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/model/collectives.h"
#include "planner/model/labels.h"
#include "planner/model/model_math.h"
#include "planner/model/recompute_modules.h"
#include "planner/model/selective_policy.h"
#include "views/format.h"
#include "views/report_parts.h"
#include "views/time_to_train_view.h"

namespace planner {

using nlohmann::json;

namespace report_detail {

std::string reason_for(Reason r, const HardwareProfile& hw) {
  std::string s = describe(r);
  if (std::string(device_word(hw)) == "GPU") return s;
  if (const auto at = s.find(" (Megatron-LM)"); at != std::string::npos) s.erase(at, 14);
  if (const auto at = s.find("GPU"); at != std::string::npos) s.replace(at, 3, device_word(hw));
  return s;
}

std::string context_line(const RunContext& ctx) {
  const auto& t = ctx.training;
  std::string line = fmt::format(
      "model {} | hardware {} | {} {}s | seq {} | global batch {} seqs ({} tokens) | {} | attention {}", ctx.model.name,
      ctx.hardware.name, t.num_gpus, device_word(ctx.hardware), t.seq_len, t.global_batch_sequences,
      t.global_batch_sequences * t.seq_len, to_string(t.dtype), to_string(t.attention));
  if (t.selective != SelectivePolicy::megatron_attention)  // what --recompute selective means (SelectivePolicy)
    line += fmt::format(" | selective ac {}", selective_policy_label(t));
  if (t.loss_kernel == LossKernel::te) line += " | loss: Transformer Engine fused";
  if (t.loss_kernel == LossKernel::flash_attn) line += " | loss: flash-attn fused";
  if (ctx.framework)
    line += fmt::format(" | framework {} {} ({:g} bytes/param before sharding)", to_string(ctx.framework->framework),
                        ctx.framework->release,
                        t.weight_bytes_per_param + t.grad_bytes_per_param + t.optimizer_bytes_per_param);
  return line;
}

}  // namespace report_detail

using namespace report_detail;

namespace {

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

std::string stage_text(const StageLayout& l) {
  if (l.stages == 1) return fmt::format("1 stage, {} layers", l.first);
  if (l.stages == 2) return fmt::format("2 stages: first {} layers, last {}", l.first, l.last);
  const std::int64_t lo = l.middle_hi - 1;
  std::string mid =
      l.middle_hi_count == l.stages - 2 || lo < 1
          ? fmt::format("{}", l.middle_hi)
          : fmt::format("{}x{} + {}x{}", l.middle_hi_count, l.middle_hi, l.stages - 2 - l.middle_hi_count, lo);
  return fmt::format("{} stages: first {} layers, middle {}, last {}", l.stages, l.first, mid, l.last);
}

// The stages, and with virtual stages each stage's chunks (split_label).
std::string layout_text(const Evaluation& ev) {
  std::string out = stage_text(ev.layout);
  if (ev.plan.virtual_stages > 1 && ev.layout.stages > 1)
    out += fmt::format("; {} chunks per stage, layers per chunk: {}", ev.plan.virtual_stages, split_label(ev.plan));
  return out;
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
  if (c.zero_shard > 0) j["zero_shard"] = c.zero_shard;  // hybrid sharding only: other outputs keep their keys
  return j;
}

json report_detail::config_json(const Evaluation& ev) {
  json j = to_json(ev.config);
  if (names_modules(ev.config, ev.recompute_modules))
    j["recompute_modules"] = recompute_modules_label(ev.recompute_modules);
  if (ev.overlap_a2a) j["overlap_a2a"] = true;
  return j;
}

json to_json(const Evaluation& ev) {
  json j;
  j["config"] = config_json(ev);
  j["feasible"] = ev.feasible();
  json reasons = json::array();
  for (Reason r : ev.reason_list()) reasons.push_back(describe(r));
  j["reasons"] = reasons;
  if (ev.layout.stages > 0 && ev.memory.capacity_bytes > 0) {
    j["layout"] = {{"first", ev.layout.first},
                   {"last", ev.layout.last},
                   {"middle_hi", ev.layout.middle_hi},
                   {"middle_hi_count", ev.layout.middle_hi_count},
                   {"split", split_label(ev.plan)}};
    j["memory"] = memory_json(ev.memory);
    j["time"] = time_json(ev.time);
    j["dominant_overhead"] = dominant_overhead(ev.time);
  }
  return j;
}

void add_run_fields(json& into, const RunContext& ctx, const Evaluation* ev) {
  if (ctx.training.loss_kernel == LossKernel::te) into["cross_entropy"] = "te_fused";  // --te-cross-entropy
  if (ctx.training.loss_kernel == LossKernel::flash_attn) into["cross_entropy"] = "flash_attn_fused";
  if (ctx.framework)
    into["framework"] = {{"name", std::string(to_string(ctx.framework->framework))},
                         {"release", ctx.framework->release},
                         {"bytes_per_param", ctx.training.weight_bytes_per_param + ctx.training.grad_bytes_per_param +
                                                 ctx.training.optimizer_bytes_per_param}};
  if (ctx.budget && ev && ev->memory.capacity_bytes > 0)
    into["time_to_train"] = train_json(time_to_train(*ctx.budget, ev->time.tokens_per_s, ctx.training.num_gpus),
                                       *ctx.budget);
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
  add_run_fields(j, ctx, &ev);
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

std::string evaluation_csv(const Evaluation& ev, bool priced, const RunContext& ctx) {
  std::string out = "section,item,value\n";
  // Keep each JSON value alive while iterating its items.
  const json config = to_json(ev.config);
  for (const auto& [k, v] : config.items()) out += fmt::format("config,{},{}\n", k, v.dump());
  if (priced) {
    const json memory = memory_json(ev.memory), time = time_json(ev.time);
    for (const auto& [k, v] : memory.items()) out += fmt::format("memory,{},{}\n", k, v.dump());
    for (const auto& [k, v] : time.items()) out += fmt::format("time,{},{}\n", k, v.dump());
    if (ctx.budget) {
      const json train = train_json(time_to_train(*ctx.budget, ev.time.tokens_per_s, ctx.training.num_gpus),
                                    *ctx.budget);
      for (const auto& [k, v] : train.items()) out += fmt::format("time_to_train,{},{}\n", k, v.dump());
    }
  }
  out += fmt::format("result,feasible,{}\n", ev.feasible() ? "true" : "false");
  // Why not, as the JSON's "reasons" (quoted: a reason may hold a comma).
  for (Reason r : ev.reason_list()) {
    std::string text = describe(r);
    for (std::size_t i = 0; (i = text.find('"', i)) != std::string::npos; i += 2) text.insert(i, 1, '"');
    out += fmt::format("result,reason,\"{}\"\n", text);
  }
  return out;
}

std::string memory_text(const MemoryBreakdown& m, const HardwareProfile& hw) {
  std::string out = fmt::format("memory per {} (stage {}, {} layers, {:.2f} micro-batches in flight)\n",
                                device_word(hw), m.peak_stage,
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

// A term's row in the step-time table.
const char* step_term_row_label(StepTerm term) {
  switch (term) {
    case StepTerm::compute:
      return "compute";
    case StepTerm::recompute:
      return "recompute";
    case StepTerm::contention:
      return "overlap contention";
    case StepTerm::tp_comm:
      return "TP comm (exposed)";
    case StepTerm::cp_comm:
      return "CP comm (exposed)";
    case StepTerm::pp_p2p:
      return "PP send/recv";
    case StepTerm::pp_bubble:
      return "PP bubble";
    case StepTerm::dp_comm:
      return "DP comm (exposed)";
    case StepTerm::zero3_comm:
      return "ZeRO-2/3 comm (exposed)";
    case StepTerm::ep_comm:
      return "EP all-to-all (exposed)";
    case StepTerm::optimizer:
      return "optimizer";
  }
  return "?";
}

std::string step_time_text(const StepTimeBreakdown& t, const RunContext& ctx) {
  std::string out = fmt::format("step time ({} micro-batches; heaviest stage {:.4f} s per micro-batch)\n",
                                t.micro_batches, t.stage_time_per_micro_batch_s);
  auto row = [&](const char* name, double s) {
    out += fmt::format("  {:<26}{:>10.4f} s {:>6.1f}%\n", name, s, t.step_s > 0 ? 100.0 * s / t.step_s : 0.0);
  };
  for (const StepTermValue& x : step_terms(t)) {
    // Dense models print no EP row (their tables keep their lines).
    if (x.term == StepTerm::ep_comm && t.ep_comm_total_s <= 0) continue;
    row(step_term_row_label(x.term), x.s);
  }
  out += fmt::format("  {:<26}{:>10.4f} s\n", "step", t.step_s);
  out += fmt::format(
      "  DP comm before overlap {:.4f} s; ZeRO-2/3 comm before overlap {:.4f} s; DP and optimizer "
      "tail of stage {}\n",
      t.dp_comm_total_s, t.zero3_comm_total_s, t.dp_tail_stage);
  if (t.ep_comm_total_s > 0) out += fmt::format("  EP all-to-all before overlap {:.4f} s\n", t.ep_comm_total_s);
  out += fmt::format("  one layer, one micro-batch: forward {:.3f} ms, backward {:.3f} ms (incl. recompute)\n",
                     1e3 * t.layer_fwd_s, 1e3 * t.layer_bwd_s);
  if (t.straggler_s > 0)
    out += fmt::format("  compute includes {:.4f} s of waiting for the slowest of {} {}s\n", t.straggler_s,
                       ctx.training.num_gpus, device_word(ctx.hardware));
  out +=
      fmt::format("\nthroughput {:.0f} tokens/s ({:.1f} per {}) | {:.0f} TFLOP/s per {} | MFU {:.1f}% | HFU {:.1f}% "
                  "| dominant overhead: {}\n",
                  t.tokens_per_s, t.tokens_per_s / double(ctx.training.num_gpus), device_word(ctx.hardware),
                  t.tflops_per_gpu, device_word(ctx.hardware), 100.0 * t.mfu,
                  100.0 * t.hfu, dominant_overhead(t));
  out += "  (model FLOPs as Megatron-LM counts them: causal attention, logits included; HFU: FLOPs executed)\n";
  return out;
}

// "fits: yes", or "fits: no" with every reason.
std::string fits_text(const Evaluation& ev, const RunContext& ctx) {
  if (ev.feasible()) return "fits: yes\n";
  std::string out = "fits: no\n";
  for (Reason r : ev.reason_list()) {
    if (r == Reason::out_of_memory)
      out += fmt::format("  - {}: needs {:.2f} GiB, has {:.2f} GiB\n", reason_for(r, ctx.hardware),
                         ev.memory.total_bytes / kGiB, ev.memory.capacity_bytes / kGiB);
    else
      out += fmt::format("  - {}\n", reason_text(r, ctx.model, ctx.hardware, ev.config, ctx.training));
  }
  return out;
}

}  // namespace

std::string render_evaluation(const Evaluation& ev, const RunContext& ctx, Format f, const Explain* explain) {
  if (f == Format::json) return evaluation_json(ev, ctx, explain);
  const bool priced = ev.memory.capacity_bytes > 0;
  if (f == Format::csv) return evaluation_csv(ev, priced, ctx);
  std::string out = context_line(ctx) + "\n";
  out += fmt::format("config: {} schedule={}", ev.config, to_string(ev.config.schedule));
  if (names_modules(ev.config, ev.recompute_modules))
    out += fmt::format(" recompute_modules={}", recompute_modules_label(ev.recompute_modules));
  out += ev.overlap_a2a ? " overlap_a2a=true\n" : "\n";
  if (priced) {
    out += fmt::format("layout: {}\n\n", layout_text(ev));
    out += memory_text(ev.memory, ctx.hardware);
    out += step_time_text(ev.time, ctx);
    if (ctx.budget) out += train_text(time_to_train(*ctx.budget, ev.time.tokens_per_s, ctx.training.num_gpus), *ctx.budget);
  }
  out += fits_text(ev, ctx);
  if (explain) out += render_explain(*explain);
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

}  // namespace planner
