// pipeline: stage balancing, micro-batches in flight and the bubble
// (Narayanan et al. 2021 §2.2; Korthikanti et al. 2022 §4.2.3; Llama 3 §3.3.2).
#include <algorithm>
#include <cstdint>

#include <catch2/catch.hpp>

#include "planner/model/pipeline.h"

using namespace planner;

namespace {
std::int64_t total_layers(const StageLayout& l) {
  std::int64_t sum = 0;
  for (std::int64_t s = 0; s < l.stages; ++s) sum += l.layers_on(s);
  return sum;
}
}  // namespace

TEST_CASE("ideal bubble fraction", "[pipeline]") {
  struct Row {
    std::int64_t p, v, m;
    double expected;
  };
  const Row rows[] = {
      // 1F1B / GPipe: (p-1)/(m+p-1).
      {1, 1, 8, 0.0},
      {4, 1, 8, 3.0 / 11.0},
      {8, 1, 64, 7.0 / 71.0},
      {16, 1, 16, 15.0 / 31.0},
      // Interleaved: bubble (p-1)/v micro-batch times against m of work.
      {4, 2, 8, 1.5 / 9.5},
      {8, 4, 64, 1.75 / 65.75},
      {16, 3, 32, 5.0 / 37.0},
  };
  for (const Row& r : rows) {
    INFO("p " << r.p << " v " << r.v << " m " << r.m);
    CHECK(ideal_bubble_fraction(r.p, r.v, r.m) == Approx(r.expected).epsilon(1e-12));
    if (r.v == 1)
      CHECK(ideal_bubble_fraction(r.p, 1, r.m) == Approx(double(r.p - 1) / double(r.m + r.p - 1)).epsilon(1e-12));
    const double b = double(r.p - 1) / double(r.v);
    CHECK(ideal_bubble_fraction(r.p, r.v, r.m) == Approx(b / (double(r.m) + b)).epsilon(1e-12));
  }
}

TEST_CASE("Llama 3 405B: PP16 over 126 layers gives the end stages 7, the others 8", "[pipeline]") {
  for (double e : {0.6, 0.7, 0.8}) {
    INFO("extra " << e);
    const StageLayout l = balance_layers(126, 16, 1, e, e);
    REQUIRE(l.feasible);
    CHECK(l.stages == 16);
    CHECK(l.first == 7);
    CHECK(l.last == 7);
    for (std::int64_t s = 1; s < 15; ++s) CHECK(l.layers_on(s) == 8);
    CHECK(total_layers(l) == 126);
  }
}

TEST_CASE("divisible layer counts stay even when the extras are small", "[pipeline]") {
  struct Row {
    std::int64_t layers, stages;
    double extra;
    std::int64_t each;
  };
  const Row rows[] = {{96, 8, 0.1, 12}, {32, 4, 0.05, 8}, {80, 4, 0.2, 20}, {32, 2, 0.3, 16}};
  for (const Row& r : rows) {
    INFO(r.layers << " layers over " << r.stages);
    const StageLayout l = balance_layers(r.layers, r.stages, 1, r.extra, r.extra);
    REQUIRE(l.feasible);
    for (std::int64_t s = 0; s < r.stages; ++s) CHECK(l.layers_on(s) == r.each);
    CHECK(total_layers(l) == r.layers);
  }
}

TEST_CASE("balanced layouts cover every layer and respect the minimum", "[pipeline]") {
  struct Row {
    std::int64_t layers, stages, min;
    double ef, el;
  };
  const Row rows[] = {{126, 16, 1, 0.7, 0.7}, {80, 6, 2, 0.1, 1.5}, {61, 8, 1, 0.0, 2.0},
                      {32, 3, 4, 0.5, 0.5},   {10, 5, 2, 3.0, 3.0}, {7, 1, 1, 1.0, 1.0},
                      {32, 16, 2, 3.0, 3.0},  {24, 4, 1, 6.0, 6.0}, {40, 8, 4, 2.5, 2.5}};
  for (const Row& r : rows) {
    INFO(r.layers << " layers, " << r.stages << " stages, min " << r.min << ", extras " << r.ef << "/" << r.el);
    const StageLayout l = balance_layers(r.layers, r.stages, r.min, r.ef, r.el);
    REQUIRE(l.feasible);
    CHECK(total_layers(l) == r.layers);
    // The end stages may hold one layer fewer than the chunks (their head fills one alone).
    for (std::int64_t s = 0; s < r.stages; ++s)
      CHECK(l.layers_on(s) >= ((s == 0 || s == r.stages - 1) && r.min > 1 && r.stages > 1 ? r.min - 1 : r.min));
    // The heaviest stage is within one layer of the lower bound on any layout:
    // (layers + ef + el) / stages.
    double heaviest = 0;
    for (std::int64_t s = 0; s < r.stages; ++s)
      heaviest = std::max(heaviest, double(l.layers_on(s)) + (s == 0 ? r.ef : 0.0) + (s == r.stages - 1 ? r.el : 0.0));
    CHECK(heaviest < (double(r.layers) + r.ef + r.el) / double(r.stages) + 1.0 + std::max(r.ef, r.el));
  }
}

