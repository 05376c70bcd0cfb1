// The pieces the HTML pages (html_report.h) are built from, private to
// src/views/: the page frame (CSS, script, run information), numbers with
// units, the breakdown bars, the search charts, the timeline and the
// --explain table. Each returns an HTML fragment.
#pragma once

#include <string>
#include <string_view>

#include "planner/model/evaluate.h"
#include "planner/model/explain.h"
#include "planner/search/search.h"
#include "planner/simulate/simulate.h"
#include "planner/views/html_report.h"
#include "planner/views/report.h"

namespace planner::html {

// Text and attribute values: & < > " and ' escaped, control characters dropped.
[[nodiscard]] std::string escape(std::string_view s);

// Numbers with units, fixed precision: "5.627 s" / "41.2 ms", "64.50 GiB", "2,981,685 tokens/s".
[[nodiscard]] std::string seconds(double s);
[[nodiscard]] std::string gib(double bytes);
[[nodiscard]] std::string count(double n);  // thousands separated by commas

// <!DOCTYPE html> to the opening of <main>, with the inline style and the
// run information (id "run-info"): command, model, hardware, GPUs, version.
[[nodiscard]] std::string page_begin(std::string_view title, const RunContext& ctx, const HtmlPageInfo& info);
// The inline script (tooltips, errors shown on the page) and the closing tags.
[[nodiscard]] std::string page_end();

// A stacked bar of the step's terms, each with its share, and its legend
// (a <figure> with id `id`).
[[nodiscard]] std::string time_breakdown(const StepTimeBreakdown& t, std::string_view id);
// The memory per GPU by component against the GPU's capacity (id `id`).
[[nodiscard]] std::string memory_breakdown(const MemoryBreakdown& m, std::string_view id);
// Step, throughput, MFU and the layout's stages, one line.
[[nodiscard]] std::string summary_line(const Evaluation& ev, const RunContext& ctx);

// The scatter of every feasible layout (id "scatter") with its data for the
// tooltips, the Pareto front (id "pareto") and the top K marked.
[[nodiscard]] std::string scatter(const SearchResult& r, const RunContext& ctx);
// Rejections by first reason, a bar each with its count (id "rejections").
[[nodiscard]] std::string rejections(const SearchResult& r);

// The SVG timeline of a simulated step, inline (id "timeline").
[[nodiscard]] std::string timeline(const SimResult& r, const Evaluation& ev, const PipelineProblem& pr,
                                   const RunContext& ctx, const HtmlPageInfo& info);
// Every --explain formula with its inputs, output and source (id "explain").
[[nodiscard]] std::string explain_table(const Explain& ex);

}  // namespace planner::html
