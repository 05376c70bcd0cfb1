// The simulated step against the closed form (see compare.h): the terms side
// by side, then one explanation per term that differs by more than 0.1% of
// the step, largest difference first.
#include "planner/simulate/compare.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "planner/model/pipeline.h"
#include "planner/spec/limits.h"

namespace planner {

namespace {

// The rows of the comparison, in the order SimComparison::terms lists them.
enum Term : std::size_t { kCompute, kTpCp, kPipeline, kDp, kOptimizer };

std::vector<ComparisonTerm> comparison_terms(const StepTimeBreakdown& t, const StageStats& s) {
  // The simulator runs contention inside the kernels it slows (per layer) and
  // inside the optimizer op (the DP tail's), so the closed form's contention
  // term is compared there.
  const double per_layer_contention = t.contention_s - t.contention_tail_s;
  return {{"compute + recompute + contention", t.compute_s + t.recompute_s + per_layer_contention, s.compute_s},
          {t.ep_comm_total_s > 0 ? "TP/CP/EP exposed" : "TP/CP exposed", t.tp_comm_s + t.cp_comm_s + t.ep_comm_s,
           s.tp_cp_s + s.ep_s},
          {"pipeline (bubble + send/recv)", t.pp_bubble_s + t.pp_p2p_s, s.pipeline_wait_s + s.send_blocked_s},
          {"DP / ZeRO exposed", t.dp_comm_s + t.zero3_comm_s, s.dp_wait_s + s.zero3_s},
          {"optimizer (+ DP tail contention)", t.optimizer_s + t.contention_tail_s, s.optimizer_s}};
}

// Why the compute term differs by `d` seconds.
std::string compute_explanation(const Evaluation& ev, const PipelineProblem& pr, const SimResult& r, double d) {
  const std::int64_t crit = r.critical_stage;
  // The heaviest stage by simulated work, which the text below calls the one
  // the closed form prices: they differ only where per-chunk ZeRO-3 gathers
  // tip the balance (PipelineProblem::heaviest_stage).
  const std::int64_t heavy = pr.heaviest_stage();
  if (crit != heavy)
    return fmt::format(
        "compute {:+.4f} s: stage {} finishes last, while the closed form prices the heaviest "
        "stage {} ({} layers against {}); the lighter stage waits longer instead (with uneven "
        "stages the closed form's fill and drain, (sum of the other stages)/v, over-counts: "
        "the heaviest stage's own warm-up overlaps part of the downstream round trip)",
        d, crit, heavy, ev.layout.layers_on(heavy), ev.layout.layers_on(crit));
  return fmt::format(
      "compute {:+.4f} s: with {} chunks per stage the ZeRO-3 gather of each chunk's first "
      "layer is exposed once per chunk, the closed form once per micro-batch",
      d, pr.chunks_per_stage);
}

// The pipeline explanation's note on send costs that vary by hop; empty when
// they do not.
std::string send_hop_note(const PipelineProblem& pr) {
  const auto hops_end = pr.send_s.end() - (pr.chunks_per_stage > 1 ? 0 : 1);
  const double hop_min = *std::min_element(pr.send_s.begin(), hops_end);
  const double hop_max = *std::max_element(pr.send_s.begin(), hops_end);
  if (pr.stages <= 1 || hop_max <= 1.2 * hop_min) return {};
  return fmt::format(
      "; sends cost {:.3f} to {:.3f} ms by hop (stages inside one node or across nodes{}), the "
      "formula prices every send at the dearest hop's cost (the pipeline spans nodes)",
      hop_min * 1e3, hop_max * 1e3,
      pr.chunks_per_stage > 1 ? ", the wrap-around from the last stage to the first" : "");
}

// Why the pipeline term (bubble + sends) differs by `d` seconds.
std::string pipeline_explanation(const Evaluation& ev, const PipelineProblem& pr, const SimResult& r, double d) {
  const StepTimeBreakdown& t = ev.time;
  const StageStats& s = r.critical();
  const std::int64_t p = pr.stages, v = pr.chunks_per_stage, m = pr.micro_batches;  // as the text names them
  std::string text = fmt::format(
      "pipeline {:+.4f} s: the formula charges (sum of stages - heaviest)/v = {:.4f} s of fill and drain plus "
      "2(mv+p-1) = {} sends ({:.4f} s); the simulation waits {:.4f} s for activations and gradients on stage {}{}",
      d, t.pp_bubble_s, 2 * (m * v + p - 1), t.pp_p2p_s, s.pipeline_wait_s, r.critical_stage,
      pr.overlap_p2p ? "" : fmt::format(" and is held {:.4f} s by its own blocking sends", s.send_blocked_s));
  if (pr.schedule == Schedule::zb_h1)
    text +=
        "; ZB-H1 fills the drain with deferred weight-gradient passes (ideal bubble (p-1)(T_F+T_B-T_W) against "
        "1F1B's (p-1)(T_F+T_B+T_W)), the closed form prices 1F1B";
  if (v > 1 && m % p != 0)
    text += fmt::format(
        "; m = {} is not a multiple of p = {}: the interleaved order (groups of p micro-batches) "
        "leaves idle slots the formula does not count",
        m, p);
  const StageLayout& layout = ev.layout;
  if (p > 1 && (layout.first != layout.last || layout.first != layout.middle_hi ||
                layout.middle_hi_count != std::max<std::int64_t>(0, p - 2)))
    text +=
        "; stages are uneven (the first and last carry the embedding and output layer): fill and drain pass "
        "each stage at its own speed";
  text += send_hop_note(pr);
  text += pr.overlap_p2p ? "; sends overlap compute, so only those on the fill/drain path delay the step"
                         : "; a blocking send costs only where it is on the critical path, not 2(mv+p-1) times at the "
                           "heaviest stage";
  return text;
}

// Why the DP / ZeRO term differs by `d` seconds.
std::string dp_explanation(const Evaluation& ev, const PipelineProblem& pr, const SimResult& r, double d) {
  std::size_t buckets = 0;
  for (std::int64_t k = 0; k < pr.chunks_per_stage; ++k) buckets += pr.cost(r.critical_stage, k).grad_buckets_s.size();
  std::string text =
      buckets > 0
          ? fmt::format(
                "DP {:+.4f} s: the simulation reduces {} gradient buckets one by one as the last backward of each "
                "chunk produces them (each paying alpha), then the optimizer waits for the last; the formula hides "
                "one reduction behind the last micro-batch's backward, exposes at least the last bucket, and prices "
                "the tail of stage {} (the latest over the stages, each less its lead over stage 0)",
                d, buckets, ev.time.dp_tail_stage)
          : fmt::format(
                "DP {:+.4f} s: ZeRO-{} reduce-scatters every layer's gradients in every micro-batch; the simulation "
                "exposes the first layer's gather of each chunk and runs the transfers on the DP stream, the "
                "formula applies its per-layer prefetch rule once per micro-batch on the heaviest stage",
                d, ev.config.zero_stage);
  if (ev.config.zero_stage >= 1 && ev.config.zero_stage < 3)
    text += pr.overlap_param_gather
                ? "; ZeRO-1/2 weight gathers are prefetched chunk by chunk at the step start and the first forward "
                  "of each chunk waits for its gather"
                : "; without overlap the ZeRO-1/2 weight gathers follow the optimizer step";
  return text;
}

}  // namespace

SimComparison compare_with_closed_form(const Evaluation& ev, const PipelineProblem& pr, const SimResult& r) {
  SimComparison c;
  c.closed_form_step_s = ev.time.step_s;
  c.simulated_step_s = r.step_s;
  c.formula_bubble_fraction = ideal_bubble_fraction(pr.stages, pr.chunks_per_stage, pr.micro_batches);
  c.terms = comparison_terms(ev.time, r.critical());

  // Terms within 0.1% of the step need no explanation.
  const double threshold = 1e-3 * std::max(ev.time.step_s, kTinyTime_s);
  std::vector<std::pair<double, std::string>> why;  // |difference|, explanation
  const auto difference = [&](Term term) { return c.terms[term].simulated_s - c.terms[term].closed_form_s; };
  if (const double d = difference(kCompute); std::abs(d) > threshold)
    why.emplace_back(std::abs(d), compute_explanation(ev, pr, r, d));
  if (const double d = difference(kPipeline); std::abs(d) > threshold)
    why.emplace_back(std::abs(d), pipeline_explanation(ev, pr, r, d));
  if (const double d = difference(kDp); std::abs(d) > threshold)
    why.emplace_back(std::abs(d), dp_explanation(ev, pr, r, d));
  std::stable_sort(why.begin(), why.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& w : why) c.explanations.push_back(std::move(w.second));
  return c;
}

}  // namespace planner
