#include "views/time_to_train_view.h"

#include <fmt/format.h>

#include "views/format.h"

namespace planner {

using nlohmann::json;

json train_json(const TimeToTrain& t, const TrainingBudget& b) {
  json j = {{"tokens", b.tokens},
            {"days", round_to(t.days, 3)},
            {"gpu_hours", round_to(t.gpu_hours, 0)}};
  if (b.gpu_hour_cost_usd > 0) {
    j["gpu_hour_cost_usd"] = b.gpu_hour_cost_usd;
    j["cost_usd"] = round_to(t.cost_usd, 0);
  }
  return j;
}

std::string train_text(const TimeToTrain& t, const TrainingBudget& b) {
  std::string out = fmt::format("time to train {:.4g} tokens: {:.1f} days | {:.0f} GPU-hours", b.tokens, t.days,
                                t.gpu_hours);
  if (b.gpu_hour_cost_usd > 0)
    out += fmt::format(" | ${:.0f} at ${:g} per GPU-hour", t.cost_usd, b.gpu_hour_cost_usd);
  return out + "\n  (every step at the priced step time: no restarts, evaluation or checkpoint stalls)\n";
}

}  // namespace planner
