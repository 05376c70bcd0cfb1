// A recorder of formula applications for `--explain`: each cost function may
// append (name, formula, citation, inputs, output). Passing nullptr (the hot
// path in search) records nothing. The library never prints it; report.cpp does.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace planner {

struct ExplainStep {
  std::string name;
  std::string formula;
  std::string citation;
  std::vector<std::pair<std::string, double>> inputs;
  double output = 0;
  std::string unit;
};

class Explain {
 public:
  void add(ExplainStep step) { steps_.push_back(std::move(step)); }
  [[nodiscard]] const std::vector<ExplainStep>& steps() const { return steps_; }

 private:
  std::vector<ExplainStep> steps_;
};

// Records one step in `ex` when there is one (cost functions call this
// unconditionally; nullptr records nothing).
inline void note_step(Explain* ex, const char* name, const char* formula, const char* citation,
                      std::vector<std::pair<std::string, double>> inputs, double output, const char* unit = "s") {
  if (ex) ex->add({name, formula, citation, std::move(inputs), output, unit});
}

}  // namespace planner
