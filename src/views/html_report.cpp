// The three HTML pages (html_report.h): search, evaluate and simulate, each
// assembled from the pieces in html_parts.h.
#include "planner/views/html_report.h"

#include <string>

#include <fmt/format.h>

#include "planner/model/labels.h"
#include "planner/model/recompute_modules.h"
#include "planner/views/search_report.h"
#include "planner/views/simulate_report.h"
#include "views/html_parts.h"

namespace planner {

namespace {

using html::count;
using html::escape;
using html::gib;
using html::seconds;

std::string ranked_table(const std::vector<Evaluation>& top, const RunContext& ctx) {
  // MoE models: expert parallelism and the all-to-all's overlap, as the CLI table has them.
  const bool moe = ctx.model.is_moe();
  std::string out =
      "<div class=\"wide\"><table "
      "id=\"ranked-table\">\n<tr><th>rank</th><th>TP</th><th>CP</th><th>PP</th><th>DP</th><th>mbs</th>"
      "<th>micro-batches</th><th>vpp</th><th class=\"l\">recompute</th><th>ZeRO</th><th>SP</th>";
  if (moe) out += "<th>EP</th><th>ETP</th><th class=\"l\">all-to-all</th>";
  out +=
      "<th>memory per GPU</th><th>step</th><th>tokens/s</th><th>MFU</th><th>TFLOP/s per GPU</th>"
      "<th class=\"l\">dominant overhead</th></tr>\n";
  const int columns = moe ? 20 : 17;
  for (std::size_t i = 0; i < top.size(); ++i) {
    const Evaluation& ev = top[i];
    const ParallelConfig& c = ev.config;
    out += fmt::format(
        "<tr class=\"result\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"l\">{}</td><td>{}</td><td>{}</td>",
        i + 1, c.tp, c.cp, c.pp, c.dp, c.micro_batch_size, ev.time.micro_batches, c.virtual_stages,
        escape(recompute_label(c, ev.recompute_modules)), zero_label(c), c.sequence_parallel ? "on" : "off");
    if (moe)
      out += fmt::format("<td>{}</td><td>{}</td><td class=\"l\">{}</td>", c.ep, c.etp,
                         ev.overlap_a2a ? "overlapped" : "exposed");
    out += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{:.0f}</td><td class=\"l\">{}</td></tr>\n",
                       gib(ev.memory.total_bytes), seconds(ev.time.step_s), count(ev.time.tokens_per_s),
                       100.0 * ev.time.mfu, ev.time.tflops_per_gpu, dominant_overhead(ev.time));
    out += fmt::format(
        "<tr class=\"detail\"><td colspan=\"{}\"><details{}><summary>rank {}: where the time and the memory "
        "go</summary>\n{}{}{}</details></td></tr>\n",
        columns, i == 0 ? " open" : "", i + 1, html::summary_line(ev, ctx),
        html::time_breakdown(ev.time, fmt::format("time-breakdown-{}", i + 1)),
        html::memory_breakdown(ev.memory, fmt::format("memory-breakdown-{}", i + 1)));
  }
  return out + "</table></div>\n";
}

std::string simulated_table(const std::vector<SimulatedRank>& ranks) {
  std::string out =
      "<table id=\"simulated-table\">\n<tr><th>simulated rank</th><th>search rank</th><th class=\"l\">layout</th>"
      "<th>closed-form step</th><th>simulated step</th><th>difference</th><th>simulated bubble</th></tr>\n";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const SimulatedRank& x = ranks[i];
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td>", i + 1, x.closed_form_rank,
                       escape(config_label(x.evaluation.config)), seconds(x.evaluation.time.step_s));
    if (!x.not_simulated.empty())
      out += fmt::format("<td class=\"l\" colspan=\"3\">not simulated: {}</td></tr>\n", escape(x.not_simulated));
    else
      out += fmt::format("<td>{}</td><td>{:+.2f}%</td><td>{:.1f}%</td></tr>\n", seconds(x.simulated_step_s),
                         100.0 * (x.simulated_step_s / x.evaluation.time.step_s - 1.0),
                         100.0 * x.simulated_bubble_fraction);
  }
  return out + "</table>\n";
}

std::string fits_html(const Evaluation& ev) {
  if (ev.feasible()) return "<p id=\"fits\" class=\"ok\">fits: yes</p>\n";
  std::string out = "<p id=\"fits\" class=\"bad\">fits: no</p>\n<ul>\n";
  for (Reason r : ev.reason_list())
    out += r == Reason::out_of_memory ? fmt::format("<li>{}: needs {}, has {}</li>\n", describe(r),
                                                    gib(ev.memory.total_bytes), gib(ev.memory.capacity_bytes))
                                      : fmt::format("<li>{}</li>\n", escape(describe(r)));
  return out + "</ul>\n";
}

