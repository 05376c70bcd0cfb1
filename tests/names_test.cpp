// The enum name tables (planner/spec/names.h and the tables next to enums of
// higher layers): every value has exactly one name, names round-trip, and
// the names are the ones files and flags have always used.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <string_view>

#include "planner/model/collectives.h"
#include "planner/spec/names.h"
#include "planner/views/report.h"

using namespace planner;

namespace {

// Every entry round-trips, values and names are unique, and the values are
// exactly 0 .. count-1 (the enums are dense), so no value lacks a name.
template <typename Enum>
void check_table(std::size_t count) {
  const auto table = name_table(Enum{});
  REQUIRE(table.size() == count);
  std::set<int> values;
  std::set<std::string_view> names;
  for (const auto& n : table) {
    INFO(n.name);
    CHECK(name_of(n.value) == n.name);
    CHECK(parse_name<Enum>(n.name) == n.value);
    CHECK(!n.name.empty());
    values.insert(int(n.value));
    names.insert(n.name);
  }
  CHECK(values.size() == count);
  CHECK(names.size() == count);
  CHECK(*values.begin() == 0);
  CHECK(*values.rbegin() == int(count) - 1);
  CHECK(!parse_name<Enum>("").has_value());
  CHECK(!parse_name<Enum>("no such name").has_value());
}

}  // namespace

TEST_CASE("every enum value has one name that round-trips", "[names]") {
  check_table<FfnKind>(5);
  check_table<NormKind>(2);
  check_table<PositionKind>(3);
  check_table<Topology>(2);
  check_table<DType>(kNumDTypes);
  check_table<AttentionKernel>(3);
  check_table<Recompute>(3);
  check_table<Schedule>(4);
  check_table<Collective>(kNumCollectives);
  check_table<Format>(3);
  check_table<Zero3Gather>(3);
}

TEST_CASE("names are the ones files, flags and reports use", "[names]") {
  CHECK(to_string(FfnKind::squared_relu) == "squared_relu");
  CHECK(to_string(NormKind::layernorm) == "layernorm");
  CHECK(to_string(PositionKind::learned) == "learned");
  CHECK(to_string(PositionKind::alibi) == "alibi");
  CHECK(to_string(Topology::switched) == "switch");
  CHECK(to_string(DType::fp8) == "fp8");
  CHECK(to_string(AttentionKernel::unfused) == "unfused");
  CHECK(to_string(Recompute::selective) == "selective");
  CHECK(to_string(Schedule::one_f_one_b) == "1f1b");
  CHECK(to_string(Schedule::zb_h1) == "zb-h1");
  CHECK(std::string_view(collective_key(Collective::reduce_scatter)) == "reduce_scatter");
  CHECK(collective_from_key("send_recv") == Collective::send_recv);
  CHECK(!collective_from_key("send-recv").has_value());
  CHECK(name_of(Format::csv) == "csv");
  // Exact, case-sensitive matches only.
  CHECK(!parse_name<Schedule>("zbh1").has_value());
  CHECK(!parse_name<DType>("BF16").has_value());
  CHECK(name_of(Schedule(99)) == "?");
}

TEST_CASE("flags list the names in table order, subsets in the order asked", "[names]") {
  CHECK(name_list<Schedule>() == std::vector<std::string>{"gpipe", "1f1b", "interleaved", "zb-h1"});
  CHECK(name_list<Recompute>() == std::vector<std::string>{"none", "selective", "full"});
  CHECK(name_list<Format>() == std::vector<std::string>{"table", "json", "csv"});
  CHECK(name_list(kClosedFormSchedules) == std::vector<std::string>{"1f1b", "gpipe"});
  constexpr auto subset = names_for({Schedule::one_f_one_b, Schedule::gpipe});
  static_assert(subset[0].name == "1f1b" && subset[1].value == Schedule::gpipe);
  CHECK(name_list(subset) == std::vector<std::string>{"1f1b", "gpipe"});
}
