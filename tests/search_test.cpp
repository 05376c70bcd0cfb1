// search: every result is a valid, fitting layout of exactly N GPUs; results
// are ranked and deterministic; pins hold; no feasible layout is a value with
// rejection counts that account for every configuration considered.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/search/search.h"

using namespace planner;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;

SearchSpec spec_for(const ModelSpec& m, std::int64_t gpus, std::size_t top_k) {
  SearchSpec s;
  s.training.num_gpus = gpus;
  s.training.seq_len = m.default_seq_len;
  s.training.global_batch_sequences = m.default_global_batch_tokens / m.default_seq_len;
  s.top_k = top_k;
  return s;
}

std::int64_t rejection_sum(const SearchResult& r) {
  return std::accumulate(r.rejections.begin(), r.rejections.end(), std::int64_t(0));
}

void check_result(const SearchResult& r, std::int64_t gpus, std::size_t top_k) {
  REQUIRE_FALSE(r.top.empty());
  CHECK(r.top.size() <= top_k);
  CHECK(r.top.size() == std::min<std::size_t>(top_k, std::size_t(r.feasible)));
  CHECK(r.considered == r.feasible + r.rejected);
  CHECK(rejection_sum(r) == r.rejected);
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    const Evaluation& ev = r.top[i];
    const ParallelConfig& c = ev.config;
    INFO("rank " << i + 1 << ": tp " << c.tp << " cp " << c.cp << " pp " << c.pp << " dp " << c.dp);
    CHECK(c.tp * c.cp * c.pp * c.dp == gpus);
    CHECK(ev.feasible());
    CHECK(ev.memory.fits());
    CHECK(ev.memory.total_bytes <= ev.memory.capacity_bytes);
    CHECK(ev.time.step_s > 0.0);
    if (i > 0) {
      CHECK(r.top[i - 1].time.step_s <= ev.time.step_s);
      CHECK(better(r.top[i - 1], ev));
    }
  }
}
}  // namespace

TEST_CASE("search results are valid, fitting, ranked and deterministic", "[search]") {
  struct Row {
    const char* model;
    std::int64_t gpus;
    std::size_t top_k;
  };
  const Row rows[] = {{"llama8b", 64, 5}, {"llama70b", 512, 3}};
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  for (const Row& row : rows) {
    SECTION(std::string(row.model) + " on " + std::to_string(row.gpus)) {
      const ModelSpec m = find_model(row.model, kDir);
      const SearchSpec spec = spec_for(m, row.gpus, row.top_k);
      const SearchResult a = search(m, hw, spec);
      check_result(a, row.gpus, row.top_k);
      const SearchResult b = search(m, hw, spec);
      CHECK(a.considered == b.considered);
      CHECK(a.feasible == b.feasible);
      CHECK(a.rejections == b.rejections);
      REQUIRE(a.top.size() == b.top.size());
      for (std::size_t i = 0; i < a.top.size(); ++i) {
        CHECK(a.top[i].config == b.top[i].config);
        CHECK(a.top[i].time.step_s == b.top[i].time.step_s);
        CHECK(a.top[i].memory.total_bytes == b.top[i].memory.total_bytes);
      }
      // A larger top_k extends the list without reordering its head.
      SearchSpec wider = spec;
      wider.top_k = row.top_k + 4;
      const SearchResult w = search(m, hw, wider);
      REQUIRE(w.top.size() >= a.top.size());
      for (std::size_t i = 0; i < a.top.size(); ++i) CHECK(w.top[i].config == a.top[i].config);
    }
  }
}

TEST_CASE("pins are respected", "[search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama70b", kDir);
  SECTION("tp = 4") {
    SearchSpec spec = spec_for(m, 512, 5);
    spec.pins.tp = 4;
    const SearchResult r = search(m, hw, spec);
    check_result(r, 512, 5);
    for (const Evaluation& ev : r.top) CHECK(ev.config.tp == 4);
  }
  SECTION("pp = 8, recompute selective, ZeRO-1") {
    SearchSpec spec = spec_for(m, 512, 5);
    spec.pins.pp = 8;
    spec.pins.recompute = Recompute::selective;
    spec.pins.zero_stage = 1;
    const SearchResult r = search(m, hw, spec);
    check_result(r, 512, 5);
    for (const Evaluation& ev : r.top) {
      CHECK(ev.config.pp == 8);
      CHECK(ev.config.recompute == Recompute::selective);
      CHECK(ev.config.zero_stage == 1);
    }
  }
  SECTION("dp and micro-batch size") {
    const ModelSpec s = find_model("llama8b", kDir);
    SearchSpec spec = spec_for(s, 64, 5);
    spec.pins.dp = 16;
    spec.pins.micro_batch_size = 2;
    spec.pins.sequence_parallel = true;
    const SearchResult r = search(s, hw, spec);
    check_result(r, 64, 5);
    for (const Evaluation& ev : r.top) {
      CHECK(ev.config.dp == 16);
      CHECK(ev.config.micro_batch_size == 2);
      CHECK(ev.config.sequence_parallel);
    }
  }
}

TEST_CASE("no feasible layout is an empty result with every rejection counted", "[search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama70b", kDir);
  const SearchResult r = search(m, hw, spec_for(m, 7, 5));  // 7 GPUs: tp in {1, 7}, 70B does not fit on 7
  CHECK(r.top.empty());
  CHECK(r.feasible == 0);
  CHECK(r.considered > 0);
  CHECK(r.rejected == r.considered - r.feasible);
  CHECK(rejection_sum(r) == r.considered - r.feasible);
}

