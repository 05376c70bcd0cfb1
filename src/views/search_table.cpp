// The search report as text, JSON and CSV (render_search, to_json of a
// SearchResult): the ranked layouts, the rejections by reason and by the
// framework's rules, time to train and the launch flags of rank 1.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/model/labels.h"
#include "planner/model/time_to_train.h"
#include "planner/views/report.h"
#include "views/format.h"
#include "views/report_parts.h"
#include "views/time_to_train_view.h"

namespace planner {

using nlohmann::json;
using namespace report_detail;

namespace {

// Every rejection with its count, how many that reason alone rejects and its
// label (worded for the profile), most binding first, then most frequent
// (ties in reason order); the framework's rules after the cost model's
// reasons with no "alone" count (they are not relaxed).
struct RejectionRow {
  std::int64_t count = 0, alone = 0;
  std::string label;
};
std::vector<RejectionRow> rejection_rows(const SearchResult& r, const HardwareProfile& hw) {
  std::vector<RejectionRow> rows;
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if (r.rejections[i] || r.alone[i]) rows.push_back({r.rejections[i], r.alone[i], reason_for(Reason(i), hw)});
  if (r.framework) {
    const FrameworkInfo& info = framework_info(*r.framework);
    for (std::size_t i = 0; i < r.framework_rejections.size(); ++i)
      if (r.framework_rejections[i]) rows.push_back({r.framework_rejections[i], 0, rule_label(info, int(i))});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const RejectionRow& a, const RejectionRow& b) {
    if (a.alone != b.alone) return a.alone > b.alone;
    return a.count > b.count;
  });
  return rows;
}

}  // namespace

json to_json(const SearchResult& r, const RunContext& ctx) {
  json j;
  add_report_header(j, ctx);
  j["seq_len"] = ctx.training.seq_len;
  j["global_batch_sequences"] = ctx.training.global_batch_sequences;
  j["dtype"] = std::string(to_string(ctx.training.dtype));
  add_run_fields(j, ctx, nullptr);
  j["considered"] = r.considered;
  j["feasible"] = r.feasible;
  j["rejected"] = r.rejected;
  json rej = json::object();
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if (r.rejections[i]) rej[describe(Reason(i))] = r.rejections[i];
  if (r.framework)
    for (std::size_t i = 0; i < r.framework_rejections.size(); ++i)
      if (r.framework_rejections[i]) rej[rule_label(framework_info(*r.framework), int(i))] = r.framework_rejections[i];
  j["rejections"] = rej;
  json alone = json::object();
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if (r.alone[i]) alone[describe(Reason(i))] = r.alone[i];
  j["rejected_by_that_reason_alone"] = alone;
  json top = json::array();
  for (const auto& ev : r.top) {
    json row = to_json(ev);
    if (ctx.budget)
      row["time_to_train"] =
          train_json(time_to_train(*ctx.budget, ev.time.tokens_per_s, ctx.training.num_gpus), *ctx.budget);
    top.push_back(row);
  }
  j["results"] = top;
  if (ctx.launch && ctx.framework)
    j["launch"] = {{"framework", std::string(to_string(ctx.framework->framework))},
                   {"release", ctx.framework->release},
                   {"text", ctx.launch->text},
                   {"note", ctx.launch->note}};
  return j;
}

namespace {

// A module list in one CSV field: "layernorm+mla_up_proj".
std::string csv_field(std::string s) {
  std::replace(s.begin(), s.end(), ',', '+');
  return s;
}

}  // namespace

std::string report_detail::search_csv(const std::vector<Evaluation>& rows, const RunContext& ctx,
                                      const std::string& extra_header, const std::vector<std::string>& extra) {
  const bool cost = ctx.budget && ctx.budget->gpu_hour_cost_usd > 0;
  std::string out =
      "rank,tp,cp,pp,dp,mbs,micro_batches,vpp,recompute,zero,sp,gib_per_gpu,step_s,tokens_per_s,mfu,tflops_per_gpu,"
      "dominant_overhead,split";
  const bool moe = ctx.model.is_moe();  // expert parallelism, as the table's EP/ETP and a2a columns
  if (moe) out += ",ep,etp,overlap_a2a";
  if (ctx.budget) out += ",days,gpu_hours";
  if (cost) out += ",cost_usd";
  out += extra_header + "\n";
  int rank = 1;
  for (const auto& ev : rows) {
    const auto& c = ev.config;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.2f},{:.4f},{:.0f},{:.4f},{:.1f},{},{}", rank++, c.tp, c.cp,
                       c.pp, c.dp, c.micro_batch_size, ev.time.micro_batches, c.virtual_stages,
                       csv_field(recompute_label(c, ev.recompute_modules)), zero_label(c), c.sequence_parallel ? 1 : 0,
                       ev.memory.total_bytes / kGiB, ev.time.step_s, ev.time.tokens_per_s, ev.time.mfu,
                       ev.time.tflops_per_gpu, dominant_overhead(ev.time), split_label(ev.plan));
    if (moe) out += fmt::format(",{},{},{}", c.ep, c.etp, ev.overlap_a2a ? 1 : 0);
    if (ctx.budget) {
      const TimeToTrain t = time_to_train(*ctx.budget, ev.time.tokens_per_s, ctx.training.num_gpus);
      out += fmt::format(",{:.2f},{:.0f}", t.days, t.gpu_hours);
      if (cost) out += fmt::format(",{:.0f}", t.cost_usd);
    }
    if (std::size_t(rank - 2) < extra.size()) out += extra[std::size_t(rank - 2)];
    out += "\n";
  }
  return out;
}

