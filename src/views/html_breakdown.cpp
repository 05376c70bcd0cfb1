// The breakdown bars of one layout (html_parts.h): the step's terms stacked
// to the step time, the memory per GPU stacked against the GPU's capacity,
// each segment with a tooltip and each term in a legend with its value.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "planner/model/labels.h"
#include "views/html_parts.h"

namespace planner::html {

namespace {

struct Segment {
  const char* name;
  double value;
  const char* colour;
};

constexpr int kBarWidth = 1000, kBarHeight = 26;

// One stacked bar over `scale` (the step, or the larger of capacity and
// total), segments left to right; `unit` prints a value.
std::string stacked_bar(const std::vector<Segment>& segs, double scale, const std::string& capacity_mark,
                        std::string (*unit)(double), double share_of) {
  std::string out = fmt::format(
      "<svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" font-size=\"11\" "
      "font-family=\"system-ui,Helvetica,Arial,sans-serif\">\n",
      kBarWidth, kBarHeight + 16, kBarWidth, kBarHeight + 16);
  double x = 0;
  for (const Segment& s : segs) {
    if (s.value <= 0) continue;
    const double w = scale > 0 ? s.value / scale * kBarWidth : 0;
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"0\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\">"
        "<title>{}: {} ({:.1f}%)</title></rect>\n",
        x, std::max(w, 0.5), kBarHeight, s.colour, s.name, unit(s.value),
        share_of > 0 ? 100.0 * s.value / share_of : 0.0);
    x += w;
  }
  out += capacity_mark;
  return out + "</svg>\n";
}

std::string legend(const std::vector<Segment>& segs, std::string (*unit)(double), double share_of) {
  std::string out = "<ul class=\"legend\">";
  for (const Segment& s : segs)
    if (s.value > 0)
      out += fmt::format("<li><i style=\"background:{}\"></i>{} {} ({:.1f}%)</li>", s.colour, s.name, unit(s.value),
                         share_of > 0 ? 100.0 * s.value / share_of : 0.0);
  return out + "</ul>\n";
}

// A term's label and colour in the bar: Tol's "muted" qualitative scheme
// (colour-blind safe) with #661100 from his 12-colour set, plus pale grey.
Segment time_segment(StepTermValue x) {
  switch (x.term) {
    case StepTerm::compute:
      return {"compute", x.s, "#332288"};
    case StepTerm::recompute:
      return {"recompute", x.s, "#88CCEE"};
    case StepTerm::contention:
      return {"contention", x.s, "#44AA99"};
    case StepTerm::tp_comm:
      return {"TP comm", x.s, "#117733"};
    case StepTerm::cp_comm:
      return {"CP comm", x.s, "#999933"};
    case StepTerm::pp_p2p:
      return {"PP send/recv", x.s, "#DDCC77"};
    case StepTerm::pp_bubble:
      return {"PP bubble", x.s, "#CC6677"};
    case StepTerm::dp_comm:
      return {"DP comm", x.s, "#882255"};
    case StepTerm::zero3_comm:
      return {"ZeRO-2/3 comm", x.s, "#AA4499"};
    case StepTerm::ep_comm:
      return {"EP all-to-all", x.s, "#661100"};
    case StepTerm::optimizer:
      return {"optimizer", x.s, "#BBBBBB"};
  }
  return {"?", x.s, "#000000"};
}

}  // namespace

std::string time_breakdown(const StepTimeBreakdown& t, std::string_view id) {
  std::vector<Segment> segs;
  for (const StepTermValue& x : step_terms(t)) segs.push_back(time_segment(x));
  std::string out = fmt::format(
      "<figure class=\"breakdown time\" id=\"{}\">\n<figcaption>Step time {} on the heaviest stage, by term "
      "(exposed communication only; {} micro-batches)</figcaption>\n",
      id, seconds(t.step_s), t.micro_batches);
  out += stacked_bar(segs, t.step_s, "", &seconds, t.step_s);
  return out + legend(segs, &seconds, t.step_s) + "</figure>\n";
}

std::string memory_breakdown(const MemoryBreakdown& m, std::string_view id) {
  // Okabe & Ito (2008), colour-blind safe.
  const std::vector<Segment> segs = {{"weights", m.weights_bytes, "#0072B2"},
                                     {"gradients", m.gradients_bytes, "#56B4E9"},
                                     {"optimizer state", m.optimizer_bytes, "#009E73"},
                                     {"activations", m.activations_bytes, "#E69F00"},
                                     {"logits", m.logits_bytes, "#D55E00"},
                                     {"transient", m.transient_bytes, "#CC79A7"},
                                     {"reserve", m.reserve_bytes, "#999999"}};
  const double scale = std::max(m.capacity_bytes, m.total_bytes);
  const double cap_x = scale > 0 ? m.capacity_bytes / scale * kBarWidth : 0;
  const std::string mark = fmt::format(
      "<line x1=\"{0:.2f}\" y1=\"0\" x2=\"{0:.2f}\" y2=\"{1}\" stroke=\"#000\" stroke-width=\"2\"/>"
      "<text x=\"{2:.2f}\" y=\"{3}\" text-anchor=\"end\">capacity {4}</text>\n",
      std::min(cap_x, kBarWidth - 1.0), kBarHeight + 2, std::min(cap_x, double(kBarWidth)), kBarHeight + 13,
      gib(m.capacity_bytes));
  std::string out = fmt::format(
      "<figure class=\"breakdown memory\" id=\"{}\">\n<figcaption>Memory per GPU {} of {} ({:.0f}%; stage {}, {} "
      "layers, {:.2f} micro-batches in flight)</figcaption>\n",
      id, gib(m.total_bytes), gib(m.capacity_bytes),
      m.capacity_bytes > 0 ? 100.0 * m.total_bytes / m.capacity_bytes : 0.0, m.peak_stage, m.layers_on_peak_stage,
      m.micro_batches_in_flight);
  out += stacked_bar(segs, scale, mark, &gib, m.total_bytes);
  return out + legend(segs, &gib, m.total_bytes) + "</figure>\n";
}

std::string summary_line(const Evaluation& ev, const RunContext& ctx) {
  const StepTimeBreakdown& t = ev.time;
  return fmt::format(
      "<p>step <b>{}</b> · <b>{} tokens/s</b> ({} per GPU) · {:.0f} TFLOP/s per GPU · MFU {:.1f}% · HFU {:.1f}% · "
      "bubble {:.1f}% · dominant overhead: {}</p>\n",
      seconds(t.step_s), count(t.tokens_per_s), count(t.tokens_per_s / double(ctx.training.num_gpus)),
      t.tflops_per_gpu, 100.0 * t.mfu, 100.0 * t.hfu, 100.0 * t.bubble_fraction, dominant_overhead(t));
}

}  // namespace planner::html
