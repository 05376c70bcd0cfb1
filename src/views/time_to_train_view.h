// Time to train (`--tokens`, `--gpu-hour-cost`; model/time_to_train.h) as
// JSON and text, for the evaluation and search reports (private to src/views/).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/model/time_to_train.h"

namespace planner {

[[nodiscard]] nlohmann::json train_json(const TimeToTrain& t, const TrainingBudget& b);
[[nodiscard]] std::string train_text(const TimeToTrain& t, const TrainingBudget& b);

}  // namespace planner
