// The first key an input repeats inside one JSON object (private to src/io).
// JSON leaves repeated names undefined (RFC 8259 §4: "The names within an
// object SHOULD be unique"), and nlohmann::json keeps the last silently, so a
// model, profile, run or suite file that says "tp" twice would be read with
// one of its two values and no word. parse_json_text refuses it instead.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace planner::detail {

class RepeatedKeyFinder {
 public:
  // nlohmann::json::parser_callback_t: follows the parse, keeps every value.
  bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed);
  // Where the first repeated key is, e.g. "cases[3].tp"; empty if none.
  [[nodiscard]] const std::string& repeated() const { return repeated_; }

 private:
  struct Frame {
    bool array = false;
    std::vector<std::string> keys;  // an object's keys so far (objects are small: a linear scan)
    std::string key;                // the key being read
    std::size_t index = 0;          // an array's element being read
  };
  [[nodiscard]] std::string path() const;
  void element_done();
  std::vector<Frame> stack_;
  std::string repeated_;
};

}  // namespace planner::detail
