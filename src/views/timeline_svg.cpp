// SVG timeline writer (see timeline.h). Plain SVG 1.1, no scripts or external
// resources, so any browser or image viewer shows it.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "planner/views/timeline.h"
#include "views/format.h"

namespace planner {

namespace {

const char* colour(EventKind k) {
  switch (k) {
    case EventKind::forward:
      return "#4e79a7";
    case EventKind::recompute:
      return "#f28e2b";
    case EventKind::backward:
      return "#59a14f";
    case EventKind::weight_grad:
      return "#8cd17d";
    case EventKind::tp_cp_comm:
      return "#edc948";
    case EventKind::send_activation:
      return "#79706e";
    case EventKind::send_gradient:
      return "#9c755f";
    case EventKind::grad_reduce:
      return "#b07aa1";
    case EventKind::param_gather:
      return "#ff9da7";
    case EventKind::zero3_gather:
      return "#e15759";
    case EventKind::optimizer:
      return "#222222";
    case EventKind::ep_comm:
      return "#76b7b2";
  }
  return "#000000";
}

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n')
          out += c;  // XML 1.0 forbids other controls
    }
  }
  return out;
}

// The drawing's geometry: a lane per stage with four rows (compute, then
// send, TP/CP, DP; a fifth, EP all-to-all, for MoE layouts), time left to
// right over the whole step.
struct Geometry {
  static constexpr int width = 1200, left = 150, right = 20;
  static constexpr int compute_h = 16, thin_h = 5, dense_stage_h = 42, top = 96;
  static constexpr double plot_w = double(width - left - right);
  int stage_h = dense_stage_h;  // + one thin row when the step has EP all-to-all events
  int stages = 0;
  double step_ms = 0;
  [[nodiscard]] int height() const { return top + stages * stage_h + 50; }
  [[nodiscard]] double x_of(double t_s) const { return double(left) + t_s * 1e3 / step_ms * plot_w; }
  [[nodiscard]] int row_y(int stage, Stream s) const {
    const int y0 = top + stage * stage_h;
    switch (s) {
      case Stream::compute:
        return y0;
      case Stream::send:
        return y0 + compute_h + 2;
      case Stream::tp_cp:
        return y0 + compute_h + 2 + (thin_h + 2);
      case Stream::dp:
        return y0 + compute_h + 2 + 2 * (thin_h + 2);
      case Stream::ep:  // MoE only: a fifth row, the lane made taller for it
        return y0 + compute_h + 2 + 3 * (thin_h + 2);
    }
    return y0;
  }
};


bool has_ep_events(const SimResult& r) {
  return std::any_of(r.events.begin(), r.events.end(), [](const SimEvent& e) { return e.stream == Stream::ep; });
}

void draw_legend(std::string& out, bool ep) {
  constexpr int width = Geometry::width;
  struct Item {
    EventKind k;
    const char* text;
  };
  const Item items[] = {{EventKind::forward, "forward"},           {EventKind::recompute, "recompute"},
                        {EventKind::backward, "backward (B)"},     {EventKind::weight_grad, "weight grad (W)"},
                        {EventKind::optimizer, "optimizer"},       {EventKind::tp_cp_comm, "TP/CP exposed"},
                        {EventKind::send_activation, "send act."}, {EventKind::send_gradient, "send grad."},
                        {EventKind::grad_reduce, "grad reduce"},   {EventKind::param_gather, "param gather"},
                        {EventKind::zero3_gather, "ZeRO-3 gather"}, {EventKind::ep_comm, "EP all-to-all"}};
  int lx = 10, ly = 52;
  for (const Item& it : items) {
    if (it.k == EventKind::ep_comm && !ep) continue;
    if (lx > width - 110) lx = 10, ly += 16;
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        lx, ly, colour(it.k), lx + 16, ly + 9, it.text);
    lx += 108;
  }
}

// Stage labels and background lanes.
void draw_lanes(std::string& out, const SimResult& r, const TimelineLabels& labels, const Geometry& g) {
  constexpr int left = Geometry::left, compute_h = Geometry::compute_h;
  constexpr double plot_w = Geometry::plot_w;
  for (int s = 0; s < g.stages; ++s) {
    const std::string name =
        std::size_t(s) < labels.stage_names.size() ? labels.stage_names[std::size_t(s)] : "stage " + std::to_string(s);
    const int y = g.row_y(s, Stream::compute);
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#f1f1f1\"/>\n", left, y, plot_w,
                       compute_h);
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", 6, y + 12, escape(name));
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#666666\" font-size=\"9\">busy {:.0f}%</text>\n", 6, y + 25,
                       100.0 * r.stages[std::size_t(s)].busy_fraction());
  }
}

