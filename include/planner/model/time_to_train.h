// Time and cost to train on a number of tokens at a configuration's priced
// throughput: days = tokens / (tokens/s) / 86,400 s; GPU-hours = GPUs x
// hours; cost = GPU-hours x the price of one. Assumes every step runs at the
// priced step time (no restarts, evaluation, checkpoint stalls or warm-up;
// docs/cost_model.md "Known gaps"). `evaluate --tokens` and `search --tokens`.
#pragma once

#include <cstdint>

namespace planner {

// What the user asked to train: tokens and, optionally, the price of one GPU-hour.
struct TrainingBudget {
  double tokens = 0;
  double gpu_hour_cost_usd = 0;  // 0 = no price given
};

struct TimeToTrain {
  double seconds = 0;
  double days = 0;
  double gpu_hours = 0;
  double cost_usd = 0;  // 0 when no price was given
};

[[nodiscard]] inline TimeToTrain time_to_train(const TrainingBudget& b, double tokens_per_s, std::int64_t gpus) {
  TimeToTrain t;
  if (!(tokens_per_s > 0)) return t;
  t.seconds = b.tokens / tokens_per_s;
  t.days = t.seconds / 86400.0;
  t.gpu_hours = double(gpus) * t.seconds / 3600.0;
  t.cost_usd = t.gpu_hours * b.gpu_hour_cost_usd;
  return t;
}

}  // namespace planner
