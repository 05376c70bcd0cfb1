// Pictures of a simulated step (simulate.h): a Chrome Trace Event Format file
// (Perfetto, chrome://tracing), a self-contained SVG timeline, and a compact
// text timeline for small cases. Pure functions returning the file contents;
// the CLI writes them with write_file_atomically.
#pragma once

#include <string>
#include <vector>

#include "planner/model/evaluate.h"
#include "planner/simulate/simulate.h"
#include "planner/views/report.h"

namespace planner {

struct TimelineLabels {
  std::string title;                     // e.g. "llama3.1-70b on dgx-h100: TP4 PP4 DP4, interleaved v=2"
  std::vector<std::string> stage_names;  // one per stage; empty: "stage k"
  std::string command;                   // the command that produced it (kept in the trace's metadata)
};

// The labels of a `planner simulate` run: the title names the run, layout
// and schedule ("llama3.1-8b on dgx-h100, 32 GPUs: TP2 CP1 PP4 DP4, mbs 1,
// m 8, vpp 1, 1f1b"), each stage its layers ("stage 0: 8 layers + emb").
[[nodiscard]] TimelineLabels timeline_labels(const RunContext& ctx, const Evaluation& ev, const PipelineProblem& pr,
                                             std::string command);

// Chrome Trace Event Format (JSON object form): one process per stage, one
// thread per stream, complete events ("ph":"X") with ts/dur in microseconds
// and the micro-batch and chunk in args; process/thread names as metadata.
// Spec: "Trace Event Format", Google (docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
[[nodiscard]] std::string render_chrome_trace(const SimResult& r, const TimelineLabels& labels);

// SVG 1.1: stages as rows (compute row plus thin send / TP-CP / DP rows),
// colour by op kind, a legend, a time axis in ms, tooltips per box.
[[nodiscard]] std::string render_svg_timeline(const SimResult& r, const TimelineLabels& labels);

// Text timeline, `width` columns of time: one line per stage with each op as
// its letter (F, R, B, W, O optimizer) and micro-batch number, '.' idle.
// Throws InputError("--ascii", ...) when the case is too large to read
// (more than 16 stages or 64 ops per stage row's micro-batches x chunks).
[[nodiscard]] std::string render_ascii_timeline(const SimResult& r, std::int64_t p, std::int64_t v, std::int64_t m,
                                                int width = 120);

}  // namespace planner
