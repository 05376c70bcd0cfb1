// `planner search`'s report: the search result and the simulated re-ranking
// (search_report.h).
#include "planner/views/search_report.h"

#include "planner/model/labels.h"

#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "planner/spec/names.h"
#include "views/format.h"
#include "views/report_parts.h"

namespace planner {

namespace {

nlohmann::json would_fit_json(const std::vector<FitSuggestion>& fits) {
  nlohmann::json a = nlohmann::json::array();
  for (const FitSuggestion& s : fits)
    a.push_back({{"change", s.change},
                 {"gpus", s.training.num_gpus},
                 {"global_batch_sequences", s.training.global_batch_sequences},
                 {"best", to_json(s.best)}});
  return a;
}

// The nearest changes that fit (table), after "no feasible layout".
std::string would_fit_text(const std::vector<FitSuggestion>& fits, const RunContext& ctx) {
  if (fits.empty()) return "";
  const char* dev = device_word(ctx.hardware);
  std::string out = "\nwhat would fit (each found by a search with that one change):\n";
  for (const FitSuggestion& s : fits)
    out += fmt::format("  {:<22} best {:c}: step {:.3f} s, {:.2f} GiB/{}, MFU {:.1f}%\n", s.change, s.best.config,
                       s.best.time.step_s, s.best.memory.total_bytes / (1024.0 * 1024.0 * 1024.0), dev,
                       100.0 * s.best.time.mfu);
  return out;
}

// A CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
std::string quoted_csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// --simulate-top as CSV: one table, the search's rows with the simulation's
// columns (empty for a row not simulated), and rows for the simulated layouts
// past --top too: the JSON's "simulated_ranking" folded into the ranking.
std::string search_csv_with_simulation(const SearchReport& rep, const RunContext& ctx) {
  std::vector<const SimulatedRank*> by_search_rank;
  std::vector<std::size_t> simulated_rank;
  for (std::size_t i = 0; i < rep.simulated->size(); ++i) {
    const SimulatedRank& x = (*rep.simulated)[i];
    if (x.closed_form_rank > by_search_rank.size()) {
      by_search_rank.resize(x.closed_form_rank, nullptr);
      simulated_rank.resize(x.closed_form_rank, 0);
    }
    by_search_rank[x.closed_form_rank - 1] = &x;
    simulated_rank[x.closed_form_rank - 1] = i + 1;
  }
  std::vector<Evaluation> rows = rep.search.top;
  for (std::size_t i = rows.size(); i < by_search_rank.size() && by_search_rank[i]; ++i)
    rows.push_back(by_search_rank[i]->evaluation);
  std::vector<std::string> extra;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SimulatedRank* x = i < by_search_rank.size() ? by_search_rank[i] : nullptr;
    if (!x)
      extra.push_back(",,,,");
    else if (!x->not_simulated.empty())
      extra.push_back(fmt::format(",{},,,{}", simulated_rank[i], quoted_csv(x->not_simulated)));
    else
      extra.push_back(
          fmt::format(",{},{:.6f},{:.4f},", simulated_rank[i], x->simulated_step_s, x->simulated_bubble_fraction));
  }
  return report_detail::search_csv(rows, ctx,
                                   ",simulated_rank,simulated_step_s,simulated_bubble_fraction,not_simulated", extra);
}

}  // namespace

std::string render_search_report(const SearchReport& rep, const RunContext& ctx, Format f) {
  if (f == Format::json) {
    nlohmann::json j = to_json(rep.search, ctx);
    if (rep.simulated) j["simulated_ranking"] = to_json(*rep.simulated);
    if (rep.search.top.empty()) j["would_fit"] = would_fit_json(rep.would_fit);
    return j.dump(2) + "\n";
  }
  if (f == Format::csv && rep.simulated) return search_csv_with_simulation(rep, ctx);
  std::string out = render_search(rep.search, ctx, f);
  if (f == Format::table) out += would_fit_text(rep.would_fit, ctx);
  if (!rep.simulated) return out;
  return out + render_simulated_ranking(*rep.simulated, f);
}

nlohmann::json to_json(const std::vector<SimulatedRank>& ranks) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto& x = ranks[i];
    nlohmann::json row = {{"simulated_rank", i + 1},
                          {"search_rank", x.closed_form_rank},
                          {"config", report_detail::config_json(x.evaluation)},
                          {"closed_form_step_s", x.evaluation.time.step_s}};
    if (x.not_simulated.empty()) {
      row["simulated_step_s"] = x.simulated_step_s;
      row["simulated_bubble_fraction"] = x.simulated_bubble_fraction;
    } else {
      row["not_simulated"] = x.not_simulated;
    }
    a.push_back(row);
  }
  return a;
}

