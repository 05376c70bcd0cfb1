// The search page's charts (html_parts.h): the scatter of every feasible
// layout, step time against memory per GPU, coloured by ZeRO stage, with the
// Pareto front and the top K; and the rejection counts. Layouts that fall on
// the same pixel in the same colour share one mark (the fastest of them
// answers the tooltip), so the page stays small however many layouts there are.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "planner/model/labels.h"
#include "planner/spec/names.h"
#include "views/format.h"
#include "views/html_parts.h"

namespace planner {

namespace {

constexpr double kGiB = double(1ull << 30);
// Okabe & Ito (2008): ZeRO 0, 1, 2, 3, 3nr.
constexpr const char* kFamilyColour[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00"};
constexpr const char* kFamilyName[] = {"0", "1", "2", "3", "3nr"};

int family(const ParallelConfig& c) { return c.zero_stage == 3 && !c.reshard_after_forward ? 4 : c.zero_stage; }

// Plot area and the two axes: memory (GiB, linear) across, step time (s,
// logarithmic when it spans more than 4x) up.
struct Frame {
  static constexpr double width = 1200, height = 500, left = 74, right = 20, top = 14, bottom = 50;
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  bool log_y = false;
  [[nodiscard]] double x(double gib) const { return left + (gib - x_lo) / (x_hi - x_lo) * (width - left - right); }
  [[nodiscard]] double y(double s) const {
    const double f = log_y ? (std::log(s) - std::log(y_lo)) / (std::log(y_hi) - std::log(y_lo)) : (s - y_lo) / (y_hi - y_lo);
    return height - bottom - f * (height - top - bottom);
  }
};

Frame frame_for(const std::vector<SearchPoint>& pts, double capacity_gib) {
  Frame f;
  double mlo = 1e300, mhi = capacity_gib, slo = 1e300, shi = 0;
  for (const SearchPoint& p : pts) {
    mlo = std::min(mlo, p.memory_bytes / kGiB), mhi = std::max(mhi, p.memory_bytes / kGiB);
    slo = std::min(slo, p.step_s), shi = std::max(shi, p.step_s);
  }
  if (pts.empty()) mlo = 0, slo = 1, shi = 10;
  const double mpad = std::max(0.03 * (mhi - mlo), 0.5);
  f.x_lo = std::max(0.0, mlo - mpad), f.x_hi = mhi + mpad;
  f.log_y = shi > 4 * slo;
  if (f.log_y) {
    f.y_lo = slo / 1.08, f.y_hi = shi * 1.08;
  } else {
    const double spad = std::max(0.04 * (shi - slo), 0.02 * shi);
    f.y_lo = std::max(0.0, slo - spad), f.y_hi = shi + spad;
  }
  return f;
}

std::string axes(const Frame& f, double capacity_gib) {
  std::string out;
  const double bottom_y = Frame::height - Frame::bottom, right_x = Frame::width - Frame::right;
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#999\"/>\n",
                     Frame::left, Frame::top, right_x - Frame::left, bottom_y - Frame::top);
  const double xs = nice_step(f.x_hi - f.x_lo, 12);
  for (double v = std::ceil(f.x_lo / xs) * xs; v <= f.x_hi; v += xs)
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
        f.x(v), Frame::top, bottom_y, bottom_y + 16, v);
  std::vector<double> yt;
  if (f.log_y) {
    for (double dec = std::pow(10.0, std::floor(std::log10(f.y_lo))); dec <= f.y_hi; dec *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (m * dec >= f.y_lo && m * dec <= f.y_hi) yt.push_back(m * dec);
  } else {
    const double ys = nice_step(f.y_hi - f.y_lo, 8);
    for (double v = std::ceil(f.y_lo / ys) * ys; v <= f.y_hi; v += ys) yt.push_back(v);
  }
  for (double v : yt)
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        Frame::left, f.y(v), right_x, Frame::left - 6, f.y(v) + 4, v);
  if (capacity_gib > f.x_lo && capacity_gib <= f.x_hi)
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#b00020\" stroke-dasharray=\"5 4\"/>"
        "<text x=\"{3:.1f}\" y=\"{4}\" text-anchor=\"end\" fill=\"#b00020\">GPU capacity {5:.1f} GiB</text>\n",
        f.x(capacity_gib), Frame::top, bottom_y, f.x(capacity_gib) - 4, Frame::top + 14, capacity_gib);
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">memory per GPU (GiB)</text>\n",
                     (Frame::left + right_x) / 2, Frame::height - 10);
  out += fmt::format(
      "<text transform=\"translate(16 {:.1f}) rotate(-90)\" text-anchor=\"middle\">step time (s{})</text>\n",
      (Frame::top + bottom_y) / 2, f.log_y ? ", log scale" : "");
  return out;
}

// One mark per (family, pixel): the fastest layout there and how many share it.
struct Mark {
  std::size_t point;
  int x, y, count;
};