// One rectangle per event, with a tooltip; micro-batch numbers where they fit.
void draw_events(std::string& out, const SimResult& r, const Geometry& g) {
  constexpr int compute_h = Geometry::compute_h, thin_h = Geometry::thin_h;
  for (const SimEvent& e : r.events) {
    const double x0 = g.x_of(e.start_s), x1 = g.x_of(e.end_s);
    const double w = std::max(x1 - x0, 0.3);
    const int h = e.stream == Stream::compute ? compute_h : thin_h;
    const int y = g.row_y(e.stage, e.stream);
    std::string tip = to_string(e.kind);
    if (e.micro_batch >= 0) tip += fmt::format(" micro-batch {}", e.micro_batch);
    if (e.chunk >= 0) tip += fmt::format(" chunk {}", e.chunk);
    tip += fmt::format(": {:.3f} to {:.3f} ms", e.start_s * 1e3, e.end_s * 1e3);
    // Odd virtual chunks are drawn lighter, so interleaving shows.
    const char* opacity = e.chunk > 0 && e.chunk % 2 == 1 ? " fill-opacity=\"0.65\"" : "";
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"{}><title>{}</title></rect>\n", x0, y, w,
        h, colour(e.kind), opacity, tip);
    if (e.stream == Stream::compute && e.micro_batch >= 0) {
      const std::string label = std::to_string(e.micro_batch);
      if (w >= 7.0 * double(label.size()) + 2.0)
        out += fmt::format(
            "<text x=\"{:.2f}\" y=\"{}\" fill=\"#ffffff\" font-size=\"10\" text-anchor=\"middle\">{}</text>\n",
            x0 + w / 2, y + 12, label);
    }
  }
}

// The time axis: about ten ticks, in ms (or s once the step is longer than 10 s).
void draw_time_axis(std::string& out, const Geometry& g) {
  constexpr int left = Geometry::left, top = Geometry::top;
  const int stage_h = g.stage_h;
  constexpr double plot_w = Geometry::plot_w;
  const int stages = g.stages;
  const double step_ms = g.step_ms;
  const int axis_y = top + stages * stage_h + 4;
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#000000\"/>\n", left, axis_y,
                     double(left) + plot_w, axis_y);
  // Seconds on the axis once the step is longer than 10 s.
  const bool seconds = step_ms > 1e4;
  const double unit_ms = seconds ? 1e3 : 1.0;
  const double tick = nice_step(step_ms / unit_ms, 10);
  for (int i = 0; double(i) * tick <= step_ms / unit_ms * (1 + 1e-9); ++i) {
    const double t = double(i) * tick;
    const double x = double(left) + t * unit_ms / step_ms * plot_w;
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#000000\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n",
        x, axis_y, x, axis_y + 5, x, axis_y + 17, t);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">time ({})</text>\n", double(left) + plot_w / 2,
                     axis_y + 33, seconds ? "s" : "ms");
}

}  // namespace

std::string render_svg_timeline(const SimResult& r, const TimelineLabels& labels) {
  Geometry g;
  g.stages = int(r.stages.size());
  g.step_ms = std::max(r.step_s * 1e3, 1e-12);
  const bool ep = has_ep_events(r);
  if (ep) g.stage_h += Geometry::thin_h + 2;
  const int width = Geometry::width, height = g.height();
  std::string out;
  out.reserve(256 + r.events.size() * 160);
  out += fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n",
      width, height, width, height);
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
  out += fmt::format("<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", escape(labels.title));
  out += fmt::format(
      "<text x=\"10\" y=\"36\">step {:.2f} ms; bubble {:.1f}% of the step on stage {} (the last to finish); "
      "rows per stage: compute, PP send, TP/CP exposed, DP{}; odd virtual chunks lighter; numbers: micro-batch</text>\n",
      r.step_s * 1e3, 100.0 * r.critical_wait_fraction(), r.critical_stage, ep ? ", EP all-to-all" : "");

  draw_legend(out, ep);
  draw_lanes(out, r, labels, g);
  draw_events(out, r, g);
  draw_time_axis(out, g);
  out += "</svg>\n";
  return out;
}

}  // namespace planner