// The part an evaluation and a simulation page share: the layout, whether it
// fits, its breakdowns, its timeline and its formulas.
std::string one_layout(const Evaluation& ev, const Explain& ex, const SimResult* r, const PipelineProblem* pr,
                       const RunContext& ctx, const HtmlPageInfo& info) {
  // As the CLI's config line: the recompute modules and the all-to-all overlap when they apply.
  std::string extra;
  if (names_modules(ev.config, ev.recompute_modules))
    extra += fmt::format(", recompute modules <code>{}</code>", escape(recompute_modules_label(ev.recompute_modules)));
  if (ev.overlap_a2a) extra += ", MoE all-to-alls overlapped with compute";
  std::string out = fmt::format("<h2>Layout</h2>\n<p><code>{}</code>, schedule {}{}</p>\n",
                                escape(config_label(ev.config)), to_string(ev.config.schedule), extra);
  out += fits_html(ev);
  if (ev.memory.capacity_bytes > 0) {
    out += html::summary_line(ev, ctx);
    out += "<h2>Where the time goes</h2>\n" + html::time_breakdown(ev.time, "time-breakdown");
    out += "<h2>Where the memory goes</h2>\n" + html::memory_breakdown(ev.memory, "memory-breakdown");
  }
  out += "<h2>Timeline</h2>\n";
  out += r && pr ? html::timeline(*r, ev, *pr, ctx, info)
                 : std::string("<p class=\"muted\">This layout cannot be simulated (see the reasons above).</p>\n");
  out += "<h2>Formulas (<code>--explain</code>)</h2>\n";
  out += ex.steps().empty() ? std::string("<p class=\"muted\">No formula was applied: the layout's structure is "
                                          "invalid, so nothing was priced.</p>\n")
                            : html::explain_table(ex);
  return out;
}

std::string title_of(const char* what, const RunContext& ctx) {
  return fmt::format("planner {}: {} on {} GPUs ({})", what, ctx.model.name, count(double(ctx.training.num_gpus)),
                     ctx.hardware.name);
}

}  // namespace

std::string render_search_html(const SearchReport& rep, const RunContext& ctx, const HtmlPageInfo& info) {
  const SearchResult& r = rep.search;
  std::string out = html::page_begin(title_of("search", ctx), ctx, info);
  if (r.top.empty())
    out += "<p class=\"bad\">No layout fits: see the rejection reasons below.</p>\n";
  else
    out += fmt::format("<p>Best layout: <code>{}</code></p>\n", escape(config_label(r.top.front().config))) +
           html::summary_line(r.top.front(), ctx);
  out += "<h2>Every feasible layout</h2>\n" + html::scatter(r, ctx);
  out += fmt::format("<h2>The {} best layouts</h2>\n", r.top.size());
  out += "<p class=\"muted\">Ranked by step time; open a row for its time and memory breakdowns.";
  if (std::any_of(r.top.begin(), r.top.end(),
                  [](const Evaluation& ev) { return ev.config.zero_stage == 3 && !ev.config.reshard_after_forward; }))
    out += " ZeRO 3nr: ZeRO-3 keeping the gathered weights from forward to backward.";
  if (std::any_of(r.top.begin(), r.top.end(), [](const Evaluation& ev) { return ev.config.zero_shard > 0; }))
    out +=
        " ZeRO z/N: stage z sharded over groups of N of the DP x CP ranks, replicated across the groups (hybrid "
        "sharding).";
  out += "</p>\n" + ranked_table(r.top, ctx);
  if (rep.simulated) {
    out += "<h2>Re-ranked by simulation</h2>\n" + simulated_table(*rep.simulated);
    if (rep.top_step && !rep.simulated->empty())
      out += "<h2>Timeline of the top pick</h2>\n" + html::timeline(rep.top_step->result,
                                                                     rep.simulated->front().evaluation,
                                                                     rep.top_step->problem, ctx, info);
  }
  out += "<h2>Why layouts were rejected</h2>\n" + html::rejections(r);
  return out + html::page_end();
}

std::string render_evaluation_html(const Evaluation& ev, const Explain& ex, const SimulatedStep* step,
                                   const RunContext& ctx, const HtmlPageInfo& info) {
  std::string out = html::page_begin(title_of("evaluate", ctx), ctx, info);
  out += one_layout(ev, ex, step ? &step->result : nullptr, step ? &step->problem : nullptr, ctx, info);
  return out + html::page_end();
}

std::string render_simulation_html(const SimResult& r, const SimComparison& cmp, const Evaluation& ev,
                                   const PipelineProblem& pr, const Explain& ex, const RunContext& ctx,
                                   const HtmlPageInfo& info) {
  std::string out = html::page_begin(title_of("simulate", ctx), ctx, info);
  out += fmt::format(
      "<p>simulated step <b>{}</b> against the closed form's {} ({:+.2f}%), {} schedule, {} stages, {} "
      "micro-batches</p>\n",
      seconds(r.step_s), seconds(cmp.closed_form_step_s), 100.0 * cmp.relative_difference(), to_string(pr.schedule),
      pr.stages, pr.micro_batches);
  out += one_layout(ev, ex, &r, &pr, ctx, info);
  out += "<h2>Simulation against the closed form</h2>\n<pre id=\"simulation-summary\">" +
         escape(render_simulation(r, cmp, ev, pr, ctx, Format::table)) + "</pre>\n";
  return out + html::page_end();
}

}  // namespace planner
