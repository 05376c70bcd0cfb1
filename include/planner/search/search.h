// Exhaustive search over TP x CP x PP x DP = N, micro-batch size, virtual
// stages, recomputation, ZeRO stage and sequence parallelism, and for MoE
// models expert parallelism (EP, ETP; MoE parallel folding): enumerate, prune
// (structure first, then memory), rank by step time, keep the top K.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "planner/framework/framework.h"
#include "planner/model/evaluate.h"
#include "planner/spec/specs.h"

namespace planner {

// One knob the user fixed: the values it may take (`--tp 8`, `--tp 4,8`,
// `--pp 1-16`); none = searched over every candidate. It reads like the
// std::optional it replaced: a pin of one value is that value (`*pin`,
// value_or); asking a pin of several values for its one value is a bug.
template <typename T>
class Pin {
 public:
  Pin() = default;
  Pin(T v) : values_{v} {}  // NOLINT(google-explicit-constructor): `pins.tp = 4` reads as pinning
  explicit Pin(std::vector<T> values) : values_(std::move(values)) {}
  [[nodiscard]] bool has_value() const { return !values_.empty(); }
  explicit operator bool() const { return has_value(); }
  [[nodiscard]] bool single() const { return values_.size() == 1; }
  [[nodiscard]] T operator*() const {
    if (!single()) throw std::logic_error("Pin: asked for the one value of a pin with several (or none)");
    return values_.front();
  }
  [[nodiscard]] T value_or(T fallback) const { return has_value() ? **this : fallback; }
  // Whether the search may give the knob `v`: always when unpinned.
  [[nodiscard]] bool allows(const T& v) const {
    return values_.empty() || std::find(values_.begin(), values_.end(), v) != values_.end();
  }
  [[nodiscard]] const std::vector<T>& values() const { return values_; }
  bool operator==(const Pin&) const = default;

 private:
  std::vector<T> values_;
};

// Values the user fixed; unpinned knobs are searched. A pin of one value is
// tried as given (a layout it makes invalid is rejected with its reason); a
// pin of several values (a list or a range) keeps those that make a valid
// layout (`--pp 1-16` on 64 GPUs tries 1, 2, 4, 8, 16).
struct SearchPins {
  Pin<std::int64_t> tp, cp, pp, dp, micro_batch_size, virtual_stages;
  Pin<Recompute> recompute;
  Pin<int> zero_stage;
  Pin<bool> reshard_after_forward;  // ZeRO-3 only
  Pin<std::int64_t> zero_shard;     // hybrid sharding's group (ZeRO >= 1; not searched when unpinned: 0)
  Pin<bool> sequence_parallel;
  Pin<std::int64_t> ep, etp;  // expert parallelism and expert TP (MoE models; searched when unpinned)
  // MoE models: --recompute-modules given (TrainingSpec::recompute_modules
  // then holds it; else the search picks a set per layout, kMoeRecomputeSets)
  // and --overlap-a2a (searched, when EP > 1, where unpinned).
  bool recompute_modules = false;
  Pin<bool> overlap_a2a;
};

// The layout the pins give (each pin must hold one value), each knob not pinned at its default: degrees 1,
// micro-batch 1, one virtual stage, no recompute, ZeRO 0, sequence parallelism
// on when TP > 1 (as `planner evaluate`), schedule 1F1B.
[[nodiscard]] ParallelConfig pinned_config(const SearchPins& pins);

// How far a running search is: configurations enumerated so far out of all
// it will enumerate (SearchResult::considered at the end).
struct SearchProgress {
  std::int64_t considered = 0;
  std::int64_t total = 0;
};

struct SearchSpec {
  TrainingSpec training;  // GPUs, sequence length, global batch, dtype, ...
  SearchPins pins;
  std::size_t top_k = 10;
  std::int64_t max_micro_batch_size = 16;
  std::int64_t max_virtual_stages = 8;
  std::int64_t max_cp = 64;
  // Called, when set, each time about progress_every more configurations
  // have been enumerated, and once at the end (considered == total). The
  // library only counts; a caller that shows progress decides when and how
  // (the CLI: on a terminal, after a second).
  std::function<void(const SearchProgress&)> progress;
  std::int64_t progress_every = 4096;
  // Keep every feasible configuration's (layout, step, memory) in
  // SearchResult::points, for a scatter of the whole trade-off (--html). Off
  // by default: the ranked table needs only the top K.
  bool collect_points = false;
  // Keep only the layouts this framework can express (framework.h), counting
  // the others by the rule they break; the search lays out stages as the
  // framework does (FrameworkInfo::split). Its precision defaults are the
  // caller's to apply (apply_framework_defaults), as they depend on flags.
  std::optional<Framework> framework;
};

// One feasible configuration, as a scatter of the search draws it.
struct SearchPoint {
  ParallelConfig config;
  double step_s = 0;
  double memory_bytes = 0;  // per GPU, peak stage
};

struct SearchResult {
  std::vector<Evaluation> top;  // best first
  std::int64_t considered = 0;  // configurations enumerated
  std::int64_t feasible = 0;
  std::int64_t rejected = 0;
  std::array<std::int64_t, kNumReasons> rejections{};  // by first reason
  // With SearchSpec::framework: layouts it cannot express, by rule (index in
  // framework_info(*framework).rules), counted after the structural reasons
  // and before memory.
  std::optional<Framework> framework;
  std::vector<std::int64_t> framework_rejections;
  // How binding each reason is: the configurations it alone rejects, so that
  // relaxing it alone would admit them, as far as checked: a configuration
  // that breaks a structural rule is not priced, so its memory is unknown and
  // it is not counted, except one that breaks only the interleaving rule,
  // priced as if the rule held to learn whether memory would reject it too. With 70B on 7 GPUs memory binds (every
  // layout that passes the rules is out of memory) and the interleaving rule does not (each layout it rejects is also
  // out of memory). Reports list reasons by this, then by `rejections` (docs/cost_model.md, "Search").
  std::array<std::int64_t, kNumReasons> alone{};
  std::vector<SearchPoint> points;  // every feasible one, in enumeration order, when spec.collect_points
};

// Keeps only the top_k best configurations, so memory stays bounded however
// many it enumerates. A model or training run outside the size bounds of
// limits.h, or a pin below 1, is an InputError.
[[nodiscard]] SearchResult search(const ModelSpec& model, const HardwareProfile& hw, const SearchSpec& spec);

// Strict ordering used to rank results: step time, then memory, then the
// configuration itself (deterministic ties).
[[nodiscard]] bool better(const Evaluation& a, const Evaluation& b);

}  // namespace planner