std::string render_search(const SearchResult& r, const RunContext& ctx, Format f) {
  if (f == Format::json) return to_json(r, ctx).dump(2) + "\n";
  if (f == Format::csv) return search_csv(r.top, ctx);
  const bool cost = ctx.budget && ctx.budget->gpu_hour_cost_usd > 0;
  std::string out = context_line(ctx) + "\n\n";
  // Expert parallelism (MoE) as a last column, only where a result uses it.
  const bool ep_column = std::any_of(r.top.begin(), r.top.end(),
                                     [](const Evaluation& ev) { return ev.config.ep > 1 || ev.config.etp > 1; });
  if (r.top.empty()) {
    out += "no feasible layout\n";
  } else {
    // The recompute column as wide as its widest label (Megatron module lists).
    std::size_t rw = 9;
    for (const auto& ev : r.top) rw = std::max(rw, recompute_label(ev.config, ev.recompute_modules).size());
    std::size_t zw = 4;  // "3nr/16" under hybrid sharding
    for (const auto& ev : r.top) zw = std::max(zw, zero_label(ev.config).size());
    std::string head = fmt::format(
        "{:>4} {:>3} {:>3} {:>3} {:>5} {:>4} {:>5} {:>4} {:<{}} {:>{}} {:>3} {:>8} {:>9} {:>11} {:>6} {:>7}", "rank",
        "TP", "CP", "PP", "DP", "mbs", "m", "vpp", "recompute", rw, "ZeRO", zw, "SP",
        fmt::format("GiB/{}", device_word(ctx.hardware)), "step s", "tokens/s", "MFU", "TFLOP/s");
    if (ctx.budget) head += fmt::format(" {:>7}", "days");
    if (cost) head += fmt::format(" {:>11}", "cost $");
    out += head + "  dominant overhead   layers per stage\n";
    if (ep_column) out.insert(out.size() - 1, "  | EP/ETP  a2a");
    int rank = 1;
    for (const auto& ev : r.top) {
      const auto& c = ev.config;
      std::string row = fmt::format(
          "{:>4} {:>3} {:>3} {:>3} {:>5} {:>4} {:>5} {:>4} {:<{}} {:>{}} {:>3} {:>8.2f} {:>9.3f} {:>11.0f} {:>5.1f}% "
          "{:>7.0f}",
          rank++, c.tp, c.cp, c.pp, c.dp, c.micro_batch_size, ev.time.micro_batches, c.virtual_stages,
          recompute_label(c, ev.recompute_modules), rw, zero_label(c), zw, c.sequence_parallel ? "on" : "off",
          ev.memory.total_bytes / kGiB, ev.time.step_s, ev.time.tokens_per_s, 100.0 * ev.time.mfu,
          ev.time.tflops_per_gpu);
      if (ctx.budget) {
        const TimeToTrain t = time_to_train(*ctx.budget, ev.time.tokens_per_s, ctx.training.num_gpus);
        row += fmt::format(" {:>7.1f}", t.days);
        if (cost) row += fmt::format(" {:>11.0f}", t.cost_usd);
      }
      out += row + fmt::format("  {:<18}  {}\n", dominant_overhead(ev.time), split_label(ev.plan));
      if (ep_column)
        out.insert(out.size() - 1, fmt::format("  | {:<6} {}", fmt::format("{}/{}", c.ep, c.etp),
                                               ev.overlap_a2a ? "overlap" : "exposed"));
    }
  }
  if (std::any_of(r.top.begin(), r.top.end(),
                  [](const Evaluation& ev) { return ev.config.zero_stage == 3 && !ev.config.reshard_after_forward; }))
    out += "ZeRO 3nr: ZeRO-3 keeping the gathered weights from forward to backward (--reshard-after-forward false)\n";
  if (std::any_of(r.top.begin(), r.top.end(), [](const Evaluation& ev) { return ev.config.zero_shard > 0; }))
    out +=
        "ZeRO z/N: stage z sharded over groups of N of the DP x CP ranks, replicated across the groups (hybrid "
        "sharding, --zero-shard N)\n";
  if (ctx.budget && !r.top.empty())
    out += fmt::format("days, GPU-hours and cost to train {:.4g} tokens with every step at the priced step time\n",
                       ctx.budget->tokens);
  out +=
      fmt::format("\n{} configurations considered, {} feasible, {} rejected\n", r.considered, r.feasible, r.rejected);
  // Most binding first (SearchResult::alone: the configurations a reason
  // alone rejects), then by the configurations it rejected; the framework's
  // rules (not relaxed, so no "alone" count) by their counts after them.
  const auto rows = rejection_rows(r, ctx.hardware);
  if (!rows.empty())
    out += "rejection reasons, most binding first (alone: configurations that reason alone rejects):\n" +
           fmt::format("  {:>10} {:>10}  {}\n", "rejected", "alone", "reason");
  for (std::size_t i = 0; i < rows.size() && i < 5; ++i)
    out += fmt::format("  {:>10} {:>10}  {}\n", rows[i].count, rows[i].alone, rows[i].label);
  if (ctx.launch && ctx.framework)
    out += fmt::format("\nlaunch rank 1 with {} {}:\n{}", ctx.framework->display_name, ctx.framework->release,
                       ctx.launch->text);
  return out;
}

}  // namespace planner
