// Size bounds of every input the cost model takes: the model's dimensions,
// the GPU count, sequence length and batch. Inside them every 64-bit integer
// product of the cost model is exact (parameter counts stay below 2^53, so
// they are exact as doubles too) and every figure is finite. The JSON readers
// and the CLI flags check against these and name the field or flag;
// evaluate() and search() check their specs, so code that builds specs by
// hand gets the same InputError (docs/models.md, "Size limits").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/spec/specs.h"

namespace planner {

inline constexpr std::int64_t kMaxGpus = std::int64_t(1) << 24;  // 16,777,216
inline constexpr std::int64_t kMaxLayers = 100'000;
inline constexpr std::int64_t kMaxHiddenSize = std::int64_t(1) << 20;
inline constexpr std::int64_t kMaxFfnHiddenSize = std::int64_t(1) << 22;
inline constexpr std::int64_t kMaxHeads = 65'536;  // query heads, and so KV heads
inline constexpr std::int64_t kMaxHeadDim = 65'536;
inline constexpr std::int64_t kMaxExperts = 65'536;  // routed (and shared) experts per MoE layer
inline constexpr std::int64_t kMaxVocab = 100'000'000;
inline constexpr std::int64_t kMaxSeqLen = 100'000'000;  // also max_position_embeddings
inline constexpr std::int64_t kMaxGlobalBatchSequences = 1'000'000'000;
inline constexpr double kMaxParams = 1e15;       // the model's total parameter count
inline constexpr double kMaxBytesPerParam = 64;  // weight, gradient and optimizer bytes
inline constexpr int kMaxZeroStage = 3;          // ZeRO stages 0 to 3 (Rajbhandari et al. 2020)

// A duration far below any the cost model prices: the floor of a time that is
// divided by, so that a zero-cost layer or step gives finite ratios (layer-
// equivalents, fractions of the step), not inf or NaN.
inline constexpr double kTinyTime_s = 1e-30;

// Every size outside the bounds, as "field: expected ..., got ..." (JSON
// field names for the model; TrainingSpec member names for a training run).
// Empty when all are within.
[[nodiscard]] std::vector<std::string> size_problems(const ModelSpec& m);
[[nodiscard]] std::vector<std::string> size_problems(const TrainingSpec& ts);

// Throw one InputError(origin, problems joined by "; ") when there are any.
void check_sizes(const ModelSpec& m, const std::string& origin);
void check_sizes(const TrainingSpec& ts, const std::string& origin);

}  // namespace planner
