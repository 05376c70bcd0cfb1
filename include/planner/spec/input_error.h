// The one exception type for bad input (files, fields, flags). Thrown by the
// parsers and catalog lookups; main() prints "planner: error: <what()>" and exits 1.
#pragma once

#include <stdexcept>
#include <string>

namespace planner {

class InputError : public std::runtime_error {
 public:
  // `where` names the file (or flag) and the field, e.g. "models/x.json: hidden_size".
  InputError(std::string where, std::string message);
  [[nodiscard]] const std::string& where() const { return where_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string where_;
  std::string message_;
};

}  // namespace planner
