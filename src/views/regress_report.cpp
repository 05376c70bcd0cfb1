// `planner regress`'s report: the metrics that moved against the golden file,
// and the summary line of `--update`.
#include "planner/views/regress_report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "planner/model/evaluate.h"
#include "planner/model/labels.h"

namespace planner {

namespace {

std::string reasons_text(double bits) {
  if (!std::isfinite(bits)) return "not finite";
  if (!(bits >= 0) || bits >= double(1u << kNumReasons)) return fmt::format("{:g} (unknown bits)", bits);
  const auto mask = std::uint32_t(bits);
  return mask == 0 ? "none" : fmt::format("{}", ReasonSet{mask});
}

// A prediction that is not finite (a cost-model bug) is named, never printed as nan or inf.
std::string format_value(const std::optional<double>& v) {
  if (!v) return "-";
  return std::isfinite(*v) ? fmt::format("{:.9g}", *v) : "not finite";
}

std::string format_change(const MetricDiff& d) {
  if (const auto c = d.change_pct()) return fmt::format("{:+.3g}%", *c);
  if (!d.golden) return "new";
  if (!d.now) return "removed";
  return "n/a";  // golden value 0
}

}  // namespace

std::string render_regress(const RegressReport& r) {
  std::string out;
  if (!r.differences.empty()) {
    std::size_t wc = 4, wm = 6;
    for (const MetricDiff& d : r.differences) wc = std::max(wc, d.case_name.size()), wm = std::max(wm, d.metric.size());
    out += fmt::format("{:<{}}  {:<{}}  {:>16}  {:>16}  {:>10}\n", "case", wc, "metric", wm, "golden", "now", "change");
    for (const MetricDiff& d : r.differences)
      out += fmt::format("{:<{}}  {:<{}}  {:>16}  {:>16}  {:>10}\n", d.case_name, wc, d.metric, wm,
                         format_value(d.golden), format_value(d.now), format_change(d));
    for (const MetricDiff& d : r.differences)
      if (d.metric == "reasons")
        out += fmt::format("{}: infeasibility reasons were: {}; now: {}\n", d.case_name,
                           d.golden ? reasons_text(*d.golden) : "-", d.now ? reasons_text(*d.now) : "-");
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  if (!r.missing_from_golden.empty())
    out += fmt::format("missing from the golden file ({}): {}\n", r.missing_from_golden.size(),
                       list(r.missing_from_golden));
  if (!r.missing_from_suite.empty())
    out += fmt::format("in the golden file but no longer in the suite ({}): {}\n", r.missing_from_suite.size(),
                       list(r.missing_from_suite));
  out += fmt::format("regress: {} cases, {} metrics, {} differ", r.cases, r.metrics, r.differences.size());
  if (!r.missing_from_golden.empty() || !r.missing_from_suite.empty())
    out += fmt::format("; cases missing from the golden file: {}, no longer in the suite: {}",
                       r.missing_from_golden.size(), r.missing_from_suite.size());
  out += "\n";
  return out;
}

std::string render_update(const RegressReport& r, const std::string& golden_path) {
  std::set<std::string> changed;
  for (const MetricDiff& d : r.differences) changed.insert(d.case_name);
  return fmt::format(
      "regress: updated the golden file {}: {} cases, {} metrics; changed: {} metrics in {} cases; cases "
      "added: {}, removed: {}\n",
      golden_path, r.cases, r.metrics, r.differences.size(), changed.size(), r.missing_from_golden.size(),
      r.missing_from_suite.size());
}

}  // namespace planner
