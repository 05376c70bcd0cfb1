// pin_parse: the layout flags' values, one value or (search) a list or a
// range; malformed text is a one-line error naming the flag.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/config_flags.h"
#include "cli/pin_parse.h"
#include "test_support.h"

using namespace planner;
using planner::testing::error_of;

namespace {
const cli::PinParse kSearch{true, "search"};
const cli::PinParse kEvaluate{false, "evaluate"};
}  // namespace

TEST_CASE("pins: one value, a list, a range, and both mixed", "[pin_parse]") {
  CHECK(kSearch.integers("--tp", "8", 1, 64).values() == std::vector<std::int64_t>{8});
  CHECK(kSearch.integers("--tp", "8,4", 1, 64).values() == std::vector<std::int64_t>{4, 8});
  CHECK(kSearch.integers("--pp", "1-4", 1, 64).values() == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(kSearch.integers("--pp", "1-2,8,2", 1, 64).values() == std::vector<std::int64_t>{1, 2, 8});
  CHECK(!kSearch.integers("--pp", std::nullopt, 1, 64).has_value());
  CHECK(kSearch.names<Recompute>("--recompute", "none,full").values() ==
        std::vector<Recompute>{Recompute::none, Recompute::full});
  CHECK(kSearch.booleans("--sp", "true,false").values() == std::vector<bool>{false, true});
}

TEST_CASE("pins: malformed lists and ranges name the flag", "[pin_parse]") {
  CHECK(error_of([] { (void)kSearch.integers("--tp", std::string("4,,8"), 1, 64); }) ==
        "--tp: expected integers from 1 to 64: one (8), a list (4,8) or a range (1-16), got '4,,8' (an empty item)");
  CHECK(error_of([] { (void)kSearch.integers("--pp", std::string("16-1"), 1, 64); }) ==
        "--pp: range 16-1: expected the smaller value first");
  CHECK(error_of([] { (void)kSearch.integers("--zero", std::string("0-4"), 0, 3); }) ==
        "--zero: range 0-4: expected values from 0 to 3");
  CHECK(error_of([] { (void)kSearch.integers("--tp", std::string("four"), 1, 64); }) ==
        "--tp: expected integers from 1 to 64: one (8), a list (4,8) or a range (1-16), got 'four'");
  CHECK(error_of([] { (void)kSearch.integers("--tp", std::string("0"), 1, 64); }) ==
        "--tp: expected integers from 1 to 64: one (8), a list (4,8) or a range (1-16), got 0");
  CHECK(error_of([] { (void)kSearch.integers("--pp", std::string("1-100000"), 1, 1 << 24); }) ==
        "--pp: range 1-100000: expected at most 4096 values");
  CHECK(error_of([] { (void)kSearch.names<Recompute>("--recompute", std::string("none,some")); }) ==
        "--recompute: expected one of none, selective, full, or a list of them, got 'some'");
}

TEST_CASE("pins: evaluate takes one value per flag", "[pin_parse]") {
  CHECK(kEvaluate.integers("--tp", "8", 1, 64).values() == std::vector<std::int64_t>{8});
  CHECK(error_of([] { (void)kEvaluate.integers("--tp", std::string("4,8"), 1, 64); }) ==
        "--tp: evaluate prices one configuration: expected one value, got '4,8' (lists and ranges are for planner "
        "search)");
  CHECK(error_of([] { (void)kEvaluate.integers("--pp", std::string("1-4"), 1, 64); }) ==
        "--pp: evaluate prices one configuration: expected one value, got '1-4' (lists and ranges are for planner "
        "search)");
  CHECK(error_of([] {
          (void)kEvaluate.names<Recompute>("--recompute", std::string("none,full"));
        }).find("--recompute: evaluate prices one configuration") == 0);
}
