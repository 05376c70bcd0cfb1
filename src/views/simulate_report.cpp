// Simulation summary and its comparison with the closed form (see
// simulate_report.h).
#include "planner/views/simulate_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/model/pipeline.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"

namespace planner {

namespace {

// Rounds |x| < 0.005 (what "%.2f" prints as 0.00) to +0 so no "-0.00" appears.
double clean_zero(double x) { return std::abs(x) < 0.005 ? 0.0 : x; }

std::string pct(double x) { return fmt::format("{:+.2f}%", clean_zero(100.0 * x)); }

}  // namespace

SimComparison compare_with_closed_form(const Evaluation& ev, const PipelineProblem& pr, const SimResult& r) {
  SimComparison c;
  const StepTimeBreakdown& t = ev.time;
  const StageStats& s = r.critical();
  c.closed_form_step_s = t.step_s;
  c.simulated_step_s = r.step_s;
  c.formula_bubble_fraction = ideal_bubble_fraction(pr.p, pr.v, pr.m);
  c.terms = {{"compute + recompute", t.compute_s + t.recompute_s, s.compute_s},
             {"TP/CP exposed", t.tp_comm_s + t.cp_comm_s, s.tp_cp_s},
             {"pipeline (bubble + send/recv)", t.pp_bubble_s + t.pp_p2p_s, s.pipeline_wait_s + s.send_blocked_s},
             {"DP / ZeRO exposed", t.dp_comm_s + t.zero3_comm_s, s.dp_wait_s + s.zero3_s},
             {"optimizer", t.optimizer_s, s.optimizer_s}};

  const double threshold = 1e-3 * std::max(t.step_s, kTinyTime_s);
  std::vector<std::pair<double, std::string>> why;
  const std::int64_t crit = r.critical_stage;
  // The heaviest stage by simulated work, which the text below calls the one
  // the closed form prices: they differ only where per-chunk ZeRO-3 gathers
  // tip the balance (PipelineProblem::heaviest_stage).
  const std::int64_t heavy = pr.heaviest_stage();

  const double d_compute = c.terms[0].simulated_s - c.terms[0].closed_form_s;
  if (std::abs(d_compute) > threshold) {
    if (crit != heavy)
      why.emplace_back(
          std::abs(d_compute),
          fmt::format("compute {:+.4f} s: stage {} finishes last, while the closed form prices the heaviest "
                      "stage {} ({} layers against {}); the lighter stage waits longer instead (with uneven "
                      "stages the closed form's fill and drain, (sum of the other stages)/v, over-counts: "
                      "the heaviest stage's own warm-up overlaps part of the downstream round trip)",
                      d_compute, crit, heavy, ev.layout.layers_on(heavy), ev.layout.layers_on(crit)));
    else
      why.emplace_back(
          std::abs(d_compute),
          fmt::format("compute {:+.4f} s: with {} chunks per stage the ZeRO-3 gather of each chunk's first "
                      "layer is exposed once per chunk, the closed form once per micro-batch",
                      d_compute, pr.v));
  }
  const double d_pipe = c.terms[2].simulated_s - c.terms[2].closed_form_s;
  if (std::abs(d_pipe) > threshold) {
    std::string text = fmt::format(
        "pipeline {:+.4f} s: the formula charges (sum of stages - heaviest)/v = {:.4f} s of fill and drain plus "
        "2(mv+p-1) = {} sends ({:.4f} s); the simulation waits {:.4f} s for activations and gradients on stage {}{}",
        d_pipe, t.pp_bubble_s, 2 * (pr.m * pr.v + pr.p - 1), t.pp_p2p_s, s.pipeline_wait_s, crit,
        pr.overlap_p2p ? "" : fmt::format(" and is held {:.4f} s by its own blocking sends", s.send_blocked_s));
    if (pr.schedule == Schedule::zb_h1)
      text +=
          "; ZB-H1 fills the drain with deferred weight-gradient passes (ideal bubble (p-1)(T_F+T_B-T_W) against "
          "1F1B's (p-1)(T_F+T_B+T_W)), the closed form prices 1F1B";
    if (pr.v > 1 && pr.m % pr.p != 0)
      text += fmt::format(
          "; m = {} is not a multiple of p = {}: the interleaved order (groups of p micro-batches) "
          "leaves idle slots the formula does not count",
          pr.m, pr.p);
    if (pr.p > 1 && (ev.layout.first != ev.layout.last || ev.layout.first != ev.layout.middle_hi ||
                     ev.layout.middle_hi_count != std::max<std::int64_t>(0, pr.p - 2)))
      text +=
          "; stages are uneven (the first and last carry the embedding and output layer): fill and drain pass "
          "each stage at its own speed";
    const double hop_min = *std::min_element(pr.send_s.begin(), pr.send_s.end() - (pr.v > 1 ? 0 : 1));
    const double hop_max = *std::max_element(pr.send_s.begin(), pr.send_s.end() - (pr.v > 1 ? 0 : 1));
    if (pr.p > 1 && hop_max > 1.2 * hop_min)
      text += fmt::format(
          "; sends cost {:.3f} to {:.3f} ms by hop (stages inside one node or across nodes{}), the "
          "formula prices every send at the first hop's cost",
          hop_min * 1e3, hop_max * 1e3, pr.v > 1 ? ", the wrap-around from the last stage to the first" : "");
    text += pr.overlap_p2p
                ? "; sends overlap compute, so only those on the fill/drain path delay the step"
                : "; a blocking send costs only where it is on the critical path, not 2(mv+p-1) times at the "
                  "heaviest stage";
    why.emplace_back(std::abs(d_pipe), text);
  }
  const double d_dp = c.terms[3].simulated_s - c.terms[3].closed_form_s;
  if (std::abs(d_dp) > threshold) {
    std::size_t buckets = 0;
    for (std::int64_t k = 0; k < pr.v; ++k) buckets += pr.cost(crit, k).grad_buckets_s.size();
    std::string text = fmt::format(
        "DP {:+.4f} s: the simulation reduces {} gradient buckets one by one as the last backward of each chunk "
        "produces them (each paying alpha), then the optimizer waits for the last; the formula hides one reduction "
        "behind the last micro-batch's backward, exposes at least the last bucket, and prices the tail of stage {} "
        "(the latest over the stages, each less its lead over stage 0)",
        d_dp, buckets, t.dp_tail_stage);
    if (ev.config.zero_stage >= 1 && ev.config.zero_stage < 3)
      text += pr.overlap_param_gather
                  ? "; ZeRO-1/2 weight gathers are prefetched chunk by chunk at the step start and the first forward "
                    "of each chunk waits for its gather"
                  : "; without overlap the ZeRO-1/2 weight gathers follow the optimizer step";
    why.emplace_back(std::abs(d_dp), text);
  }
  std::stable_sort(why.begin(), why.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& w : why) c.explanations.push_back(std::move(w.second));
  return c;
}

std::string render_simulation(const SimResult& r, const SimComparison& cmp, const Evaluation& ev,
                              const PipelineProblem& pr, const RunContext& ctx, Format f) {
  using nlohmann::json;
  const ParallelConfig& pc = ev.config;
  const double tokens = double(ctx.training.global_batch_sequences) * double(ctx.training.seq_len);
  const double peak = double(ctx.training.num_gpus) * ctx.hardware.peak_flops_per_s[std::size_t(ctx.training.dtype)];
  const double mfu = ev.time.model_flops_per_step / (r.step_s * peak);
  const StageStats& crit = r.critical();
  if (f == Format::json) {
    json j;
    add_report_header(j, ctx);
    j["config"] = to_json(pc);
    j["schedule"] = to_string(pr.schedule);
    j["micro_batches"] = pr.m;
    j["step_s"] = r.step_s;
    j["closed_form_step_s"] = cmp.closed_form_step_s;
    j["relative_difference"] = cmp.relative_difference();
    j["tokens_per_s"] = tokens / r.step_s;
    j["mfu"] = mfu;
    j["critical_stage"] = r.critical_stage;
    j["bubble_fraction"] = r.critical_wait_fraction();
    j["formula_bubble_fraction"] = cmp.formula_bubble_fraction;
    j["exposed_comm_s"] = {
        {"tp_cp", crit.tp_cp_s}, {"pp_send", crit.send_blocked_s}, {"dp", crit.dp_wait_s}, {"zero3", crit.zero3_s}};
    json stages = json::array();
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
      const StageStats& st = r.stages[s];
      stages.push_back({{"stage", s},
                        {"layers", ev.layout.layers_on(std::int64_t(s))},
                        {"busy_fraction", st.busy_fraction()},
                        {"compute_s", st.compute_s},
                        {"recompute_s", st.recompute_s},
                        {"tp_cp_s", st.tp_cp_s},
                        {"zero3_s", st.zero3_s},
                        {"send_blocked_s", st.send_blocked_s},
                        {"pipeline_wait_s", st.pipeline_wait_s},
                        {"dp_wait_s", st.dp_wait_s},
                        {"optimizer_s", st.optimizer_s},
                        {"end_s", st.end_s}});
    }
    j["stages"] = stages;
    json terms = json::array();
    for (const auto& t : cmp.terms)
      terms.push_back({{"term", t.name}, {"closed_form_s", t.closed_form_s}, {"simulated_s", t.simulated_s}});
    j["comparison"] = terms;
    j["explanations"] = cmp.explanations;
    return j.dump(2) + "\n";
  }
  if (f == Format::csv) {
    std::string out =
        "stage,layers,busy_fraction,compute_s,recompute_s,tp_cp_s,zero3_s,send_blocked_s,pipeline_wait_s,"
        "dp_wait_s,optimizer_s,end_s\n";
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
      const StageStats& st = r.stages[s];
      out += fmt::format("{},{},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n", s,
                         ev.layout.layers_on(std::int64_t(s)), st.busy_fraction(), st.compute_s, st.recompute_s,
                         st.tp_cp_s, st.zero3_s, st.send_blocked_s, st.pipeline_wait_s, st.dp_wait_s, st.optimizer_s,
                         st.end_s);
    }
    return out;
  }
  std::string out = fmt::format(
      "simulate: {} on {}, {} GPUs; TP{} CP{} PP{} DP{}, micro-batch {}, {} micro-batches, vpp {}, {} schedule, "
      "recompute {}, ZeRO-{}, SP {}\n\n",
      ctx.model.name, ctx.hardware.name, ctx.training.num_gpus, pc.tp, pc.cp, pc.pp, pc.dp, pc.micro_batch_size, pr.m,
      pc.virtual_stages, to_string(pr.schedule), to_string(pc.recompute), pc.zero_stage,
      pc.sequence_parallel ? "on" : "off");
  out += fmt::format("step time      {:.4f} s simulated, {:.4f} s closed form ({})\n", r.step_s, cmp.closed_form_step_s,
                     pct(cmp.relative_difference()));
  out += fmt::format("throughput     {:.0f} tokens/s, MFU {:.1f}% (simulated step)\n", tokens / r.step_s, 100.0 * mfu);
  out += fmt::format(
      "bubble         {:.2f}% of the step on stage {} (the last to finish); ideal-pipeline formula "
      "(p-1)/(v*m+p-1) = {:.2f}%\n",
      100.0 * r.critical_wait_fraction(), r.critical_stage, 100.0 * cmp.formula_bubble_fraction);
  out += fmt::format("exposed comm   stage {}: TP/CP {:.4f} s, PP send {:.4f} s{}, DP {:.4f} s, ZeRO-3 {:.4f} s\n\n",
                     r.critical_stage, crit.tp_cp_s, crit.send_blocked_s,
                     pr.overlap_p2p ? " (overlapped)" : " (blocking)", crit.dp_wait_s, crit.zero3_s);
  out +=
      fmt::format("{:>5} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "stage", "layers",
                  "busy", "compute s", "TP/CP s", "ZeRO-3 s", "send s", "pp wait s", "DP wait s", "optim s", "end s");
  for (std::size_t s = 0; s < r.stages.size(); ++s) {
    const StageStats& st = r.stages[s];
    out += fmt::format(
        "{:>5} {:>6} {:>5.1f}% {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f}\n", s,
        ev.layout.layers_on(std::int64_t(s)), 100.0 * st.busy_fraction(), st.compute_s, st.tp_cp_s, st.zero3_s,
        st.send_blocked_s, st.pipeline_wait_s, st.dp_wait_s, st.optimizer_s, st.end_s);
  }
  out += fmt::format("\n{:<32} {:>12} {:>12} {:>12}\n", "simulated vs closed form", "closed form", "simulated",
                     "difference");
  for (const auto& t : cmp.terms)
    out += fmt::format("{:<32} {:>10.4f} s {:>10.4f} s {:>+10.4f} s\n", t.name, t.closed_form_s, t.simulated_s,
                       t.simulated_s - t.closed_form_s);
  out += fmt::format("{:<32} {:>10.4f} s {:>10.4f} s {:>+10.4f} s\n", "step", cmp.closed_form_step_s,
                     cmp.simulated_step_s, cmp.simulated_step_s - cmp.closed_form_step_s);
  if (cmp.explanations.empty()) {
    out += "the two agree within 0.1% of the step in every term\n";
  } else {
    out += "where the difference comes from:\n";
    for (const auto& e : cmp.explanations) out += "  - " + e + "\n";
  }
  out +=
      "approximations: W (weight gradient) is half the backward GEMMs plus gradient accumulation; gradients leave a "
      "backward op uniformly over its duration; sends block only the sender; ZeRO-3 exposure per op follows the "
      "closed form's per-layer prefetch rule\n";
  return out;
}

}  // namespace planner