std::string render_simulated_ranking(const std::vector<SimulatedRank>& ranks, Format f) {
  if (f == Format::json) return to_json(ranks).dump(2) + "\n";
  // Expert parallelism (MoE) as the search table has it: EP/ETP and the
  // all-to-all's overlap, only where a simulated layout uses it.
  const bool ep_column = std::any_of(ranks.begin(), ranks.end(), [](const SimulatedRank& x) {
    return x.evaluation.config.ep > 1 || x.evaluation.config.etp > 1;
  });
  if (f == Format::csv) {
    std::string out =
        "simulated_rank,search_rank,tp,cp,pp,dp,mbs,vpp,recompute,zero,closed_form_step_s,simulated_step_s";
    out += ep_column ? ",ep,etp,overlap_a2a\n" : "\n";
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const auto& x = ranks[i];
      const auto& c = x.evaluation.config;
      std::string label = recompute_label(c, x.evaluation.recompute_modules);
      std::replace(label.begin(), label.end(), ',', '+');  // one CSV field, as the search's CSV
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.6f},{}", i + 1, x.closed_form_rank, c.tp, c.cp, c.pp, c.dp,
                         c.micro_batch_size, c.virtual_stages, label, zero_label(c), x.evaluation.time.step_s,
                         x.not_simulated.empty() ? fmt::format("{:.6f}", x.simulated_step_s) : std::string());
      if (ep_column) out += fmt::format(",{},{},{}", c.ep, c.etp, x.evaluation.overlap_a2a ? 1 : 0);
      out += "\n";
    }
    return out;
  }
  std::string out = fmt::format(
      "\nre-ranked by simulated step (top {} of the search, each simulated with its schedule):\n", ranks.size());
  // The recompute column as wide as its widest label (Megatron module lists), as the search table's.
  std::size_t rw = 9;
  for (const auto& x : ranks)
    rw = std::max(rw, recompute_label(x.evaluation.config, x.evaluation.recompute_modules).size());
  std::size_t zw = 4;  // "3nr/16" under hybrid sharding
  for (const auto& x : ranks) zw = std::max(zw, zero_label(x.evaluation.config).size());
  out += fmt::format("{:>8} {:>8} {:>3} {:>3} {:>3} {:>5} {:>4} {:>4} {:<{}} {:>{}} {:>13} {:>13} {:>8} {:>10}{}\n",
                     "sim rank", "search", "TP", "CP", "PP", "DP", "mbs", "vpp", "recompute", rw, "ZeRO", zw,
                     "closed-form s", "simulated s", "diff", "sim bubble", ep_column ? "  | EP/ETP  a2a" : "");
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto& x = ranks[i];
    const auto& c = x.evaluation.config;
    const std::string head = fmt::format("{:>8} {:>8} {:>3} {:>3} {:>3} {:>5} {:>4} {:>4} {:<{}} {:>{}} {:>13.3f}",
                                         i + 1, x.closed_form_rank, c.tp, c.cp, c.pp, c.dp, c.micro_batch_size,
                                         c.virtual_stages, recompute_label(c, x.evaluation.recompute_modules), rw,
                                         zero_label(c), zw, x.evaluation.time.step_s);
    const std::string ep = ep_column ? fmt::format("  | {:<6} {}", fmt::format("{}/{}", c.ep, c.etp),
                                                   x.evaluation.overlap_a2a ? "overlap" : "exposed")
                                     : std::string();
    // A layout not simulated says why at the end of its row (after its EP
    // columns, the simulation's left blank, where the table has them).
    if (!x.not_simulated.empty()) {
      out += ep_column ? fmt::format("{} {:>13} {:>8} {:>10}{}   not simulated: {}\n", head, "-", "-", "-", ep,
                                     x.not_simulated)
                       : fmt::format("{}   not simulated: {}\n", head, x.not_simulated);
      continue;
    }
    out += fmt::format("{} {:>13.3f} {:>7.2f}% {:>9.2f}%{}\n", head, x.simulated_step_s,
                       clean_zero(100.0 * (x.simulated_step_s / x.evaluation.time.step_s - 1.0)),
                       100.0 * x.simulated_bubble_fraction, ep);
  }
  return out;
}

}  // namespace planner
