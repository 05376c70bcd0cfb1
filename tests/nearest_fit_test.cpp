// nearest_fit: when nothing fits, the suggested changes each give a feasible
// layout, and the GPU counts are the nearest that do.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/search/nearest_fit.h"

using namespace planner;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;
}

TEST_CASE("nothing fits 70B on 7 GPUs: 16 would, and each suggestion is feasible", "[nearest_fit]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama70b", kDir);
  SearchSpec spec;
  spec.training.num_gpus = 7;
  spec.training.seq_len = m.default_seq_len;
  spec.training.global_batch_sequences = m.default_global_batch_tokens / m.default_seq_len;
  REQUIRE(search(m, hw, spec).top.empty());
  const std::vector<FitSuggestion> fits = nearest_fits(m, hw, spec);
  REQUIRE(!fits.empty());
  bool above = false;
  for (const FitSuggestion& s : fits) {
    INFO(s.change);
    CHECK(s.best.feasible());
    SearchSpec again = spec;
    again.training = s.training;
    CHECK(!search(m, hw, again).top.empty());  // verified, not guessed
    if (s.training.num_gpus > 7) {
      above = true;
      // 8 GPUs hold 70B in no layout; the next whole node, 16, is the nearest above that does.
      CHECK(s.change == "--gpus 16");
    }
  }
  CHECK(above);
}

TEST_CASE("a pinned knob that blocks every layout is suggested away", "[nearest_fit]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama70b", kDir);
  SearchSpec spec;
  spec.training.num_gpus = 64;
  spec.training.seq_len = m.default_seq_len;
  spec.training.global_batch_sequences = 512;
  spec.pins.tp = 1;
  spec.pins.pp = 1;
  spec.pins.zero_stage = 0;  // 70B's weights and optimizer state whole on each GPU: never fits
  REQUIRE(search(m, hw, spec).top.empty());
  std::set<std::string> changes;
  for (const FitSuggestion& s : nearest_fits(m, hw, spec)) changes.insert(s.change);
  CHECK(changes.count("without --zero") == 1);  // ZeRO-3 over 64 GPUs fits
  CHECK(changes.count("without --tp") == 0);    // TP 8 alone still holds 70B / 8 x 18 bytes: no
}