std::vector<std::vector<Mark>> marks_by_family(const std::vector<SearchPoint>& pts,
                                               const std::vector<std::size_t>& drawn, const Frame& f) {
  std::vector<std::vector<Mark>> fam(5);
  std::unordered_map<std::uint64_t, std::size_t> at;
  at.reserve(drawn.size());
  for (std::size_t i : drawn) {
    const SearchPoint& p = pts[i];
    const int k = family(p.config);
    const int x = int(std::lround(f.x(p.memory_bytes / kGiB))), y = int(std::lround(f.y(p.step_s)));
    const std::uint64_t key = (std::uint64_t(k) << 40) | (std::uint64_t(std::uint32_t(x)) << 20) | std::uint32_t(y);
    auto [it, fresh] = at.try_emplace(key, fam[std::size_t(k)].size());
    if (fresh) {
      fam[std::size_t(k)].push_back({i, x, y, 1});
      continue;
    }
    Mark& m = fam[std::size_t(k)][it->second];
    ++m.count;
    if (p.step_s < pts[m.point].step_s) m.point = i;
  }
  return fam;
}

std::string scatter_data(const std::vector<SearchPoint>& pts, const std::vector<std::vector<Mark>>& fam,
                         const RunContext& ctx) {
  std::string out = fmt::format(
      "<script type=\"application/json\" id=\"scatter-data\">{{\"stride\":14,\"tokens_per_step\":{},"
      "\"zero\":[\"0\",\"1\",\"2\",\"3\",\"3nr\"],\"recompute\":[\"none\",\"selective\",\"full\"],\"marks\":[",
      ctx.training.global_batch_sequences * ctx.training.seq_len);
  bool first = true;
  for (std::size_t k = 0; k < fam.size(); ++k)
    for (const Mark& m : fam[k]) {
      const ParallelConfig& c = pts[m.point].config;
      out += fmt::format("{}{},{},{},{},{},{},{},{},{},{},{},{:.0f},{:.0f},{}", first ? "" : ",", m.x, m.y, k, c.tp,
                         c.cp, c.pp, c.dp, c.micro_batch_size, c.virtual_stages, int(c.recompute),
                         c.sequence_parallel ? 1 : 0, pts[m.point].step_s * 1e4,
                         pts[m.point].memory_bytes / double(1 << 20), m.count);
      first = false;
    }
  return out + "]}</script>\n";
}

std::string pareto_path(const std::vector<SearchPoint>& pts, const std::vector<std::size_t>& front, const Frame& f) {
  std::string d;
  for (std::size_t j = 0; j < front.size(); ++j) {
    const SearchPoint& p = pts[front[j]];
    if (j == 0)
      d += fmt::format("M{:.1f} {:.1f}", f.x(p.memory_bytes / kGiB), f.y(p.step_s));
    else
      d += fmt::format("H{:.1f}V{:.1f}", f.x(p.memory_bytes / kGiB), f.y(p.step_s));
  }
  return fmt::format(
      "<path id=\"pareto\" d=\"{}\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"><title>Pareto front: {} "
      "layouts, each faster than every layout needing no more memory</title></path>\n",
      d, front.size());
}

std::string top_marks(const std::vector<Evaluation>& top, const Frame& f) {
  std::string out = "<g id=\"top-k\">\n";
  for (std::size_t i = top.size(); i-- > 0;) {
    const Evaluation& ev = top[i];
    const double x = f.x(ev.memory.total_bytes / kGiB), y = f.y(ev.time.step_s);
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\" fill=\"none\" stroke=\"#000\" stroke-width=\"{}\"><title>rank "
        "{}: {}; step {}; {} per GPU</title></circle>\n",
        x, y, i == 0 ? 2.5 : 1.5, i + 1, html::escape(config_label(ev.config)), html::seconds(ev.time.step_s),
        html::gib(ev.memory.total_bytes));
    if (i == 0)  // the others crowd around it; their rings carry their rank as a tooltip
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" font-weight=\"bold\">best</text>\n",
                         x - 12, y - 10);
  }
  return out + "</g>\n";
}

}  // namespace

std::vector<std::size_t> pareto_front(const std::vector<SearchPoint>& points) {
  std::vector<std::size_t> idx(points.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    const SearchPoint &p = points[a], &q = points[b];
    if (p.memory_bytes != q.memory_bytes) return p.memory_bytes < q.memory_bytes;
    if (p.step_s != q.step_s) return p.step_s < q.step_s;
    return a < b;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : idx)
    if (front.empty() || points[i].step_s < points[front.back()].step_s) front.push_back(i);
  return front;
}

