// Shared helpers of the libFuzzer targets: parse bytes as JSON without
// exceptions, and check that a priced configuration is free of NaN, infinity
// and negative values (abort otherwise, so libFuzzer records the input).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/model/evaluate.h"
#include "planner/spec/input_error.h"

namespace planner::fuzz {

// The parser users' files go through (json_io.cpp): malformed JSON must be an
// InputError, never another exception.
inline std::optional<nlohmann::json> parse(const std::uint8_t* data, std::size_t size) {
  try {
    return parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const InputError&) {
    return std::nullopt;
  }
}

inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
  }
}

inline void require_sane(double x, const char* what) { require(std::isfinite(x) && x >= 0, what); }

// Every figure of an evaluation that a user sees: finite and non-negative.
inline void check_evaluation(const Evaluation& ev) {
  if (ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) return;  // not priced
  const StepTimeBreakdown& t = ev.time;
  for (double x : {t.compute_s, t.recompute_s, t.tp_comm_s, t.cp_comm_s, t.pp_p2p_s, t.pp_bubble_s, t.dp_comm_s,
                   t.zero3_comm_s, t.optimizer_s, t.step_s, t.tokens_per_s, t.mfu, t.hfu})
    require_sane(x, "step-time term");
  const MemoryBreakdown& m = ev.memory;
  for (double x : {m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes, m.logits_bytes,
                   m.transient_bytes, m.total_bytes})
    require_sane(x, "memory term");
}

}  // namespace planner::fuzz