TEST_CASE("zero GPUs is bad input, not an empty search", "[search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama8b", kDir);
  CHECK_THROWS_WITH(search(m, hw, spec_for(m, 0, 5)), "search: num_gpus: expected at least 1, got 0");
}

TEST_CASE("pinned_config: pins as given, the rest at their defaults", "[search]") {
  SearchPins pins;
  CHECK(pinned_config(pins) == ParallelConfig{});
  pins.tp = 8, pins.pp = 4, pins.dp = 2, pins.virtual_stages = 3;
  pins.recompute = Recompute::full;
  ParallelConfig pc = pinned_config(pins);
  CHECK(pc.tp == 8);
  CHECK(pc.cp == 1);
  CHECK(pc.pp == 4);
  CHECK(pc.dp == 2);
  CHECK(pc.micro_batch_size == 1);
  CHECK(pc.virtual_stages == 3);
  CHECK(pc.recompute == Recompute::full);
  CHECK(pc.zero_stage == 0);
  CHECK(pc.sequence_parallel);  // on when TP > 1, unless pinned
  CHECK(pc.schedule == Schedule::one_f_one_b);
  pins.sequence_parallel = false, pins.zero_stage = 3, pins.micro_batch_size = 4, pins.cp = 2;
  pc = pinned_config(pins);
  CHECK(!pc.sequence_parallel);
  CHECK(pc.zero_stage == 3);
  CHECK(pc.micro_batch_size == 4);
  CHECK(pc.cp == 2);
}

TEST_CASE("list and range pins: only the listed values, the valid ones of a range", "[search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama8b", kDir);
  SearchSpec spec = spec_for(m, 64, 1000);
  spec.pins.tp = Pin<std::int64_t>({2, 4});
  spec.pins.zero_stage = Pin<int>({0, 1});
  std::vector<std::int64_t> pps;
  for (std::int64_t p = 1; p <= 16; ++p) pps.push_back(p);  // --pp 1-16
  spec.pins.pp = Pin<std::int64_t>(pps);
  const SearchResult r = search(m, hw, spec);
  REQUIRE(!r.top.empty());
  std::set<std::int64_t> tps_seen, pps_seen;
  std::set<int> zeros_seen;
  for (const Evaluation& ev : r.top) {
    tps_seen.insert(ev.config.tp);
    pps_seen.insert(ev.config.pp);
    zeros_seen.insert(ev.config.zero_stage);
  }
  CHECK(tps_seen == std::set<std::int64_t>{2, 4});
  CHECK(zeros_seen == std::set<int>{0, 1});
  // The valid values of 1-16 on 64 GPUs at TP 2 or 4: divisors of 32 or 16.
  for (std::int64_t p : pps_seen) CHECK((p == 1 || p == 2 || p == 4 || p == 8 || p == 16));
  CHECK(pps_seen.size() >= 3);
  // No configuration with a non-divisor pp was enumerated: every one considered uses all GPUs.
  CHECK(r.rejections[std::size_t(Reason::gpu_count_mismatch)] == 0);
}

TEST_CASE("a pin of several values has no single value", "[search]") {
  const Pin<std::int64_t> p({4, 8});
  CHECK(p.has_value());
  CHECK(!p.single());
  CHECK(p.allows(8));
  CHECK(!p.allows(2));
  CHECK_THROWS_AS(*p, std::logic_error);
  CHECK(Pin<std::int64_t>(8).value_or(1) == 8);
  CHECK(Pin<std::int64_t>().value_or(1) == 1);
  CHECK(Pin<std::int64_t>().allows(3));
}

TEST_CASE("ZeRO stages at one DP x CP rank are one configuration, priced once", "[search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama8b", kDir);
  SearchSpec spec = spec_for(m, 8, 1000);
  spec.pins.tp = 8;  // DP = CP = PP = 1 (or PP > 1 with DP 1)
  spec.pins.dp = 1;
  const SearchResult r = search(m, hw, spec);
  REQUIRE(!r.top.empty());
  for (const Evaluation& ev : r.top) CHECK(ev.config.zero_stage == 0);
  // With DP 2 the stages differ and all four are listed.
  SearchSpec dp2 = spec_for(m, 16, 1000);
  dp2.pins.tp = 8;
  dp2.pins.dp = 2;
  std::set<int> zeros;
  for (const Evaluation& ev : search(m, hw, dp2).top) zeros.insert(ev.config.zero_stage);
  CHECK(zeros == std::set<int>{0, 1, 2, 3});
}

TEST_CASE("rejection reasons: memory binds for 70B on 7 GPUs, the interleaving rule does not", "[search]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama70b", kDir);
  const SearchResult r = search(m, hw, spec_for(m, 7, 5));
  REQUIRE(r.top.empty());
  const auto oom = std::size_t(Reason::out_of_memory), interleave = std::size_t(Reason::interleave_needs_micro_batches);
  // The interleaving rule rejects more configurations first, but each of them is out of memory too.
  CHECK(r.rejections[interleave] > r.rejections[oom]);
  CHECK(r.alone[oom] > 0);
  CHECK(r.alone[interleave] == 0);
  CHECK(*std::max_element(r.alone.begin(), r.alone.end()) == r.alone[oom]);
}
