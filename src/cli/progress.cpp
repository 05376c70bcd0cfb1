#include "progress.h"

#include <cstdio>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>

namespace planner::cli {

ProgressLine::ProgressLine(std::ostream& out, bool enabled, std::string what, Clock::duration delay,
                           Clock::duration interval, std::function<Clock::time_point()> now)
    : out_(out), enabled_(enabled), what_(std::move(what)), delay_(delay), interval_(interval), now_(std::move(now)) {
  if (enabled_) start_ = now_();
}

bool ProgressLine::stderr_is_terminal() { return ::isatty(::fileno(stderr)) == 1; }

void ProgressLine::update(std::int64_t done, std::int64_t total) {
  if (!enabled_) return;
  const Clock::time_point t = now_();
  if (t - start_ < delay_ || (drawn_ > 0 && t - last_ < interval_)) return;
  last_ = t;
  const int percent = total > 0 ? int(100 * (done < total ? done : total) / total) : 100;
  const std::string line = fmt::format("planner: {} {} of {} configurations ({}%)", what_, done, total, percent);
  // Carriage return, the line, and spaces over what a longer previous line left.
  out_ << '\r' << line << std::string(drawn_ > line.size() ? drawn_ - line.size() : 0, ' ') << std::flush;
  drawn_ = line.size();
}

void ProgressLine::finish() {
  if (drawn_ == 0) return;
  out_ << '\r' << std::string(drawn_, ' ') << '\r' << std::flush;
  drawn_ = 0;
}

}  // namespace planner::cli