std::vector<std::size_t> thinned_points(std::size_t n, std::size_t max_points, const std::vector<std::size_t>& keep) {
  std::vector<std::size_t> out;
  if (n <= max_points || max_points == 0) {
    out.resize(n);
    std::iota(out.begin(), out.end(), std::size_t{0});
    return out;
  }
  const std::size_t stride = (n + max_points - 1) / max_points;
  for (std::size_t i = 0; i < n; i += stride) out.push_back(i);
  for (std::size_t k : keep)
    if (k < n) out.push_back(k);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace html {

std::string scatter(const SearchResult& r, const RunContext& ctx) {
  const std::vector<SearchPoint>& pts = r.points;
  const double capacity_gib =
      (r.top.empty() ? ctx.hardware.hbm_capacity_bytes : r.top.front().memory.capacity_bytes) / kGiB;
  const Frame f = frame_for(pts, capacity_gib);
  const std::vector<std::size_t> front = pareto_front(pts);
  const std::vector<std::size_t> drawn = thinned_points(pts.size(), kMaxScatterPoints, front);
  const auto fam = marks_by_family(pts, drawn, f);
  std::size_t marks = 0;
  for (const auto& v : fam) marks += v.size();

  std::string out = "<figure>\n<figcaption>";
  out += fmt::format("{} feasible layouts: step time against memory per GPU, coloured by ZeRO stage", count(double(pts.size())));
  if (drawn.size() < pts.size())
    out += fmt::format("; <b>thinned</b>: more than {} layouts, so every {}th is drawn ({} of them) plus the whole Pareto front",
                       count(double(kMaxScatterPoints)), (pts.size() + kMaxScatterPoints - 1) / kMaxScatterPoints,
                       count(double(drawn.size())));
  out += fmt::format(
      ". {} marks: layouts on the same pixel and colour share one. Hover a mark for its layout.</figcaption>\n",
      count(double(marks)));
  out += "<ul class=\"legend\">";
  for (int k = 0; k < 5; ++k)
    if (!fam[std::size_t(k)].empty())
      out += fmt::format("<li><i style=\"background:{}\"></i>ZeRO {} ({} marks)</li>", kFamilyColour[k],
                         kFamilyName[k], count(double(fam[std::size_t(k)].size())));
  out += "<li>━ Pareto front</li><li>◯ the ranked table's layouts (hover for the rank)</li></ul>\n";
  out += fmt::format(
      "<svg id=\"scatter\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" font-size=\"11\" "
      "font-family=\"system-ui,Helvetica,Arial,sans-serif\" role=\"img\">\n",
      Frame::width, Frame::height);
  out += axes(f, capacity_gib);
  for (std::size_t k = 0; k < fam.size(); ++k) {
    if (fam[k].empty()) continue;
    out += fmt::format("<path class=\"family\" data-zero=\"{}\" stroke=\"{}\" stroke-opacity=\"0.75\" "
                       "stroke-width=\"5\" stroke-linecap=\"round\" fill=\"none\" d=\"",
                       kFamilyName[k], kFamilyColour[k]);
    for (const Mark& m : fam[k]) out += fmt::format("M{} {}h0", m.x, m.y);
    out += "\"/>\n";
  }
  if (!front.empty()) out += pareto_path(pts, front, f);
  out += top_marks(r.top, f);
  out += "</svg>\n" + scatter_data(pts, fam, ctx) + "</figure>\n";
  return out;
}

std::string rejections(const SearchResult& r) {
  // (count, label, tooltip): the cost model's reasons, then the framework's
  // rules (label: the rule; tooltip: its citation too).
  struct Row {
    std::int64_t n;
    std::string label, title;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if (r.rejections[i]) rows.push_back({r.rejections[i], describe(Reason(i)), describe(Reason(i))});
  if (r.framework) {
    const FrameworkInfo& info = framework_info(*r.framework);
    for (std::size_t i = 0; i < r.framework_rejections.size(); ++i)
      if (r.framework_rejections[i])
        rows.push_back({r.framework_rejections[i],
                        fmt::format("{}: {}", to_string(info.framework), info.rules[i].text),
                        rule_label(info, int(i))});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.n > b.n; });
  std::string out = fmt::format(
      "<figure>\n<figcaption>{} configurations considered, {} feasible, {} rejected; each rejection counted under "
      "its first reason</figcaption>\n",
      count(double(r.considered)), count(double(r.feasible)), count(double(r.rejected)));
  const double row_h = 22, label_w = 470, bar_w = 600;
  const double height = std::max(1.0, double(rows.size())) * row_h + 4;
  out += fmt::format(
      "<svg id=\"rejections\" viewBox=\"0 0 1200 {0:.0f}\" width=\"1200\" height=\"{0:.0f}\" font-size=\"12\" "
      "font-family=\"system-ui,Helvetica,Arial,sans-serif\" role=\"img\">\n",
      height);
  if (rows.empty()) out += "<text x=\"0\" y=\"16\">no configuration was rejected</text>\n";
  const double most = rows.empty() ? 1.0 : double(rows.front().n);
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const double y = double(j) * row_h + 2, w = std::max(1.0, double(rows[j].n) / most * bar_w);
    out += fmt::format(
        "<text x=\"{0}\" y=\"{1:.0f}\" text-anchor=\"end\">{2}</text>"
        "<rect class=\"reason\" x=\"{3}\" y=\"{4:.0f}\" width=\"{5:.1f}\" height=\"{6:.0f}\" fill=\"#0072B2\">"
        "<title>{9}: {7}</title></rect><text x=\"{8:.1f}\" y=\"{1:.0f}\">{7}</text>\n",
        label_w - 8, y + 14, html::escape(rows[j].label), label_w, y + 2, w, row_h - 6, count(double(rows[j].n)),
        label_w + w + 6, html::escape(rows[j].title));
  }
  return out + "</svg>\n</figure>\n";
}

}  // namespace html

}  // namespace planner
