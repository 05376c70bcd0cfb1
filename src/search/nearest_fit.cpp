#include "planner/search/nearest_fit.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "planner/spec/limits.h"
#include "planner/spec/names.h"

namespace planner {

namespace {

// The best layout of `spec` (one result kept, no progress, no points).
std::optional<Evaluation> best_of(const ModelSpec& model, const HardwareProfile& hw, SearchSpec spec) {
  spec.top_k = 1;
  spec.progress = nullptr;
  spec.collect_points = false;
  SearchResult r = search(model, hw, spec);
  if (r.top.empty()) return std::nullopt;
  return std::move(r.top.front());
}

// The first GPU count from `counts` (in order) whose search fits.
std::optional<FitSuggestion> first_fitting_count(const ModelSpec& model, const HardwareProfile& hw,
                                                 const SearchSpec& spec, const std::vector<std::int64_t>& counts) {
  for (std::int64_t n : counts) {
    SearchSpec s = spec;
    s.training.num_gpus = n;
    if (auto ev = best_of(model, hw, s)) return FitSuggestion{fmt::format("--gpus {}", n), std::move(*ev), s.training};
  }
  return std::nullopt;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) out.push_back(n / d);
    }
  return out;
}

}  // namespace

std::vector<FitSuggestion> nearest_fits(const ModelSpec& model, const HardwareProfile& hw, const SearchSpec& spec,
                                        const FitSearchLimits& limits) {
  std::vector<FitSuggestion> out;
  const TrainingSpec& ts = spec.training;
  const std::int64_t N = ts.num_gpus;
  // GPU counts: multiples of the scale-up domain (whole nodes; a multiple has
  // the divisors TP needs), else every count when N is below one domain.
  const std::int64_t domain = hw.tiers.empty() ? 1 : std::max<std::int64_t>(1, hw.tiers[0].size);
  const std::int64_t step = N >= domain ? domain : 1;
  std::vector<std::int64_t> below, above;
  for (std::int64_t n = (N - 1) / step * step; n >= 1 && int(below.size()) < limits.gpu_counts_each_way; n -= step)
    below.push_back(n);
  // Above: to the end of the domain one by one, then whole domains.
  for (std::int64_t n = N + 1; n <= kMaxGpus && int(above.size()) < limits.gpu_counts_each_way;
       n = n < domain ? n + 1 : (n / domain + 1) * domain)
    if (n >= domain ? n % domain == 0 : true) above.push_back(n);
  if (auto s = first_fitting_count(model, hw, spec, below)) out.push_back(std::move(*s));
  if (auto s = first_fitting_count(model, hw, spec, above)) out.push_back(std::move(*s));

  // Global batch sizes: the multiples of N's divisors (the DP degrees a
  // layout of N GPUs can have) nearest the batch, nearest first.
  const std::int64_t G = ts.global_batch_sequences;
  std::set<std::int64_t> batches;
  for (std::int64_t d : divisors(N)) {
    if (d > G) continue;
    batches.insert(G / d * d);
    if (G / d * d + d <= kMaxGlobalBatchSequences) batches.insert(G / d * d + d);
  }
  batches.erase(G);
  std::vector<std::int64_t> by_distance(batches.begin(), batches.end());
  std::stable_sort(by_distance.begin(), by_distance.end(),
                   [G](std::int64_t a, std::int64_t b) { return std::llabs(a - G) < std::llabs(b - G); });
  for (int i = 0; i < int(by_distance.size()) && i < limits.batch_sizes; ++i) {
    SearchSpec s = spec;
    s.training.global_batch_sequences = by_distance[std::size_t(i)];
    if (auto ev = best_of(model, hw, s)) {
      out.push_back({fmt::format("--global-batch {}", by_distance[std::size_t(i)]), std::move(*ev), s.training});
      break;
    }
  }

  // Knobs: each pin let go, one at a time; then FP8 where the chip has it.
  auto try_knob = [&](const std::string& change, const SearchSpec& s) {
    if (auto ev = best_of(model, hw, s)) out.push_back({change, std::move(*ev), s.training});
  };
  const SearchPins& p = spec.pins;
  auto unpin = [&](const char* flag, auto member) {
    if (!(p.*member)) return;
    SearchSpec s = spec;
    s.pins.*member = {};
    try_knob(fmt::format("without {}", flag), s);
  };
  unpin("--tp", &SearchPins::tp);
  unpin("--cp", &SearchPins::cp);
  unpin("--pp", &SearchPins::pp);
  unpin("--dp", &SearchPins::dp);
  unpin("--mbs", &SearchPins::micro_batch_size);
  unpin("--vpp", &SearchPins::virtual_stages);
  unpin("--recompute", &SearchPins::recompute);
  unpin("--zero", &SearchPins::zero_stage);
  unpin("--sp", &SearchPins::sequence_parallel);
  if (ts.dtype != DType::fp8 && hw.peak_flops_per_s[std::size_t(DType::fp8)] > 0) {
    SearchSpec s = spec;
    s.training.dtype = DType::fp8;
    try_knob("--dtype fp8", s);
  }
  return out;
}

}  // namespace planner
