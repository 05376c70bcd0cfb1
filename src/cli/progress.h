// A one-line progress report for long-running work on a terminal, e.g.
// "planner: searched 40960 of 84840 configurations (48%)": drawn only when
// enabled (stderr is a terminal) and the work has run longer than `delay`,
// redrawn at most once per `interval`, erased by finish(). Disabled, it
// writes nothing, so output to pipes and files (and the golden tests) never
// contains it. The clock is a parameter so tests can drive it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace planner::cli {

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(std::ostream& out, bool enabled, std::string what, Clock::duration delay = std::chrono::seconds(1),
               Clock::duration interval = std::chrono::milliseconds(250),
               std::function<Clock::time_point()> now = Clock::now);
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // On std::cerr, enabled when stderr is a terminal (isatty).
  [[nodiscard]] static bool stderr_is_terminal();

  void update(std::int64_t done, std::int64_t total);
  void finish();  // erases the line if one was drawn

 private:
  std::ostream& out_;
  bool enabled_;
  std::string what_;
  Clock::duration delay_, interval_;
  std::function<Clock::time_point()> now_;
  Clock::time_point start_, last_;
  std::size_t drawn_ = 0;  // characters of the line on screen; 0: none
};

}  // namespace planner::cli