TEST_CASE("infeasible when layers < stages * min_layers - 2 (heads alone in the end chunks)", "[pipeline]") {
  CHECK_FALSE(balance_layers(13, 8, 2, 0.0, 0.0).feasible);  // 13 < 16 - 2
  CHECK_FALSE(balance_layers(7, 8, 1, 0.0, 0.0).feasible);   // 7 < 8: no chunks, no head-only stage
  CHECK(balance_layers(14, 8, 2, 0.0, 0.0).feasible);        // 1 + 6 x 2 + 1
  CHECK(balance_layers(16, 8, 2, 0.0, 0.0).feasible);        // exactly 2 each
  CHECK(balance_layers(16, 8, 2, 0.0, 0.0).layers_on(0) == 2);
  // layers_fill_chunks is the same bound, and the uniform split keeps a layer in every chunk.
  CHECK(layers_fill_chunks(126, 16, 8, PipelineSplit::balanced));
  CHECK_FALSE(layers_fill_chunks(126, 16, 9, PipelineSplit::balanced));
  CHECK_FALSE(layers_fill_chunks(126, 16, 8, PipelineSplit::uniform));
  CHECK(layers_fill_chunks(128, 16, 8, PipelineSplit::uniform));
  CHECK_FALSE(layers_fill_chunks(126, 127, 1, PipelineSplit::balanced));  // a stage without a layer
  CHECK_FALSE(layers_fill_chunks(126, 16, std::int64_t(1) << 62, PipelineSplit::balanced));
}

// The structural check (evaluate, search) and the layouts agree on which
// (layers, pp, v) can be filled, whatever the heads weigh.
TEST_CASE("layers_fill_chunks is exactly when balance_layers and uniform_layers find a layout", "[pipeline]") {
  std::int64_t cases = 0;
  for (std::int64_t layers = 1; layers <= 70; ++layers)
    for (std::int64_t pp = 1; pp <= std::min<std::int64_t>(layers, 20); ++pp)
      for (std::int64_t v = 1; v <= 12; ++v) {
        if (v > 1 && pp == 1) continue;  // vpp_needs_pp
        for (const double e : {0.0, 0.4, 1.0, 3.7}) {
          INFO(layers << " layers, pp " << pp << ", v " << v << ", extras " << e);
          CHECK(balance_layers(layers, pp, v, e, 2.0 * e).feasible ==
                layers_fill_chunks(layers, pp, v, PipelineSplit::balanced));
          ++cases;
        }
        CHECK(uniform_layers(layers, pp, v).feasible == layers_fill_chunks(layers, pp, v, PipelineSplit::uniform));
      }
  CHECK(cases > 10000);
}

// Megatron-LM builds num_layers_to_build - 1 >= 0 layers in the embedding's
// and the loss's chunks (--account-for-embedding/loss-in-pipeline-split,
// transformer_block.py get_num_layers_to_build), so Llama 3 405B's 126 layers
// run PP16 with 8 chunks a stage: one layer a chunk, the heads alone in theirs.
TEST_CASE("the embedding and the output layer may fill an end stage's chunk alone", "[pipeline]") {
  const StageLayout l = balance_layers(126, 16, 8, 0.3, 0.6);
  REQUIRE(l.feasible);
  CHECK(l.layers_on(0) == 7);
  CHECK(l.layers_on(1) == 8);
  CHECK(l.layers_on(15) == 7);
  CHECK(chunk_layers(l, 0, 8, 0.3, 0.6) == std::vector<std::int64_t>{0, 1, 1, 1, 1, 1, 1, 1});
  CHECK(chunk_layers(l, 15, 8, 0.3, 0.6) == std::vector<std::int64_t>{1, 1, 1, 1, 1, 1, 1, 0});
  // Every round is paced by one layer a chunk: no chunk holds two.
  CHECK(interleaved_pace_layers(l, 8, 0.3, 0.6) == Approx(8.0));
  // A head worth more than a layer takes a chunk alone even where a layer a chunk would fit:
  // 32 layers on 4 stages of 2 chunks, output layer worth 2.4 layers.
  const StageLayout heavy = balance_layers(32, 4, 2, 0.2, 2.4);
  REQUIRE(heavy.feasible);
  CHECK(heavy.layers_on(3) < heavy.layers_on(1));
  CHECK(heavy.layers_on(3) >= 1);
}

