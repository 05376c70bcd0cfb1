#include "planner/spec/input_error.h"

namespace planner {

namespace {
std::string join(const std::string& where, const std::string& message) {
  return where.empty() ? message : where + ": " + message;
}
}  // namespace

InputError::InputError(std::string where, std::string message)
    : std::runtime_error(join(where, message)), where_(std::move(where)), message_(std::move(message)) {}

}  // namespace planner
