// Text timeline (see timeline.h): the compute stream of every stage on a
// fixed grid of columns.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"
#include "planner/views/timeline.h"

namespace planner {

std::string render_ascii_timeline(const SimResult& r, std::int64_t p, std::int64_t v, std::int64_t m, int width) {
  if (p > 16 || m * v > 64)
    throw InputError("--ascii", fmt::format("the text timeline is for small cases (at most 16 stages and 64 "
                                            "micro-batches x chunks; this one has p={}, m*v={}); use --svg or --trace",
                                            p, m * v));
  if (width < 20 || width > 1000) throw InputError("--ascii", "expected a width between 20 and 1000 columns");
  const double step = std::max(r.step_s, kTinyTime_s);
  const double dt = step / double(width);
  auto col = [&](double t) { return std::clamp<long>(std::lround(t / dt), 0, width); };
  std::vector<std::string> rows(r.stages.size(), std::string(std::size_t(width), '.'));
  for (const SimEvent& e : r.events) {
    if (e.stream != Stream::compute) continue;
    const long c0 = col(e.start_s), c1 = col(e.end_s);
    if (c1 <= c0) continue;
    char letter = 'O';
    switch (e.kind) {
      case EventKind::forward:
        letter = 'F';
        break;
      case EventKind::recompute:
        letter = 'R';
        break;
      case EventKind::backward:
        letter = 'B';
        break;
      case EventKind::weight_grad:
        letter = 'W';
        break;
      default:
        break;
    }
    std::string text(1, letter);
    if (e.micro_batch >= 0) text += std::to_string(e.micro_batch);
    if (v > 1 && e.chunk >= 0) text += ":" + std::to_string(e.chunk);
    std::string& row = rows[std::size_t(e.stage)];
    for (long c = c0; c < c1; ++c) {
      const std::size_t k = std::size_t(c - c0);
      row[std::size_t(c)] = k < text.size() ? text[k] : (k + 1 == std::size_t(c1 - c0) ? ' ' : '-');
    }
    if (c1 - c0 < long(text.size())) row[std::size_t(c0)] = letter;  // too narrow for the number
    if (c1 - c0 >= 2 && c1 - c0 < long(text.size())) row[std::size_t(c1 - 1)] = ' ';
  }
  std::string out = fmt::format(
      "time 0 .. {:.3f} ms, {:.3f} ms per column; F forward, R recompute, B backward, "
      "W weight gradient, O optimizer, '.' idle or waiting; numbers: micro-batch{}\n",
      r.step_s * 1e3, dt * 1e3, v > 1 ? ":chunk" : "");
  for (std::size_t s = 0; s < rows.size(); ++s) out += fmt::format("stage {:>2} |{}|\n", s, rows[s]);
  return out;
}

}  // namespace planner