TEST_CASE("micro-batches in flight per schedule", "[pipeline]") {
  struct Row {
    Schedule s;
    std::int64_t p, v, m, stage;
    double expected;
  };
  const Row rows[] = {
      // GPipe holds every micro-batch.
      {Schedule::gpipe, 4, 1, 16, 0, 16.0},
      {Schedule::gpipe, 4, 1, 16, 3, 16.0},
      // 1F1B: min(m, p - stage) (Narayanan et al. 2021 §2.2).
      {Schedule::one_f_one_b, 4, 1, 16, 0, 4.0},
      {Schedule::one_f_one_b, 4, 1, 16, 3, 1.0},
      {Schedule::one_f_one_b, 8, 1, 3, 0, 3.0},
      {Schedule::one_f_one_b, 16, 1, 128, 0, 16.0},
      // Interleaved stage 0: p + (p-1)/v whole-stage units.
      {Schedule::interleaved, 4, 2, 128, 0, 4.0 + 3.0 / 2.0},
      {Schedule::interleaved, 8, 4, 128, 0, 8.0 + 7.0 / 4.0},
      {Schedule::interleaved, 16, 3, 128, 0, 16.0 + 15.0 / 3.0},
      // Last stage: warm-up (v-1)p chunks plus the one in flight, /v.
      {Schedule::interleaved, 4, 2, 128, 3, (1.0 * 4.0 + 1.0) / 2.0},
  };
  for (const Row& r : rows) {
    INFO("p " << r.p << " v " << r.v << " m " << r.m << " stage " << r.stage);
    CHECK(micro_batches_in_flight(r.s, r.p, r.v, r.m, r.stage) == Approx(r.expected).epsilon(1e-12));
  }
  // Stage 0 of 1F1B in general: min(m, p).
  for (std::int64_t p : {1, 2, 8, 16})
    for (std::int64_t m : {1, 4, 8, 64})
      CHECK(micro_batches_in_flight(Schedule::one_f_one_b, p, 1, m, 0) == double(std::min(m, p)));
}

TEST_CASE("chunk_layers water-fills a stage's layers over its virtual chunks", "[pipeline]") {
  // 126 layers on 16 stages with heads of ~1 layer: 7 / 8 x 14 / 7.
  const StageLayout l = balance_layers(126, 16, 4, 0.9, 1.0);
  REQUIRE(l.layers_on(1) == 8);
  CHECK(chunk_layers(l, 1, 4, 0.9, 1.0) == std::vector<std::int64_t>{2, 2, 2, 2});
  // The head-carrying chunks are the light ones.
  CHECK(chunk_layers(l, 0, 4, 0.9, 1.0) == std::vector<std::int64_t>{1, 2, 2, 2});
  CHECK(chunk_layers(l, 15, 4, 0.9, 1.0) == std::vector<std::int64_t>{2, 2, 2, 1});
  for (std::int64_t s = 0; s < 16; ++s) {
    std::int64_t sum = 0;
    for (std::int64_t n : chunk_layers(l, s, 3, 0.9, 1.0)) sum += n;
    CHECK(sum == l.layers_on(s));
  }
}

TEST_CASE("interleaved rounds are paced by their slowest chunk", "[pipeline]") {
  // Uniform chunks: the pace is the stage's layer count.
  const StageLayout even = balance_layers(64, 4, 2, 0.0, 0.0);
  CHECK(interleaved_pace_layers(even, 2, 0.0, 0.0) == Approx(16.0));
  // 126 layers, PP16, v = 4: 8 layers per middle stage, two per chunk; the
  // first and last stages' head chunks carry the embedding / output instead
  // of a layer: every round paced by two layers.
  const StageLayout l = balance_layers(126, 16, 4, 0.9, 1.0);
  CHECK(interleaved_pace_layers(l, 4, 0.9, 1.0) == Approx(8.0));
  // v = 7 does not divide 8: one round holds two layers on the middle stages
  // and the output chunk adds its head on top of one layer.
  const StageLayout l7 = balance_layers(126, 16, 7, 0.9, 1.6);
  CHECK(interleaved_pace_layers(l7, 7, 0.9, 1.6) > 8.0);
}
